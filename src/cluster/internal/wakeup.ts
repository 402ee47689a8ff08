/**
 * Waking a runner when a message for one of its shards is stored (PostgreSQL `LISTEN/NOTIFY`).
 *
 * A client-only node that sends before it knows which runner owns the conversation (its first
 * sends, or any send while the shard has no owner in its view) only stores the message: the owner
 * finds it at its next message poll (`entityMessagePollInterval`). Such a request, once stored, is
 * `NOTIFY`d on the cluster's channel with its shard, and every runner `LISTEN`s: the runner that
 * holds the shard polls at once. A request sent straight to its runner is not `NOTIFY`d: that
 * runner reads it from storage on its own, and a second, concurrent read would take it from under
 * the direct path. The poll stays the fallback (a lost notification, a runner whose listening
 * connection is being re-opened, another database).
 *
 * @internal
 */
import { Runners, Sharding } from "@effect/cluster"
import * as ShardId from "@effect/cluster/ShardId"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, FiberRef, Layer, Option, Schedule, Stream } from "effect"
import { globalValue } from "effect/GlobalValue"

/** @internal The channel of a cluster's tables (`prefix`, default `cluster`). */
export const channel = (prefix: string | undefined): string => `${prefix ?? "cluster"}_messages`

/** @internal Whether the request being stored has no runner to be sent to (set by `layerRunners`). */
export const unrouted: FiberRef.FiberRef<boolean> = globalValue(
  Symbol.for("effect-claude-agent/cluster/wakeup/unrouted"),
  () => FiberRef.unsafeMake(false)
)

/**
 * @internal
 * `Runners.layerRpc`, marking the requests it can only store (no known owner) for a wake-up.
 */
export const layerRunners = Layer.effect(
  Runners.Runners,
  Effect.map(Runners.Runners, (runners) =>
    Runners.Runners.of({
      ...runners,
      notify: (options) =>
        Option.isNone(options.address)
          ? Effect.locally(runners.notify(options), unrouted, true)
          : runners.notify(options)
    }))
).pipe(Layer.provide(Runners.layerRpc))

/**
 * @internal
 * What the storage runs after it stored a request of shard `shardId`: on PostgreSQL, if the
 * request has no runner to be sent to, a `NOTIFY` (one short statement, not awaited by the
 * sender); nothing otherwise.
 */
export const makeNotifier = (prefix: string | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const name = channel(prefix)
    return sql.onDialectOrElse({
      pg: () => (shardId: string): Effect.Effect<void> =>
        Effect.flatMap(FiberRef.get(unrouted), (wake) =>
          wake
            ? sql`SELECT pg_notify(${name}, ${shardId})`.pipe(
              Effect.catchAllCause((cause) => Effect.logDebug("cluster wake-up: NOTIFY failed", cause)),
              Effect.forkIn(scope),
              Effect.asVoid
            )
            : Effect.void),
      orElse: () => (_shardId: string): Effect.Effect<void> => Effect.void
    })
  })

interface Listener {
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
}

// `@effect/sql-pg`'s client, when the node's `SqlClient` is one: loaded only on PostgreSQL, so
// that the package stays an optional peer of this one.
const pgListener: Effect.Effect<Option.Option<Listener>> = Effect.tryPromise(() => import("@effect/sql-pg/PgClient"))
  .pipe(
    Effect.flatMap((module) => Effect.serviceOption(module.PgClient)),
    Effect.catchAllCause((cause) =>
      Effect.as(
        Effect.logDebug("cluster wake-up: no @effect/sql-pg client; runners find messages by polling", cause),
        Option.none()
      )
    )
  )

const parseShard = (payload: string): Option.Option<ShardId.ShardId> => {
  const index = payload.lastIndexOf(":")
  const id = Number(payload.slice(index + 1))
  return index <= 0 || !Number.isInteger(id) ? Option.none() : Option.some(ShardId.make(payload.slice(0, index), id))
}

/**
 * @internal
 * The runner's side: listens on the cluster's channel and polls storage at once when a stored
 * request belongs to one of its shards. Nothing on databases other than PostgreSQL.
 */
export const layerListen = (
  prefix: string | undefined
): Layer.Layer<never, never, Sharding.Sharding | SqlClient.SqlClient> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    if (!isPg) return
    const listener = yield* pgListener
    if (Option.isNone(listener)) return
    const sharding = yield* Sharding.Sharding
    yield* listener.value.listen(channel(prefix)).pipe(
      Stream.runForEach((payload) =>
        Option.match(parseShard(payload), {
          onNone: () => Effect.void,
          onSome: (shardId) => sharding.hasShardId(shardId) ? sharding.pollStorage : Effect.void
        })
      ),
      Effect.tapErrorCause((cause) =>
        Effect.logWarning("cluster wake-up: LISTEN failed; polling only until it is back", cause)
      ),
      Effect.retry(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
      Effect.forkScoped
    )
  }))
