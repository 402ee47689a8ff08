// A runner joining while turns are in flight: the shards the hash ring gives the newcomer move
// away from the runner that was serving them, with their conversations' turns still streaming
// there. Those turns are interrupted on the old owner and re-run on the new one (they are
// persisted), and every client still gets its result.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { clientLayer, pgLayer, Probe, testTimings } from "../../scripts/cluster/layers.js"
import { AgentEntity } from "../../src/cluster/index.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"
import { databaseUrl, eventually, startRunner } from "./harness.js"

const conversations = Array.from({ length: 8 }, (_, i) => `conversation-${i}`)
// About 20 s of streaming: longer than a runner takes to start and join on a loaded machine (over
// 10 s was seen), and than entityTerminationTimeout (2 s), which the old owner waits for a turn
// before it interrupts it. A turn that ends before the newcomer joins is not re-run there.
const slow = "slow answer ".padEnd(800, "~")

const hasTranscript = (configDir: string, sessionId: string): boolean => {
  const projects = path.join(configDir, "projects")
  return fs.existsSync(projects) &&
    fs.readdirSync(projects, { recursive: true, encoding: "utf8" }).some((f) => f.endsWith(`${sessionId}.jsonl`))
}

describe("cluster on PostgreSQL: a runner joins while turns are in flight", () => {
  it.scopedLive("the turns on shards that move to the newcomer are re-run there and finish", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText(slow, { chunkSize: 4, delayMs: 100 }), times: Infinity }
      ])
      const forA = yield* model.options()
      const forB = yield* model.options()
      const configB = forB.env.CLAUDE_CONFIG_DIR ?? ""
      const prefix = `join_${Date.now().toString(36)}`
      const common = { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test", AGENT_CWD: forA.cwd }

      const a = yield* startRunner({ env: { ...forA.env, ...common } })
      const client = yield* Layer.build(
        clientLayer({ prefix, shardingConfig: testTimings }).pipe(Layer.provide(pgLayer(url)))
      )
      const probe = yield* Effect.provide(Probe.client, client)
      const placement = Effect.forEach(
        conversations,
        (id) => probe(id).Where().pipe(Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => "no answer" }))
      )
      yield* eventually(
        Effect.filterOrFail(placement, (at: ReadonlyArray<string>) => at.every((x) => x === a.address)),
        { within: "30 seconds", describe: () => "runner A never served every conversation" }
      )

      const turns = yield* Effect.forEach(conversations, (id) =>
        AgentEntity.send(id, `hello from ${id}`).pipe(
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.provide(client),
          Effect.fork
        ))
      yield* model.waitForRequests(conversations.length)
      const b = yield* startRunner({ env: { ...forB.env, ...common } })

      const results = yield* Effect.forEach(turns, Fiber.join)
      for (const messages of results) {
        const last = messages[messages.length - 1]
        expect(last !== undefined && Message.isResult(last) && "result" in last ? last.result : last?.type).toBe(slow)
      }
      const where = yield* eventually(
        Effect.filterOrFail(placement, (at: ReadonlyArray<string>) => at.includes(b.address)),
        { within: "30 seconds", describe: () => "runner B never took any conversation" }
      )
      const moved = conversations.filter((_, i) => where[i] === b.address)
      // B ran the moved conversations' turns: it holds their transcripts.
      for (const id of moved) expect(hasTranscript(configB, AgentEntity.sessionIdFor(id))).toBe(true)

      yield* b.stop
      yield* a.stop
      expect(claudePids(forA.env.HOME)).toEqual([])
      expect(claudePids(forB.env.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
