// The conformance suite against the stores that need no server: memory, files, SQLite.
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import * as SessionStoreSql from "../../../src/layers/SessionStoreSql.js"
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
  SessionStoreSql.layer().pipe(Layer.provide(SqliteClient.layer({ filename: ":memory:" })))
)

