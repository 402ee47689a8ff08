// The SessionStore conformance suite on PostgreSQL (DATABASE_URL from scripts/ci/with-postgres.sh),
// plus what only a server shows: two connections racing to append to one session.
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Config, Effect, Either, Layer } from "effect"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SessionStores from "../../src/layers/SessionStores.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import { conformance } from "../unit/sessionStore/conformance.js"

const Pg = PgClient.layerConfig({ url: Config.redacted("DATABASE_URL"), maxConnections: Config.succeed(4) })
const StoreLive = Layer.unwrapEffect(
  Effect.map(SqlClient.SqlClient, (sql) => SessionStores.layerSql(sql, { tablePrefix: "conformance" }))
).pipe(Layer.provide(Pg))

conformance("PostgreSQL", StoreLive)

describe("SessionStore on PostgreSQL: writers on separate connections", () => {
  it.live("appends racing on one session keep every batch whole and in one sequence", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const ref = { projectKey: `race-${Date.now()}`, sessionId: "s" }
      yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), (i) =>
        store.append(ref, Array.from({ length: 5 }, (_, j) => ({ type: "user", uuid: `b${i}-${j}` }))), {
        concurrency: "unbounded",
        discard: true
      })
      const loaded = yield* store.load(ref)
      const uuids = loaded._tag === "Some"
        ? loaded.value.map((e) =>
          e.uuid ?? ""
        )
        : []
      expect(uuids.length).toBe(40)
      // Each batch's five entries are adjacent and in order: batches do not interleave.
      for (let k = 0; k < 40; k += 5) {
        const batch = uuids[k]?.split("-")[0]
        expect(uuids.slice(k, k + 5)).toEqual([0, 1, 2, 3, 4].map((j) => `${batch}-${j}`))
      }
    }).pipe(Effect.provide(StoreLive)))

  it.live("a writer fenced out on another connection changes nothing", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const ref = { projectKey: `fence-${Date.now()}`, sessionId: "s" }
      const old = yield* store.acquire(ref)
      const current = yield* store.acquire(ref)
      const results = yield* Effect.all([
        Effect.either(store.append(ref, [{ type: "user", uuid: "old" }], { generation: old })),
        Effect.either(store.append(ref, [{ type: "user", uuid: "new" }], { generation: current }))
      ], { concurrency: "unbounded" })
      expect(results.map(Either.isRight)).toEqual([false, true])
      const loaded = yield* store.load(ref)
      expect(loaded._tag === "Some" ? loaded.value.map((e) => e.uuid) : []).toEqual(["new"])
    }).pipe(Effect.provide(StoreLive)))
})
