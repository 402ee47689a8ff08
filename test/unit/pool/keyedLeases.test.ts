// Unit tests of the pool's keyed leases on their own, over fake CLIs, a real `Slots` and `Spares`
// (no spares kept unless a test asks).
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Duration, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"
import type * as AgentPool from "../../../src/AgentPool.js"
import type * as AgentSession from "../../../src/AgentSession.js"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import * as SessionServices from "../../../src/layers/SessionServices.js"
import { Transport } from "../../../src/services/Transport.js"
import * as KeyedLeases from "../../../src/internal/pool/keyedLeases.js"
import * as Shutdown from "../../../src/internal/pool/shutdown.js"
import * as Slots from "../../../src/internal/pool/slots.js"
import * as Spares from "../../../src/internal/pool/spares.js"
import * as Message from "../../../src/schema/Message.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"
import { awaitSleep, eventually } from "../../support/waits.js"

// The fake CLI's session id: the one a resumed session must be resumed on.
const FAKE_SESSION_ID = "00000000-0000-4000-8000-000000000001"

const setup = (settings: { readonly maxConcurrent: number; readonly idleTimeToLive?: Duration.DurationInput }) =>
  Effect.gen(function*() {
    const counts = { live: 0 }
    const resumes: Array<string | undefined> = []
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport,
        Effect.flatMap(SessionServices.SessionLaunch, ({ options }) =>
          Effect.gen(function*() {
            const { transport } = yield* FakeCli.make({ onUserMessage: FakeCli.echoTurn })
            resumes.push(options.resume)
            counts.live++
            yield* Effect.addFinalizer(() => Effect.sync(() => void counts.live--))
            return transport
          }))
      )
    })
    const events: Array<AgentPool.PoolEvent> = []
    const publish = (event: AgentPool.PoolEvent) => Effect.sync(() => events.push(event))
    const slots = Slots.make({
      maxConcurrent: settings.maxConcurrent,
      maxPending: 100,
      pendingTimeout: undefined,
      reclaim: () => Option.orElse(spares.reclaim(), () => leases.reclaim()),
      onFree: Effect.void,
      onQueued: () => Effect.void
    })
    const spares = yield* Spares.make({ agent, warm: 0, warmOptions: {}, slots, publish })
    const leases = yield* KeyedLeases.make({
      agent,
      slots,
      spares,
      publish,
      idleTimeToLive: Duration.decode(settings.idleTimeToLive ?? "5 minutes"),
      shutdown: Shutdown.make(),
      inPoolContext: () => (effect) => effect
    })
    return { leases, slots, counts, resumes, events }
  })

// One turn, read to its `result`.
const turn = (session: AgentSession.AgentSession, prompt: string) =>
  Effect.zipRight(
    session.send(prompt),
    session.receiveResponse.pipe(
      Stream.filter(Message.isResult),
      Stream.runCollect,
      Effect.map(Chunk.size)
    )
  )

const chat = (leases: KeyedLeases.KeyedLeases, key: string, prompt: string) =>
  Effect.scoped(Effect.flatMap(leases.lookup(key, undefined), (session) => turn(session, prompt)))

const keyed = (events: ReadonlyArray<AgentPool.PoolEvent>) =>
  events.flatMap((e) =>
    e._tag === "Evicted" ?
      [`Evicted ${e.reason} ${e.key ?? "-"}`]
      : e._tag === "Started" || e._tag === "Reused" || e._tag === "Resumed" ?
      [`${e._tag} ${e.key ?? "-"}`]
      : []
  )

describe("KeyedLeases", () => {
  it.scoped("a key's session stays open, idle, after its use and is reused by the key's next use", () =>
    Effect.gen(function*() {
      const { counts, events, leases, slots } = yield* setup({ maxConcurrent: 2 })
      expect(yield* chat(leases, "a", "one")).toBe(1)
      expect({ idle: leases.idle(), inUse: leases.inUse(), used: slots.used(), live: counts.live })
        .toEqual({ idle: 1, inUse: 0, used: 1, live: 1 })
      expect(yield* chat(leases, "a", "two")).toBe(1)
      expect(counts.live).toBe(1)
      expect(keyed(events)).toEqual(["Started a", "Reused a"])
    }))

  it.scoped("uses of one key take turns; other keys do not wait", () =>
    Effect.gen(function*() {
      const { leases } = yield* setup({ maxConcurrent: 2 })
      const release = yield* Deferred.make<void>()
      const order: Array<string> = []
      const first = yield* Effect.fork(Effect.scoped(Effect.gen(function*() {
        yield* leases.lookup("a", undefined)
        order.push("first")
        yield* Deferred.await(release)
        order.push("first ends")
      })))
      yield* eventually(() => order.length === 1)
      const second = yield* Effect.fork(Effect.scoped(
        Effect.zipRight(leases.lookup("a", undefined), Effect.sync(() => void order.push("second")))
      ))
      yield* Effect.scoped(Effect.zipRight(leases.lookup("b", undefined), Effect.sync(() => void order.push("b"))))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(order).toEqual(["first", "b", "first ends", "second"])
    }))

  it.scoped("an idle session is stopped after idleTimeToLive and its conversation resumed at the next use", () =>
    Effect.gen(function*() {
      const { counts, events, leases, resumes } = yield* setup({ maxConcurrent: 1, idleTimeToLive: "1 minute" })
      yield* chat(leases, "a", "one")
      yield* awaitSleep(60_000)
      yield* TestClock.adjust("59 seconds")
      expect(leases.idle()).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* eventually(() => leases.idle() === 0 && counts.live === 0)
      yield* chat(leases, "a", "two")
      expect(resumes).toEqual([undefined, FAKE_SESSION_ID])
      expect(keyed(events)).toEqual(["Started a", "Evicted idle-expired a", "Started a", "Resumed a"])
    }))

  it.scoped("invalidate stops the key's process and forgets its conversation", () =>
    Effect.gen(function*() {
      const { counts, events, leases, resumes } = yield* setup({ maxConcurrent: 1 })
      yield* chat(leases, "a", "one")
      yield* leases.invalidate("a")
      expect(counts.live).toBe(0)
      yield* chat(leases, "a", "two")
      expect(resumes).toEqual([undefined, undefined])
      expect(keyed(events)).toEqual(["Started a", "Evicted forgotten a", "Started a"])
    }))

  it.scoped("reclaim takes the idle session when it picks it: nobody reuses or picks it again while it stops", () =>
    Effect.gen(function*() {
      const { counts, events, leases } = yield* setup({ maxConcurrent: 2 })
      yield* chat(leases, "a", "one")
      const stop = leases.reclaim()
      expect(Option.isSome(stop)).toBe(true)
      // Before the stop has run: the session is no longer idle, nor the key's.
      expect(leases.idle()).toBe(0)
      expect(Option.isNone(leases.reclaim())).toBe(true)
      if (Option.isSome(stop)) yield* stop.value
      // The slot's new owner runs only once the process has exited.
      expect(counts.live).toBe(0)
      yield* chat(leases, "a", "two")
      expect(keyed(events)).toEqual(["Started a", "Evicted slot-needed a", "Started a", "Resumed a"])
    }))

  it.scoped("reclaim stops the least recently used idle session; its key resumes later", () =>
    Effect.gen(function*() {
      const { events, leases, resumes } = yield* setup({ maxConcurrent: 2 })
      yield* chat(leases, "a", "one")
      yield* chat(leases, "b", "one")
      yield* chat(leases, "a", "two")
      // Both slots held by idle sessions: `c` takes b's, the least recently used.
      yield* chat(leases, "c", "one")
      yield* chat(leases, "b", "two")
      expect(keyed(events)).toEqual([
        "Started a",
        "Started b",
        "Reused a",
        "Evicted slot-needed b",
        "Started c",
        "Evicted slot-needed a",
        "Started b",
        "Resumed b"
      ])
      expect(resumes).toEqual([undefined, undefined, undefined, FAKE_SESSION_ID])
    }))

  it.scoped("a use that ends before its turn did stops the process; the session refuses to send after its use", () =>
    Effect.gen(function*() {
      const { counts, events, leases } = yield* setup({ maxConcurrent: 1 })
      const kept = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* leases.lookup("a", undefined)
        yield* session.send("never read")
        return session
      }))
      expect(counts.live).toBe(0)
      expect(keyed(events)).toEqual(["Started a", "Evicted unfinished a"])
      expect(yield* Effect.flip(kept.send("late"))).toMatchObject({ _tag: "SessionClosedError", reason: "UseEnded" })
    }))

  it.scoped("a use with other options reopens the key's session with them, resumed", () =>
    Effect.gen(function*() {
      const { events, leases, resumes } = yield* setup({ maxConcurrent: 1 })
      yield* chat(leases, "a", "one")
      yield* Effect.scoped(Effect.flatMap(leases.lookup("a", { model: "other" }), (s) => turn(s, "two")))
      expect(resumes).toEqual([undefined, FAKE_SESSION_ID])
      expect(keyed(events)).toEqual(["Started a", "Evicted options-changed a", "Started a", "Resumed a"])
    }))

  it.scoped("closeIdle stops every idle session; stopAll the rest", () =>
    Effect.gen(function*() {
      const { counts, events, leases } = yield* setup({ maxConcurrent: 2 })
      yield* chat(leases, "a", "one")
      yield* chat(leases, "b", "one")
      yield* leases.closeIdle
      expect(counts.live).toBe(0)
      yield* leases.stopAll
      expect(counts.live).toBe(0)
      // The sessions are stopped concurrently: in either order.
      expect(keyed(events).filter((e) => e.startsWith("Evicted")).sort()).toEqual([
        "Evicted pool-closed a",
        "Evicted pool-closed b"
      ])
    }))
})
