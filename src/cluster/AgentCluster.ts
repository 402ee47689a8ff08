/**
 * `AgentCluster`: ready-made cluster layouts for `AgentEntity`.
 *
 * `layerSqlite` is the embedded default: one runner (`SingleRunner`) whose messages, shard locks
 * and transcripts live in one SQLite file, so conversations and the turns in flight survive a
 * restart of the process, with no server to run. For several machines, `layerSocketRunner` and
 * `layerSocketClient` are the socket layout on a shared SQL database (PostgreSQL), with the two
 * fixes this package makes to the Effect 3 cluster line (`layerSqlMessageStorage`,
 * `layerClientProtocol`).
 *
 * @since 0.1.0
 */
import {
  MessageStorage,
  RunnerAddress,
  RunnerHealth,
  Runners,
  Sharding,
  ShardingConfig,
  Snowflake,
  SocketRunner,
  SqlRunnerStorage
} from "@effect/cluster"
import type { CommandExecutor, FileSystem, Path } from "@effect/platform"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import { RpcClientError, RpcSerialization } from "@effect/rpc"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option } from "effect"
import type { ConfigError } from "effect/ConfigError"
import type * as ClaudeAgent from "../ClaudeAgent.js"
import * as AgentEntity from "./AgentEntity.js"
import * as FixedStorage from "./internal/messageStorage.js"
import * as OrphanGuard from "./OrphanGuard.js"
import * as TranscriptStore from "./TranscriptStore.js"

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
  /** The SQLite database file (created if missing): messages, shard locks, transcripts. */
  readonly filename: string
  /**
   * The runner's settings (`@effect/cluster`'s `ShardingConfig`), over those of the environment.
   * `shardLockExpiration` bounds how soon a restarted process takes over the turns in flight.
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
  /** The transcripts' table. Default `claude_transcripts`. */
  readonly transcriptTable?: string | undefined
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
const loadSqlite = Effect.tryPromise({
  try: () => import("@effect/sql-sqlite-node"),
  catch: (cause) =>
    new Error(`AgentCluster.layerSqlite needs the package @effect/sql-sqlite-node (npm i @effect/sql-sqlite-node): ${cause}`)
}).pipe(Effect.orDie)

/**
 * One machine, durable: `SingleRunner` on a SQLite file (with `layerSqlMessageStorage`), the transcripts in the same file
 * (`TranscriptStore.layerSql`), the entity registered, and the orphan guard. Provides `Sharding`
 * (for `AgentEntity.send`); needs `ClaudeAgent` (`AgentPool.layer` to bound the CLIs), and a
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
  Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage | TranscriptStore.TranscriptStore,
  ConfigError | SqlError,
  ClaudeAgent.ClaudeAgent | CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path | R
> =>
  Layer.unwrapEffect(Effect.map(loadSqlite, ({ SqliteClient }) => {
    const store = TranscriptStore.layerSql({ table: options.transcriptTable })
    const guard = options.orphanGuard === false ? Layer.empty : OrphanGuard.layerWatchdog
    return AgentEntity.layer(options).pipe(
      Layer.provide(guard),
      Layer.provideMerge(store),
      Layer.provideMerge(singleRunner(options.shardingConfig)),
      Layer.provide(SqliteClient.layer({ filename: options.filename }))
    )
  }))

/**
 * `@effect/platform-node`'s socket client protocol between cluster nodes, with one fix: a write
 * that fails is an `RpcClientError`, not a defect. In `@effect/rpc` 0.76 the socket protocol's
 * write is `Effect.orDie`: the first write to a runner that was just killed (the acknowledgement
 * of the chunk it sent last) is a defect, which the cluster hands to the caller as the reply, so a
 * client's `Send` died with `SocketError: ECONNRESET` instead of failing over. As an
 * `RpcClientError` it counts as "runner unavailable", and the reply comes from the database, from
 * the runner that takes the conversation over. `layerSocketRunner` and `layerSocketClient` use it.
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
export const layerClientProtocol: Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =
  Layer.effect(
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
   * The node's settings (`@effect/cluster`'s `ShardingConfig`), over its defaults. Give every node
   * of a cluster the same timings.
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

const socketStorage = (prefix: string | undefined) =>
  Layer.mergeAll(
    layerSqlMessageStorage({ prefix }),
    Layer.orDie(prefix === undefined ? SqlRunnerStorage.layer : SqlRunnerStorage.layerWith({ prefix }))
  )

/**
 * A runner of the several-machines layout: listens on `host:port` (and advertises it), registers
 * in the database, takes the locks of its shards and serves the entity layers built on it (provide
 * `AgentEntity.layer(…)` over it). Ping health marks a runner whose socket is gone unhealthy before
 * its heartbeat expires. Needs a `SqlClient` shared with the other nodes (e.g. `PgClient`): each
 * runner's shard locks live on a connection of its own (PostgreSQL advisory locks), so no
 * connection-rotating proxy may sit in between.
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Layer } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 * import { AgentCluster, AgentEntity, OrphanGuard, TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const Runner = AgentEntity.layer({ options: { cwd: "/srv/work" } }).pipe(
 *   Layer.provide([AgentPool.layer({ maxConcurrent: 8 }), TranscriptStore.layerSql(), OrphanGuard.layerWatchdog]),
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
  SocketRunner.layer.pipe(
    Layer.provide(
      RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(layerClientProtocol))
    ),
    Layer.provideMerge(socketStorage(options.prefix)),
    Layer.provide([NodeClusterSocket.layerSocketServer, layerClientProtocol]),
    Layer.provide(ShardingConfig.layer({
      // A turn sent before its client knows which runner owns the conversation (a client's first
      // send) waits for this poll: 1 s rather than the cluster's 10 s, for one query a second.
      entityMessagePollInterval: 1000,
      ...options.shardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(options.host, options.port))
    })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )

/**
 * A client-only node of the several-machines layout (an API server): sends to conversations on
 * whichever runner owns them, never registers, owns no shards. Needs the cluster's `SqlClient`;
 * give it the runners' `shardingConfig` timings.
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
  SocketRunner.layerClientOnly.pipe(
    Layer.provideMerge(socketStorage(options.prefix)),
    Layer.provide(layerClientProtocol),
    Layer.provide(ShardingConfig.layer({ ...options.shardingConfig, runnerAddress: Option.none() })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
