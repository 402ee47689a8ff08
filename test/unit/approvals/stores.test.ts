// The ApprovalStore conformance suite against the stores that need no server: memory, SQLite.
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import * as ApprovalStores from "../../../src/layers/ApprovalStores.js"
import { conformance } from "./conformance.js"

conformance("memory", ApprovalStores.layerMemory)

conformance(
  "SQLite",
  Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => ApprovalStores.layerSql(sql))).pipe(
    Layer.provide(SqliteClient.layer({ filename: ":memory:" }))
  )
)
