// Unit tests of the AgentPool over the in-memory fake CLI (a mock transport): each "process" is a
// FakeCli whose life the test counts, and whose turns wait on gates the test opens.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Layer, Queue, Scope, Stream, TestClock } from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

// A ClaudeAgent whose fake CLIs count how many are alive, report each prompt as its turn starts,
// and play the turn only when the test opens that prompt's gate (unless `open` says it needn't wait).
const gatedAgent = (open: (prompt: string) => boolean = () => false) =>
  Effect.gen(function*() {
    const started = yield* Queue.unbounded<string>()
    const gates = new Map<string, Deferred.Deferred<void>>()
    const gate = (prompt: string) =>
      Effect.suspend(() => {
        const existing = gates.get(prompt)
        if (existing !== undefined) return Effect.succeed(existing)
        return Effect.map(Deferred.make<void>(), (d) => {
          gates.set(prompt, d)
          return d
        })
      })
    const counts = { live: 0, peak: 0, spawned: 0 }
    const agent = ClaudeAgent.make(() =>
      Effect.gen(function*() {
        const { transport } = yield* FakeCli.make({
          onUserMessage: (message, cli) =>
            Effect.gen(function*() {
              const prompt = FakeCli.userText(message)
              yield* Queue.offer(started, prompt)
              if (prompt === "crash") return yield* cli.exit({ exitCode: 3 })
              if (!open(prompt)) yield* Deferred.await(yield* gate(prompt))
              yield* FakeCli.echoTurn(message, cli)
            })
        })
        counts.spawned++
        counts.live++
        counts.peak = Math.max(counts.peak, counts.live)
        yield* Effect.addFinalizer(() => Effect.sync(() => void counts.live--))
        return transport
      })
    )
    const release = (prompt: string) => Effect.flatMap(gate(prompt), (d) => Deferred.succeed(d, undefined))
    return { agent, started, release, counts }
  })

const answer = (pool: AgentPool.AgentPoolShape, prompt: string) =>
  pool.query(prompt).pipe(
    Stream.filter(Message.isResult),
    Stream.runCollect,
    Effect.map((results) => Chunk.toArray(results).map((r) => ("result" in r ? r.result : r.subtype)))
  )

// Waits, yielding to the pool's fibers, until the pool's state satisfies `done` (no clock involved).
const settle = (pool: AgentPool.AgentPoolShape, done: (stats: AgentPool.PoolStats) => boolean) => {
  const probe: Effect.Effect<AgentPool.PoolStats> = Effect.zipLeft(pool.stats, Effect.yieldNow())
  return Effect.repeat(probe, { until: done })
}

describe("AgentPool (fake CLI)", () => {
  it.scoped("16 requests on a pool of 4: never more than 4 processes, served in FIFO order, all succeed", () =>
    Effect.gen(function*() {
      const { agent, counts, release, started } = yield* gatedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 4 })
      const prompts = Array.from({ length: 16 }, (_, i) => `q${i}`)
      const fibers: Array<Fiber.RuntimeFiber<ReadonlyArray<unknown>, unknown>> = []
      for (const prompt of prompts) {
        fibers.push(yield* Effect.fork(answer(pool, prompt)))
        // Each request is queued before the next is made: the arrival order is the prompts' order.
        yield* settle(pool, (s) => s.active + s.pending === fibers.length)
      }
      const firstFour = Chunk.toArray(yield* Queue.takeBetween(started, 4, 4)).sort()
      expect(firstFour).toEqual(["q0", "q1", "q2", "q3"])
      expect((yield* pool.stats).pending).toBe(12)
      const order: Array<string> = [...firstFour]
      for (let i = 0; i < 12; i++) {
        yield* release(`q${i}`)
        order.push(yield* Queue.take(started))
      }
      for (let i = 12; i < 16; i++) yield* release(`q${i}`)
      const results = yield* Effect.forEach(fibers, Fiber.join)
      expect(results.map((r) => r[0])).toEqual(prompts.map((p) => `echo: ${p}`))
      expect(order).toEqual(prompts)
      expect(counts.peak).toBe(4)
      expect(counts.spawned).toBe(16)
      yield* settle(pool, (s) => s.active === 0)
      expect(counts.live).toBe(0)
    }))

  it.scoped("a full queue fails with PoolFullError at once", () =>
    Effect.gen(function*() {
      const { agent, release, started } = yield* gatedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, maxPending: 1 })
      const first = yield* Effect.fork(answer(pool, "a"))
      yield* Queue.take(started)
      const second = yield* Effect.fork(answer(pool, "b"))
      yield* settle(pool, (s) => s.pending === 1)
      const error = yield* answer(pool, "c").pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "PoolFullError", pending: 1, maxConcurrent: 1 })
      yield* release("a")
      yield* release("b")
      expect(yield* Fiber.join(first)).toEqual(["echo: a"])
      expect(yield* Fiber.join(second)).toEqual(["echo: b"])
    }))

  it.scoped("a request that waits longer than pendingTimeout fails with PoolTimeoutError and leaves the queue", () =>
    Effect.gen(function*() {
      const { agent, release, started } = yield* gatedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, pendingTimeout: "5 seconds" })
      const first = yield* Effect.fork(answer(pool, "a"))
      yield* Queue.take(started)
      const waiting = yield* Effect.fork(answer(pool, "b").pipe(Effect.flip))
      yield* settle(pool, (s) => s.pending === 1)
      yield* TestClock.adjust("5 seconds")
      expect(yield* Fiber.join(waiting)).toMatchObject({ _tag: "PoolTimeoutError", timeoutMillis: 5000 })
      expect((yield* pool.stats).pending).toBe(0)
      yield* release("a")
      expect(yield* Fiber.join(first)).toEqual(["echo: a"])
    }))

  it.scoped("a higher priority is served first; equal priorities in arrival order", () =>
    Effect.gen(function*() {
      const { agent, release, started } = yield* gatedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      const first = yield* Effect.fork(answer(pool, "first"))
      yield* Queue.take(started)
      const queued = [
        yield* Effect.fork(answer(pool, "low-1")),
        yield* settle(pool, (s) => s.pending === 1).pipe(Effect.zipRight(Effect.fork(answer(pool, "low-2")))),
        yield* settle(pool, (s) => s.pending === 2).pipe(
          Effect.zipRight(Effect.fork(answer(pool, "urgent").pipe(AgentPool.withPriority(5))))
        )
      ]
      yield* settle(pool, (s) => s.pending === 3)
      const order: Array<string> = []
      for (const prompt of ["first", "urgent", "low-1"]) {
        yield* release(prompt)
        order.push(yield* Queue.take(started))
      }
      yield* release("low-2")
      yield* Effect.forEach([first, ...queued], Fiber.join)
      expect(order).toEqual(["urgent", "low-1", "low-2"])
    }))

  it.scoped("a warm spare is claimed by a matching request and refilled; other options evict it when slots are full", () =>
    Effect.gen(function*() {
      const { agent, counts } = yield* gatedAgent(() => true)
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, warm: 1 })
      const events = yield* pool.events.pipe(Stream.runCollect, Effect.fork)
      yield* settle(pool, (s) => s.warm === 1)
      expect(counts.spawned).toBe(1)
      expect(yield* answer(pool, "claims the spare")).toEqual(["echo: claims the spare"])
      // The claimed spare was the only process: no new one was started for the request.
      yield* settle(pool, (s) => s.warm === 1)
      expect(counts.spawned).toBe(2)
      // Different options cannot use the spare: it is stopped to free the only slot.
      const other = yield* pool.query("other model", { model: "claude-other" }).pipe(Stream.runCollect)
      expect(Chunk.toArray(other).filter(Message.isResult)).toHaveLength(1)
      yield* settle(pool, (s) => s.warm === 1 && s.active === 0)
      expect(counts.peak).toBe(1)
      yield* Fiber.interrupt(events)
    }))

  it.scoped("a CLI that dies mid-turn fails only its request; its slot is freed and the pool keeps serving", () =>
    Effect.gen(function*() {
      const { agent, release, started } = yield* gatedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const healthy = yield* Effect.fork(answer(pool, "fine"))
      yield* Queue.take(started)
      const crashed = yield* answer(pool, "crash").pipe(Effect.flip)
      expect(crashed._tag).toBe("ProcessError")
      yield* settle(pool, (s) => s.active === 1)
      yield* release("fine")
      yield* release("after")
      expect(yield* Fiber.join(healthy)).toEqual(["echo: fine"])
      expect(yield* answer(pool, "after")).toEqual(["echo: after"])
    }))

  it.effect("closing the pool stops its spares and fails the requests still waiting", () =>
    Effect.gen(function*() {
      const { agent, counts, started } = yield* gatedAgent()
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, warm: 1 }).pipe(Scope.extend(scope))
      yield* settle(pool, (s) => s.warm === 1)
      const running = yield* Effect.fork(Effect.scoped(answer(pool, "holds the slot")))
      yield* Queue.take(started)
      const waiting = yield* Effect.fork(answer(pool, "never served").pipe(Effect.flip))
      yield* settle(pool, (s) => s.pending === 1)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Fiber.join(waiting)).toMatchObject({ _tag: "CLIConnectionError" })
      yield* Fiber.interrupt(running)
      expect(counts.live).toBe(0)
    }))

  it.effect("AgentPool.layerOver makes ClaudeAgent.query go through the pool", () =>
    Effect.gen(function*() {
      const results = yield* Effect.forEach(
        ["a", "b", "c"],
        (q) => ClaudeAgent.query(q).pipe(Stream.filter(Message.isResult), Stream.runCollect),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => Chunk.size(r))).toEqual([1, 1, 1])
      const stats = yield* Effect.flatMap(AgentPool.AgentPool, (pool) => pool.stats)
      expect(stats).toMatchObject({ active: 0, maxConcurrent: 2 })
    }).pipe(Effect.provide(AgentPool.layerOver({ maxConcurrent: 2 }).pipe(Layer.provide(FakeCli.layerClaudeAgent())))))
})
