// Unit tests of the pool's warm spares on their own, over fake CLIs and a real `Slots`.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import type * as AgentPool from "../../../src/AgentPool.js"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import * as SessionServices from "../../../src/layers/SessionServices.js"
import { Transport } from "../../../src/services/Transport.js"
import * as Slots from "../../../src/internal/pool/slots.js"
import * as Spares from "../../../src/internal/pool/spares.js"
import { CLIConnectionError } from "../../../src/SdkError.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"
import { eventually } from "../../support/waits.js"

// Fake CLIs that count how many are alive and keep their handles; `failing` makes starts fail.
const fakeAgent = () => {
  const counts = { live: 0, spawned: 0 }
  const clis: Array<FakeCli.FakeCliHandle> = []
  const models: Array<string | undefined> = []
  // `stalled`: the CLI never answers `initialize`, so a spare on it stays starting.
  const control = { failing: false, stalled: false }
  const agent = ClaudeAgent.make({
    transport: Layer.scoped(
      Transport,
      Effect.flatMap(SessionServices.SessionLaunch, ({ options }) =>
        Effect.gen(function*() {
          if (control.failing) {
            return yield* Effect.fail(new CLIConnectionError({ reason: "SpawnFailed", description: "no CLI today" }))
          }
          const stalled = control.stalled
          const { cli, transport } = yield* FakeCli.make({
            onUserMessage: FakeCli.echoTurn,
            onControlRequest: (request) =>
              stalled && request.subtype === "initialize" ? Effect.never : Effect.succeed(Option.none())
          })
          clis.push(cli)
          models.push(options.model)
          counts.spawned++
          counts.live++
          yield* Effect.addFinalizer(() => Effect.sync(() => void counts.live--))
          return transport
        }))
    )
  })
  return { agent, counts, clis, models, control }
}

const setup = (settings: { readonly maxConcurrent: number; readonly warm: number }) =>
  Effect.gen(function*() {
    const fake = fakeAgent()
    const events: Array<AgentPool.PoolEvent> = []
    const publish = (event: AgentPool.PoolEvent) => Effect.sync(() => events.push(event))
    const refill = { count: 0 }
    const slots = Slots.make({
      maxConcurrent: settings.maxConcurrent,
      maxPending: 100,
      pendingTimeout: undefined,
      reclaim: () => spares.reclaim(),
      onFree: Effect.suspend(() => {
        refill.count++
        return spares.refill
      }),
      onQueued: () => Effect.void
    })
    const spares = yield* Spares.make({
      agent: fake.agent,
      warm: settings.warm,
      warmOptions: { model: "warm-model" },
      slots,
      publish
    })
    return { ...fake, events, slots, spares, refill }
  })

const tags = (events: ReadonlyArray<AgentPool.PoolEvent>) =>
  events.map((e) => (e._tag === "Evicted" ? `Evicted ${e.reason}` : e._tag))

describe("Spares", () => {
  it.scoped("refill starts spares with warmOptions in free slots, up to warm", () =>
    Effect.gen(function*() {
      const { counts, events, models, slots, spares } = yield* setup({ maxConcurrent: 3, warm: 2 })
      yield* spares.refill
      expect({ starting: spares.starting(), used: slots.used() }).toEqual({ starting: 2, used: 2 })
      yield* eventually(() => spares.ready() === 2)
      expect(spares.starting()).toBe(0)
      expect(counts.live).toBe(2)
      expect(models).toEqual(["warm-model", "warm-model"])
      expect(tags(events)).toEqual(["WarmReady", "WarmReady"])
      // Already at `warm`: nothing more is started.
      yield* spares.refill
      expect(spares.starting()).toBe(0)
    }))

  it.scoped("a spare starts on the pool's own fiber: the request that asked for it may go away", () =>
    Effect.gen(function*() {
      const { counts, spares } = yield* setup({ maxConcurrent: 1, warm: 1 })
      const requester = yield* Effect.fork(Effect.zipRight(spares.refill, Effect.never))
      yield* eventually(() => spares.starting() === 1)
      yield* Fiber.interrupt(requester)
      yield* eventually(() => spares.ready() === 1)
      expect(counts.live).toBe(1)
    }))

  it.scoped("a spare is claimed by a request without options or with warmOptions, and not by others", () =>
    Effect.gen(function*() {
      const { spares } = yield* setup({ maxConcurrent: 2, warm: 2 })
      yield* spares.refill
      yield* eventually(() => spares.ready() === 2)
      expect(Option.isNone(spares.claim({ model: "other-model" }))).toBe(true)
      const first = spares.claim(undefined)
      const second = spares.claim({ model: "warm-model" })
      expect([Option.isSome(first), Option.isSome(second)]).toEqual([true, true])
      expect(spares.ready()).toBe(0)
      expect(Option.isNone(spares.claim(undefined))).toBe(true)
    }))

  it.scoped("a request that finds every slot taken gets a ready spare's slot (reclaim); no spare starts while it holds it", () =>
    Effect.gen(function*() {
      const { counts, events, slots, spares } = yield* setup({ maxConcurrent: 1, warm: 1 })
      yield* spares.refill
      yield* eventually(() => spares.ready() === 1)
      const scope = yield* Scope.make()
      yield* Scope.extend(slots.acquire, scope)
      expect(spares.ready()).toBe(0)
      yield* eventually(() => counts.live === 0)
      expect(tags(events)).toEqual(["WarmReady", "Evicted slot-needed"])
      expect(slots.used()).toBe(1)
      // The slot is the request's: the spare is not started again while it holds it.
      yield* spares.refill
      expect(spares.starting()).toBe(0)
      yield* Scope.close(scope, Exit.void)
      yield* eventually(() => spares.ready() === 1)
    }))

  it.scoped("a spare whose CLI dies while it waits is dropped and its slot freed", () =>
    Effect.gen(function*() {
      const { clis, events, slots, spares } = yield* setup({ maxConcurrent: 1, warm: 1 })
      yield* spares.refill
      yield* eventually(() => spares.ready() === 1)
      yield* clis[0]!.exit({ exitCode: 1 })
      yield* eventually(() => tags(events).includes("Evicted spare-died"))
      // Its slot freed, a new spare takes it.
      yield* eventually(() => spares.ready() === 1)
      expect(slots.used()).toBe(1)
      expect(clis.length).toBe(2)
    }))

  it.scoped("a spare that fails to start frees its slot and is not retried at once", () =>
    Effect.gen(function*() {
      const { control, refill, slots, spares } = yield* setup({ maxConcurrent: 1, warm: 1 })
      control.failing = true
      yield* spares.refill
      yield* eventually(() => spares.starting() === 0 && slots.used() === 0)
      expect(spares.ready()).toBe(0)
      expect(refill.count).toBe(0)
    }))

  it.scoped("a spare that becomes ready while a request waits gives the request its slot", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { events, slots, spares } = yield* setup({ maxConcurrent: 1, warm: 1 })
      yield* spares.refill
      expect(slots.used()).toBe(1)
      const waiting = yield* Effect.fork(Effect.scoped(Effect.zipRight(slots.acquire, Deferred.await(gate))))
      yield* eventually(() => slots.pending() === 1)
      yield* eventually(() => slots.pending() === 0)
      expect(tags(events)).toEqual(["Evicted slot-needed"])
      expect(spares.ready()).toBe(0)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(waiting)
    }))

  it.scoped("close stops the ready spares", () =>
    Effect.gen(function*() {
      const { counts, spares } = yield* setup({ maxConcurrent: 2, warm: 2 })
      yield* spares.refill
      yield* eventually(() => spares.ready() === 2)
      yield* spares.close()
      expect(spares.ready()).toBe(0)
      expect(counts.live).toBe(0)
    }))

  it.scoped("close stops the spares still starting too, and returns once their CLIs have exited", () =>
    Effect.gen(function*() {
      const { control, counts, slots, spares } = yield* setup({ maxConcurrent: 3, warm: 3 })
      yield* spares.refill
      yield* eventually(() => spares.ready() === 3)
      // Two are stopped for requests; the spares that replace them never finish starting.
      control.stalled = true
      const requests = yield* Scope.make()
      yield* Scope.extend(Effect.zipRight(slots.acquire, slots.acquire), requests)
      yield* Scope.close(requests, Exit.void)
      yield* eventually(() => spares.starting() === 2 && counts.live === 3)
      yield* spares.close()
      expect(counts.live).toBe(0)
      expect({ ready: spares.ready(), starting: spares.starting(), used: slots.used() }).toEqual({
        ready: 0,
        starting: 0,
        used: 0
      })
    }))
})
