/**
 * `AgentAdmin`: what an operator does with a cluster's conversations, from any node (a runner or
 * a client-only node): list them, inspect one (the runner that owns it, its state, its turns and
 * their last error), delete one, and bound what the database keeps (`RetentionPolicy`,
 * `layerRetention`).
 *
 * Conversations and turns are read from `@effect/cluster`'s message tables: a conversation is
 * listed while the database keeps at least one of its turns. The live state (a turn running, a
 * permission waiting) is asked of the conversation's runner (`AgentEntity.Status`). A
 * conversation's transcript and stored replies are its session in the `SessionStore`, which
 * `remove` and the retention delete through the store.
 *
 * @since 0.1.0
 */
import { type RunnerAddress, Sharding, ShardingConfig } from "@effect/cluster"
import type { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, HashRing, Layer, Metric, Option, Predicate, Schedule, Schema } from "effect"
import * as StoredSession from "../internal/session/storedSession.js"
import { SessionStore, type SessionStoreShape } from "../services/SessionStore.js"
import * as AgentEntity from "./AgentEntity.js"
import * as AgentMetrics from "./AgentMetrics.js"
import * as AdminSql from "./internal/adminSql.js"

/**
 * An admin operation that failed: the database (`reason: "SqlError"`), the session store
 * (`"SessionStoreError"`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const listed = AgentAdmin.AgentAdmin.pipe(
 *   Effect.flatMap((admin) => admin.list()),
 *   Effect.catchTag("AdminError", (e) => Effect.as(Effect.logError(e.message), []))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AdminError extends Schema.TaggedError<AdminError>("effect-claude-agent/cluster/AdminError")(
  "AdminError",
  { reason: Schema.String, message: Schema.String }
) {}

const toAdminError = (e: { readonly _tag: string; readonly message: string }) =>
  new AdminError({ reason: e._tag, message: e.message })

/**
 * A conversation as the database knows it (`list`).
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const line = (c: AgentAdmin.ConversationSummary) => `${c.conversationId} on ${c.runner ?? "no runner"}: ${c.state}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConversationSummary = Schema.Struct({
  conversationId: Schema.String,
  /** Its shard, e.g. `default:17`. */
  shardId: Schema.String,
  /** The runner that owns the shard now (host:port), `null` when no runner is healthy. */
  runner: Schema.NullOr(Schema.String),
  /** `busy`: a turn is queued or running (the database has a turn without its end). */
  state: Schema.Literal("idle", "busy"),
  /** Turns the database keeps, and those of them not over. */
  turnCount: Schema.Number,
  openTurns: Schema.Number,
  /** When its first and last kept turns were sent, in milliseconds since the epoch. */
  firstAt: Schema.Number,
  lastAt: Schema.Number
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ConversationSummary extends Schema.Schema.Type<typeof ConversationSummary> {}

/**
 * One turn of a conversation (`inspect`).
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const failed = (turns: ReadonlyArray<AgentAdmin.Turn>) => turns.filter((t) => t.status === "failed")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Turn = Schema.Struct({
  turnId: Schema.String,
  /**
   * `pending` (no reply stored yet: queued behind an earlier turn, or just started), `running`
   * (replies stored, no end), `completed`, `failed` (ended with an error: `lastError`),
   * `interrupted` (ended by an interrupt or a stop).
   */
  status: Schema.Literal("pending", "running", "completed", "failed", "interrupted"),
  /** When it was sent, and when it ended, in milliseconds since the epoch. */
  startedAt: Schema.Number,
  endedAt: Schema.NullOr(Schema.Number),
  /** Reply chunks stored for it (a chunk holds one or more messages). */
  chunks: Schema.Number,
  lastError: Schema.NullOr(Schema.String),
  /** The trace of the client's send, to find the turn's spans (the runner's are children of it). */
  traceId: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Turn extends Schema.Schema.Type<typeof Turn> {}

/**
 * A conversation in detail (`inspect`).
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const waiting = (c: AgentAdmin.Conversation) => c.state === "waiting_permission"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Conversation = Schema.Struct({
  conversationId: Schema.String,
  shardId: Schema.String,
  runner: Schema.NullOr(Schema.String),
  /**
   * From its runner when it answered: `idle`, `running` (a turn in flight), `waiting_permission`
   * (a tool use waits for `AnswerPermission`); `unknown` when the runner did not answer in time.
   */
  state: Schema.Literal("idle", "running", "waiting_permission", "unknown"),
  /** What its runner answered (`AgentEntity.Status`), `null` if it did not in time. */
  live: Schema.NullOr(AgentEntity.Status),
  turns: Schema.Array(Turn)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Conversation extends Schema.Schema.Type<typeof Conversation> {}

/**
 * What `remove` deleted.
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const summary = (r: AgentAdmin.Removed) => `${r.turns} turns, transcript ${r.transcript ? "removed" : "none"}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Removed {
  readonly conversationId: string
  /** Whether a CLI was running and was stopped; `null` when its runner did not answer in time. */
  readonly stopped: boolean | null
  readonly turns: number
  readonly messages: number
  readonly replies: number
  /** Whether the `SessionStore` had the conversation's session (its transcript, its replies). */
  readonly transcript: boolean
}

/**
 * A runner as the database knows it (`runners`), with the turns of its conversations that are not
 * over: its backlog, from any node.
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const overloaded = (runners: ReadonlyArray<AgentAdmin.RunnerInfo>) => runners.filter((r) => r.openTurns > 50)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunnerInfo {
  /** host:port */
  readonly address: string
  readonly healthy: boolean
  /** Its last heartbeat, in milliseconds since the epoch (`null` if the database's format is unknown). */
  readonly lastHeartbeat: number | null
  /** Turns queued or running on the shards it owns (as `Sharding` assigns them now). */
  readonly openTurns: number
}

/**
 * How long the database keeps what is over. Unset parts keep everything.
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const policy: AgentAdmin.RetentionPolicy = { finishedTurns: "7 days", idleTranscripts: "90 days", interval: "1 hour" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface RetentionPolicy {
  /**
   * Finished turns (completed, failed, interrupted) are deleted with their messages and replies
   * this long after they ended. A turn id sent again after that is answered with the reply the
   * conversation's session keeps for it, and runs again as a new turn once the session is gone.
   */
  readonly finishedTurns?: Duration.DurationInput | undefined
  /**
   * Conversations whose session was not written for this long (`SessionSummary.mtime`) are deleted
   * from the `SessionStore`, transcript and stored replies: the conversation's next turn starts it
   * afresh, with no memory of the earlier ones.
   */
  readonly idleTranscripts?: Duration.DurationInput | undefined
  /** How often `layerRetention` applies the policy. Default 1 hour. */
  readonly interval?: Duration.DurationInput | undefined
}

/**
 * What one application of a `RetentionPolicy` deleted.
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const total = (r: AgentAdmin.RetentionResult) => r.turns + r.transcripts
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RetentionResult {
  readonly turns: number
  readonly messages: number
  readonly replies: number
  readonly transcripts: number
}

/**
 * The operations of `AgentAdmin`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const busy = Effect.flatMap(AgentAdmin.AgentAdmin, (admin) => admin.list({ limit: 1000 })).pipe(
 *   Effect.map((all) => all.filter((c) => c.state === "busy"))
 * )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentAdminShape {
  /** Conversations, the most recently used first (default `limit` 100). */
  readonly list: (
    options?: { readonly limit?: number | undefined; readonly offset?: number | undefined }
  ) => Effect.Effect<ReadonlyArray<ConversationSummary>, AdminError>
  /** One conversation, with its turns and its live state; `None` when the database has no turn of it. */
  readonly inspect: (conversationId: string) => Effect.Effect<Option.Option<Conversation>, AdminError>
  /**
   * Deletes a conversation: stops its CLI on its runner (`AgentEntity.Stop`), deletes its turns'
   * messages and replies, and its transcript. Its next turn starts a new conversation. Meant for a
   * conversation no client is using: a turn sent meanwhile may start it again, and a client still
   * reading a turn of it may not receive that turn's end (it was deleted).
   */
  readonly remove: (conversationId: string) => Effect.Effect<Removed, AdminError>
  /** The registered runners, and the turns not over on each (queued or running). */
  readonly runners: () => Effect.Effect<ReadonlyArray<RunnerInfo>, AdminError>
  /** Applies a retention policy once. */
  readonly applyRetention: (policy: RetentionPolicy) => Effect.Effect<RetentionResult, AdminError>
}

/**
 * The `AgentAdmin` service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const show = (id: string) => Effect.flatMap(AgentAdmin.AgentAdmin, (admin) => admin.inspect(id))
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentAdmin extends Context.Tag("effect-claude-agent/cluster/AgentAdmin")<AgentAdmin, AgentAdminShape>() {}

/**
 * Options of `layer`.
 *
 * @example
 * ```ts
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * const options: AgentAdmin.Options = { prefix: "agents", statusTimeout: "2 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** The cluster's table prefix (`SocketOptions.prefix`). Default `cluster`. */
  readonly prefix?: string | undefined
  /** The entity layer's `namespace` option, if it was given one. */
  readonly namespace?: string | undefined
  /**
   * The conversations' working directory (the entity's `options.cwd`): the store keys their
   * sessions by the CLI's project folder for it. Default: this process's.
   */
  readonly cwd?: string | undefined
  /** How long `inspect` and `remove` wait for the conversation's runner. Default 5 seconds. */
  readonly statusTimeout?: Duration.DurationInput | undefined
}

// The turn's outcome, from its stored exit (`Exit` encoded by `@effect/cluster`).
const outcome = (row: AdminSql.TurnRow): Pick<Turn, "status" | "lastError"> => {
  if (row.endedAt === null) return { status: row.chunks > 0 ? "running" : "pending", lastError: null }
  if (Predicate.isRecord(row.exit) && row.exit._tag === "Success") return { status: "completed", lastError: null }
  const error = failureOf(Predicate.isRecord(row.exit) ? row.exit.cause : undefined)
  return error === null ? { status: "interrupted", lastError: null } : { status: "failed", lastError: error }
}

const decodeFailure = Schema.decodeUnknownOption(AgentEntity.AgentFailure)

// The first failure or defect in an encoded `Cause`, as text.
const failureOf = (cause: unknown): string | null => {
  if (!Predicate.isRecord(cause)) return null
  if (cause._tag === "Fail") {
    // Failures are stored encoded with the RPC's error schema: decoded, each says what it is.
    return Option.match(decodeFailure(cause.error), {
      onNone: () => JSON.stringify(cause.error),
      onSome: (e) => `${e._tag}: ${e.message}`
    })
  }
  if (cause._tag === "Die") return `defect: ${JSON.stringify(cause.defect)}`
  return failureOf(cause.left) ?? failureOf(cause.right)
}

const turnOf = (row: AdminSql.TurnRow): Turn => ({
  turnId: Predicate.isRecord(row.payload) && typeof row.payload.turnId === "string"
    ? row.payload.turnId
    : row.requestId,
  startedAt: row.startedAt,
  endedAt: row.endedAt,
  chunks: row.chunks,
  traceId: row.traceId,
  ...outcome(row)
})

const stateOf = (status: AgentEntity.Status): Conversation["state"] =>
  status.pendingPermissions.length > 0 ? "waiting_permission" : status.busy ? "running" : "idle"

// Which runner owns each shard, as `Sharding` computes it: a hash ring of the healthy runners.
const ownersOf = (
  runners: ReadonlyArray<
    { readonly address: RunnerAddress.RunnerAddress; readonly groups: ReadonlyArray<string>; readonly weight: number }
  >,
  shardsPerGroup: number
) => {
  const rings = new Map<string, HashRing.HashRing<RunnerAddress.RunnerAddress>>()
  for (const runner of runners) {
    for (const group of runner.groups) {
      const ring = rings.get(group) ?? HashRing.make<RunnerAddress.RunnerAddress>()
      rings.set(group, HashRing.add(ring, runner.address, { weight: runner.weight }))
    }
  }
  const owners = new Map<string, Array<RunnerAddress.RunnerAddress> | undefined>()
  return (shardId: string): string | null => {
    const [group = "default", id = "0"] = shardId.split(":")
    if (!owners.has(group)) {
      const ring = rings.get(group)
      owners.set(group, ring === undefined ? undefined : HashRing.getShards(ring, shardsPerGroup))
    }
    const owner = owners.get(group)?.[Number(id) - 1]
    return owner === undefined ? null : `${owner.host}:${owner.port}`
  }
}

// The runners, and the turns not over on the shards each owns.
const runnersOf = (queries: AdminSql.Queries, shardsPerGroup: number): AgentAdminShape["runners"] => () =>
  Effect.gen(function*() {
    const all = yield* queries.allRunners
    const ownerOf = ownersOf(all.filter((r) => r.healthy).map((r) => r.runner), shardsPerGroup)
    const open = new Map<string, number>()
    for (const { open: n, shardId } of yield* queries.openByShard) {
      const owner = ownerOf(shardId)
      if (owner !== null) open.set(owner, (open.get(owner) ?? 0) + n)
    }
    return all.map(({ healthy, lastHeartbeat, runner }): RunnerInfo => {
      const address = `${runner.address.host}:${runner.address.port}`
      return { address, healthy, lastHeartbeat, openTurns: open.get(address) ?? 0 }
    })
  }).pipe(Effect.mapError(toAdminError), Effect.withSpan("AgentAdmin.runners"))

// One application of a retention policy.
const retentionOf =
  (queries: AdminSql.Queries, store: SessionStoreShape, projectKey: string): AgentAdminShape["applyRetention"] =>
  (policy) =>
    Effect.gen(function*() {
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const before = (keep: Duration.DurationInput) => now - Duration.toMillis(Duration.decode(keep))
      let result: RetentionResult = { turns: 0, messages: 0, replies: 0, transcripts: 0 }
      if (policy.finishedTurns !== undefined) {
        const removed = yield* queries.removeFinished(before(policy.finishedTurns), 500)
        const orphans = yield* queries.removeOrphanReplies(before(policy.finishedTurns))
        result = { ...result, ...removed, replies: removed.replies + orphans }
      }
      if (policy.idleTranscripts !== undefined) {
        const cutoff = before(policy.idleTranscripts)
        const idle = (yield* store.listSessions(projectKey)).filter((s) => s.mtime < cutoff)
        yield* Effect.forEach(idle, (s) => store.delete({ projectKey, sessionId: s.sessionId }), { discard: true })
        result = { ...result, transcripts: idle.length }
      }
      yield* Metric.incrementBy(AgentMetrics.retentionRemoved.pipe(Metric.tagged("kind", "turns")), result.turns)
      yield* Metric.incrementBy(
        AgentMetrics.retentionRemoved.pipe(Metric.tagged("kind", "transcripts")),
        result.transcripts
      )
      return result
    }).pipe(Effect.mapError(toAdminError), Effect.withSpan("AgentAdmin.applyRetention"))

/**
 * The admin, on any node of the cluster. Needs the cluster's `SqlClient`, `Sharding` (a runner's
 * or a client-only node's layer) and the runners' `SessionStore` (`AgentCluster.layerSessionStore`).
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Effect, Layer } from "effect"
 * import { AgentAdmin, AgentCluster } from "effect-claude-agent/cluster"
 *
 * const Admin = AgentAdmin.layer({ prefix: "cluster", cwd: "/srv/work" }).pipe(
 *   Layer.provide(AgentCluster.layerSessionStore()),
 *   Layer.provideMerge(AgentCluster.layerSocketClient({ prefix: "cluster" })),
 *   Layer.provideMerge(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") }))
 * )
 * const program = Effect.flatMap(AgentAdmin.AgentAdmin, (admin) => admin.list())
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<AgentAdmin, never, SqlClient.SqlClient | Sharding.Sharding | SessionStore> =>
  Layer.effect(AgentAdmin, make(options))

const make = (options: Options) =>
  Effect.gen(function*() {
    const queries = yield* AdminSql.make({
      prefix: options.prefix ?? "cluster",
      entityType: AgentEntity.AgentEntity.type
    })
    // Needed by the entity's client; also makes sure this node is part of the cluster.
    yield* Sharding.Sharding
    const store = yield* SessionStore
    const projectKey = yield* StoredSession.projectKeyOf(options.cwd ?? ".")
    const sessionOf = (conversationId: string) => ({
      projectKey,
      sessionId: AgentEntity.sessionIdFor(conversationId, options.namespace)
    })
    const config = yield* Effect.serviceOption(ShardingConfig.ShardingConfig)
    const shardsPerGroup = Option.match(config, {
      onNone: () => ShardingConfig.defaults.shardsPerGroup,
      onSome: (c) => c.shardsPerGroup
    })
    const client = yield* AgentEntity.AgentEntity.client
    const timeout = Duration.decode(options.statusTimeout ?? "5 seconds")
    const owners = Effect.map(queries.healthyRunners, (runners) => ownersOf(runners, shardsPerGroup))
    const live = <A>(effect: Effect.Effect<A, unknown>) => effect.pipe(Effect.timeout(timeout), Effect.option)

    const list: AgentAdminShape["list"] = (page = {}) =>
      Effect.gen(function*() {
        const rows = yield* queries.conversations({ limit: page.limit ?? 100, offset: page.offset ?? 0 })
        const ownerOf = yield* owners
        return rows.map((row): ConversationSummary => ({
          ...row,
          runner: ownerOf(row.shardId),
          state: row.openTurns > 0 ? "busy" : "idle"
        }))
      }).pipe(Effect.mapError(toAdminError), Effect.withSpan("AgentAdmin.list"))

    const inspect: AgentAdminShape["inspect"] = (conversationId) =>
      Effect.gen(function*() {
        const rows = yield* queries.turns(conversationId)
        const first = rows[0]
        if (first === undefined) return Option.none()
        const shardId = first.shardId
        const ownerOf = yield* owners
        const status = yield* live(client(conversationId).Status())
        return Option.some<Conversation>({
          conversationId,
          shardId,
          runner: ownerOf(shardId),
          state: Option.match(status, { onNone: () => "unknown", onSome: stateOf }),
          live: Option.getOrNull(status),
          turns: rows.map(turnOf)
        })
      }).pipe(
        Effect.mapError(toAdminError),
        Effect.withSpan("AgentAdmin.inspect", { attributes: { conversationId } })
      )

    const remove: AgentAdminShape["remove"] = (conversationId) =>
      Effect.gen(function*() {
        const stopped = yield* live(client(conversationId).Stop())
        // The turn its CLI was running ends (failed) once it has stored its end: its client reads
        // that end rather than waiting on a request that no longer exists. Bounded: turns queued
        // behind it would keep the conversation busy.
        yield* queries.openTurns(conversationId).pipe(
          Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (open) => open === 0 }),
          Effect.timeout(timeout),
          Effect.ignore
        )
        const removed = yield* queries.remove(conversationId)
        const session = sessionOf(conversationId)
        // The entity's turn records are subpaths of the session: a session with none is read whole.
        const transcript = (yield* store.listSubkeys(session)).length > 0 || Option.isSome(yield* store.load(session))
        yield* store.delete(session)
        yield* Effect.logInfo("AgentAdmin: conversation deleted").pipe(
          Effect.annotateLogs({ conversationId, turns: removed.turns })
        )
        return {
          conversationId,
          stopped: Option.match(stopped, { onNone: () => null, onSome: (s) => s.stopped }),
          ...removed,
          transcript
        }
      }).pipe(
        Effect.mapError(toAdminError),
        Effect.withSpan("AgentAdmin.remove", { attributes: { conversationId } })
      )

    const runners = runnersOf(queries, shardsPerGroup)
    const applyRetention = retentionOf(queries, store, projectKey)

    return AgentAdmin.of({ list, inspect, remove, runners, applyRetention })
  })

/**
 * Applies a `RetentionPolicy` in the background while the layer lives: at once, then every
 * `interval` (default 1 hour). Give it to every runner (the deletes are idempotent, so runners
 * applying it at the same time do no harm); a failed round is logged and the next one runs as
 * planned.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { AgentAdmin } from "effect-claude-agent/cluster"
 *
 * // Over a runner's layer (which provides the SqlClient, Sharding and SessionStore).
 * const Retention = AgentAdmin.layerRetention({ finishedTurns: "7 days", idleTranscripts: "90 days" }).pipe(
 *   Layer.provide(AgentAdmin.layer({ prefix: "cluster" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRetention = (policy: RetentionPolicy): Layer.Layer<never, never, AgentAdmin> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const admin = yield* AgentAdmin
    const round = admin.applyRetention(policy).pipe(
      Effect.tap((removed) =>
        removed.turns + removed.transcripts + removed.replies === 0
          ? Effect.void
          : Effect.logInfo("AgentAdmin: retention applied").pipe(Effect.annotateLogs({ ...removed }))
      ),
      Effect.catchAll((error) => Effect.logWarning("AgentAdmin: retention failed; retried at the next interval", error))
    )
    yield* Effect.forkScoped(Effect.repeat(round, Schedule.spaced(policy.interval ?? "1 hour")))
  }))
