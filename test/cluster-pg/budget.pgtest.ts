// The Budget conformance suite on PostgreSQL (DATABASE_URL from scripts/ci/with-postgres.sh), plus
// what only a server shows: charges racing on separate connections all count.
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Config, Effect, Layer } from "effect"
import * as Budget from "../../src/Budget.js"
import { caps, conformance } from "../unit/budgetConformance.js"

const Pg = PgClient.layerConfig({ url: Config.redacted("DATABASE_URL"), maxConnections: Config.succeed(4) })
const BudgetLive = Layer.unwrapEffect(
  Effect.map(SqlClient.SqlClient, (sql) => Budget.Budget.layerSql(sql, { caps, tablePrefix: "conformance" }))
).pipe(Layer.provide(Pg))

conformance("PostgreSQL", BudgetLive)

describe("Budget on PostgreSQL: charges on separate connections", () => {
  it.live("two services on four connections charging one tenant at once: every charge counts", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const one = yield* Budget.Budget.makeSql(sql, { caps, tablePrefix: "race" })
      const two = yield* Budget.Budget.makeSql(sql, { caps, tablePrefix: "race" })
      const tenant = `race-${Date.now()}`
      yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) => (i % 2 === 0 ? one : two).charge({ tenant }, { usd: 0.01, tokens: 1 }),
        { concurrency: "unbounded", discard: true }
      )
      const standings = yield* one.standings({ tenant })
      expect(standings.map((s) => s.spent)).toEqual([expect.closeTo(0.6, 9), 60])
    }).pipe(Effect.provide(Pg)))
})
