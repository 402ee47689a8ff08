// The Budget conformance suite on the stores that need no server (memory, SQLite), and what only
// a shared store shows: two services over one database see each other's spend.
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Budget from "../../src/Budget.js"
import { caps, conformance } from "./budgetConformance.js"

conformance("memory", Budget.Budget.layerMemory({ caps }))

const Sqlite = SqliteClient.layer({ filename: ":memory:" })

conformance(
  "SQLite",
  Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => Budget.Budget.layerSql(sql, { caps }))).pipe(
    Layer.provide(Sqlite)
  )
)

describe("Budget in SQL", () => {
  it.effect("two services over one database (two processes, or runners) share the totals", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const one = yield* Budget.Budget.makeSql(sql, { caps, tablePrefix: "shared" })
      const two = yield* Budget.Budget.makeSql(sql, { caps: [{ scope: "tenant", usd: 0.5 }], tablePrefix: "shared" })
      yield* one.charge({ tenant: "acme" }, { usd: 0.3, tokens: 10 })
      const [standing] = yield* two.charge({ tenant: "acme" }, { usd: 0.3, tokens: 0 })
      expect(standing).toMatchObject({ unit: "usd", limit: 0.5 })
      expect(standing?.spent).toBeCloseTo(0.6, 12)
      // Another prefix is another ledger.
      const other = yield* Budget.Budget.makeSql(sql, { caps, tablePrefix: "other" })
      expect((yield* other.standings({ tenant: "acme" })).map((s) => s.spent)).toEqual([0, 0])
    }).pipe(Effect.provide(Sqlite)))
})
