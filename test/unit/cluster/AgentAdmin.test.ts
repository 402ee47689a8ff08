// `AgentAdmin` on `AgentCluster.layerSqlite` over the fake CLI: conversations listed and inspected
// from the message tables and the runner's live status, deleted (CLI stopped, rows and stored
// session gone), finished turns and idle sessions pruned by the retention policy; the retention
// loop under the TestClock; the runner's turn span a child of the client's send span.
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import {
  Clock,
  Deferred,
  Duration,
  Effect,
  Fiber,
  Layer,
  Metric,
  Option,
  Queue,
  Ref,
  Schedule,
  Stream,
  TestClock,
  type Tracer
} from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SessionStore } from "effect-claude-agent"
import { AgentAdmin, AgentCluster, AgentEntity, AgentMetrics } from "effect-claude-agent/cluster"
import { FakeCli, SpanRecorder } from "effect-claude-agent/testing"

const setup = Effect.gen(function*() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-admin-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const started = yield* Queue.unbounded<string>()
  const release = yield* Deferred.make<void>()
  // "wait" turns emit one message, then wait for `release`; "fail" turns end with the CLI exiting.
  const agent = FakeCli.layerClaudeAgent({
    onUserMessage: (message, cli) =>
      Effect.gen(function*() {
        const prompt = FakeCli.userText(message)
        yield* Queue.offer(started, prompt)
        yield* cli.emit(FakeCli.frames.systemInit())
        if (prompt === "wait") yield* Deferred.await(release)
        if (prompt === "fail") return yield* cli.exit({ exitCode: 3 })
        yield* cli.emit(FakeCli.frames.assistantText(`echo: ${prompt}`))
        yield* cli.emit(FakeCli.frames.result(`echo: ${prompt}`))
      })
  })
  const cluster = AgentCluster.layerSqlite({
    filename: path.join(dir, "cluster.db"),
    orphanGuard: false, // the fake CLI's pid is made up
    options: { cwd: dir, env: { CLAUDE_CONFIG_DIR: path.join(dir, "config") } },
    shardingConfig: { entityMessagePollInterval: 200, entityTerminationTimeout: 500, shardLockExpiration: 2000 }
  }).pipe(Layer.provide(agent), Layer.provideMerge(NodeContext.layer))
  const layer = AgentAdmin.layer({ statusTimeout: "3 seconds", cwd: dir }).pipe(Layer.provideMerge(cluster))
  return { dir, layer, started, release }
})

const turn = (conversationId: string, prompt: string, turnId: string) =>
  Stream.runDrain(AgentEntity.send(conversationId, prompt, { turnId }))

describe("AgentAdmin", () => {
  it.scopedLive("lists and inspects conversations, their turns, owner and state", () =>
    Effect.gen(function*() {
      const { layer, release, started } = yield* setup
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        yield* turn("c1", "one", "t1")
        yield* turn("c1", "two", "t2")
        yield* Effect.either(turn("c2", "fail", "t3"))

        const listed = yield* admin.list()
        expect(listed.map((c) => [c.conversationId, c.turnCount, c.state])).toEqual([["c2", 1, "idle"], [
          "c1",
          2,
          "idle"
        ]])
        expect(listed.every((c) => c.runner !== null && c.shardId.startsWith("default:"))).toBe(true)

        const c1 = Option.getOrThrow(yield* admin.inspect("c1"))
        expect(c1.turns.map((t) => [t.turnId, t.status, t.lastError])).toEqual([["t1", "completed", null], [
          "t2",
          "completed",
          null
        ]])
        expect(c1.turns.every((t) => t.endedAt !== null && t.endedAt >= t.startedAt)).toBe(true)
        expect(c1.state).toBe("idle")
        expect(c1.live?.running).toBe(true)
        expect(c1.runner).toBe(listed[1]?.runner)

        const c2 = Option.getOrThrow(yield* admin.inspect("c2"))
        expect(c2.turns[0]?.status).toBe("failed")
        expect(c2.turns[0]?.lastError).toMatch(/^(ProcessError|CLIConnectionError): .*exited/)
        expect(yield* admin.inspect("nobody")).toEqual(Option.none())

        // A turn in flight: busy in the list, running in its runner's status and in its turns.
        const waiting = yield* Effect.fork(turn("c1", "wait", "t4"))
        expect(yield* Queue.take(started)).toBe("one")
        yield* Queue.takeUpTo(started, 2)
        expect(yield* Queue.take(started)).toBe("wait")
        const busy = Option.getOrThrow(yield* admin.inspect("c1"))
        expect(busy.state).toBe("running")
        expect(busy.live?.turnId).toBe("t4")
        // Running once its first reply is stored, pending until then.
        expect(["pending", "running"]).toContain(busy.turns[2]?.status)
        expect(busy.turns[2]?.endedAt).toBeNull()
        expect((yield* admin.list()).find((c) => c.conversationId === "c1")?.state).toBe("busy")
        const [runner, ...others] = yield* admin.runners()
        expect(others).toEqual([])
        expect(runner).toMatchObject({ address: c1.runner, healthy: true, openTurns: 1 })
        expect(Math.abs((runner?.lastHeartbeat ?? 0) - Date.now())).toBeLessThan(60_000)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(waiting)
      }).pipe(Effect.provide(layer))
    }))

  it.scopedLive("remove stops the CLI and deletes the turns and the stored session; the next turn starts afresh", () =>
    Effect.gen(function*() {
      const { dir, layer } = yield* setup
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        const store = yield* SessionStore.SessionStore
        yield* turn("c1", "one", "t1")
        yield* turn("c1", "two", "t2")
        yield* turn("c2", "other", "t3")
        const session = yield* AgentEntity.sessionRefFor("c1", { cwd: dir })
        const turns = { ...session, subpath: "cluster/turns" }
        expect(Option.map(yield* store.load(turns), (entries) => entries.map((e) => e.uuid))).toEqual(
          Option.some(["t1", "t2"])
        )

        const removed = yield* admin.remove("c1")
        expect(removed).toMatchObject({ conversationId: "c1", stopped: true, turns: 2, transcript: true })
        expect(removed.replies).toBeGreaterThan(0)
        expect(yield* admin.inspect("c1")).toEqual(Option.none())
        expect((yield* admin.list()).map((c) => c.conversationId)).toEqual(["c2"])
        expect(yield* store.load(turns)).toEqual(Option.none())
        expect(yield* Effect.flatMap(AgentEntity.AgentEntity.client, (client) => client("c1").Status())).toMatchObject({
          running: false
        })

        // The same turn id runs again: neither the database nor the store knows it.
        yield* turn("c1", "again", "t1")
        const again = Option.getOrThrow(yield* admin.inspect("c1"))
        expect(again.turns.map((t) => [t.turnId, t.status])).toEqual([["t1", "completed"]])
      }).pipe(Effect.provide(layer))
    }))

  // A conversation being deleted has no client reading it (the client of this turn went away): the
  // turn its CLI ran ends, the conversation takes new turns, and no reply row outlives its request.
  it.scopedLive("remove during a turn: the turn ends, the conversation is not wedged, no reply is left over", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* setup
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        const sql = yield* SqlClient.SqlClient
        const firstMessage = yield* Deferred.make<void>()
        const running = yield* AgentEntity.send("c1", "wait", { turnId: "t1" }).pipe(
          Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
          Stream.runDrain,
          Effect.fork
        )
        expect(yield* Queue.take(started)).toBe("wait")
        yield* Deferred.await(firstMessage)
        yield* Fiber.interrupt(running)
        // The interrupt that the client's going away sends may have ended the turn and its CLI first.
        const removed = yield* admin.remove("c1")
        expect(removed.turns).toBe(1)
        expect(yield* admin.inspect("c1")).toEqual(Option.none())
        const status = yield* Effect.flatMap(AgentEntity.AgentEntity.client, (client) => client("c1").Status())
        expect([status.running, status.busy]).toEqual([false, false])
        yield* turn("c1", "hello", "t2")
        expect(yield* Queue.take(started)).toBe("hello")
        yield* admin.applyRetention({ finishedTurns: Duration.zero })
        const orphans = yield* sql`SELECT COUNT(*) AS n FROM cluster_replies r
          WHERE NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.id = r.request_id)`
        expect(Number(orphans[0]?.n)).toBe(0)
        expect(yield* admin.list()).toEqual([])
      }).pipe(Effect.provide(layer))
    }))

  it.scopedLive("retention deletes finished turns and keeps the ones in flight", () =>
    Effect.gen(function*() {
      const { layer, release, started } = yield* setup
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        yield* turn("c1", "one", "t1")
        yield* turn("c2", "two", "t2")
        const waiting = yield* Effect.fork(turn("c3", "wait", "t3"))
        yield* Queue.take(started)
        yield* Queue.take(started)
        expect(yield* Queue.take(started)).toBe("wait")

        const kept = yield* admin.applyRetention({ finishedTurns: "1 hour" })
        expect(kept).toMatchObject({ turns: 0, messages: 0, replies: 0 })
        const pruned = yield* admin.applyRetention({ finishedTurns: Duration.zero })
        expect(pruned.turns).toBe(2)
        expect(pruned.messages).toBeGreaterThanOrEqual(2)
        expect((yield* admin.list()).map((c) => c.conversationId)).toEqual(["c3"])

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(waiting)
        // Its end is stored as its reply stream closes, which may be just after its client is done.
        yield* admin.applyRetention({ finishedTurns: Duration.zero }).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (r) => r.turns === 1 }),
          Effect.timeout("5 seconds")
        )
        expect(yield* admin.list()).toEqual([])
      }).pipe(Effect.provide(layer))
    }))

  it.scoped("layerRetention applies the policy at once, then every interval, past failures", () =>
    Effect.gen(function*() {
      const rounds = yield* Ref.make(0)
      const fake = Layer.succeed(AgentAdmin.AgentAdmin, {
        list: () => Effect.succeed([]),
        inspect: () => Effect.succeedNone,
        remove: () => Effect.dieMessage("not used"),
        runners: () => Effect.succeed([]),
        applyRetention: (policy) =>
          Ref.updateAndGet(rounds, (n) => n + 1).pipe(
            Effect.flatMap((n) =>
              n === 2
                ? Effect.fail(new AgentAdmin.AdminError({ reason: "SqlError", message: "database gone" }))
                : Effect.succeed({
                  turns: policy.finishedTurns === undefined ? 0 : n,
                  messages: 0,
                  replies: 0,
                  transcripts: 0
                })
            )
          )
      })
      yield* Layer.build(
        AgentAdmin.layerRetention({ finishedTurns: "7 days", interval: "10 minutes" }).pipe(Layer.provide(fake))
      )
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(rounds)).toBe(1)
      yield* TestClock.adjust("9 minutes")
      expect(yield* Ref.get(rounds)).toBe(1)
      yield* TestClock.adjust("1 minute")
      expect(yield* Ref.get(rounds)).toBe(2)
      yield* TestClock.adjust("10 minutes")
      expect(yield* Ref.get(rounds)).toBe(3)
    }))

  it.scopedLive("retention deletes the stored sessions of conversations idle since the cutoff", () =>
    Effect.gen(function*() {
      const { dir, layer } = yield* setup
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        const store = yield* SessionStore.SessionStore
        const idle = yield* AgentEntity.sessionRefFor("idle", { cwd: dir })
        const then = (yield* Clock.currentTimeMillis) - Duration.toMillis("2 days")
        const live = Clock.make()
        const past: Clock.Clock = {
          [Clock.ClockTypeId]: Clock.ClockTypeId,
          unsafeCurrentTimeMillis: () => then,
          currentTimeMillis: Effect.succeed(then),
          unsafeCurrentTimeNanos: () => BigInt(then) * 1_000_000n,
          currentTimeNanos: Effect.succeed(BigInt(then) * 1_000_000n),
          sleep: (duration) => live.sleep(duration)
        }
        // Written two days ago, and never since.
        yield* store.append(idle, [{ type: "user", uuid: "u1" }]).pipe(Effect.withClock(past))
        const recent = yield* AgentEntity.sessionRefFor("recent", { cwd: dir })
        yield* store.append(recent, [{ type: "user", uuid: "u2" }])
        const removed = yield* admin.applyRetention({ idleTranscripts: "1 day" })
        expect(removed).toMatchObject({ turns: 0, transcripts: 1 })
        expect(yield* store.load(idle)).toEqual(Option.none())
        expect(Option.isSome(yield* store.load(recent))).toBe(true)
      }).pipe(Effect.provide(layer))
    }))

  // The envelope carries the client's span (its trace and span ids, stored with the message): the
  // runner's request span has it as its parent, and the turn's own spans descend from that.
  it.scopedLive("the runner's turn span is a child of the client's send span", () =>
    Effect.gen(function*() {
      const { layer } = yield* setup
      const recorder = yield* SpanRecorder.make
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        yield* turn("c1", "one", "t1").pipe(Effect.withSpan("client.first"))
        yield* turn("c1", "two", "t2").pipe(Effect.withSpan("client.second"))
        const named = (name: string) => recorder.spans.filter((span) => span.name === name)
        const ancestors = (span: Tracer.AnySpan): Array<string> =>
          Option.match(span._tag === "Span" ? span.parent : Option.none(), {
            onNone: () => [span.spanId],
            onSome: (parent) => [span.spanId, ...ancestors(parent)]
          })
        const clients = [...named("client.first"), ...named("client.second")]
        const clientSends = named("AgentSession.client.Send")
        const runnerSends = named("AgentSession(c1).Send")
        const prompts = named("AgentSession.send")
        expect([clientSends.length, runnerSends.length, prompts.length]).toEqual([2, 2, 2])
        for (let i = 0; i < 2; i++) {
          const client = clients[i]
          const clientSend = clientSends[i]
          const runnerSend = runnerSends[i]
          expect(ancestors(clientSend!)).toContain(client!.spanId)
          expect(runnerSend!.traceId).toBe(client!.traceId)
          expect(Option.map(runnerSend!.parent, (parent) => parent.spanId)).toEqual(Option.some(clientSend!.spanId))
          expect(ancestors(prompts[i]!)).toContain(runnerSend!.spanId)
        }
        const stored = Option.getOrThrow(yield* admin.inspect("c1"))
        expect(stored.turns.map((t) => t.traceId)).toEqual(clients.map((c) => c.traceId))
      }).pipe(Effect.provide(layer), Effect.withTracer(recorder.tracer))
    }))

  it.scopedLive("turns waiting behind an earlier turn of their conversation count in the runner's backlog", () =>
    Effect.gen(function*() {
      const { layer, release, started } = yield* setup
      yield* Effect.gen(function*() {
        const admin = yield* AgentAdmin.AgentAdmin
        yield* turn("c0", "one", "t0")
        const runner = (yield* admin.list())[0]?.runner ?? ""
        const queued = Metric.value(AgentMetrics.turnsQueued.pipe(Metric.tagged("runner", runner)))
        const before = (yield* queued).value
        // The turns reach the runner through the database: watch the gauge until it gets there.
        const reaches = (value: number) =>
          Effect.repeat(queued, { schedule: Schedule.spaced("10 millis"), until: (state) => state.value === value })
            .pipe(
              Effect.timeout("10 seconds"),
              Effect.zipRight(queued)
            )
        const first = yield* Effect.fork(turn("c1", "wait", "t1"))
        yield* Queue.take(started)
        expect(yield* Queue.take(started)).toBe("wait")
        const second = yield* Effect.fork(turn("c1", "two", "t2"))
        yield* Effect.fork(turn("c1", "three", "t3"))
        // Both later turns reach the runner and wait there; the first one's CLI waits for `release`.
        expect((yield* reaches(before + 2)).value).toBe(before + 2)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        expect(yield* Queue.take(started)).toBe("two")
        expect(yield* Queue.take(started)).toBe("three")
        expect((yield* reaches(before)).value).toBe(before)
      }).pipe(Effect.provide(layer))
    }))
})
