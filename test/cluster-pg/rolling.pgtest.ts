// A rolling restart on PostgreSQL with turns in flight: two runner processes on the real `claude`
// CLI, this process as a client-only node. While every conversation's second turn streams, runner A
// is stopped with SIGTERM and started again, then runner B. Every turn must end with exactly one
// result, its own (none failed: before the fix, a graceful stop stored "The session was closed" as
// the reply of the turns it cut short); a third turn must see the first two exactly once each (none
// lost, none duplicated in the conversation).
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Stream } from "effect"
import { clientLayer, pgLayer, Probe, testTimings } from "../../scripts/cluster/layers.js"
import { AgentEntity } from "../../src/cluster/index.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"
import { answer, databaseUrl, eventually, prompt, slowAnswer, startRunner, threeTurns } from "./harness.js"

const conversations = Array.from({ length: 6 }, (_, i) => `rolling-${i}`)

const rules = threeTurns(conversations)

const results = (messages: ReadonlyArray<Message.Message>) =>
  messages.filter(Message.isResult).map((m) => ("result" in m ? m.result : m.subtype))

describe("cluster on PostgreSQL: a rolling restart", () => {
  it.scopedLive("SIGTERM each runner in turn while turns run: none lost, none duplicated, none failed", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make(rules)
      const forA = yield* model.options()
      const forB = yield* model.options()
      const prefix = `rolling_${Date.now().toString(36)}`
      const common = { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test", AGENT_CWD: forA.cwd }
      const envA = { ...forA.env, ...common }
      const envB = { ...forB.env, ...common }
      const a = yield* startRunner({ env: envA })
      const b = yield* startRunner({ env: envB })

      const client = yield* Layer.build(
        clientLayer({ prefix, shardingConfig: testTimings }).pipe(Layer.provide(pgLayer(url)))
      )
      const probe = yield* Effect.provide(Probe.client, client)
      // Whether both runners own shards: probed over more ids than there are conversations (six ids
      // all land on one runner's shards in about one run of thirty, whatever the waiting).
      const probeIds = Array.from({ length: 24 }, (_, i) => `rolling-probe-${i}`)
      const placement = Effect.forEach(
        probeIds,
        (id) => probe(id).Where().pipe(Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => "no answer" })),
        {
          concurrency: "unbounded"
        }
      )
      yield* eventually(Effect.filterOrFail(placement, (at) => new Set(at).size === 2), {
        within: "30 seconds",
        describe: () => "the shards never spread over both runners"
      })

      const turn = (turnNo: number, id: string) =>
        AgentEntity.send(id, prompt(turnNo, id)).pipe(
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.provide(client),
          Effect.tapErrorCause((cause) => Effect.logError(`turn ${turnNo} of ${id}`, cause))
        )
      const first = yield* Effect.forEach(conversations, (id) => turn(1, id), { concurrency: "unbounded" })
      expect(first.map(results)).toEqual(conversations.map((id) => [answer(1, id)]))

      // Second turns, slow; the rolling restart happens while they run.
      const second = yield* Effect.forEach(conversations, (id) => Effect.fork(turn(2, id)))
      yield* model.waitForRequests(conversations.length, (r) => ScriptedModel.lastUserText(r).includes("turn 2 of "))
      yield* a.stop
      const a2 = yield* startRunner({ env: envA })
      yield* b.stop
      const b2 = yield* startRunner({ env: envB })
      yield* Effect.log(`restarted: A ${a.address} -> ${a2.address}, B ${b.address} -> ${b2.address}`)

      const secondReplies = yield* Effect.forEach(second, Fiber.join)
      const reruns = (yield* model.mainRequests).filter((r) =>
        ScriptedModel.lastUserText(r).includes("turn 2 of ")
      ).length
      yield* Effect.log(`second turns: ${reruns} model requests for ${conversations.length} turns`)
      expect(secondReplies.map(results)).toEqual(conversations.map((id) => [slowAnswer(id)]))
      // Whatever a client had read of an attempt cut short is marked as such.
      for (const reply of secondReplies) {
        const retries = reply.flatMap((m, i) => (AgentEntity.isRetry(m) ? [i] : []))
        const attempt = reply.slice((retries[retries.length - 1] ?? -1) + 1)
        expect(attempt.filter(Message.isSystemInit)).toHaveLength(1)
      }

      // Third turns, once the new runners share the shards: each conversation holds its
      // first two turns exactly once.
      yield* eventually(Effect.filterOrFail(placement, (at) => new Set(at).size === 2), {
        within: "30 seconds",
        describe: () => "the shards never spread over the restarted runners"
      })
      const third = yield* Effect.forEach(conversations, (id) => turn(3, id), { concurrency: "unbounded" })
      expect(third.map(results)).toEqual(conversations.map((id) => [answer(3, id)]))
      const requests = yield* model.mainRequests
      for (const id of conversations) {
        // The request that completed the turn (a shard still moving can cut an earlier one short).
        const r = requests.filter((r) => ScriptedModel.lastUserText(r).includes(prompt(3, id)))
        expect(r.length).toBeGreaterThanOrEqual(1)
        const text = JSON.stringify(r[r.length - 1]?.messages)
        for (const piece of [prompt(1, id), answer(1, id), prompt(2, id), answer(2, id)]) {
          expect(text.split(piece).length - 1).toBe(1)
        }
      }

      yield* b2.stop
      yield* a2.stop
      expect(claudePids(forA.env.HOME)).toEqual([])
      expect(claudePids(forB.env.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
