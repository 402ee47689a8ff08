// One suite every ApprovalStore implementation passes: memory and SQLite here (stores.test.ts),
// PostgreSQL in test/cluster-pg/approvalStore.pgtest.ts. Each test uses ids and a project of its
// own, so a store shared between tests (one database) gives the same answers as a fresh one.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, type Layer, Option, TestClock } from "effect"
import { type Approval, ApprovalStore, type ApprovalStoreShape } from "../../../src/services/ApprovalStore.js"

let counter = 0
const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`

const pending = (overrides: Partial<Approval> = {}): Approval => ({
  id: unique("approval"),
  projectKey: "-srv-app",
  sessionId: "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10",
  cwd: "/srv/app",
  toolUseId: unique("toolu"),
  toolName: "Write",
  input: { file_path: "/srv/app/out.txt", content: "hello" },
  createdAt: 0,
  expiresAt: 60_000,
  state: "pending",
  ...overrides
})

/**
 * Registers the suite for one implementation. `layer` is built once per test.
 */
export const conformance = <E>(name: string, layer: Layer.Layer<ApprovalStore, E>) =>
  describe(`ApprovalStore conformance: ${name}`, () => {
    const withStore = <A, E2>(f: (store: ApprovalStoreShape) => Effect.Effect<A, E2>) =>
      Effect.flatMap(ApprovalStore, f).pipe(Effect.provide(layer))

    it.effect("gets back what was created, deep-equal; a second create with the id changes nothing", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const approval = pending()
          yield* store.create(approval)
          yield* store.create({ ...approval, toolName: "Bash" })
          expect(yield* store.get(approval.id)).toEqual(Option.some(approval))
          expect(yield* store.get(unique("missing"))).toEqual(Option.none())
        })
      ))

    it.effect("lists a project's or a session's pending approvals, oldest first; decided ones drop out", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const projectKey = unique("project")
          const b = pending({ projectKey, sessionId: "s2", createdAt: 20 })
          const a = pending({ projectKey, sessionId: "s1", createdAt: 10 })
          const c = pending({ projectKey, sessionId: "s1", createdAt: 30 })
          const elsewhere = pending({ projectKey: unique("project"), createdAt: 5 })
          for (const approval of [b, a, c, elsewhere]) yield* store.create(approval)
          expect((yield* store.listPending({ projectKey })).map((x) => x.id)).toEqual([a.id, b.id, c.id])
          expect((yield* store.listPending({ projectKey, sessionId: "s1" })).map((x) => x.id)).toEqual([a.id, c.id])
          yield* store.decide(a.id, { state: "approved" })
          expect((yield* store.listPending({ projectKey })).map((x) => x.id)).toEqual([b.id, c.id])
        })
      ))

    it.effect("decides once: the decision, who and when are recorded; a second decision is refused with the first", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(1_000)
          const approval = pending({ expiresAt: 5_000 })
          yield* store.create(approval)
          const edited = { state: "edited" as const, updatedInput: { file_path: "/srv/app/out.txt", content: "safe" } }
          const decided = yield* store.decide(approval.id, edited, { decidedBy: "ada" })
          const expected: Approval = {
            ...approval,
            state: "edited",
            decision: edited,
            decidedBy: "ada",
            decidedAt: 1_000
          }
          expect(decided).toEqual(expected)
          expect(yield* store.get(approval.id)).toEqual(Option.some(expected))
          const second = yield* Effect.either(store.decide(approval.id, { state: "denied", message: "no" }))
          expect(Either.isLeft(second) && second.left._tag === "ApprovalAlreadyDecided" ? second.left.approval : second)
            .toEqual(expected)
          expect(yield* store.get(approval.id)).toEqual(Option.some(expected))
        })
      ))

    it.effect("of two decisions racing, exactly one is recorded; the other is told which", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const approval = pending()
          yield* store.create(approval)
          const outcomes = yield* Effect.all([
            Effect.either(store.decide(approval.id, { state: "approved" }, { decidedBy: "ada" })),
            Effect.either(store.decide(approval.id, { state: "denied", message: "no" }, { decidedBy: "bob" }))
          ], { concurrency: "unbounded" })
          const won = outcomes.filter(Either.isRight).map((o) => o.right)
          const lost = outcomes.filter(Either.isLeft).map((o) => o.left)
          expect(won).toHaveLength(1)
          expect(lost).toHaveLength(1)
          expect(lost[0]?._tag === "ApprovalAlreadyDecided" ? lost[0].approval : lost[0]).toEqual(won[0])
          expect(yield* store.get(approval.id)).toEqual(Option.some(won[0]))
        })
      ))

    it.effect("a decision after the deadline records the expiry and is refused with it", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(0)
          const approval = pending({ expiresAt: 10_000 })
          yield* store.create(approval)
          yield* TestClock.adjust("10 seconds")
          const refused = yield* Effect.flip(store.decide(approval.id, { state: "approved" }, { decidedBy: "ada" }))
          expect(refused._tag).toBe("ApprovalAlreadyDecided")
          const expired = refused._tag === "ApprovalAlreadyDecided" ? refused.approval : undefined
          expect(expired?.state).toBe("expired")
          expect(expired?.decidedAt).toBe(10_000)
          expect(expired?.decidedBy).toBeUndefined()
          expect(expired?.decision?.state === "expired" ? expired.decision.message : "").toContain("expired at")
          expect(yield* store.get(approval.id)).toEqual(Option.some(expired))
        })
      ))

    it.effect("expireDue decides expired exactly the pending approvals past their deadline, once", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(0)
          const projectKey = unique("project")
          const due = pending({ projectKey, expiresAt: 1_000 })
          const later = pending({ projectKey, expiresAt: 100_000 })
          const decided = pending({ projectKey, expiresAt: 1_000 })
          for (const approval of [due, later, decided]) yield* store.create(approval)
          yield* store.decide(decided.id, { state: "denied", message: "no" })
          yield* TestClock.adjust("2 seconds")
          const expired = (yield* store.expireDue).filter((a) => a.projectKey === projectKey)
          expect(expired.map((a) => [a.id, a.state])).toEqual([[due.id, "expired"]])
          expect((yield* store.expireDue).filter((a) => a.projectKey === projectKey)).toEqual([])
          expect((yield* store.listPending({ projectKey })).map((a) => a.id)).toEqual([later.id])
          expect(Option.map(yield* store.get(decided.id), (a) => a.state)).toEqual(Option.some("denied"))
        })
      ))

    it.effect("an explicit expiry is a decision like the others; an unknown id is ApprovalNotFound", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const approval = pending()
          yield* store.create(approval)
          const expired = yield* store.decide(approval.id, { state: "expired", message: "withdrawn" })
          expect(expired.state).toBe("expired")
          const missing = yield* Effect.flip(store.decide(unique("missing"), { state: "approved" }))
          expect(missing._tag).toBe("ApprovalNotFound")
        })
      ))
  })
