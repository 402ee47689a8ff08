// The multi-runner layout on PostgreSQL: socket runners that own shards and a client-only node
// that only sends (AgentCluster.layerSocketRunner / layerSocketClient). Every process opens its own
// PgClient; all of them share the message tables, and each runner has its own SqlRunnerStorage,
// whose reserved connection holds that runner's shard locks (Postgres advisory locks are per session).
import { ClusterSchema, Entity, type ShardingConfig } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { PgClient } from "@effect/sql-pg"
import { Effect, Option, Redacted, Schema, Stream } from "effect"
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
 * A runner on `host:port` (the cluster entry's socket runner, with its fixes). Needs a `SqlClient`;
 * reads the cluster's secret from `AGENT_CLUSTER_SECRET`.
 */
export const runnerLayer = (options: {
  readonly host: string
  readonly port: number
  readonly prefix: string
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]>
}) => AgentCluster.layerSocketRunner(options)

/**
 * A client-only node: sends to entities, never registers, owns no shards. Needs a `SqlClient`;
 * reads the cluster's secret from `AGENT_CLUSTER_SECRET`.
 */
export const clientLayer = (options: {
  readonly prefix: string
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]>
}) => AgentCluster.layerSocketClient(options)

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
