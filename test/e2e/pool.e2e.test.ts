// The AgentPool on the real `claude` binary against ScriptedModel: the process cap holds, every
// request is served, a CLI killed mid-turn fails only its own request, and nothing outlives the pool.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Option, Stream } from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"

// The real subprocess factory, counting the CLI processes alive at once.
const counting = Effect.gen(function*() {
  const counts = { live: 0, peak: 0, pids: [] as Array<number> }
  const spawn = yield* ClaudeAgent.subprocessFactory
  const agent = ClaudeAgent.make((launch, options) =>
    Effect.tap(spawn(launch, options), (transport) =>
      Effect.gen(function*() {
        counts.live++
        counts.peak = Math.max(counts.peak, counts.live)
        counts.pids.push(Option.getOrElse(transport.pid, () => -1))
        yield* transport.exitStatus.pipe(Effect.ensuring(Effect.sync(() => void counts.live--)), Effect.forkDaemon)
      }))
  )
  return { agent, counts }
})

const resultText = (messages: Chunk.Chunk<Message.Message>) =>
  Chunk.toArray(messages).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype))

describe("e2e: AgentPool on the real claude CLI", () => {
  it.scopedLive("16 requests on a pool of 4: never more than 4 processes, all answered, none left", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.text("answer"), times: Infinity }
      ])
      const options = yield* model.options()
      const { agent, counts } = yield* counting
      const answers = yield* Effect.scoped(Effect.gen(function*() {
        const pool = yield* AgentPool.make(agent, { maxConcurrent: 4 })
        return yield* Effect.forEach(
          Array.from({ length: 16 }, (_, i) => `question ${i}`),
          (q) => pool.query(q, options).pipe(Stream.runCollect, Effect.map(resultText)),
          { concurrency: "unbounded" }
        )
      }))
      expect(answers).toEqual(Array.from({ length: 16 }, () => ["answer"]))
      expect(counts.pids).toHaveLength(16)
      expect(counts.peak).toBeLessThanOrEqual(4)
      expect(counts.peak).toBeGreaterThan(1)
      expect(claudePids(options.env?.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a CLI killed mid-turn fails only its request; the pool keeps serving", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { match: (r) => ScriptedModel.lastUserText(r) === "slow", reply: ScriptedModel.slowText("z".repeat(4000), { chunkSize: 4, delayMs: 20 }) },
        { match: (r) => ScriptedModel.lastUserText(r) !== "slow", reply: ScriptedModel.text("fine"), times: Infinity }
      ])
      const options = yield* model.options()
      const { agent, counts } = yield* counting
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const streaming = yield* Deferred.make<void>()
      const victim = yield* pool.query("slow", { ...options, includePartialMessages: true }).pipe(
        Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
        Stream.runDrain,
        Effect.flip,
        Effect.fork
      )
      yield* Deferred.await(streaming)
      const pid = counts.pids[0]
      expect(pid).toBeGreaterThan(0)
      if (pid !== undefined) process.kill(pid, "SIGKILL")
      const error = yield* Fiber.join(victim)
      expect(error._tag).toBe("ProcessError")
      const next = yield* Effect.forEach(["one", "two", "three"], (q) =>
        pool.query(q, options).pipe(Stream.runCollect, Effect.map(resultText)), { concurrency: "unbounded" })
      expect(next).toEqual([["fine"], ["fine"], ["fine"]])
      expect((yield* pool.stats).active).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer)))
})
