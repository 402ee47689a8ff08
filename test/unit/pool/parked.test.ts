// The pool's parked spares (`park: true`) over the in-memory fake CLI: any request whose
// host-level options match claims one, whatever its folder and model; a refused claim falls back
// to a cold start in the spare's slot.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import * as AgentPool from "../../../src/AgentPool.js"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import * as Control from "../../../src/schema/Control.js"
import * as Message from "../../../src/schema/Message.js"
import type * as Options from "../../../src/schema/Options.js"
import { Transport } from "../../../src/services/Transport.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"
import { eventually } from "../../support/waits.js"

interface Seen {
  readonly claims: Array<Control.ClaimSessionPayload>
  readonly models: Array<string | undefined>
  readonly prompts: Array<string>
  readonly counts: { live: number; peak: number; spawned: number }
}

// Fake CLIs that record the claims and models they are given; `refuse(payload)` turns a claim
// down with the CLI's words.
const parkingAgent = (
  refuse: (payload: Control.ClaimSessionPayload) => string | undefined = () => undefined,
  hold: Effect.Effect<void> = Effect.void
) => {
  const seen: Seen = { claims: [], models: [], prompts: [], counts: { live: 0, peak: 0, spawned: 0 } }
  const agent = ClaudeAgent.make({
    transport: Layer.scoped(
      Transport,
      Effect.gen(function*() {
        const { transport } = yield* FakeCli.make({
          answers: [
            FakeCli.answer(Control.ClaimSession, (payload, _cli, byDefault) => {
              seen.claims.push(payload)
              const refusal = refuse(payload)
              return Effect.zipRight(
                hold,
                refusal === undefined ? byDefault : Effect.succeed(FakeCli.controlFailure(refusal))
              )
            }),
            FakeCli.answer(Control.SetModel, (payload, _cli, byDefault) => {
              seen.models.push(payload.model)
              return byDefault
            })
          ],
          onUserMessage: (message, cli) => {
            seen.prompts.push(FakeCli.userText(message))
            return FakeCli.echoTurn(message, cli)
          }
        })
        seen.counts.spawned++
        seen.counts.live++
        seen.counts.peak = Math.max(seen.counts.peak, seen.counts.live)
        yield* Effect.addFinalizer(() => Effect.sync(() => void seen.counts.live--))
        return transport
      })
    )
  })
  return { agent, seen }
}

const results = (pool: AgentPool.AgentPoolShape, prompt: string, options?: Options.Options) =>
  pool.query(prompt, options).pipe(
    Stream.filter(Message.isResult),
    Stream.runCollect,
    Effect.map((all) => Chunk.toArray(all).map((r) => r.subtype))
  )

const readySpares = (pool: AgentPool.AgentPoolShape, n: number) =>
  Effect.repeat(Effect.zipLeft(pool.stats, Effect.yieldNow()), { until: (s) => s.warm === n })

describe("AgentPool parked spares (fake CLI)", () => {
  it.scoped("requests with other folders and models claim parked spares; the claim carries the folder, the model follows it", () =>
    Effect.gen(function*() {
      const { agent, seen } = parkingAgent()
      const pool = yield* AgentPool.make(agent, {
        maxConcurrent: 3,
        warm: 2,
        park: true,
        warmOptions: { cwd: "/parking" }
      })
      yield* readySpares(pool, 2)
      expect(seen.counts.spawned).toBe(2)
      expect(yield* results(pool, "first", { cwd: "/work/a", model: "model-a" })).toEqual(["success"])
      expect(yield* results(pool, "second", { cwd: "/work/b", model: "model-b", permissionMode: "acceptEdits" }))
        .toEqual(["success"])
      expect(seen.claims.map((c) => [c.cwd, c.permission_mode])).toEqual([["/work/a", undefined], [
        "/work/b",
        "acceptEdits"
      ]])
      expect(seen.models).toEqual(["model-a", "model-b"])
      expect(seen.prompts).toEqual(["first", "second"])
      const stats = yield* pool.stats
      expect([stats.claimed, stats.claimsFellBack]).toEqual([2, 0])
      yield* readySpares(pool, 2)
      // Two spares used, two started in their place: no cold start.
      expect(seen.counts.spawned).toBe(4)
    }))

  it.scoped("a request whose host-level options differ starts cold; the spare stays parked", () =>
    Effect.gen(function*() {
      const { agent, seen } = parkingAgent()
      const pool = yield* AgentPool.make(agent, {
        maxConcurrent: 3,
        warm: 1,
        park: true,
        warmOptions: { cwd: "/parking" }
      })
      yield* readySpares(pool, 1)
      expect(yield* results(pool, "cold", { cwd: "/work/a", allowedTools: ["Read"] })).toEqual(["success"])
      expect(seen.claims).toEqual([])
      expect((yield* pool.stats).warm).toBe(1)
      expect(seen.counts.spawned).toBe(2)
    }))

  it.scoped("a refused claim falls back to a cold start in the spare's slot; the event names the reason", () =>
    Effect.gen(function*() {
      const { agent, seen } = parkingAgent((payload) =>
        payload.cwd === "/missing" ? "cwd_not_found: /missing does not exist" : undefined
      )
      const pool = yield* AgentPool.make(agent, {
        maxConcurrent: 1,
        warm: 1,
        park: true,
        warmOptions: { cwd: "/parking" }
      })
      const events: Array<AgentPool.PoolEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(pool.events, (e) => Effect.sync(() => void events.push(e))))
      yield* readySpares(pool, 1)
      expect(yield* results(pool, "fallback", { cwd: "/missing" })).toEqual(["success"])
      // The refused spare's process was stopped before the cold one started: never two at once.
      expect(seen.counts.peak).toBe(1)
      expect(seen.prompts).toEqual(["fallback"])
      const fellBack = events.find((e) => e._tag === "ClaimFellBack")
      expect(fellBack).toMatchObject({ _tag: "ClaimFellBack", reason: "not_claimed", code: "cwd_not_found" })
      expect(events.map((e) => e._tag)).toContain("Started")
      const stats = yield* pool.stats
      expect([stats.claimed, stats.claimsFellBack]).toEqual([0, 1])
    }))

  it.scoped("a keyed conversation claims a parked spare for its first turn", () =>
    Effect.gen(function*() {
      const { agent, seen } = parkingAgent()
      const pool = yield* AgentPool.make(agent, {
        maxConcurrent: 2,
        warm: 1,
        park: true,
        warmOptions: { cwd: "/parking" }
      })
      yield* readySpares(pool, 1)
      const turn = yield* pool.chat("user-1", "hello", { cwd: "/work/user-1", model: "model-u" }).pipe(
        Stream.filter(Message.isResult),
        Stream.runCollect
      )
      expect(Chunk.size(turn)).toBe(1)
      expect(seen.claims.map((c) => c.cwd)).toEqual(["/work/user-1"])
      expect(seen.models).toEqual(["model-u"])
      expect((yield* pool.stats).claimed).toBe(1)
    }))

  it.scoped("closing the pool while a claim is in flight stops the spare at once; the request fails with PoolClosedError", () =>
    Effect.gen(function*() {
      // The CLI never answers the claim.
      const { agent, seen } = parkingAgent(() => undefined, Effect.never)
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, {
        maxConcurrent: 2,
        warm: 1,
        park: true,
        warmOptions: { cwd: "/parking" },
        shutdownTimeout: 0
      }).pipe(Scope.extend(scope))
      yield* readySpares(pool, 1)
      const request = yield* Effect.fork(results(pool, "never answered", { cwd: "/work/a" }))
      yield* eventually(() => seen.claims.length === 1)
      yield* Scope.close(scope, Exit.void)
      const error = yield* Effect.flip(Fiber.join(request))
      expect(error).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
      expect(seen.counts.live).toBe(0)
      expect(seen.prompts).toEqual([])
    }))

  it.effect("park must be a boolean", () =>
    Effect.gen(function*() {
      const { agent } = parkingAgent()
      const settings: AgentPool.PoolConfig = {}
      const error = yield* Effect.flip(Effect.scoped(AgentPool.make(agent, Object.assign(settings, { park: "yes" }))))
      expect(error).toMatchObject({ _tag: "OptionsError", field: "park" })
    }))
})
