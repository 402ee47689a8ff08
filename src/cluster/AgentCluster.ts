/**
 * `AgentCluster`: ready-made cluster layouts for `AgentEntity`.
 *
 * `layerSqlite` is the embedded default: one runner (`SingleRunner`) whose messages, shard locks
 * and conversations (a `SessionStore`) live in one SQLite file, so conversations and the turns in flight survive a
 * restart of the process, with no server to run. For several machines, `layerSocketRunner` and
 * `layerSocketClient` are the socket layout on a shared SQL database (PostgreSQL), with the two
 * fixes this package makes to the Effect 3 cluster line (`layerSqlMessageStorage`,
 * `layerClientProtocol`), and nodes that prove the cluster's secret (`secretConfig`) on every
 * connection before any request is read.
 *
 * @since 0.1.0
 */
import {
  MessageStorage,
  RunnerAddress,
  RunnerHealth,
  Runners,
  RunnerStorage,
  Sharding,
  ShardingConfig,
  Snowflake,
  SocketRunner,
  SqlRunnerStorage
} from "@effect/cluster"
import type { CommandExecutor, FileSystem, Path } from "@effect/platform"
import * as SocketServer from "@effect/platform/SocketServer"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import { RpcClientError, RpcSerialization } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Config, Effect, Layer, type Metric, Option, Redacted, Schema } from "effect"
import type { ConfigError } from "effect/ConfigError"
import type * as ClaudeAgent from "../ClaudeAgent.js"
import * as SessionStores from "../layers/SessionStores.js"
import type { SessionStore } from "../services/SessionStore.js"
import * as AgentEntity from "./AgentEntity.js"
import * as FixedStorage from "./internal/messageStorage.js"
import * as PeerAuth from "./internal/peerAuth.js"
import * as ShardLocks from "./internal/shardLocks.js"
import * as Wakeup from "./internal/wakeup.js"
import * as OrphanGuard from "./OrphanGuard.js"

/**
 * Options of `layerSqlite`: the entity's (`AgentEntity.LayerOptions`), plus where the database is
 * and how the runner behaves.
 *
 * @example
 * ```ts
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const options: AgentCluster.SqliteOptions = {
 *   filename: "agents.db",
 *   options: { model: "claude-sonnet-4-5" },
 *   maxIdleTime: "5 minutes"
 * }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface SqliteOptions<R = never> extends AgentEntity.LayerOptions<R> {
  /** The SQLite database file (created if missing): messages, shard locks, conversations. */
  readonly filename: string
  /**
   * The runner's settings (`@effect/cluster`'s `ShardingConfig`), over those of the environment.
   * `shardLockExpiration` bounds how soon a restarted process takes over the turns in flight.
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
  /**
   * The prefix of the session store's tables (`<prefix>_sessions`, `<prefix>_entries`, see
   * `SessionStores.makeSql`). Default `claude`.
   */
  readonly sessionTablePrefix?: string | undefined
  /** Start `OrphanGuard.layerWatchdog`, so no CLI outlives a killed process. Default `true`. */
  readonly orphanGuard?: boolean | undefined
}

/**
 * `@effect/cluster`'s SQL message storage (`SqlMessageStorage.layerWith`), with one fix: a
 * streamed reply read back from the database. In 0.60.2 every stored chunk of a stream reads back
 * as the stream's end and fails to decode, so a client that must read a turn's messages from the
 * database (its runner died mid-turn, or it sent the same turn again) gets a defect instead. Use it
 * in place of `SqlMessageStorage.layer` wherever `AgentEntity` runs or is called (for
 * `NodeClusterSocket.layer`, with `storage: "byo"` and `SqlRunnerStorage.layer`).
 *
 * @example
 * ```ts
 * import { SqlRunnerStorage } from "@effect/cluster"
 * import { NodeClusterSocket } from "@effect/platform-node"
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Layer } from "effect"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const Storage = Layer.mergeAll(AgentCluster.layerSqlMessageStorage(), Layer.orDie(SqlRunnerStorage.layer))
 * const Runner = NodeClusterSocket.layer({ storage: "byo" }).pipe(
 *   Layer.provide(Storage),
 *   Layer.provideMerge(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlMessageStorage = (
  options: { readonly prefix?: string | undefined } = {}
): Layer.Layer<MessageStorage.MessageStorage, never, SqlClient.SqlClient | ShardingConfig.ShardingConfig> =>
  Layer.scoped(MessageStorage.MessageStorage, FixedStorage.make(options)).pipe(Layer.provide(Snowflake.layerGenerator))

/**
 * The `SessionStore` the conversations of `AgentEntity` live in, on the cluster's own database (the
 * `SqlClient` in context): `SessionStores.layerSql` with its tables `<tablePrefix>_sessions` and
 * `<tablePrefix>_entries` (default prefix `claude`), created if missing. Give it to every runner and
 * to `AgentAdmin`, with the same prefix.
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Layer } from "effect"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const Store = AgentCluster.layerSessionStore({ tablePrefix: "agents" }).pipe(
 *   Layer.provide(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSessionStore = (
  options: SessionStores.SqlOptions = {}
): Layer.Layer<SessionStore, SqlError, SqlClient.SqlClient> =>
  Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => SessionStores.layerSql(sql, options)))

// `SingleRunner.layer` with the fixed message storage.
const singleRunner = (shardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(layerSqlMessageStorage()),
    Layer.provide([Layer.orDie(SqlRunnerStorage.layer), RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layerFromEnv(shardingConfig))
  )

// Loaded when the layer is built, so that importing this entry point does not load SQLite's
// native module for users of other databases.
const loadSqlite = Effect.tryPromise(() => import("@effect/sql-sqlite-node")).pipe(
  Effect.catchAll((e) =>
    Effect.dieMessage(
      "AgentCluster.layerSqlite needs the package @effect/sql-sqlite-node (npm i @effect/sql-sqlite-node): " +
        String(e.error)
    )
  )
)

/**
 * One machine, durable: `SingleRunner` on a SQLite file (with `layerSqlMessageStorage`), the
 * conversations in the same file (`SessionStores.layerSql`), the entity registered, and the orphan
 * guard. Provides `Sharding` (for `AgentEntity.send`), its `SqlClient` and the `SessionStore` (for
 * `AgentAdmin`); needs `ClaudeAgent` (`AgentPool.layer` to bound the CLIs), and a
 * `CommandExecutor`, `FileSystem` and `Path` (`NodeContext.layer`). Requires the optional peer
 * `@effect/sql-sqlite-node`.
 *
 * A process that stops in the middle of a turn (killed, crashed) leaves the turn in the database:
 * the next process on the same file re-runs it from its prompt, resuming the conversation, once
 * the dead process's shard locks expire (`shardLockExpiration`).
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { AgentPool, Message } from "effect-claude-agent"
 * import { AgentCluster, AgentEntity } from "effect-claude-agent/cluster"
 *
 * const Cluster = AgentCluster.layerSqlite({ filename: "agents.db", options: { model: "claude-sonnet-4-5" } }).pipe(
 *   Layer.provide(AgentPool.layer({ maxConcurrent: 2 })),
 *   Layer.provide(NodeContext.layer)
 * )
 *
 * AgentEntity.send("user-42", "What did I ask you yesterday?").pipe(
 *   Stream.filter(Message.isResult),
 *   Stream.runForEach((result) => Effect.log(result.subtype)),
 *   Effect.provide(Cluster),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = <R = never>(
  options: SqliteOptions<R>
): Layer.Layer<
  | Sharding.Sharding
  | Runners.Runners
  | MessageStorage.MessageStorage
  | SessionStore
  | SqlClient.SqlClient,
  ConfigError | SqlError,
  ClaudeAgent.ClaudeAgent | CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path | R
> =>
  Layer.unwrapEffect(Effect.map(loadSqlite, ({ SqliteClient }) => {
    const store = layerSessionStore({ tablePrefix: options.sessionTablePrefix })
    const guard = options.orphanGuard === false ? Layer.empty : OrphanGuard.layerWatchdog
    return AgentEntity.layer(options).pipe(
      Layer.provide(guard),
      Layer.provideMerge(store),
      Layer.provideMerge(singleRunner(options.shardingConfig)),
      Layer.provideMerge(SqliteClient.layer({ filename: options.filename }))
    )
  }))

/**
 * A node of the several-machines layout could not load the cluster's secret: it is not set
 * (`Missing`), or shorter than 32 bytes (`TooShort`). Runners and client-only nodes fail to start
 * with it rather than listen or connect unauthenticated.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const check = Layer.launch(AgentCluster.layerSocketClient()).pipe(
 *   Effect.catchTag("ClusterSecretError", (error) => Effect.logError(error.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ClusterSecretError extends Schema.TaggedError<ClusterSecretError>(
  "effect-claude-agent/cluster/ClusterSecretError"
)("ClusterSecretError", {
  reason: Schema.Literal("Missing", "TooShort"),
  message: Schema.String
}) {}

/**
 * The cluster's shared secret: `AGENT_CLUSTER_SECRET`, read with `Config.redacted` from the
 * current `ConfigProvider` (the environment by default) by `layerSocketRunner`,
 * `layerSocketClient` and `layerClientProtocol`. Every node of a cluster needs the same value, at
 * least 32 bytes (`openssl rand -base64 32`).
 *
 * @example
 * ```ts
 * import { ConfigProvider, Layer } from "effect"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * // e.g. from a secrets file mounted by the orchestrator, instead of the environment
 * declare const fromSecretsFile: ConfigProvider.ConfigProvider
 * const client = AgentCluster.layerSocketClient().pipe(Layer.provide(Layer.setConfigProvider(fromSecretsFile)))
 * ```
 *
 * @since 0.1.0
 * @category configuration
 */
export const secretConfig: Config.Config<Redacted.Redacted> = Config.redacted("AGENT_CLUSTER_SECRET")

const minimumSecretBytes = 32

// The secret as an HMAC key; `where` names the node for the error message.
const loadKey = (where: string) =>
  Effect.gen(function*() {
    const secret = yield* Config.option(secretConfig)
    if (Option.isNone(secret)) {
      return yield* new ClusterSecretError({
        reason: "Missing",
        message:
          `${where} needs the cluster secret AGENT_CLUSTER_SECRET (the same on every node, e.g. \`openssl rand -base64 32\`)`
      })
    }
    const bytes = Buffer.from(Redacted.value(secret.value), "utf8")
    if (bytes.length < minimumSecretBytes) {
      return yield* new ClusterSecretError({
        reason: "TooShort",
        message: `${where}: AGENT_CLUSTER_SECRET has ${bytes.length} bytes, at least ${minimumSecretBytes} are needed`
      })
    }
    return Redacted.make(Uint8Array.from(bytes))
  })

/**
 * Connections a runner refused because the peer did not prove the cluster's secret, tagged with
 * `reason`: `closed` (it closed before proving anything), `timeout` (no proof within 5 s),
 * `bad-proof` (a wrong key, or a handshake replayed from another connection). Each refused host is
 * also logged once as a warning (later refusals at debug level).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const refused = Effect.map(Metric.value(AgentCluster.peersRefused), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const peersRefused: Metric.Metric.Counter<number> = PeerAuth.peersRefused

/**
 * The socket client protocol between cluster nodes: every connection to a runner first proves the
 * cluster's secret (`secretConfig`) and checks the runner's proof (a mutual HMAC-SHA256
 * challenge-response on fresh nonces of both sides, so a recorded handshake is worthless on another
 * connection), then carries `@effect/cluster`'s RPCs as `NodeClusterSocket.layerClientProtocol`
 * does, with one fix: a write that fails is an `RpcClientError`, not a defect. In `@effect/rpc`
 * 0.76 the socket protocol's write is `Effect.orDie`: the first write to a runner that was just
 * killed (the acknowledgement of the chunk it sent last) is a defect, which the cluster hands to
 * the caller as the reply, so a client's `Send` would die with `SocketError: ECONNRESET` instead
 * of failing over. As an `RpcClientError` it counts as "runner unavailable", and the reply comes from
 * the database, from the runner that takes the conversation over. `layerSocketRunner` and
 * `layerSocketClient` use it.
 *
 * @example
 * ```ts
 * import { SocketRunner } from "@effect/cluster"
 * import { Layer } from "effect"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const client = SocketRunner.layerClientOnly.pipe(Layer.provide(AgentCluster.layerClientProtocol))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClientProtocol: Layer.Layer<
  Runners.RpcClientProtocol,
  ConfigError | ClusterSecretError,
  RpcSerialization.RpcSerialization
> = Layer.effect(
  Runners.RpcClientProtocol,
  Effect.map(
    Runners.RpcClientProtocol,
    (make) => (address: RunnerAddress.RunnerAddress) =>
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
      } satisfies typeof protocol))
  )
).pipe(Layer.provide(Layer.unwrapEffect(Effect.map(loadKey("A cluster node"), PeerAuth.layerClientProtocol))))

// The runner's listening socket: the secret is loaded before it binds, and every connection is
// handed to the RPC server only once its peer has proven the secret.
const layerSocketServer = (host: string) =>
  Layer.unwrapEffect(
    Effect.map(loadKey(`The runner on ${host}`), (key) =>
      Layer.effect(
        SocketServer.SocketServer,
        Effect.map(SocketServer.SocketServer, (server) => PeerAuth.authenticateServer(server, key))
      )
        .pipe(Layer.provide(NodeClusterSocket.layerSocketServer)))
  )

/**
 * Options of `layerSocketRunner` and `layerSocketClient`.
 *
 * @example
 * ```ts
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const options: AgentCluster.SocketOptions = { prefix: "agents", shardingConfig: { shardLockExpiration: 10_000 } }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface SocketOptions {
  /** Table prefix of the cluster's tables, so several clusters can share a database. */
  readonly prefix?: string | undefined
  /**
   * The node's settings (`@effect/cluster`'s `ShardingConfig`), over `socketTimings`. Give every node
   * of a cluster the same timings.
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * The timings `layerSocketRunner` and `layerSocketClient` start from, under the node's
 * `shardingConfig`. Shard locks are lease rows (`shardLockDisableAdvisory`): a runner holds its
 * shards only while it renews them, so a runner that stops answering (frozen, partitioned, its
 * host hung) loses them `shardLockExpiration` (15 s) after its last renewal, and another runner
 * takes its conversations over within about 20 s (the lease, the other runners' next
 * `refreshAssignmentsInterval`, 3 s, and their next message poll); a client whose request was on
 * its way to that runner gives up on the connection at its ping timeout (10 to 20 s, fixed in
 * `@effect/rpc`) and reads the reply the new owner stores. PostgreSQL advisory locks, the
 * cluster's default, live as long as the runner's database session, which a frozen process keeps
 * open. Every runner and client of a cluster must use the same lock kind and timings.
 *
 * @example
 * ```ts
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * // A faster takeover (and a runner lost after 6 s without a renewal, a long GC pause included).
 * const runner = AgentCluster.layerSocketRunner({
 *   host: "10.0.0.5",
 *   port: 34431,
 *   shardingConfig: { shardLockExpiration: 6_000 }
 * })
 * ```
 *
 * @since 0.1.0
 * @category configuration
 */
export const socketTimings = {
  shardLockDisableAdvisory: true,
  shardLockExpiration: 15_000,
  // Renewed three times per lease: one slow renewal does not cost a runner its shards.
  shardLockRefreshInterval: 5_000,
  // A turn sent before its client knows which runner owns the conversation (a client's first
  // send) is stored, and its owner woken on PostgreSQL; this poll is the fallback.
  entityMessagePollInterval: 1_000
} satisfies Partial<ShardingConfig.ShardingConfig["Type"]>

const socketStorage = (prefix: string | undefined) =>
  Layer.mergeAll(
    layerSqlMessageStorage({ prefix }),
    Layer.orDie(Layer.scoped(RunnerStorage.RunnerStorage, ShardLocks.make({ prefix })))
  )

/**
 * A runner of the several-machines layout: listens on `host:port` (and advertises it), registers
 * in the database, takes the locks of its shards and serves the entity layers built on it (provide
 * `AgentEntity.layer(…)` over it). Ping health marks a runner whose socket is gone unhealthy before
 * its heartbeat expires. Needs a `SqlClient` shared with the other nodes (e.g. `PgClient`). Its
 * shard locks are leases it renews (`socketTimings`): a runner that stops answering, frozen or cut
 * off, loses its conversations to the others within about 20 s, and one that runs again finds its
 * leases taken and closes those conversations. On PostgreSQL (`@effect/sql-pg`) it also listens for
 * the requests other nodes store for its shards, and takes them at once rather than at its next
 * message poll. Reads the cluster's secret (`secretConfig`) before
 * it binds, and fails with `ClusterSecretError` without it, whatever the address; every connection
 * reaches its RPC server only once the peer has proven the secret (others are counted in
 * `peersRefused`).
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Layer } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 * import { AgentCluster, AgentEntity, OrphanGuard } from "effect-claude-agent/cluster"
 *
 * const Runner = AgentEntity.layer({ options: { cwd: "/srv/work" } }).pipe(
 *   Layer.provide([AgentPool.layer({ maxConcurrent: 8 }), AgentCluster.layerSessionStore(), OrphanGuard.layerWatchdog]),
 *   Layer.provideMerge(AgentCluster.layerSocketRunner({ host: "10.0.0.5", port: 34431 })),
 *   Layer.provideMerge(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") })),
 *   Layer.provide(NodeContext.layer)
 * )
 * Layer.launch(Runner).pipe(NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSocketRunner = (
  options: SocketOptions & { readonly host: string; readonly port: number }
) =>
  Wakeup.layerListen(options.prefix).pipe(Layer.provideMerge(SocketRunner.layer.pipe(
    Layer.provide(
      RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(layerClientProtocol))
    ),
    Layer.provideMerge(socketStorage(options.prefix)),
    Layer.provide([layerSocketServer(options.host), layerClientProtocol]),
    Layer.provide(ShardingConfig.layer({
      ...socketTimings,
      ...options.shardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(options.host, options.port))
    })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )))

/**
 * A client-only node of the several-machines layout (an API server): sends to conversations on
 * whichever runner owns them, never registers, owns no shards. Needs the cluster's `SqlClient`
 * and its secret (`secretConfig`, else `ClusterSecretError`); give it the runners'
 * `shardingConfig` timings.
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Effect, Layer, Stream } from "effect"
 * import { Message } from "effect-claude-agent"
 * import { AgentCluster, AgentEntity } from "effect-claude-agent/cluster"
 *
 * const Client = AgentCluster.layerSocketClient().pipe(
 *   Layer.provideMerge(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") }))
 * )
 * const reply = (userId: string, text: string) =>
 *   AgentEntity.send(userId, text).pipe(Stream.filter(Message.isResult), Stream.runHead, Effect.provide(Client))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSocketClient = (options: SocketOptions = {}) =>
  // `SocketRunner.layerClientOnly`, with the requests it can only store marked for a wake-up.
  Sharding.layer.pipe(
    Layer.provideMerge(Wakeup.layerRunners),
    Layer.provide(RunnerHealth.layerNoop),
    Layer.provideMerge(socketStorage(options.prefix)),
    Layer.provide(layerClientProtocol),
    Layer.provide(ShardingConfig.layer({ ...socketTimings, ...options.shardingConfig, runnerAddress: Option.none() })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
