/**
 * Budgets that are enforced: caps on spend, in dollars and/or tokens, per conversation key, per
 * pool and per tenant, over the whole time or per UTC day, kept across sessions and runs.
 *
 * Providing a `Budget` turns it on for every session opened in its scope (`ClaudeAgent.session`,
 * `query`, and `AgentPool` requests). A turn whose account has a cap already spent fails at once
 * with `BudgetExceededError` (nothing is sent); a running turn whose spend crosses a cap is
 * interrupted through the protocol at the message that crossed it, and its message stream ends
 * with `BudgetExceededError`; a pool request whose tenant is over a cap fails before it takes a
 * slot.
 *
 * Spend is charged as the turn runs: each API response's tokens as the messages report them,
 * priced by model (the session's own results' price, else the list price), then replaced with the
 * exact figures of the turn's `result`. Turns in flight see each other's charges at once, so when
 * a cap is crossed each of them stops at its next message: together they overshoot the cap by at
 * most one API response each (plus, with `reserve`, nothing more than what the reservation did
 * not cover), and by the difference between the estimate of a response's output tokens and its
 * result when partial messages are off.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, FiberRef, Layer } from "effect"
import * as Accounts from "./internal/budget/account.js"
import * as Caps from "./internal/budget/caps.js"
import * as Ledger from "./internal/budget/ledger.js"
import type * as Options from "./schema/Options.js"

/**
 * What a cap is kept for: a conversation (`key`: an `AgentPool` conversation key, an `account`'s
 * key, or the session id a session is resumed or started with), a pool (its `name`), a tenant.
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const scope: Budget.Scope = "tenant"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Scope = "key" | "pool" | "tenant"

/**
 * One cap: a limit in dollars (`usd`) and/or tokens (`tokens`: input, output, cache reads and
 * writes together) on the spend of every key, pool or tenant of `scope` (or only of `id`), over
 * the whole time (`window: "total"`, the default) or per UTC day (`"day"`).
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const perTenant: Budget.Cap = { scope: "tenant", usd: 5, window: "day" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Cap {
  readonly scope: Scope
  /** Only this key, pool or tenant; every one of the scope when absent. */
  readonly id?: string | undefined
  readonly usd?: number | undefined
  readonly tokens?: number | undefined
  readonly window?: "total" | "day" | undefined
}

/**
 * Who a turn's spend is charged to: its conversation key, pool and tenant, each when known.
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const account: Budget.Account = { tenant: "acme", key: "support-42" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Account {
  readonly key?: string | undefined
  readonly pool?: string | undefined
  readonly tenant?: string | undefined
}

/**
 * What `Config.tenant` is asked about when a session opens: its key and pool (when it has them)
 * and its options.
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const tenant = (request: Budget.Request) => request.options.cwd?.split("/")[2]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly key: string | undefined
  readonly pool: string | undefined
  readonly options: Options.Options<unknown>
}

/**
 * Dollars and tokens.
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const nothing: Budget.Amount = { usd: 0, tokens: 0 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Amount {
  readonly usd: number
  readonly tokens: number
}

/**
 * The caps, how a session's tenant is found, and what each turn reserves when it starts.
 *
 * `reserve` (default nothing): charged when a turn starts, and a turn whose reservation would
 * take a cap over its limit does not start; the turn's spend counts against it first, and its
 * `result` settles it. It keeps concurrent turns from starting when there is too little left
 * for all of them.
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const config: Budget.Config = {
 *   caps: [{ scope: "tenant", usd: 20, window: "day" }, { scope: "key", tokens: 2_000_000 }],
 *   tenant: (request) => request.key?.split(":")[0]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly caps: ReadonlyArray<Cap>
  /** The tenant of a session opened without one set by `withAccount`. */
  readonly tenant?: ((request: Request) => string | undefined) | undefined
  readonly reserve?: Partial<Amount> | undefined
}

/**
 * Where one cap stands: the spend in its current window against its limit, in its `unit`.
 *
 * @example
 * ```ts
 * import type { Budget } from "effect-claude-agent"
 *
 * const left = (s: Budget.Standing) => Math.max(0, s.limit - s.spent)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Standing {
  readonly scope: Scope
  readonly id: string
  readonly window: "total" | "day"
  readonly unit: "usd" | "tokens"
  readonly spent: number
  readonly limit: number
}

/**
 * The service's operations. Sessions use `charge`; `standings` reads where an account stands.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Budget } from "effect-claude-agent"
 *
 * const report = Effect.flatMap(Budget.Budget, (budget) => budget.standings({ tenant: "acme" }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface BudgetShape {
  readonly config: Config
  /**
   * Adds `amount` (negative to give back) to the spend of every scope of `account`, and returns
   * where each of its caps stands afterwards, in one atomic step per total.
   */
  readonly charge: (account: Account, amount: Amount) => Effect.Effect<ReadonlyArray<Standing>>
  /** Where each cap of `account` stands now. */
  readonly standings: (account: Account) => Effect.Effect<ReadonlyArray<Standing>>
}

const fromLedger = (config: Config, ledger: Ledger.Ledger): BudgetShape => {
  const charge = (account: Account, amount: Amount) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const planned = Caps.plan(config.caps, account, now)
      if (planned.rows.length === 0) return Effect.succeed([])
      return Effect.map(ledger.add(planned.rows, amount), (totals) => Caps.standings(planned, totals))
    })
  return {
    config,
    charge,
    standings: (account) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const planned = Caps.plan(config.caps, account, now)
        return Effect.map(Effect.forEach(planned.rows, ledger.get), (totals) => Caps.standings(planned, totals))
      })
  }
}

/**
 * A budget over spend kept in memory (`makeMemory`, `layerMemory`) or in SQL (`makeSql`,
 * `layerSql`). Provide it to the program, or to the part of it whose sessions it caps.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Budget, ClaudeAgent } from "effect-claude-agent"
 *
 * const capped = ClaudeAgent.query("Refactor the parser").pipe(
 *   Stream.runDrain,
 *   Budget.withAccount({ tenant: "acme" }),
 *   Effect.provide(Budget.Budget.layerMemory({ caps: [{ scope: "tenant", usd: 2, window: "day" }] }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class Budget extends Context.Tag("effect-claude-agent/Budget")<Budget, BudgetShape>() {
  /**
   * Spend kept in a `Ref`: for one process.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { Budget } from "effect-claude-agent"
   *
   * const left = Effect.gen(function*() {
   *   const budget = yield* Budget.Budget.makeMemory({ caps: [{ scope: "tenant", usd: 1 }] })
   *   yield* budget.charge({ tenant: "acme" }, { usd: 0.25, tokens: 0 })
   *   return yield* budget.standings({ tenant: "acme" })
   * })
   * ```
   *
   * @since 0.1.0
   */
  static readonly makeMemory = (config: Config): Effect.Effect<BudgetShape> =>
    Effect.map(Ledger.memory, (ledger) => fromLedger(config, ledger))

  /**
   * `makeMemory` as a layer.
   *
   * @example
   * ```ts
   * import { Budget } from "effect-claude-agent"
   *
   * const Budgets = Budget.Budget.layerMemory({ caps: [{ scope: "key", tokens: 1_000_000, window: "day" }] })
   * ```
   *
   * @since 0.1.0
   */
  static readonly layerMemory = (config: Config): Layer.Layer<Budget> => Layer.effect(Budget, Budget.makeMemory(config))

  /**
   * Spend kept in the table `<tablePrefix>_budget` (default `claude_budget`, created if missing)
   * of a SQL database: SQLite (`@effect/sql-sqlite-node`) or PostgreSQL (`@effect/sql-pg`), for
   * many processes or runners. Each charge is one upsert per total that returns the new total.
   * The client is passed in, so that the core entry does not load `@effect/sql`. A database that
   * cannot be reached while a session charges is a defect: a budget that cannot be read cannot be
   * enforced.
   *
   * @example
   * ```ts
   * import * as SqlClient from "@effect/sql/SqlClient"
   * import { SqliteClient } from "@effect/sql-sqlite-node"
   * import { Effect } from "effect"
   * import { Budget } from "effect-claude-agent"
   *
   * const budget = Effect.flatMap(SqlClient.SqlClient, (sql) =>
   *   Budget.Budget.makeSql(sql, { caps: [{ scope: "pool", usd: 50, window: "day" }] })
   * ).pipe(Effect.provide(SqliteClient.layer({ filename: "budget.db" })))
   * ```
   *
   * @since 0.1.0
   */
  static readonly makeSql = (
    sql: SqlClient.SqlClient,
    config: Config & { readonly tablePrefix?: string | undefined }
  ): Effect.Effect<BudgetShape, SqlError> =>
    Effect.map(Ledger.sql(sql, config.tablePrefix), (ledger) => fromLedger(config, ledger))

  /**
   * `makeSql` as a layer.
   *
   * @example
   * ```ts
   * import * as SqlClient from "@effect/sql/SqlClient"
   * import { SqliteClient } from "@effect/sql-sqlite-node"
   * import { Effect, Layer } from "effect"
   * import { Budget } from "effect-claude-agent"
   *
   * const Budgets = Layer.unwrapEffect(
   *   Effect.map(SqlClient.SqlClient, (sql) => Budget.Budget.layerSql(sql, { caps: [{ scope: "tenant", usd: 5 }] }))
   * ).pipe(Layer.provide(SqliteClient.layer({ filename: "budget.db" })))
   * ```
   *
   * @since 0.1.0
   */
  static readonly layerSql = (
    sql: SqlClient.SqlClient,
    config: Config & { readonly tablePrefix?: string | undefined }
  ): Layer.Layer<Budget, SqlError> => Layer.effect(Budget, Budget.makeSql(sql, config))
}

/**
 * Charges the sessions `self` opens to `account` (merged over what an enclosing `withAccount`
 * set): a tenant, a conversation key, a pool name. An `AgentPool` sets `key` and `pool` itself.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Budget, ClaudeAgent } from "effect-claude-agent"
 *
 * const forTenant = (tenant: string, prompt: string) =>
 *   ClaudeAgent.query(prompt).pipe(Stream.runDrain, Budget.withAccount({ tenant }))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withAccount = (account: Account) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    FiberRef.get(Accounts.current),
    (outer) => Effect.locally(self, Accounts.current, { ...outer, ...Accounts.defined(account) })
  )
