// One suite every Budget store passes: memory and SQLite in budgetStore.test.ts, PostgreSQL in
// test/cluster-pg/budget.pgtest.ts. Each test charges ids of its own, so a store shared between
// tests (one database) gives the same answers as a fresh one.
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, TestClock } from "effect"
import * as Budget from "../../src/Budget.js"

let counter = 0
const fresh = (what: string) => `${what}-${process.pid}-${Date.now().toString(36)}-${counter++}`

/** The caps of every test: per tenant (dollars a day, tokens in total), per key, per one pool. */
export const caps: ReadonlyArray<Budget.Cap> = [
  { scope: "tenant", usd: 1, window: "day" },
  { scope: "tenant", tokens: 1000 },
  { scope: "key", usd: 0.5 },
  { scope: "pool", id: "capped", usd: 2 }
]

/**
 * Registers the suite for one store. `make` builds the service over `caps` (a layer per test).
 */
export const conformance = <E>(name: string, layer: Layer.Layer<Budget.Budget, E>) =>
  describe(`Budget conformance: ${name}`, () => {
    const withBudget = <A, E2>(f: (budget: Budget.BudgetShape) => Effect.Effect<A, E2>) =>
      Effect.flatMap(Budget.Budget, f).pipe(Effect.provide(layer))

    it.effect("a charge adds to every scope of the account and reports each cap's standing", () =>
      withBudget((budget) =>
        Effect.gen(function*() {
          const tenant = fresh("tenant")
          const key = fresh("key")
          const first = yield* budget.charge({ tenant, key, pool: "capped" }, { usd: 0.25, tokens: 100 })
          expect(first).toEqual([
            { scope: "key", id: key, window: "total", unit: "usd", spent: 0.25, limit: 0.5 },
            { scope: "pool", id: "capped", window: "total", unit: "usd", spent: expect.any(Number), limit: 2 },
            { scope: "tenant", id: tenant, window: "day", unit: "usd", spent: 0.25, limit: 1 },
            { scope: "tenant", id: tenant, window: "total", unit: "tokens", spent: 100, limit: 1000 }
          ])
          const second = yield* budget.charge({ tenant, key }, { usd: 0.5, tokens: 950 })
          expect(second.map((s) => [s.scope, s.unit, s.spent])).toEqual([
            ["key", "usd", 0.75],
            ["tenant", "usd", 0.75],
            ["tenant", "tokens", 1050]
          ])
          // Reading changes nothing.
          expect(yield* budget.standings({ tenant, key })).toEqual(second)
        })
      ))

    it.effect("an account with no capped scope is charged nothing; a cap with an id caps that id only", () =>
      withBudget((budget) =>
        Effect.gen(function*() {
          expect(yield* budget.charge({}, { usd: 5, tokens: 5 })).toEqual([])
          expect(yield* budget.charge({ pool: fresh("pool") }, { usd: 5, tokens: 5 })).toEqual([])
          expect(yield* budget.standings({ pool: fresh("pool") })).toEqual([])
        })
      ))

    it.effect("a negative charge gives back", () =>
      withBudget((budget) =>
        Effect.gen(function*() {
          const key = fresh("key")
          yield* budget.charge({ key }, { usd: 0.4, tokens: 0 })
          const [after] = yield* budget.charge({ key }, { usd: -0.15, tokens: 0 })
          expect(after?.spent).toBeCloseTo(0.25, 12)
        })
      ))

    it.effect("concurrent charges all count: each is one atomic step", () =>
      withBudget((budget) =>
        Effect.gen(function*() {
          const tenant = fresh("tenant")
          yield* Effect.forEach(
            Array.from({ length: 40 }, (_, i) => i),
            () => budget.charge({ tenant }, { usd: 0.01, tokens: 3 }),
            { concurrency: "unbounded", discard: true }
          )
          const standings = yield* budget.standings({ tenant })
          expect(standings.map((s) => s.spent)).toEqual([expect.closeTo(0.4, 9), 120])
        })
      ))

    it.effect("a daily window starts again at zero on the next UTC day; a total does not (TestClock)", () =>
      withBudget((budget) =>
        Effect.gen(function*() {
          const tenant = fresh("tenant")
          yield* TestClock.setTime(Date.UTC(2026, 10, 26, 23, 59))
          yield* budget.charge({ tenant }, { usd: 0.9, tokens: 600 })
          yield* TestClock.adjust("1 minute")
          const nextDay = yield* budget.standings({ tenant })
          expect(nextDay.map((s) => [s.window, s.spent])).toEqual([["day", 0], ["total", 600]])
          yield* budget.charge({ tenant }, { usd: 0.2, tokens: 0 })
          yield* TestClock.setTime(Date.UTC(2026, 10, 26, 12))
          // The earlier day kept its own total.
          expect((yield* budget.standings({ tenant }))[0]?.spent).toBeCloseTo(0.9, 12)
        })
      ))
  })
