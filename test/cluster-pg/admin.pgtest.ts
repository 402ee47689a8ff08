// AgentAdmin on PostgreSQL, from a client-only node, over two runner processes on the real CLI
// (talking to ScriptedModel):
// 1. One turn on each of four conversations, two on each runner.
// 2. `list` names every conversation's owner as the runners place it (the `Probe` says where),
//    `inspect` gives its turns and its runner's live state; scripts/cluster/admin.ts prints the same.
// 3. `remove` stops the conversation's CLI on its runner and deletes its rows and its stored session.
// 4. Retention deletes finished turns (with their replies) and idle conversations' stored sessions.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Stream } from "effect"
import * as cp from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { clientLayer, pgLayer, Probe, testTimings } from "../../scripts/cluster/layers.js"
import { AgentAdmin, AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"
import { claudePids } from "../support/processes.js"
import { databaseUrl, eventually, prompt, startRunner, threeTurns } from "./harness.js"

const candidates = Array.from({ length: 24 }, (_, i) => `admin-${i}`)
const root = fileURLToPath(new URL("../..", import.meta.url))

// scripts/cluster/admin.ts, as an operator runs it.
const adminScript = (env: Readonly<Record<string, string>>, args: ReadonlyArray<string>) =>
  Effect.async<string, Error>((resume) => {
    cp.execFile(
      process.execPath,
      ["--import", "tsx", path.join(root, "scripts", "cluster", "admin.ts"), ...args],
      { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resume(error === null ? Effect.succeed(stdout) : Effect.fail(new Error(`${error.message}\n${stderr}`)))
    )
  })

describe("AgentAdmin on PostgreSQL", () => {
  it.scopedLive("lists, inspects, deletes and prunes conversations from a client-only node", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make(threeTurns(candidates))
      const forA = yield* model.options()
      const forB = yield* model.options()
      const prefix = `admin_${Date.now().toString(36)}`
      const common = { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test", AGENT_CWD: forA.cwd }
      const a = yield* startRunner({ env: { ...forA.env, ...common } })
      const b = yield* startRunner({ env: { ...forB.env, ...common } })

      const client = yield* Layer.build(
        AgentAdmin.layer({ prefix, cwd: forA.cwd }).pipe(
          Layer.provideMerge(AgentCluster.layerSessionStore({ tablePrefix: prefix })),
          Layer.provideMerge(clientLayer({ prefix, shardingConfig: testTimings })),
          Layer.provideMerge(pgLayer(url))
        )
      )
      const probe = yield* Effect.provide(Probe.client, client)
      const placement = Effect.forEach(
        candidates,
        (id) => probe(id).Where().pipe(Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => "no answer" })),
        {
          concurrency: "unbounded"
        }
      )
      const where = yield* eventually(Effect.filterOrFail(placement, (at) => new Set(at).size === 2), {
        within: "30 seconds",
        describe: () => "the shards never spread over both runners"
      })
      const onA = candidates.filter((_, i) => where[i] === a.address).slice(0, 2)
      const onB = candidates.filter((_, i) => where[i] === b.address).slice(0, 2)
      const conversations = [...onA, ...onB]
      expect(conversations.length).toBe(4)

      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        const store = yield* SessionStore
        const sessionOf = (id: string) => AgentEntity.sessionRefFor(id, { cwd: forA.cwd })

        // 1. A turn on each, each in a span of this client's.
        const recorder = yield* SpanRecorder.make
        yield* Effect.forEach(
          conversations,
          (id) => Stream.runDrain(AgentEntity.send(id, prompt(1, id))).pipe(Effect.withSpan(`client ${id}`)),
          { concurrency: "unbounded" }
        ).pipe(Effect.withTracer(recorder.tracer))

        // 2. Listed with the runner that serves it; inspected with its turn and live state.
        const listed = yield* admin.list()
        expect(listed.map((c) => c.conversationId).sort()).toEqual([...conversations].sort())
        for (const c of listed) {
          expect(c.runner).toBe(onA.includes(c.conversationId) ? a.address : b.address)
          expect([c.turnCount, c.openTurns, c.state]).toEqual([1, 0, "idle"])
        }
        const runners = yield* admin.runners()
        expect(runners.map((r) => [r.address, r.healthy, r.openTurns]).sort()).toEqual(
          [[a.address, true, 0], [b.address, true, 0]].sort()
        )
        const inspected = Option.getOrThrow(yield* admin.inspect(onB[0] ?? ""))
        expect(inspected.runner).toBe(b.address)
        expect(inspected.state).toBe("idle")
        expect(inspected.live?.running).toBe(true)
        expect(inspected.turns.map((t) => [t.status, t.lastError])).toEqual([["completed", null]])
        // The turn's trace is the client's: the runner process's spans of it join that trace.
        const clientSpan = recorder.spans.find((span) => span.name === `client ${onB[0]}`)
        expect(inspected.turns[0]?.traceId).toBe(clientSpan?.traceId)

        const env = { ...common, AGENT_CLUSTER_SECRET: process.env.AGENT_CLUSTER_SECRET ?? "" }
        const lines = (yield* adminScript(env, ["list"])).trim().split("\n").map((line): unknown => JSON.parse(line))
        expect(lines.length).toBe(4)
        const printed: unknown = JSON.parse(yield* adminScript(env, ["inspect", onA[0] ?? ""]))
        expect(printed).toMatchObject({ conversationId: onA[0], runner: a.address, turns: [{ status: "completed" }] })

        // Each conversation's turn is in the store, transcript and turn record.
        for (const id of conversations) {
          const stored = Option.getOrElse(yield* store.load(yield* sessionOf(id)), () => [])
          expect(JSON.stringify(stored)).toContain(prompt(1, id))
        }

        // 3. Deleted: its CLI on B ends, its rows and stored session are gone, the others are kept.
        const doomed = onB[0] ?? ""
        const cliBefore = claudePids(forB.env.HOME).length
        expect(cliBefore).toBe(2)
        const removed = yield* admin.remove(doomed)
        expect(removed).toMatchObject({ conversationId: doomed, stopped: true, turns: 1, transcript: true })
        yield* eventually(
          Effect.filterOrFail(Effect.sync(() => claudePids(forB.env.HOME).length), (n) => n === 1),
          { within: "10 seconds", describe: () => "the deleted conversation's CLI still runs" }
        )
        expect(yield* admin.inspect(doomed)).toEqual(Option.none())
        expect(yield* store.load(yield* sessionOf(doomed))).toEqual(Option.none())
        expect(yield* store.listSubkeys(yield* sessionOf(doomed))).toEqual([])
        expect((yield* admin.list()).length).toBe(3)

        // 4. Retention: nothing is old enough for a day; everything finished is for zero.
        expect(yield* admin.applyRetention({ finishedTurns: "1 day", idleTranscripts: "1 day" })).toEqual({
          turns: 0,
          messages: 0,
          replies: 0,
          transcripts: 0
        })
        const pruned = yield* admin.applyRetention({ finishedTurns: Duration.zero, idleTranscripts: Duration.zero })
        expect(pruned.turns).toBe(3)
        expect(pruned.replies).toBeGreaterThanOrEqual(3)
        // Three conversations' stored sessions.
        expect(pruned.transcripts).toBe(3)
        expect(yield* admin.list()).toEqual([])
        expect(yield* store.load(yield* sessionOf(onA[0] ?? ""))).toEqual(Option.none())
      }).pipe(Effect.provide(client))
    }).pipe(Effect.provide(NodeContext.layer)))
})
