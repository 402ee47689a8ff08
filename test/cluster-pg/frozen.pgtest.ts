// A runner that stops answering without dying (SIGSTOP: a hung host or a long partition looks the
// same to the others): its sockets and its database sessions stay open, so PostgreSQL advisory
// locks would keep its shards for as long as those sessions live. With the socket layout's lease
// rows (`AgentCluster.socketTimings`), its shards are free once its lease expires, and the other
// runner answers new turns of its conversations. Once it runs again, it finds its leases gone,
// closes those conversations and runs nothing a second time.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import { pgLayer } from "../../scripts/cluster/layers.js"
import { AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"
import { answer, databaseUrl, eventually, prompt, startRunner, spreadClient } from "./harness.js"

const candidates = Array.from({ length: 32 }, (_, i) => `frozen-${i}`)

const rules: Array<ScriptedModel.Rule> = candidates.flatMap((id) =>
  [1, 2, 3].map((turn) => ({
    match: (r: ScriptedModel.RecordedRequest) => ScriptedModel.lastUserText(r).includes(prompt(turn, id)),
    reply: ScriptedModel.text(answer(turn, id)),
    times: Infinity
  }))
)

const resultText = (messages: ReadonlyArray<Message.Message>) =>
  messages.filter(Message.isResult).map((m) => ("result" in m ? m.result : m.subtype))

// The bound the README states: a new owner serves the frozen runner's conversations once its lease
// (5 s in the test timings) has expired and the survivor has looked at the runners again (0.25 s)
// and polled (0.5 s); a client with a connection to the frozen runner gives up on it at that
// connection's ping timeout (10 to 20 s, fixed in @effect/rpc). Plus room for a CLI to start and
// answer on a loaded 2-core machine.
const takeoverBound = 20_000 + 10_000

describe("cluster on PostgreSQL: a frozen runner", () => {
  it.scopedLive("is replaced within the lease; thawed, it runs nothing twice", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make(rules)
      const forA = yield* model.options()
      const forB = yield* model.options()
      const homeA = forA.env.HOME ?? ""
      const prefix = `frozen_${Date.now().toString(36)}`
      const common = { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test", AGENT_CWD: forA.cwd }
      const a = yield* startRunner({ env: { ...forA.env, ...common } })
      const b = yield* startRunner({ env: { ...forB.env, ...common } })
      yield* Effect.log(`runner A ${a.address} (${a.logFile}), runner B ${b.address} (${b.logFile})`)

      const { client, probe, where } = yield* spreadClient({ prefix, url, candidates })
      const onA = candidates.filter((_, i) => where[i] === a.address).slice(0, 2)
      const onB = candidates.filter((_, i) => where[i] === b.address).slice(0, 1)
      expect([onA.length, onB.length]).toEqual([2, 1])
      const conversations = [...onA, ...onB]

      const turn = (turnNo: number, id: string) =>
        AgentEntity.send(id, prompt(turnNo, id)).pipe(
          Stream.runCollect,
          Effect.map((messages) => resultText(Chunk.toReadonlyArray(messages))),
          Effect.provide(client)
        )

      // 1. First turns: A holds two conversations (their CLIs open), B one.
      const first = yield* Effect.forEach(conversations, (id) => turn(1, id), { concurrency: "unbounded" })
      expect(first).toEqual(conversations.map((id) => [answer(1, id)]))
      expect(claudePids(homeA).length).toBe(onA.length)

      // 2. A freezes. New turns of its conversations are answered by B within the bound.
      yield* a.freeze
      const frozenAt = Date.now()
      const second = yield* Effect.forEach(
        conversations,
        (id) =>
          turn(2, id).pipe(
            Effect.map((result) => ({ result, after: Date.now() - frozenAt })),
            Effect.timeoutFail({
              duration: takeoverBound,
              onTimeout: () => new Error(`${id}: no takeover within the bound`)
            }),
            Effect.orDie
          ),
        { concurrency: "unbounded" }
      )
      yield* Effect.log(`second turns answered ${second.map((s) => s.after).join(", ")} ms after the freeze`)
      expect(second.map((s) => s.result)).toEqual(conversations.map((id) => [answer(2, id)]))
      for (const { after } of second) expect(after).toBeLessThan(takeoverBound)
      const movedTo = yield* Effect.forEach(onA, (id) => probe(id).Where())
      expect(movedTo).toEqual(onA.map(() => b.address))

      // 3. A runs again: its renewals find the leases taken, so it closes the conversations it
      //    held (their CLIs end) without running anything.
      yield* a.thaw
      yield* eventually(
        Effect.filterOrFail(Effect.sync(() => claudePids(homeA)), (pids) => pids.length === 0),
        { within: "15 seconds", describe: () => `the thawed runner still has CLIs: ${claudePids(homeA).join(", ")}` }
      )

      // 4. Third turns, wherever the shards settle: every prompt reached the model exactly once,
      //    each third turn sees the conversation's two earlier turns once each, and the session
      //    store holds each turn once.
      const third = yield* Effect.forEach(conversations, (id) => turn(3, id), { concurrency: "unbounded" })
      expect(third).toEqual(conversations.map((id) => [answer(3, id)]))
      const requests = yield* model.mainRequests
      for (const id of conversations) {
        for (const turnNo of [1, 2, 3]) {
          const asked = requests.filter((r) => ScriptedModel.lastUserText(r).includes(prompt(turnNo, id)))
          expect({ id, turnNo, times: asked.length }).toEqual({ id, turnNo, times: 1 })
        }
        const thirdRequest = JSON.stringify(
          requests.filter((r) => ScriptedModel.lastUserText(r).includes(prompt(3, id))).map((r) => r.messages)
        )
        for (const piece of [prompt(1, id), answer(1, id), prompt(2, id), answer(2, id)]) {
          expect(thirdRequest.split(piece).length - 1).toBe(1)
        }
      }
      const stored = yield* Effect.forEach(conversations, (id) =>
        Effect.gen(function*() {
          const store = yield* SessionStore
          const entries = Option.getOrElse(
            yield* store.load(yield* AgentEntity.sessionRefFor(id, { cwd: forA.cwd })),
            () => []
          )
          const saying = (type: string, piece: string) =>
            entries.filter((e) => e.type === type && JSON.stringify(e.message ?? null).includes(piece)).length
          return [1, 2, 3].flatMap((n) => [saying("user", prompt(n, id)), saying("assistant", answer(n, id))])
        })).pipe(Effect.provide(AgentCluster.layerSessionStore({ tablePrefix: prefix })), Effect.provide(pgLayer(url)))
      expect(stored).toEqual(conversations.map(() => [1, 1, 1, 1, 1, 1]))
    }).pipe(Effect.provide(NodeContext.layer)))
})
