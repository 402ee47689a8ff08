/**
 * `ApprovalStore` implementations: in memory (tests, one process) and in SQL through `@effect/sql`
 * (SQLite embedded, or PostgreSQL for many machines).
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Layer, Option } from "effect"
import * as Decide from "../internal/approvals/decide.js"
import * as SqlStore from "../internal/approvals/sqlStore.js"
import {
  type Approval,
  ApprovalAlreadyDecided,
  ApprovalNotFound,
  ApprovalStore,
  type ApprovalStoreShape
} from "../services/ApprovalStore.js"

/**
 * A store in this process's memory: for tests, and for approvals decided by the process that
 * deferred them.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApprovalStores } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* ApprovalStores.makeMemory
 *   return yield* store.listPending({ projectKey: "-srv-app" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<ApprovalStoreShape> = Effect.sync(() => {
  const approvals = new Map<string, Approval>()
  const shape: ApprovalStoreShape = {
    create: (approval) =>
      Effect.sync(() => {
        if (!approvals.has(approval.id)) approvals.set(approval.id, structuredClone(approval))
      }),
    get: (id) => Effect.sync(() => Option.map(Option.fromNullable(approvals.get(id)), (a) => structuredClone(a))),
    listPending: (filter) =>
      Effect.sync(() =>
        [...approvals.values()]
          .filter((a) =>
            a.state === "pending" && a.projectKey === filter.projectKey &&
            (filter.sessionId === undefined || a.sessionId === filter.sessionId)
          )
          .sort((a, b) => a.createdAt - b.createdAt)
          .map((a) => structuredClone(a))
      ),
    decide: (id, decision, options) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          Effect.suspend((): Effect.Effect<Approval, ApprovalNotFound | ApprovalAlreadyDecided> => {
            const current = approvals.get(id)
            if (current === undefined) return Effect.fail(new ApprovalNotFound({ id }))
            const next = Decide.step(current, structuredClone(decision), now, options)
            if (next._tag !== "Refuse") approvals.set(id, next.approval)
            return next._tag === "Decide"
              ? Effect.succeed(structuredClone(next.approval))
              : Effect.fail(new ApprovalAlreadyDecided({ approval: structuredClone(next.approval) }))
          })
      ),
    expireDue: Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        const expired: Array<Approval> = []
        for (const current of approvals.values()) {
          if (!Decide.isDue(current, now)) continue
          const next = Decide.applied(current, Decide.expiry(current), now)
          approvals.set(current.id, next)
          expired.push(structuredClone(next))
        }
        return expired
      }))
  }
  return shape
})

/**
 * `makeMemory` as a layer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApprovalStore, ApprovalStores } from "effect-claude-agent"
 *
 * const due = Effect.flatMap(ApprovalStore.ApprovalStore, (s) => s.expireDue).pipe(Effect.provide(ApprovalStores.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ApprovalStore> = Layer.effect(ApprovalStore, makeMemory)

/**
 * Options of `makeSql` and `layerSql`.
 *
 * @example
 * ```ts
 * import { ApprovalStores } from "effect-claude-agent"
 *
 * const options: ApprovalStores.SqlOptions = { tablePrefix: "agents" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface SqlOptions {
  /** The table's name prefix: `<prefix>_approvals`. Default `claude`. */
  readonly tablePrefix?: string | undefined
}

/**
 * A store in a SQL database, over an `@effect/sql` client: SQLite (`@effect/sql-sqlite-node`) or
 * PostgreSQL (`@effect/sql-pg`). One table, created if missing: `<prefix>_approvals`. A decision
 * is one `UPDATE … WHERE state = 'pending'`, so of two processes deciding at once exactly one
 * succeeds.
 *
 * @example
 * ```ts
 * import * as SqlClient from "@effect/sql/SqlClient"
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Effect } from "effect"
 * import { ApprovalStores } from "effect-claude-agent"
 *
 * const store = Effect.flatMap(SqlClient.SqlClient, (sql) => ApprovalStores.makeSql(sql)).pipe(
 *   Effect.provide(SqliteClient.layer({ filename: "approvals.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSql = (
  sql: SqlClient.SqlClient,
  options: SqlOptions = {}
): Effect.Effect<ApprovalStoreShape, SqlError> => SqlStore.make(sql, options)

/**
 * `makeSql` as a layer, for a client the caller has (passed in, so that the core entry does not
 * load `@effect/sql`).
 *
 * @example
 * ```ts
 * import * as SqlClient from "@effect/sql/SqlClient"
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Effect, Layer } from "effect"
 * import { ApprovalStores } from "effect-claude-agent"
 *
 * const StoreLive = Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => ApprovalStores.layerSql(sql))).pipe(
 *   Layer.provide(SqliteClient.layer({ filename: "approvals.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (sql: SqlClient.SqlClient, options: SqlOptions = {}): Layer.Layer<ApprovalStore, SqlError> =>
  Layer.effect(ApprovalStore, makeSql(sql, options))
