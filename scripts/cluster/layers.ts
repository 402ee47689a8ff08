// The multi-runner layout on PostgreSQL: socket runners that own shards and a client-only node
// that only sends. Every process opens its own PgClient; all of them share the message tables
// (SqlMessageStorage), and each has its own SqlRunnerStorage, whose reserved connection holds
// that runner's shard locks (Postgres advisory locks are per session).
import {
  ClusterError,
  ClusterSchema,
  Entity,
  type Message,
  MessageStorage,
  Reply,
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  Snowflake,
  SqlRunnerStorage
} from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { Rpc, RpcClientError, RpcSerialization } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Option, Redacted, Schema, Stream } from "effect"

/**
 * Timings for tests: a runner that stops heartbeating drops out of the ring after
 * `shardLockExpiration`, and the survivor picks its shards' messages up within one
 * `entityMessagePollInterval`. The production defaults (35 s expiry, 10 s polls) would make
 * a failover test wait a minute.
 */
export const testTimings = {
  refreshAssignmentsInterval: 250,
  entityMessagePollInterval: 500,
  entityReplyPollInterval: 200,
  shardLockRefreshInterval: 1000,
  // Long enough that a runner busy starting CLIs on a 2-core machine still heartbeats in time.
  shardLockExpiration: 5000,
  entityTerminationTimeout: 2000,
  sendRetryInterval: 100,
  runnerHealthCheckInterval: 1000
} satisfies Partial<ShardingConfig.ShardingConfig["Type"]>

/** One PgClient per process, from a `postgres://` URL. */
export const pgLayer = (url: string) => PgClient.layer({ url: Redacted.make(url) })

// The rows of the replies table as the driver returns them (SafeIntegers: ids as bigint).
const ReplyRow = Schema.Struct({
  id: Schema.Union(Schema.BigIntFromSelf, Schema.String),
  kind: Schema.NullOr(Schema.Union(Schema.BigIntFromSelf, Schema.Number)),
  request_id: Schema.Union(Schema.BigIntFromSelf, Schema.String),
  payload: Schema.parseJson(),
  sequence: Schema.NullOr(Schema.Union(Schema.BigIntFromSelf, Schema.Number))
})

/**
 * `SqlMessageStorage` with `repliesFor` read correctly.
 *
 * In @effect/cluster 0.60.2, `SqlMessageStorage` decodes a reply row with
 * `Number(row.kind) === 0` to tell an exit (kind 0) from a stream chunk (kind NULL), and
 * `Number(null)` is 0: every unacknowledged chunk read back from storage is taken for an exit
 * and fails to decode. That path is the one a node takes when it cannot get the replies of a
 * persisted request straight from the owner: a client-only node, and every client after a
 * failover. (Fixed upstream on the v4 line with a `kind !== null` guard; 0.60.2 is the last v3
 * release.) This layer keeps everything else from `SqlMessageStorage` and reads the replies itself.
 */
export const layerSqlMessageStorage = (options: { readonly prefix: string }) =>
  Layer.scoped(
    MessageStorage.MessageStorage,
    Effect.gen(function*() {
      const upstream = yield* SqlMessageStorage.make({ prefix: options.prefix })
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const table = sql(`${options.prefix}_replies`)
      const decodeRow = Schema.decodeUnknown(ReplyRow)

      const repliesFor = <R extends Rpc.Any>(requests: Iterable<Message.OutgoingRequest<R>>) =>
        Effect.gen(function*() {
          const byId = new Map<string, Message.OutgoingRequest<R>>()
          for (const request of requests) byId.set(String(request.envelope.requestId), request)
          if (byId.size === 0) return []
          // Unacknowledged chunks and exits, oldest first, as upstream's query selects them.
          const rows = yield* sql`
            SELECT id, kind, request_id, payload, sequence
            FROM ${table}
            WHERE request_id IN ${sql.in(Array.from(byId.keys()))}
            AND (kind = 0 OR (kind IS NULL AND acked = FALSE))
            ORDER BY rowid ASC
          `.pipe(
            Effect.provideService(SqlClient.SafeIntegers, true),
            Effect.mapError((cause) => new ClusterError.PersistenceError({ cause }))
          )
          const replies: Array<Reply.Reply<R>> = []
          const failed = new Set<string>()
          for (const raw of rows) {
            const row = yield* Effect.orDie(decodeRow(raw))
            const requestId = String(row.request_id)
            const request = byId.get(requestId)
            if (request === undefined || failed.has(requestId)) continue
            const encoded = row.kind === null
              ? { _tag: "Chunk", id: String(row.id), requestId, values: row.payload, sequence: Number(row.sequence) }
              : { _tag: "WithExit", id: String(row.id), requestId, exit: row.payload }
            const reply = yield* Schema.decodeUnknown(Reply.Reply(request.rpc))(encoded).pipe(
              Effect.provide(request.context),
              Effect.catchAll((error) => {
                // As upstream: a reply that cannot be decoded ends its request with a defect.
                failed.add(requestId)
                return Effect.succeed(
                  new Reply.WithExit({
                    id: Snowflake.Snowflake(String(row.id)),
                    requestId: Snowflake.Snowflake(requestId),
                    exit: Exit.die(error)
                  })
                )
              })
            )
            replies.push(reply)
          }
          return replies
        })

      return MessageStorage.MessageStorage.of({ ...upstream, repliesFor })
    })
  ).pipe(Layer.provide(Snowflake.layerGenerator))

/**
 * `NodeClusterSocket.layerClientProtocol` whose writes fail instead of dying.
 *
 * In @effect/rpc 0.76 the socket protocol's `send` is `Effect.orDie(write(…))`: a write to a
 * runner whose socket was just reset (the runner was killed) is a defect until the read side has
 * noticed. When that write is the acknowledgement of a streamed chunk, `Runners` turns the defect
 * into the request's reply, and the caller's stream dies with `SocketError` instead of switching
 * to storage and going on with the runner that takes over. As an `RpcClientError`, it is treated
 * as `RunnerUnavailable`: the failover path.
 */
export const layerClientProtocol = Layer.effect(
  Runners.RpcClientProtocol,
  Effect.map(Runners.RpcClientProtocol, (make) => (address: RunnerAddress.RunnerAddress) =>
    Effect.map(make(address), (protocol) => ({
      ...protocol,
      send: (request, transferables) =>
        protocol.send(request, transferables).pipe(
          Effect.catchAllDefect((cause) =>
            Effect.fail(
              new RpcClientError.RpcClientError({ reason: "Protocol", message: "write to runner failed", cause })
            )
          )
        )
    } satisfies typeof protocol)))
).pipe(Layer.provide(NodeClusterSocket.layerClientProtocol))

const storage = (prefix: string) =>
  Layer.mergeAll(
    Layer.orDie(layerSqlMessageStorage({ prefix })),
    Layer.orDie(SqlRunnerStorage.layerWith({ prefix }))
  )

/**
 * A runner listening on `host:port`: it registers in the runner table, takes the locks of the
 * shards the hash ring gives it, and serves the entity layers built on top of it. Needs a
 * `SqlClient` (see {@link pgLayer}).
 */
export const runnerLayer = (options: {
  readonly host: string
  readonly port: number
  readonly prefix: string
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]>
}) =>
  SocketRunner.layer.pipe(
    // Ping health: a runner whose socket is gone is marked unhealthy before its heartbeat expires.
    Layer.provide(
      RunnerHealth.layerPing.pipe(
        Layer.provide(Runners.layerRpc),
        Layer.provide(layerClientProtocol)
      )
    ),
    Layer.provideMerge(storage(options.prefix)),
    Layer.provide([NodeClusterSocket.layerSocketServer, layerClientProtocol]),
    Layer.provide(ShardingConfig.layer({
      ...testTimings,
      ...options.shardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(options.host, options.port))
    })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )

/** A client-only node: sends to entities, never registers, owns no shards. Needs a `SqlClient`. */
export const clientLayer = (options: {
  readonly prefix: string
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]>
}) =>
  SocketRunner.layerClientOnly.pipe(
    Layer.provideMerge(storage(options.prefix)),
    Layer.provide(layerClientProtocol),
    Layer.provide(ShardingConfig.layer({ ...testTimings, ...options.shardingConfig, runnerAddress: Option.none() })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )

/** One item of the probe's persisted stream: its position and the runner that produced it. */
export class Tick extends Schema.Class<Tick>("Tick")({
  seq: Schema.Number,
  runner: Schema.String
}) {}

/**
 * A probe entity. `Where` answers with the address of the runner serving it; entity ids map to
 * shards independently of the entity type, so `Probe(id).Where()` names the runner that owns
 * every entity with that id. `Ticks` is a persisted stream of `n` items, `delayMs` apart: if its
 * runner dies, the next owner of the shard re-runs it from the last item the client acknowledged.
 */
export const Probe = Entity.make("Probe", [
  Rpc.make("Where", { success: Schema.String }),
  Rpc.make("Ticks", {
    payload: { key: Schema.String, n: Schema.Number, delayMs: Schema.Number },
    primaryKey: ({ key }) => key,
    success: Tick,
    stream: true
  }).annotate(ClusterSchema.Persisted, true)
])

export const ProbeLive = Probe.toLayer(
  Effect.gen(function*() {
    const runner = yield* Entity.CurrentRunnerAddress
    const here = `${runner.host}:${runner.port}`
    return Probe.of({
      Where: () => Effect.succeed(here),
      Ticks: (request) => {
        const from = Option.match(request.lastSentChunkValue, { onNone: () => 0, onSome: (t) => t.seq + 1 })
        if (from >= request.payload.n) return Stream.empty
        return Stream.range(from, request.payload.n - 1).pipe(
          Stream.mapEffect((seq) => Effect.as(Effect.sleep(request.payload.delayMs), new Tick({ seq, runner: here })))
        )
      }
    })
  }),
  { concurrency: "unbounded" }
)
