// The AgentPool on the real `claude` binary against ScriptedModel: the process cap holds, every
// request is served, a CLI killed mid-turn fails only its own request, and nothing outlives the pool.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionServices from "../../src/layers/SessionServices.js"
import { Transport } from "../../src/services/Transport.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { claudePids } from "../support/processes.js"

// The real subprocess transport, counting the CLI processes alive at once.
const counting = Effect.gen(function*() {
  const counts = { live: 0, peak: 0, pids: [] as Array<number> }
  const transport = Layer.effect(
    Transport,
    Effect.tap(Transport, (transport) =>
      Effect.gen(function*() {
        counts.live++
        counts.peak = Math.max(counts.peak, counts.live)
        counts.pids.push(Option.getOrElse(transport.pid, () => -1))
        yield* transport.exitStatus.pipe(Effect.ensuring(Effect.sync(() => void counts.live--)), Effect.forkDaemon)
      }))
  ).pipe(Layer.provide(SessionServices.subprocessTransport), Layer.provide(NodeContext.layer))
  const agent = ClaudeAgent.make({ transport })
  return { agent, counts }
})

// The CLIs themselves.
const cliPids = (home: string | undefined): Array<number> => {
  const pids = claudePids(home)
  const parentOf = (pid: number): number => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    } catch {
      return -1
    }
  }
  // The pool's CLIs are this process's children. A CLI's own children (a `git` it starts) show its
  // argv between fork and exec, and outlive it when it exits mid-fork (then reparented): not CLIs.
  return pids.filter((pid) => parentOf(pid) === process.pid)
}

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
        // The victim's reply streams for far longer than the test: its turn can only end by the kill.
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("slow"),
          reply: ScriptedModel.slowText("z".repeat(400_000), { chunkSize: 4, delayMs: 20 })
        },
        {
          match: (r) => !ScriptedModel.lastUserText(r).includes("slow"),
          reply: ScriptedModel.text("fine"),
          times: Infinity
        }
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

  it.scopedLive("maxConcurrent bounds the live CLIs at every moment, spares and requests with other options included", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("answer"), times: Infinity }])
      const options = yield* model.options()
      const { agent, counts } = yield* counting
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, warm: 1, warmOptions: options })
      const seen = { max: 0, samples: 0 }
      yield* Effect.sync(() => {
        seen.max = Math.max(seen.max, cliPids(options.env?.HOME).length)
        seen.samples++
      }).pipe(Effect.zipRight(Effect.sleep(3)), Effect.forever, Effect.forkScoped)
      yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => pool.query(`q${i}`, i % 2 === 0 ? options : { ...options, model: "claude-other" }).pipe(Stream.runDrain),
        { concurrency: "unbounded", discard: true }
      )
      expect(counts.pids.length).toBeGreaterThan(10)
      expect(seen.samples).toBeGreaterThan(100)
      // The sampler sees the pool's CLIs (two at once), and never more.
      expect(seen.max).toBe(2)
      expect(counts.peak).toBeLessThanOrEqual(2)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("e2e: closing an AgentPool on the real claude CLI", () => {
  it.scopedLive("2 running turns and 4 waiting: the waiting fail at once, the running are interrupted after shutdownTimeout, no CLI is left", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        // Each turn streams for far longer than the test: only the close can end it.
        { reply: ScriptedModel.slowText("z".repeat(400_000), { chunkSize: 4, delayMs: 20 }), times: Infinity }
      ])
      const options = yield* model.options()
      const { agent, counts } = yield* counting
      const poolScope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, shutdownTimeout: "1 second" }).pipe(
        Scope.extend(poolScope)
      )
      const streaming = yield* Effect.forEach([0, 1], () => Deferred.make<void>())
      const running = yield* Effect.forEach(
        streaming,
        (started, i) =>
          pool.query(`long story ${i}`, { ...options, includePartialMessages: true }).pipe(
            Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(started, undefined) : Effect.void)),
            Stream.runDrain,
            Effect.flip,
            Effect.fork
          )
      )
      yield* Effect.forEach(streaming, Deferred.await)
      const waiting = yield* Effect.forEach(
        [0, 1, 2, 3],
        (i) => pool.query(`waiting ${i}`, options).pipe(Stream.runDrain, Effect.flip, Effect.fork)
      )
      yield* Effect.repeat(pool.stats, { until: (s) => s.pending === 4 })
      expect(claudePids(options.env?.HOME)).toHaveLength(2)

      const startedAt = Date.now()
      yield* Scope.close(poolScope, Exit.void)
      const took = Date.now() - startedAt
      // Every CLI the pool started has exited when the close returns.
      expect(claudePids(options.env?.HOME)).toEqual([])
      // The grace period, then the protocol's interrupt: no signal and its waits were needed.
      expect(took).toBeGreaterThanOrEqual(1000)
      expect(took).toBeLessThan(4000)
      for (const fiber of waiting) {
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "PoolClosedError", stage: "waiting" })
      }
      for (const fiber of running) {
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
      }
      expect(counts.pids).toHaveLength(2)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a keyed chat mid-turn when the pool closes (shutdownTimeout 0) ends with PoolClosedError, not with the interrupted result", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("long story"),
          reply: ScriptedModel.slowText("z".repeat(400_000), { chunkSize: 4, delayMs: 20 }),
          // Every request of the turn (the CLI may send more than one) streams for longer than the test.
          times: Infinity
        },
        { reply: ScriptedModel.text("noted"), times: Infinity }
      ])
      const options = { ...(yield* model.options()), includePartialMessages: true }
      const { agent } = yield* counting
      const poolScope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, shutdownTimeout: 0 }).pipe(Scope.extend(poolScope))
      expect(yield* pool.chat("idle", "Hello.", options).pipe(Stream.runCollect, Effect.map(resultText))).toEqual([
        "noted"
      ])
      const streaming = yield* Deferred.make<void>()
      const types: Array<string> = []
      const turn = yield* pool.chat("busy", "Tell me a long story.", options).pipe(
        Stream.tap((m) => Effect.sync(() => void types.push(m.type))),
        Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
        Stream.runDrain,
        Effect.flip,
        Effect.fork
      )
      yield* Deferred.await(streaming)
      expect(claudePids(options.env?.HOME)).toHaveLength(2)
      yield* Scope.close(poolScope, Exit.void)
      expect(claudePids(options.env?.HOME)).toEqual([])
      expect(yield* Fiber.join(turn)).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
      expect(types).not.toContain("result")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a pool with warm: 2 closed while its spares start leaves no CLI running", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("noted"), times: Infinity }])
      const options = yield* model.options()
      const { agent } = yield* counting
      for (const after of [100, 300, 600]) {
        const poolScope = yield* Scope.make()
        yield* AgentPool.make(agent, { warm: 2, warmOptions: options }).pipe(Scope.extend(poolScope))
        yield* Effect.sleep(after)
        yield* Scope.close(poolScope, Exit.void)
        expect(claudePids(options.env?.HOME)).toEqual([])
      }
    }).pipe(Effect.provide(NodeContext.layer)))
})

// Every text the model was sent in a request (user turns and its own earlier answers).
const conversationText = (req: ScriptedModel.RecordedRequest | undefined): string => JSON.stringify(req?.messages ?? [])

const requestFor = (requests: ReadonlyArray<ScriptedModel.RecordedRequest>, prompt: string) =>
  requests.find((r) => ScriptedModel.lastUserText(r).includes(prompt))

describe("e2e: AgentPool keyed sessions on the real claude CLI", () => {
  it.scopedLive("a key's session is reused while idle; evicted for another key, it is resumed and the model sees the earlier turns", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("noted"), times: Infinity }])
      const options = yield* model.options()
      const { agent, counts } = yield* counting
      const poolScope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 }).pipe(Scope.extend(poolScope))
      const events: Array<AgentPool.PoolEvent> = []
      yield* pool.events.pipe(Stream.runForEach((e) => Effect.sync(() => void events.push(e))), Effect.forkScoped)
      const chat = (key: string, prompt: string) =>
        pool.chat(key, prompt, options).pipe(Stream.runCollect, Effect.map(resultText))

      expect(yield* chat("alice", "My name is Ada.")).toEqual(["noted"])
      expect(yield* chat("alice", "Remember the number 42.")).toEqual(["noted"])
      expect(counts.pids).toHaveLength(1)
      expect(yield* chat("bob", "Hello, I am Bob.")).toEqual(["noted"])
      expect(yield* chat("alice", "What is my name?")).toEqual(["noted"])
      expect(counts.pids).toHaveLength(3)
      expect(counts.peak).toBe(1)

      const requests = yield* model.mainRequests
      // Reused: the second turn went to the same process, with the first in its context.
      expect(conversationText(requestFor(requests, "Remember the number 42."))).toContain("My name is Ada.")
      // Bob's conversation is his own.
      expect(conversationText(requestFor(requests, "Hello, I am Bob."))).not.toContain("Ada")
      // Resumed on a new process: both earlier turns are in the request.
      const resumed = conversationText(requestFor(requests, "What is my name?"))
      expect(resumed).toContain("My name is Ada.")
      expect(resumed).toContain("Remember the number 42.")
      expect(resumed).not.toContain("Bob")
      expect(
        events.flatMap((e) =>
          (e._tag === "Evicted" || e._tag === "Resumed" || e._tag === "Reused") ? [`${e._tag} ${e.key}`] : []
        )
      )
        .toEqual(["Reused alice", "Evicted alice", "Evicted bob", "Resumed alice"])
      // Alice's session was idle: closing the pool stops it.
      expect(claudePids(options.env?.HOME)).toHaveLength(1)
      yield* Scope.close(poolScope, Exit.void)
      expect(claudePids(options.env?.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a conversation whose transcript is gone ends that turn with the CLI's error; the key's next use starts a new one", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("noted"), times: Infinity }])
      const options = yield* model.options()
      const { agent } = yield* counting
      // Stopped after each use: every turn after the first is a resume.
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, idleTimeToLive: 0 })
      const chat = (prompt: string) =>
        pool.chat("alice", prompt, options).pipe(Stream.runCollect, Effect.map(Chunk.toArray))

      yield* chat("My name is Ada.")
      fs.rmSync(path.join(options.env.CLAUDE_CONFIG_DIR ?? "", "projects"), { recursive: true, force: true })
      const failed = (yield* chat("What is my name?")).filter(Message.isResult)
      expect(failed).toMatchObject([{ subtype: "error_during_execution", is_error: true }])
      expect(JSON.stringify(failed)).toContain("No conversation found with session ID")
      expect(resultText(Chunk.fromIterable(yield* chat("Hello again.")))).toEqual(["noted"])
      // A new conversation: the lost turn is not in it.
      expect(conversationText(requestFor(yield* model.mainRequests, "Hello again."))).not.toContain("Ada")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a keyed session whose CLI is killed (idle, or mid-turn) is resumed with the earlier turns", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: (r) => ScriptedModel.lastUserText(r) === "Tell me a long story.",
          reply: ScriptedModel.slowText("z".repeat(4000), { chunkSize: 4, delayMs: 20 })
        },
        { reply: ScriptedModel.text("noted"), times: Infinity }
      ])
      const options = yield* model.options()
      const { agent, counts } = yield* counting
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const chat = (prompt: string) => pool.chat("alice", prompt, options)

      expect(yield* chat("My name is Ada.").pipe(Stream.runCollect, Effect.map(resultText))).toEqual(["noted"])
      // Killed while idle: the pool notices, frees the slot, and the next turn resumes.
      const noticed = yield* pool.events.pipe(
        Stream.filter((e) => e._tag === "Evicted"),
        Stream.runHead,
        Effect.fork
      )
      // Subscribed once its fiber waits for the first event.
      yield* Effect.repeat(Effect.zipLeft(Fiber.status(noticed), Effect.yieldNow()), {
        until: (status) => status._tag === "Suspended"
      })
      process.kill(counts.pids[0]!, "SIGKILL")
      expect(yield* Fiber.join(noticed)).toMatchObject(
        Option.some({ _tag: "Evicted", reason: "session-died", key: "alice" })
      )
      expect(yield* chat("What is my name?").pipe(Stream.runCollect, Effect.map(resultText))).toEqual(["noted"])
      expect(counts.pids).toHaveLength(2)

      // Killed mid-turn: that turn fails; the next one resumes.
      const streaming = yield* Deferred.make<void>()
      const error = yield* pool.chat("alice", "Tell me a long story.", { ...options, includePartialMessages: true })
        .pipe(
          Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
          Stream.runDrain,
          Effect.flip,
          Effect.fork
        )
      yield* Deferred.await(streaming)
      // includePartialMessages differs from the earlier options: this turn ran on a third process.
      process.kill(counts.pids[2]!, "SIGKILL")
      expect((yield* Fiber.join(error))._tag).toBe("ProcessError")
      expect(yield* chat("Do you still know me?").pipe(Stream.runCollect, Effect.map(resultText))).toEqual(["noted"])
      expect(counts.pids).toHaveLength(4)

      const requests = yield* model.mainRequests
      expect(conversationText(requestFor(requests, "What is my name?"))).toContain("My name is Ada.")
      const last = conversationText(requestFor(requests, "Do you still know me?"))
      expect(last).toContain("My name is Ada.")
      expect(last).toContain("What is my name?")
      expect(yield* pool.stats).toMatchObject({ active: 0, idle: 1 })
    }).pipe(Effect.provide(NodeContext.layer)))
})
