// The transcript stores: memory, and SQL on a SQLite file (the same code serves PostgreSQL).
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { TranscriptStore } from "effect-claude-agent/cluster"
import { v5 } from "../../../src/cluster/internal/uuid.js"

const contract = (store: TranscriptStore.TranscriptStoreShape) =>
  Effect.gen(function*() {
    expect(yield* store.load("a")).toEqual(Option.none())
    yield* store.save("a", "")
    expect(yield* store.load("a")).toEqual(Option.some(""))
    yield* store.save("a", "{\"type\":\"user\",\"text\":\"héllo ✓\"}\n")
    yield* store.save("b", "{\"type\":\"user\"}\n")
    expect(yield* store.load("a")).toEqual(Option.some("{\"type\":\"user\",\"text\":\"héllo ✓\"}\n"))
    yield* store.remove("a")
    expect(yield* store.load("a")).toEqual(Option.none())
    expect(yield* store.load("b")).toEqual(Option.some("{\"type\":\"user\"}\n"))
  })

describe("TranscriptStore", () => {
  it.effect("layerMemory keeps, replaces and forgets transcripts", () =>
    Effect.flatMap(TranscriptStore.TranscriptStore, contract).pipe(Effect.provide(TranscriptStore.layerMemory)))

  it.effect("layerLocal keeps nothing and says so", () =>
    Effect.gen(function*() {
      const store = yield* TranscriptStore.TranscriptStore
      yield* store.save("a", "x\n")
      expect(yield* store.load("a")).toEqual(Option.none())
      expect(store.durable).toBe(false)
    }).pipe(Effect.provide(TranscriptStore.layerLocal)))

  it.scopedLive("layerSql on SQLite: one table, created once, rows survive a new client on the same file", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "transcripts-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const filename = path.join(dir, "cluster.db")
      const sqlite = () => SqliteClient.layer({ filename })
      yield* Effect.flatMap(TranscriptStore.TranscriptStore, contract).pipe(
        Effect.provide(TranscriptStore.layerSql().pipe(Layer.provide(sqlite())))
      )
      // Another process, later: the table exists already, the rows are there.
      const again = yield* Effect.gen(function*() {
        const store = yield* TranscriptStore.TranscriptStore
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'claude_transcripts'`
        return { b: yield* store.load("b"), tables: tables.length }
      }).pipe(Effect.provide(TranscriptStore.layerSql().pipe(Layer.provideMerge(sqlite()))))
      expect(again).toEqual({ b: Option.some("{\"type\":\"user\"}\n"), tables: 1 })
      // A table of its own.
      yield* Effect.flatMap(TranscriptStore.TranscriptStore, contract).pipe(
        Effect.provide(TranscriptStore.layerSql({ table: "other_transcripts" }).pipe(Layer.provide(sqlite())))
      )
    }))

  it.scopedLive("layerSql keeps a namespace per table: the same on every later client, another on a new database", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "transcripts-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const namespaceOn = (filename: string, table?: string) =>
        Effect.map(TranscriptStore.TranscriptStore, (store) => store.namespace).pipe(
          Effect.provide(
            TranscriptStore.layerSql({ table }).pipe(
              Layer.provide(SqliteClient.layer({ filename: path.join(dir, filename) }))
            )
          )
        )
      const first = yield* namespaceOn("one.db")
      expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(yield* namespaceOn("one.db")).toBe(first)
      expect(yield* namespaceOn("two.db")).not.toBe(first)
      expect(yield* namespaceOn("one.db", "other_transcripts")).not.toBe(first)
    }))
})

describe("name-based session ids", () => {
  it("v5 matches RFC 9562's example", () => {
    // RFC 9562 appendix A.4: the DNS namespace and "www.example.com".
    expect(v5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe("2ed6657d-e927-568b-95e1-2665a8aea6a2")
  })
})
