/**
 * effect-claude-agent/cluster: agent conversations as `@effect/cluster` entities, sharded over
 * runners, surviving a runner's death. Needs the optional peer dependencies `@effect/cluster`,
 * `@effect/rpc`, `@effect/sql` (and `@effect/sql-sqlite-node` for `AgentCluster.layerSqlite`).
 *
 * @since 0.1.0
 */

/**
 * The conversation entity: `Send` (persisted, streamed), `Interrupt`, `SetModel`,
 * `SetPermissionMode`, `Status`, `AnswerPermission`, `Stop`; its behaviour layer and the `send` client.
 *
 * @since 0.1.0
 */
export * as AgentEntity from "./AgentEntity.js"

/**
 * Kills the CLIs of a runner that died without running its finalizers.
 *
 * @since 0.1.0
 */
export * as OrphanGuard from "./OrphanGuard.js"

/**
 * Ready-made layouts: `layerSqlite`, one durable runner on a SQLite file; the socket layers for several
 * machines; `layerSessionStore`, the conversations' store on the cluster's database.
 *
 * @since 0.1.0
 */
export * as AgentCluster from "./AgentCluster.js"

/**
 * Operating a cluster: list, inspect and delete conversations from any node; retention.
 *
 * @since 0.1.0
 */
export * as AgentAdmin from "./AgentAdmin.js"

/**
 * The cluster's metrics: turns taken over and their gap, runners' backlog, mirror failures.
 *
 * @since 0.1.0
 */
export * as AgentMetrics from "./AgentMetrics.js"
