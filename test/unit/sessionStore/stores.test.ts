// The conformance suite against the stores that need no server: memory, files, SQLite (in memory
// and in a file, the embedded default).
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import { SessionStore } from "../../../src/services/SessionStore.js"
import { conformance } from "./conformance.js"

// The tag's static constructors and the SessionStores names are the same stores.
conformance("memory", SessionStore.layerMemory)

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

const sqlite = (filename: string) =>
  Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => SessionStore.layerSql(sql))).pipe(
    Layer.provide(SqliteClient.layer({ filename }))
  )

conformance("SQLite :memory:", sqlite(":memory:"))

// A database file of its own per test, in a directory removed after the client is closed.
conformance(
  "SQLite file",
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      return sqlite(path.join(yield* fs.makeTempDirectoryScoped({ prefix: "session-store-sqlite-" }), "sessions.db"))
    })
  ).pipe(Layer.provide(NodeContext.layer))
)

describe("SessionStores", () => {
  it("names the tag's static constructors", () => {
    expect(SessionStores.layerMemory).toBe(SessionStore.layerMemory)
    expect(SessionStores.makeMemory).toBe(SessionStore.makeMemory)
  })
})

describe("SessionStore on a SQLite file", () => {
  it.scoped("a store opened again on the file reads what the first wrote; the generation survives too", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const file = path.join(yield* fs.makeTempDirectoryScoped({ prefix: "session-store-sqlite-" }), "sessions.db")
      const ref = { projectKey: "-srv-app", sessionId: "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10" }
      const withStore = <A, E>(f: (store: SessionStore["Type"]) => Effect.Effect<A, E>) =>
        Effect.flatMap(SessionStore, f).pipe(Effect.provide(sqlite(file)))
      const first = yield* withStore((store) =>
        Effect.gen(function*() {
          const generation = yield* store.acquire(ref)
          yield* store.appendAll(ref, [
            { entries: [{ type: "user", uuid: "u1", message: { role: "user", content: "hello" } }] },
            { subpath: "subagents/agent-a1", entries: [{ type: "user", uuid: "s1" }] }
          ], { generation })
          return generation
        })
      )
      yield* withStore((store) =>
        Effect.gen(function*() {
          expect(Option.getOrThrow(yield* store.load(ref)).map((e) => e.uuid)).toEqual(["u1"])
          expect(yield* store.listSubkeys(ref)).toEqual(["subagents/agent-a1"])
          expect((yield* store.listSummaries(ref.projectKey)).map((s) => [s.sessionId, s.firstPrompt])).toEqual([
            [ref.sessionId, "hello"]
          ])
          const next = yield* store.acquire(ref)
          expect(next).toBeGreaterThan(first)
          const stale = yield* Effect.flip(store.append(ref, [{ type: "user", uuid: "u2" }], { generation: first }))
          expect(stale.reason).toBe("StaleWriter")
          // A retried batch from before the reopen stores nothing twice.
          yield* store.append(ref, [{ type: "user", uuid: "u1" }, { type: "user", uuid: "u3" }], { generation: next })
          expect(Option.getOrThrow(yield* store.load(ref)).map((e) => e.uuid)).toEqual(["u1", "u3"])
        })
      )
    }).pipe(Effect.provide(NodeContext.layer)))
})
