// The multi-runner layout on PostgreSQL: socket runners that own shards and a client-only node
// that only sends. Every process opens its own PgClient; all of them share the message tables
// (AgentCluster.layerSqlMessageStorage), and each has its own SqlRunnerStorage, whose reserved connection holds
// that runner's shard locks (Postgres advisory locks are per session).
import {
  ClusterSchema,
  Entity,
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlRunnerStorage
} from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { Rpc, RpcClientError, RpcSerialization } from "@effect/rpc"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted, Schema, Stream } from "effect"
import { AgentCluster } from "../../src/cluster/index.js"

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
    // Not SqlMessageStorage.layer: 0.60.2 misreads stored stream chunks (see AgentCluster).
    AgentCluster.layerSqlMessageStorage({ prefix }),
    Layer.orDie(SqlRunnerStorage.layerWith({ prefix }))
  )

/**
 * A runner listening on `host:port`: it registers in the runner table, takes the locks of the
 * shards the hash ring gives it, and serves the entity layers built on top of it. Needs a
 * `SqlClient` (see {@link pgLayer}). `shardingConfig` defaults to the cluster's defaults (tests
 * pass {@link testTimings}).
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
      ...options.shardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(options.host, options.port))
    })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )

/**
 * A client-only node: sends to entities, never registers, owns no shards. Needs a `SqlClient`.
 * Its `shardingConfig` should match the runners' (how often it refreshes assignments and polls
 * for replies).
 */
export const clientLayer = (options: {
  readonly prefix: string
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]>
}) =>
  SocketRunner.layerClientOnly.pipe(
    Layer.provideMerge(storage(options.prefix)),
    Layer.provide(layerClientProtocol),
    Layer.provide(ShardingConfig.layer({ ...options.shardingConfig, runnerAddress: Option.none() })),
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
