// Unit tests of the pool's slots on their own: the count, the queue (priority, then arrival),
// overflow, the pending deadline, reclaiming and closing.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, FiberRef, Option, Scope, TestClock } from "effect"
import * as FastCheck from "effect/FastCheck"
import * as Slots from "../../../src/internal/pool/slots.js"
import { eventually } from "../../support/waits.js"

interface Hooks {
  readonly freed: { count: number }
  readonly queued: Array<number>
  reclaim: () => Option.Option<Effect.Effect<void>>
}

const makeSlots = (
  settings: {
    readonly maxConcurrent: number
    readonly maxPending?: number
    readonly pendingTimeout?: Duration.DurationInput
  }
) => {
  const hooks: Hooks = { freed: { count: 0 }, queued: [], reclaim: () => Option.none() }
  const slots = Slots.make({
    maxConcurrent: settings.maxConcurrent,
    maxPending: settings.maxPending ?? 1000,
    pendingTimeout: settings.pendingTimeout === undefined ? undefined : Duration.decode(settings.pendingTimeout),
    reclaim: () => hooks.reclaim(),
    onFree: Effect.sync(() => void hooks.freed.count++),
    onQueued: (pending) => Effect.sync(() => void hooks.queued.push(pending))
  })
  return { slots, hooks }
}

// Holds a slot in a scope of its own, closed by the returned effect.
const hold = (slots: Slots.Slots) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Scope.extend(slots.acquire, scope)
    return Scope.close(scope, Exit.void)
  })

// Starts a request that records its name once it holds a slot and keeps it until `release` opens.
const request = (slots: Slots.Slots, name: string, served: Array<string>, release: Deferred.Deferred<void>) =>
  Effect.scoped(Effect.gen(function*() {
    yield* slots.acquire
    served.push(name)
    yield* Deferred.await(release)
  })).pipe(Effect.fork)

describe("Slots", () => {
  it.effect("grants up to maxConcurrent at once; the next request waits until a slot is released", () =>
    Effect.gen(function*() {
      const { hooks, slots } = makeSlots({ maxConcurrent: 2 })
      const first = yield* hold(slots)
      yield* hold(slots)
      expect(slots.used()).toBe(2)
      const third = yield* Effect.fork(hold(slots))
      yield* eventually(() => slots.pending() === 1)
      expect(hooks.queued).toEqual([1])
      yield* first
      const releaseThird = yield* Fiber.join(third)
      expect({ used: slots.used(), pending: slots.pending() }).toEqual({ used: 2, pending: 0 })
      // Passed straight to the waiter: nobody was told a slot is free.
      expect(hooks.freed.count).toBe(0)
      yield* releaseThird
      expect(slots.used()).toBe(1)
      expect(hooks.freed.count).toBe(1)
    }))

  it.effect("waiters are served by priority, then in arrival order", () =>
    Effect.gen(function*() {
      const { slots } = makeSlots({ maxConcurrent: 1 })
      const release = yield* Deferred.make<void>()
      const served: Array<string> = []
      const holder = yield* request(slots, "holder", served, release)
      yield* eventually(() => served.length === 1)
      const fibers: Array<Fiber.RuntimeFiber<void, Slots.SlotError>> = []
      for (const [name, priority] of [["a", 0], ["b", 5], ["c", 0], ["d", 5], ["e", -1]] as const) {
        fibers.push(yield* request(slots, name, served, release).pipe(Effect.locally(Slots.priorityRef, priority)))
        yield* eventually(() => slots.pending() === fibers.length)
      }
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Effect.forEach(fibers, Fiber.join)
      expect(served).toEqual(["holder", "b", "d", "a", "c", "e"])
    }))

  it.effect("a request beyond maxPending fails with PoolFullError at once", () =>
    Effect.gen(function*() {
      const { slots } = makeSlots({ maxConcurrent: 1, maxPending: 1 })
      yield* hold(slots)
      yield* Effect.fork(hold(slots))
      yield* eventually(() => slots.pending() === 1)
      const overflow = yield* Effect.flip(hold(slots))
      expect(overflow).toMatchObject({ _tag: "PoolFullError", pending: 1, maxConcurrent: 1 })
    }))

  it.effect("a wait longer than pendingTimeout fails with PoolTimeoutError and leaves the queue", () =>
    Effect.gen(function*() {
      const { slots } = makeSlots({ maxConcurrent: 1, pendingTimeout: "10 seconds" })
      const release = yield* hold(slots)
      const waiting = yield* Effect.fork(hold(slots))
      yield* eventually(() => slots.pending() === 1)
      yield* TestClock.adjust("10 seconds")
      const error = yield* Effect.flip(Fiber.join(waiting))
      expect(error).toMatchObject({ _tag: "PoolTimeoutError", timeoutMillis: 10_000 })
      expect(slots.pending()).toBe(0)
      yield* release
      expect(slots.used()).toBe(0)
    }))

  it.effect("an interrupted waiter leaves the queue without taking a slot", () =>
    Effect.gen(function*() {
      const { slots } = makeSlots({ maxConcurrent: 1 })
      const release = yield* hold(slots)
      const waiting = yield* Effect.fork(hold(slots))
      yield* eventually(() => slots.pending() === 1)
      yield* Fiber.interrupt(waiting)
      expect(slots.pending()).toBe(0)
      yield* release
      expect(slots.used()).toBe(0)
    }))

  it.effect("when every slot is taken, reclaim's process is stopped and its slot passes to the request", () =>
    Effect.gen(function*() {
      const { hooks, slots } = makeSlots({ maxConcurrent: 1 })
      // A kept process (a spare, say) holds the only slot.
      expect(slots.tryTake()).toBe(true)
      const stopped: Array<string> = []
      hooks.reclaim = () => Option.some(Effect.zipRight(Effect.sync(() => void stopped.push("spare")), slots.release))
      const release = yield* hold(slots)
      expect(stopped).toEqual(["spare"])
      expect({ used: slots.used(), pending: slots.pending() }).toEqual({ used: 1, pending: 0 })
      expect(hooks.freed.count).toBe(0)
      yield* release
      expect(slots.used()).toBe(0)
    }))

  it.effect("tryTake refuses while a request waits, even with a slot about to be free", () =>
    Effect.gen(function*() {
      const { slots } = makeSlots({ maxConcurrent: 1 })
      yield* hold(slots)
      yield* Effect.fork(hold(slots))
      yield* eventually(() => slots.pending() === 1)
      expect(slots.tryTake()).toBe(false)
    }))

  it.effect("closing fails the waiting requests and refuses new ones", () =>
    Effect.gen(function*() {
      const { slots } = makeSlots({ maxConcurrent: 1 })
      yield* hold(slots)
      const waiting = yield* Effect.fork(hold(slots))
      yield* eventually(() => slots.pending() === 1)
      yield* slots.close()
      expect(yield* Effect.flip(Fiber.join(waiting))).toMatchObject({ _tag: "PoolClosedError", stage: "waiting" })
      expect(yield* Effect.flip(hold(slots))).toMatchObject({ _tag: "PoolClosedError", stage: "refused" })
      expect(slots.isClosed()).toBe(true)
      // Other waits (a key's lock) race this one.
      expect(yield* Effect.flip(slots.whenClosed)).toMatchObject({ _tag: "PoolClosedError", stage: "waiting" })
    }))

  it.effect.prop(
    "any mix of priorities: never more than maxConcurrent held, all served, by priority then arrival",
    [FastCheck.constantFrom(1, 1, 2, 4), FastCheck.array(FastCheck.integer({ min: -2, max: 2 }), { maxLength: 12 })],
    ([maxConcurrent, priorities]) =>
      Effect.gen(function*() {
        const { slots } = makeSlots({ maxConcurrent })
        const gate = yield* Deferred.make<void>()
        const blockers = yield* Effect.forEach(Array.from({ length: maxConcurrent }), (_, i) =>
          request(slots, `blocker${i}`, [], gate))
        yield* eventually(() =>
          slots.used() === maxConcurrent
        )
        const served: Array<number> = []
        let peak = 0
        const fibers = yield* Effect.forEach(priorities, (priority, i) =>
          Effect.gen(function*() {
            const fiber = yield* Effect.scoped(Effect.gen(function*() {
              yield* slots.acquire
              peak = Math.max(peak, slots.used())
              served.push(i)
            })).pipe(Effect.fork, Effect.locally(Slots.priorityRef, priority))
            yield* eventually(() => slots.pending() === i + 1)
            return fiber
          }))
        yield* Deferred.succeed(gate, undefined)
        yield* Effect.forEach(blockers, Fiber.join)
        yield* Effect.forEach(fibers, Fiber.join)
        const expected = priorities.map((p, i) => [p, i] as const)
          .sort((a, b) => b[0] - a[0] || a[1] - b[1])
          .map(([, i]) => i)
        // Requests granted together resume in any order: the order is exact with one slot.
        if (maxConcurrent === 1) expect(served).toEqual(expected)
        else expect([...served].sort((a, b) => a - b)).toEqual(priorities.map((_, i) => i))
        expect(peak).toBeLessThanOrEqual(maxConcurrent)
        expect(slots.used()).toBe(0)
        return true
      })
  )
})

describe("Slots.priorityRef", () => {
  it.effect("a request without withPriority has priority 0", () =>
    Effect.map(FiberRef.get(Slots.priorityRef), (p) => expect(p).toBe(0)))
})
