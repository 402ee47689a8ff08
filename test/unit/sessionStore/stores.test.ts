// The conformance suite against the stores that need no server: memory, files, SQLite.
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import { conformance } from "./conformance.js"

conformance("memory", SessionStores.layerMemory)

// A fresh directory per test, removed with the test's layer.
conformance(
  "files",
  Layer.unwrapScoped(
    Effect.map(
      Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "session-store-" })),
      (dir) => SessionStores.layerFiles(dir)
    )
  ).pipe(Layer.provide(NodeContext.layer))
)

conformance(
  "SQLite",
  Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => SessionStores.layerSql(sql))).pipe(
    Layer.provide(SqliteClient.layer({ filename: ":memory:" }))
  )
)
