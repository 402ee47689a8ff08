// `AgentCluster.layerSqlite` in one process over the fake CLI: persisted turns in a SQLite file,
// and the same turn sent twice (what a client does after a failover) read back from the database.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Sharding } from "@effect/cluster"
import { Chunk, Context, Deferred, Effect, Exit, Fiber, Layer, Metric, Queue, Schedule, Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Message, Permission } from "effect-claude-agent"
import { AgentCluster, AgentEntity, AgentMetrics } from "effect-claude-agent/cluster"
import { FakeCli } from "effect-claude-agent/testing"

const setupWith = (entity: Pick<AgentEntity.LayerOptions, "askClient">) =>
  Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-cluster-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const turns = yield* Queue.unbounded<string>()
    const release = yield* Deferred.make<void>()
    const crash = yield* Deferred.make<void>()
    let crashes = 0
    // Each turn is reported; "wait" turns emit one message, then wait for `release`; the first
    // "crash" turn emits one message, then its CLI ends on `crash` (as one stopped with its runner);
    // "tool" turns ask permission to run Bash first.
    const agent = FakeCli.layerClaudeAgent({
      onUserMessage: (message, cli) =>
        Effect.gen(function*() {
          const prompt = FakeCli.userText(message)
          yield* Queue.offer(turns, prompt)
          yield* cli.emit(FakeCli.frames.systemInit())
          if (prompt === "wait") yield* Deferred.await(release)
          if (prompt === "tool") {
            yield* cli.requestRaw({
              subtype: "can_use_tool",
              tool_name: "Bash",
              input: { command: "ls" },
              tool_use_id: "toolu_1",
              permission_suggestions: []
            })
          }
          if (prompt === "crash" && crashes++ === 0) {
            yield* Deferred.await(crash)
            return yield* cli.exit({ signal: "SIGTERM" })
          }
          yield* cli.emit(FakeCli.frames.assistantText(`echo: ${prompt}`))
          yield* cli.emit(FakeCli.frames.result(`echo: ${prompt}`))
        })
    })
    const cluster = AgentCluster.layerSqlite({
      ...entity,
      filename: path.join(dir, "cluster.db"),
      orphanGuard: false, // the fake CLI's pid is made up
      options: { cwd: dir, env: { CLAUDE_CONFIG_DIR: path.join(dir, "config") } },
      shardingConfig: { entityMessagePollInterval: 200, entityTerminationTimeout: 500, shardLockExpiration: 2000 }
    }).pipe(Layer.provide(agent), Layer.provideMerge(NodeContext.layer))
    return { cluster, turns, release, crash }
  })

const setup = setupWith({})

// Turns taken over for `reason`, on any runner.
const takeovers = (reason: string) =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs
      .filter((pair) =>
        pair.metricKey.name === "claude_agent_cluster_turn_takeovers" &&
        pair.metricKey.tags.some((tag) => tag.key === "reason" && tag.value === reason)
      )
      .reduce(
        (sum, pair) =>
          sum +
          ("count" in pair.metricState && typeof pair.metricState.count === "number" ? pair.metricState.count : 0),
        0
      ))

const types = (messages: Chunk.Chunk<Message.Message>) => Chunk.toArray(messages).map((m) => m.type)

describe("AgentCluster.layerSqlite", () => {
  it.scopedLive("a completed turn sent again is not run again", () =>
    Effect.gen(function*() {
      const { cluster, turns } = yield* setup
      yield* Effect.gen(function*() {
        const first = yield* Stream.runCollect(AgentEntity.send("c1", "hello", { turnId: "t1" }))
        expect(types(first)).toEqual(["system", "assistant", "result"])
        const again = yield* Stream.runCollect(AgentEntity.send("c1", "hello", { turnId: "t1" }))
        expect(types(again)).toEqual([])
        expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["hello"])
      }).pipe(Effect.provide(cluster))
    }))

  it.scopedLive("a turn in flight sent again reads the rest of its reply from the database", () =>
    Effect.gen(function*() {
      const { cluster, release, turns } = yield* setup
      yield* Effect.gen(function*() {
        const firstMessage = yield* Deferred.make<void>()
        const original = yield* AgentEntity.send("c2", "wait", { turnId: "t1" }).pipe(
          Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
          Stream.runCollect,
          Effect.fork
        )
        yield* Deferred.await(firstMessage)
        expect(yield* Queue.take(turns)).toBe("wait")
        // The duplicate follows the stored replies (stream chunks read back from SQLite).
        const duplicate = yield* Effect.fork(Stream.runCollect(AgentEntity.send("c2", "wait", { turnId: "t1" })))
        const client = yield* AgentEntity.AgentEntity.client
        yield* client("c2").Status().pipe(Effect.repeat({ until: (s) => s.busy }))
        yield* Deferred.succeed(release, undefined)
        expect(types(yield* Fiber.join(original))).toEqual(["system", "assistant", "result"])
        const read = yield* Fiber.join(duplicate)
        expect(Chunk.toArray(read).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype)))
          .toEqual(["echo: wait"])
        expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual([])
      }).pipe(Effect.provide(cluster))
    }))
})

describe("AgentCluster.layerSqlite: graceful stop", () => {
  it.scopedLive("a turn in flight when the process stops is re-run by the next process, never stored as failed", () =>
    Effect.gen(function*() {
      const { cluster, release, turns } = yield* setup
      const takeoversBefore = yield* takeovers("runner_stopped")
      const gapsBefore = (yield* Metric.value(AgentMetrics.takeoverTime)).count
      // The first process: the turn starts, then the process stops (its layer's scope closes) mid-turn.
      const first = yield* Scope.make()
      const context = yield* Layer.buildWithScope(cluster, first)
      const firstMessage = yield* Deferred.make<void>()
      const original = yield* AgentEntity.send("c3", "wait", { turnId: "t1" }).pipe(
        Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
        Stream.runCollect,
        Effect.provide(context),
        Effect.fork
      )
      yield* Deferred.await(firstMessage)
      expect(yield* Queue.take(turns)).toBe("wait")
      yield* Scope.close(first, Exit.void)
      yield* Fiber.interrupt(original)
      // The next process on the same file re-runs the turn; the client asks for it by its id.
      yield* Deferred.succeed(release, undefined)
      const rerun = yield* Stream.runCollect(AgentEntity.send("c3", "wait", { turnId: "t1" })).pipe(
        Effect.provide(cluster),
        Effect.either
      )
      expect(rerun._tag).toBe("Right")
      if (rerun._tag === "Right") {
        expect(Chunk.toArray(rerun.right).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype)))
          .toEqual(["echo: wait"])
        // The client had read the first attempt's first message: the new attempt is marked.
        const read = Chunk.toArray(rerun.right)
        expect(read.filter(AgentEntity.isRetry)).toHaveLength(1)
        expect(read.slice(read.findIndex(AgentEntity.isRetry) + 1).map((m) => m.type)).toEqual([
          "system",
          "assistant",
          "result"
        ])
      }
      expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["wait"])
      // Counted as a takeover run again, with the time it went without a runner.
      expect(yield* takeovers("runner_stopped")).toBe(takeoversBefore + 1)
      expect((yield* Metric.value(AgentMetrics.takeoverTime)).count).toBe(gapsBefore + 1)
    }))

  it.scopedLive("a turn whose CLI ends while the process stops is re-run by the next process, never stored as failed", () =>
    Effect.gen(function*() {
      const { cluster, crash, turns } = yield* setup
      const first = yield* Scope.make()
      const context = yield* Layer.buildWithScope(cluster, first)
      const firstMessage = yield* Deferred.make<void>()
      yield* AgentEntity.send("c4", "crash", { turnId: "t1" }).pipe(
        Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
        Stream.runDrain,
        Effect.provide(context),
        Effect.fork
      )
      yield* Deferred.await(firstMessage)
      expect(yield* Queue.take(turns)).toBe("crash")
      // The stop begins; the CLI ends while the runner waits for the turn.
      const stopping = yield* Effect.fork(Scope.close(first, Exit.void))
      const sharding = Context.get(context, Sharding.Sharding)
      yield* sharding.isShutdown.pipe(Effect.repeat({ until: (down) => down }))
      yield* Deferred.succeed(crash, undefined)
      yield* Fiber.join(stopping)
      const rerun = yield* Stream.runCollect(AgentEntity.send("c4", "crash", { turnId: "t1" })).pipe(
        Effect.provide(cluster),
        Effect.either
      )
      expect(rerun._tag).toBe("Right")
      if (rerun._tag === "Right") {
        expect(Chunk.toArray(rerun.right).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype)))
          .toEqual(["echo: crash"])
      }
      expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["crash"])
    }))

  it.scopedLive("a turn re-run with no client to read it does not hold up the conversation's next turn", () =>
    Effect.gen(function*() {
      const { cluster, release, turns } = yield* setup
      const first = yield* Scope.make()
      const context = yield* Layer.buildWithScope(cluster, first)
      const firstMessage = yield* Deferred.make<void>()
      yield* AgentEntity.send("c5", "wait", { turnId: "t1" }).pipe(
        Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
        Stream.runDrain,
        Effect.provide(context),
        Effect.fork
      )
      yield* Deferred.await(firstMessage)
      expect(yield* Queue.take(turns)).toBe("wait")
      yield* Scope.close(first, Exit.void)
      yield* Deferred.succeed(release, undefined)
      // The application knows nothing of turn t1: it sends the next prompt, with a new turn id.
      const next = yield* AgentEntity.send("c5", "next").pipe(
        Stream.runCollect,
        Effect.timeout("20 seconds"),
        Effect.provide(cluster)
      )
      expect(Chunk.toArray(next).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype)))
        .toEqual(["echo: next"])
      expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["wait", "next"])
    }))

  it.scopedLive("a turn that completed before a stop, its reply unread, is not run again by the next process", () =>
    Effect.gen(function*() {
      const { cluster, release, turns } = yield* setup
      const stopDuringTurn = Effect.gen(function*() {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(cluster, scope)
        return { context, stop: Scope.close(scope, Exit.void) }
      })
      // 1. The turn starts, its client reads a message, the process stops.
      const one = yield* stopDuringTurn
      const firstMessage = yield* Deferred.make<void>()
      yield* AgentEntity.send("c8", "wait", { turnId: "t1" }).pipe(
        Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
        Stream.runDrain,
        Effect.provide(one.context),
        Effect.fork
      )
      yield* Deferred.await(firstMessage)
      expect(yield* Queue.take(turns)).toBe("wait")
      yield* one.stop
      // 2. The next process re-runs it to its end, but no client reads the reply; it stops too.
      yield* Deferred.succeed(release, undefined)
      const two = yield* stopDuringTurn
      expect(yield* Queue.take(turns)).toBe("wait")
      const status = Effect.flatMap(AgentEntity.AgentEntity.client, (client) => client("c8").Status())
      yield* status.pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (s) => s.turns === 1 }),
        Effect.provide(two.context)
      )
      yield* two.stop
      // 3. The third process hands the stored reply over instead of sending the prompt again.
      const read = yield* Stream.runCollect(AgentEntity.send("c8", "wait", { turnId: "t1" })).pipe(
        Effect.provide(cluster)
      )
      expect(Chunk.toArray(read).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype)))
        .toEqual(["echo: wait"])
      expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual([])
    }))

  it.scopedLive("a stop during a permission wait: the turn is re-run by the next process, which asks again", () =>
    Effect.gen(function*() {
      const { cluster, turns } = yield* setupWith({ askClient: true })
      const conversation = Effect.map(AgentEntity.AgentEntity.client, (client) => client("c9"))
      const pending = Effect.flatMap(conversation, (c) => c.Status()).pipe(
        Effect.filterOrFail((s) => s.pendingPermissions.length > 0, () => "no pending permission yet"),
        Effect.retry(Schedule.spaced("20 millis"))
      )
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(cluster, scope)
      yield* AgentEntity.send("c9", "tool", { turnId: "t1" }).pipe(
        Stream.runDrain,
        Effect.provide(context),
        Effect.fork
      )
      expect((yield* Effect.provide(pending, context)).pendingPermissions.map((p) => p.toolName)).toEqual(["Bash"])
      yield* Scope.close(scope, Exit.void)
      yield* Effect.gen(function*() {
        const waiting = yield* pending
        const answered = yield* Effect.flatMap(
          conversation,
          (c) =>
            c.AnswerPermission({
              toolUseId: waiting.pendingPermissions[0]?.toolUseId ?? "",
              result: Permission.allow()
            })
        )
        expect(answered).toBe(true)
        const read = yield* Stream.runCollect(AgentEntity.send("c9", "tool", { turnId: "t1" }))
        expect(Chunk.toArray(read).filter(Message.isResult).map((r) => ("result" in r ? r.result : r.subtype)))
          .toEqual(["echo: tool"])
      }).pipe(Effect.provide(cluster))
      expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["tool", "tool"])
    }))
})

describe("AgentCluster.layerSqlite: clients that stop reading", () => {
  it.scopedLive("a client that stops at the result does not hold up the conversation's next turn", () =>
    Effect.gen(function*() {
      const { cluster, turns } = yield* setup
      yield* Effect.gen(function*() {
        const head = yield* AgentEntity.send("c6", "first").pipe(Stream.filter(Message.isResult), Stream.runHead)
        expect(head._tag).toBe("Some")
        const next = yield* AgentEntity.send("c6", "second").pipe(Stream.runCollect, Effect.timeout("20 seconds"))
        expect(types(next)).toEqual(["system", "assistant", "result"])
        expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["first", "second"])
      }).pipe(Effect.provide(cluster))
    }))

  it.scopedLive("a client that goes away mid-turn does not hold up the conversation's next turn", () =>
    Effect.gen(function*() {
      const { cluster, release, turns } = yield* setup
      yield* Effect.gen(function*() {
        const firstMessage = yield* Deferred.make<void>()
        const gone = yield* AgentEntity.send("c7", "wait").pipe(
          Stream.tap(() => Deferred.succeed(firstMessage, undefined)),
          Stream.runDrain,
          Effect.fork
        )
        yield* Deferred.await(firstMessage)
        yield* Fiber.interrupt(gone)
        yield* Deferred.succeed(release, undefined)
        const next = yield* AgentEntity.send("c7", "after").pipe(Stream.runCollect, Effect.timeout("20 seconds"))
        expect(types(next)).toEqual(["system", "assistant", "result"])
        expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["wait", "after"])
      }).pipe(Effect.provide(cluster))
    }))
})
