// Conversations as cluster entities on the real `claude` CLI, over two runner processes and this
// process as a client-only node, on PostgreSQL. The CLIs talk to ScriptedModel, which records
// every request, so the test can see what each turn was sent.
//
// 1. Eight conversations' first turns: both runners serve some.
// 2. Eight second turns, streaming slowly; `kill -9` runner A while every one is in flight. Its
//    conversations move to runner B, which re-runs their second turns with `resume`. The runners
//    have separate CLAUDE_CONFIG_DIRs, so B can only resume A's conversations from the session
//    store in Postgres, where A's CLIs mirrored them: the re-run's request must carry the first turn.
// 3. A third turn on each conversation sees the first two.
// No CLI outlives its runner: A's orphans are killed by its watchdog, B's by its shutdown.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pgLayer } from "../../scripts/cluster/layers.js"
import { AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"
import {
  answer,
  databaseUrl,
  eventually,
  prompt,
  slowAnswer,
  startRunner,
  threeTurns,
  spreadClient
} from "./harness.js"

// Eight conversations, four on each runner, chosen among these once the shards have spread
// (eight fixed ids all land on one runner's shards about one run in a hundred).
const candidates = Array.from({ length: 32 }, (_, i) => `conversation-${i}`)

const rules = threeTurns(candidates)

const sent = (r: ScriptedModel.RecordedRequest) => JSON.stringify(r.messages)

const resultText = (messages: ReadonlyArray<Message.Message>) =>
  messages.filter(Message.isResult).map((m) => ("result" in m ? m.result : m.subtype))

/** Transcript files (`<sessionId>.jsonl`) under a CLI config dir. */
const transcripts = (configDir: string): Array<string> => {
  const projects = path.join(configDir, "projects")
  if (!fs.existsSync(projects)) return []
  return fs.readdirSync(projects, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => path.basename(f, ".jsonl"))
}

describe("cluster on PostgreSQL: conversations on the real CLI across two runner processes", () => {
  it.scopedLive("kill -9 a runner mid-turn: its conversations resume on the other from the stored transcript", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make(rules)
      const forA = yield* model.options()
      const forB = yield* model.options()
      const homeA = forA.env.HOME ?? ""
      const homeB = forB.env.HOME ?? ""
      const configA = forA.env.CLAUDE_CONFIG_DIR ?? ""
      const configB = forB.env.CLAUDE_CONFIG_DIR ?? ""
      expect(configA).not.toBe(configB)

      const prefix = `agents_${Date.now().toString(36)}`
      const common = { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test", AGENT_CWD: forA.cwd }
      // One after the other: runners starting together on a fresh database race to create the same
      // tables (Postgres' CREATE TABLE IF NOT EXISTS is not safe against a concurrent one).
      const a = yield* startRunner({ env: { ...forA.env, ...common } })
      const b = yield* startRunner({ env: { ...forB.env, ...common } })

      const { client, placement, where } = yield* spreadClient({ prefix, url, candidates })
      yield* Effect.log(`runner A ${a.address} (${a.logFile}), runner B ${b.address} (${b.logFile})`)
      const onA = candidates.filter((_, i) => where[i] === a.address).slice(0, 4)
      const onB = candidates.filter((_, i) => where[i] === b.address).slice(0, 4)
      expect([onA.length, onB.length]).toEqual([4, 4])
      const conversations = [...onA, ...onB]

      const turn = (turnNo: number, id: string) =>
        AgentEntity.send(id, prompt(turnNo, id)).pipe(
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.provide(client)
        )

      // 1. First turns, on both runners; each runner's CLIs start their own conversations (local
      //    transcripts under its config dir), mirrored to the store.
      const first = yield* Effect.forEach(conversations, (id) => turn(1, id), { concurrency: "unbounded" })
      expect(first.map(resultText)).toEqual(conversations.map((id) => [answer(1, id)]))
      const sessionOf = (id: string) => AgentEntity.sessionIdFor(id)
      const stored = (id: string) =>
        Effect.gen(function*() {
          const store = yield* SessionStore
          return Option.getOrElse(yield* store.load(yield* AgentEntity.sessionRefFor(id, { cwd: forA.cwd })), () => [])
        }).pipe(Effect.provide(AgentCluster.layerSessionStore({ tablePrefix: prefix })), Effect.provide(pgLayer(url)))
      expect(transcripts(configA).sort()).toEqual(onA.map(sessionOf).sort())
      expect(transcripts(configB).sort()).toEqual(onB.map(sessionOf).sort())

      // 2. Second turns, slow; kill A once the model has every one of them in hand.
      const partial = new Map<string, Array<Message.Message>>(conversations.map((id) => [id, []]))
      const second = yield* Effect.forEach(conversations, (id) =>
        AgentEntity.send(id, prompt(2, id)).pipe(
          Stream.tap((m) => Effect.sync(() => partial.get(id)?.push(m))),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.provide(client),
          Effect.tapErrorCause((cause) => Effect.logError(`second turn of ${id}`, cause)),
          Effect.fork
        ))
      yield* model.waitForRequests(8, (r) => ScriptedModel.lastUserText(r).includes("turn 2 of "))
      const cliPidsOfA = claudePids(homeA)
      expect(cliPidsOfA.length).toBe(onA.length)
      // The kill lands mid-turn: no second turn has its result yet.
      expect(conversations.filter((id) => resultText(partial.get(id) ?? []).length > 0)).toEqual([])
      const requestsBeforeKill = (yield* model.mainRequests).length
      const killedAt = Date.now()
      yield* a.kill9

      // A's watchdog kills the CLIs A left behind (they would otherwise stream on to the end).
      yield* eventually(
        Effect.filterOrFail(Effect.sync(() => claudePids(homeA)), (pids) => pids.length === 0),
        {
          within: "10 seconds",
          describe: () => `CLIs of the killed runner still alive: ${claudePids(homeA).join(", ")}`
        }
      )

      const secondResults = yield* Effect.forEach(second, Fiber.join)
      const failover = Date.now() - killedAt
      yield* Effect.log(`second turns done ${failover} ms after the kill; ${onA.length} of 8 conversations moved`)
      expect(secondResults.map(resultText).map((r) => r.slice(-1))).toEqual(conversations.map((id) => [slowAnswer(id)]))

      // The moved turns were re-run on B, resumed from the store: B never had them locally.
      const afterKill = (yield* model.mainRequests).slice(requestsBeforeKill)
      for (const id of onA) {
        const rerun = afterKill.filter((r) => ScriptedModel.lastUserText(r).includes(prompt(2, id)))
        expect(rerun.length).toBeGreaterThanOrEqual(1)
        for (const r of rerun) {
          expect(sent(r)).toContain(prompt(1, id))
          expect(sent(r)).toContain(answer(1, id))
        }
      }
      // B resumed them in temporary config directories (gone with their CLIs), not under its own.
      expect(transcripts(configB).sort()).toEqual(onB.map(sessionOf).sort())
      expect(transcripts(configA).sort()).toEqual(onA.map(sessionOf).sort())

      // 3. Third turns, all on B now: each sees its first two turns, once each (the killed attempt
      //    of a moved second turn is not in the conversation: it was never mirrored).
      const third = yield* Effect.forEach(conversations, (id) => turn(3, id), { concurrency: "unbounded" })
      expect(third.map(resultText)).toEqual(conversations.map((id) => [answer(3, id)]))
      const thirdRequests = yield* model.mainRequests
      for (const id of conversations) {
        const r = thirdRequests.filter((r) => ScriptedModel.lastUserText(r).includes(prompt(3, id)))
        expect(r.length).toBe(1)
        const text = r.map(sent).join("")
        for (const piece of [prompt(1, id), answer(1, id), prompt(2, id), answer(2, id)]) {
          expect(text.split(piece).length - 1).toBe(1)
        }
      }
      expect(new Set(yield* placement)).toEqual(new Set([b.address]))
      // The store has each turn once: the killed attempts of the moved second turns were never recorded.
      for (const id of conversations) {
        const entries = yield* stored(id)
        const saying = (type: string, piece: string) =>
          entries.filter((e) => e.type === type && JSON.stringify(e.message ?? null).includes(piece)).length
        expect([1, 2, 3].map((n) => saying("user", prompt(n, id)))).toEqual([1, 1, 1])
        expect([answer(1, id), slowAnswer(id), answer(3, id)].map((a) => saying("assistant", a))).toEqual([1, 1, 1])
      }

      // A clean stop of B closes its conversations' CLIs.
      const cliPidsOfB = claudePids(homeB)
      expect(cliPidsOfB.length).toBe(conversations.length)
      yield* b.stop
      expect(claudePids(homeB)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
