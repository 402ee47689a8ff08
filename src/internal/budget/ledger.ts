/**
 * Where spend is kept: one running total (dollars, tokens) per scope, id and window, added to
 * atomically and read back in the same step, so that two turns charging at once each see the
 * other's spend. In a `Ref` for one process, or in one SQL table (SQLite, PostgreSQL) for many.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, HashMap, Option, Ref, Schema } from "effect"
import type { Amount } from "./price.js"
import * as Guard from "../schema/guard.js"

/**
 * One total: what it is kept for (`scope`, `id`) and over which window (`"total"`, or
 * `"day:<days since 1970-01-01, UTC>"`).
 *
 * @internal
 */
export interface Row {
  readonly scope: string
  readonly id: string
  readonly window: string
}

/**
 * The store of totals.
 *
 * @internal
 */
export interface Ledger {
  /** Adds `amount` to each row (created at zero if missing); the rows' new totals, in order. */
  readonly add: (rows: ReadonlyArray<Row>, amount: Amount) => Effect.Effect<ReadonlyArray<Amount>>
  /** A row's total, zero if missing. */
  readonly get: (row: Row) => Effect.Effect<Amount>
}

const keyOf = (row: Row) => `${row.scope}\u0000${row.id}\u0000${row.window}`
const none: Amount = { usd: 0, tokens: 0 }

/**
 * Totals in a `Ref`.
 *
 * @internal
 */
export const memory: Effect.Effect<Ledger> = Effect.map(
  Ref.make(HashMap.empty<string, Amount>()),
  (ref): Ledger => ({
    add: (rows, amount) =>
      Ref.modify(ref, (map) => {
        let next = map
        const totals: Array<Amount> = []
        for (const row of rows) {
          const key = keyOf(row)
          const before = Option.getOrElse(HashMap.get(next, key), () => none)
          const after = { usd: before.usd + amount.usd, tokens: before.tokens + amount.tokens }
          next = HashMap.set(next, key, after)
          totals.push(after)
        }
        return [totals, next]
      }),
    get: (row) => Effect.map(Ref.get(ref), (map) => Option.getOrElse(HashMap.get(map, keyOf(row)), () => none))
  })
)

// PostgreSQL may return numeric columns as strings.
const Num = Schema.Union(Schema.Number, Schema.NumberFromString)
const Totals = Schema.Array(Schema.Struct({ usd: Num, tokens: Num }))
const decodeTotals = Guard.lazily(() => Schema.decodeUnknown(Totals))

/**
 * Totals in the table `<prefix>_budget`, created if missing. Each add is one upsert per row that
 * returns the new total, atomic on both databases. A database that cannot be reached is a
 * defect: a budget that cannot be read cannot be enforced.
 *
 * @internal
 */
export const sql = (
  client: SqlClient.SqlClient,
  tablePrefix = "claude"
): Effect.Effect<Ledger, SqlError> =>
  Effect.gen(function*() {
    const table = client(`${tablePrefix}_budget`)
    yield* client`CREATE TABLE IF NOT EXISTS ${table} (
      scope TEXT NOT NULL,
      id TEXT NOT NULL,
      win TEXT NOT NULL,
      usd DOUBLE PRECISION NOT NULL,
      tokens DOUBLE PRECISION NOT NULL,
      PRIMARY KEY (scope, id, win)
    )`
    const addRow = (row: Row, amount: Amount) =>
      client`INSERT INTO ${table} (scope, id, win, usd, tokens)
        VALUES (${row.scope}, ${row.id}, ${row.window}, ${amount.usd}, ${amount.tokens})
        ON CONFLICT (scope, id, win) DO UPDATE SET usd = ${table}.usd + excluded.usd,
          tokens = ${table}.tokens + excluded.tokens
        RETURNING usd, tokens`.pipe(
        Effect.flatMap(decodeTotals),
        Effect.map((rows) => rows[0] ?? none)
      )
    return {
      add: (rows, amount) => Effect.orDie(Effect.forEach(rows, (row) => addRow(row, amount))),
      get: (row) =>
        client`SELECT usd, tokens FROM ${table} WHERE scope = ${row.scope} AND id = ${row.id} AND win = ${row.window}`
          .pipe(Effect.flatMap(decodeTotals), Effect.map((rows) => rows[0] ?? none), Effect.orDie)
    }
  })
