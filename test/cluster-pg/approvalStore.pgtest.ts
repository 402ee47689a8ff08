// The ApprovalStore conformance suite on PostgreSQL (DATABASE_URL from scripts/ci/with-postgres.sh),
// plus what only a server shows: decisions racing on separate connections.
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Config, Effect, Either, Layer } from "effect"
import * as SqlClient from "@effect/sql/SqlClient"
import * as ApprovalStores from "../../src/layers/ApprovalStores.js"
import { ApprovalStore } from "../../src/services/ApprovalStore.js"
import { conformance } from "../unit/approvals/conformance.js"

const Pg = PgClient.layerConfig({ url: Config.redacted("DATABASE_URL"), maxConnections: Config.succeed(8) })
const StoreLive = Layer.unwrapEffect(
  Effect.map(SqlClient.SqlClient, (sql) => ApprovalStores.layerSql(sql, { tablePrefix: "conformance" }))
).pipe(Layer.provide(Pg))

conformance("PostgreSQL", StoreLive)

describe("ApprovalStore on PostgreSQL: deciders on separate connections", () => {
  it.live("of eight decisions racing on one approval, exactly one is recorded", () =>
    Effect.gen(function*() {
      const store = yield* ApprovalStore
      const id = `race-${Date.now()}`
      const now = Date.now()
      yield* store.create({
        id,
        projectKey: "race",
        sessionId: "s",
        toolUseId: "toolu_1",
        toolName: "Write",
        input: {},
        createdAt: now,
        expiresAt: now + 60_000,
        state: "pending"
      })
      const outcomes = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => Effect.either(store.decide(id, { state: "denied", message: `decider ${i}` }, { decidedBy: `d${i}` })),
        { concurrency: "unbounded" }
      )
      const won = outcomes.filter(Either.isRight)
      expect(won).toHaveLength(1)
      for (const lost of outcomes.filter(Either.isLeft)) {
        expect(lost.left._tag === "ApprovalAlreadyDecided" ? lost.left.approval : lost.left).toEqual(won[0]?.right)
      }
    }).pipe(Effect.provide(StoreLive)))
})
