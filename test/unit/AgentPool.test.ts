// Unit tests of the AgentPool over the in-memory fake CLI (a mock transport): each "process" is a
// FakeCli whose life the test counts, and whose turns wait on gates the test opens.
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Either,
  Context,
  Deferred,
  Effect,
  Exit,
  Fiber,
  HashMap,
  Layer,
  Logger,
  Metric,
  Option,
  Queue,
  Scope,
  Stream,
  TestClock,
  type Tracer
} from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionServices from "../../src/layers/SessionServices.js"
import { Transport } from "../../src/services/Transport.js"
import * as Control from "../../src/schema/Control.js"
import * as Message from "../../src/schema/Message.js"
import * as Telemetry from "../../src/Telemetry.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import { CLIConnectionError } from "../../src/SdkError.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"
import { awaitSleep, eventually } from "../support/waits.js"

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
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport,
        Effect.suspend(() =>
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
      )
    })
    const release = (prompt: string) => Effect.flatMap(gate(prompt), (d) => Deferred.succeed(d, undefined))
    return { agent, started, release, counts }
  })

// A ClaudeAgent whose fake CLIs count how many are alive; a CLI for which `stalled(n)` holds (n:
// the CLI's number, from 1) never answers `initialize`, so a spare on it stays starting. With
// `slowExit`, a process takes a few turns of the scheduler to exit, as a real one takes time.
const startingAgent = (stalled: (n: number) => boolean, settings: { readonly slowExit?: boolean } = {}) => {
  const counts = { live: 0, peak: 0, spawned: 0 }
  const agent = ClaudeAgent.make({
    transport: Layer.scoped(
      Transport,
      Effect.suspend(() => {
        const n = ++counts.spawned
        return Effect.gen(function*() {
          const { transport } = yield* FakeCli.make({
            onControlRequest: (request) =>
              request.subtype === "initialize" && stalled(n) ? Effect.never : Effect.succeed(Option.none())
          })
          counts.live++
          counts.peak = Math.max(counts.peak, counts.live)
          yield* Effect.addFinalizer(() =>
            Effect.repeatN(Effect.yieldNow(), settings.slowExit === true ? 5 : 0).pipe(
              Effect.zipRight(Effect.sync(() => void counts.live--))
            )
          )
          return transport
        })
      })
    )
  })
  return { agent, counts }
}

// Settings as plain JavaScript (or a configuration file) may give them, whatever their type.
const settingsFrom = (config: unknown): AgentPool.PoolConfig => {
  const settings: AgentPool.PoolConfig = {}
  return Object.assign(settings, config)
}
const priorityFrom = (priority: unknown): number => {
  const box = { priority: 0 }
  return Object.assign(box, { priority }).priority
}

const answer = (pool: AgentPool.AgentPoolShape, prompt: string, options?: { readonly model?: string }) =>
  pool.query(prompt, options).pipe(
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
      const waitsBefore = (yield* Metric.value(Telemetry.poolWait)).count
      const first = yield* Effect.fork(answer(pool, "a"))
      yield* Queue.take(started)
      const waiting = yield* Effect.fork(answer(pool, "b").pipe(Effect.flip))
      yield* settle(pool, (s) => s.pending === 1)
      expect((yield* Metric.value(Telemetry.poolPending)).value).toBe(1)
      yield* TestClock.adjust("5 seconds")
      expect(yield* Fiber.join(waiting)).toMatchObject({ _tag: "PoolTimeoutError", timeoutMillis: 5000 })
      expect((yield* pool.stats).pending).toBe(0)
      // The wait is in the pool metrics: one more wait of 5 s, and the queue is empty again.
      const waits = yield* Metric.value(Telemetry.poolWait)
      expect(waits.count - waitsBefore).toBe(1)
      expect(waits.max).toBeGreaterThanOrEqual(5000)
      expect((yield* Metric.value(Telemetry.poolPending)).value).toBe(0)
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

  it.effect("closing the pool with shutdownTimeout 0: the 4 waiting fail, the 2 running are stopped at once, every CLI has exited when it returns", () =>
    Effect.gen(function*() {
      const { agent, counts, started } = yield* gatedAgent()
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, shutdownTimeout: 0 }).pipe(Scope.extend(scope))
      const running = yield* Effect.forEach(["r0", "r1"], (p) => Effect.fork(answer(pool, p).pipe(Effect.flip)))
      yield* Queue.takeBetween(started, 2, 2)
      const waiting = yield* Effect.forEach(
        ["w0", "w1", "w2", "w3"],
        (p) => Effect.fork(answer(pool, p).pipe(Effect.flip))
      )
      yield* settle(pool, (s) => s.pending === 4)
      yield* Scope.close(scope, Exit.void)
      expect(counts.live).toBe(0)
      for (const fiber of waiting) {
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "PoolClosedError", stage: "waiting" })
      }
      for (const fiber of running) {
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
      }
      expect(yield* answer(pool, "late").pipe(Effect.flip)).toMatchObject({ _tag: "PoolClosedError", stage: "refused" })
      expect(counts.spawned).toBe(2)
    }))

  it.effect("closing the pool gives running requests shutdownTimeout to finish; those still running then are stopped", () =>
    Effect.gen(function*() {
      const { agent, counts, release, started } = yield* gatedAgent()
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, shutdownTimeout: "10 seconds" }).pipe(
        Scope.extend(scope)
      )
      const finishes = yield* Effect.fork(answer(pool, "r0"))
      const outlives = yield* Effect.fork(answer(pool, "r1").pipe(Effect.flip))
      yield* Queue.takeBetween(started, 2, 2)
      const waiting = yield* Effect.forEach(
        ["w0", "w1", "w2", "w3"],
        (p) => Effect.fork(answer(pool, p).pipe(Effect.flip))
      )
      yield* settle(pool, (s) => s.pending === 4)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      // The waiting fail at once, before the grace period ends.
      for (const fiber of waiting) {
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "PoolClosedError", stage: "waiting" })
      }
      yield* release("r0")
      expect(yield* Fiber.join(finishes)).toEqual(["echo: r0"])
      yield* awaitSleep(10_000)
      expect(yield* Fiber.poll(closing)).toEqual(Option.none())
      expect(counts.live).toBe(1)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(closing)
      expect(counts.live).toBe(0)
      expect(yield* Fiber.join(outlives)).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
    }))

  it.effect("closing the pool stops the spares parked and those still starting; it returns once their CLIs have exited", () =>
    Effect.gen(function*() {
      const { agent, counts } = startingAgent((n) => n > 1)
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 3, warm: 3 }).pipe(Scope.extend(scope))
      yield* settle(pool, (s) => s.warm === 1 && s.starting === 2)
      yield* eventually(() => counts.live === 3)
      yield* Scope.close(scope, Exit.void)
      expect(counts.live).toBe(0)
      expect(yield* pool.stats).toMatchObject({ warm: 0, starting: 0 })
    }))

  it.effect("AgentPool.layerOver({ warm: 2 }) closed while its spares start leaves no CLI running", () =>
    Effect.gen(function*() {
      const { agent, counts } = startingAgent(() => true)
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        AgentPool.layerOver({ warm: 2 }).pipe(Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, agent))),
        scope
      )
      const pool = Context.get(context, AgentPool.AgentPool)
      yield* settle(pool, (s) => s.starting === 2)
      yield* eventually(() => counts.live === 2)
      yield* Scope.close(scope, Exit.void)
      expect(counts.live).toBe(0)
    }))

  it.scoped("maxConcurrent bounds live processes: a slot is free only once its process has exited", () =>
    Effect.gen(function*() {
      const { agent, counts } = startingAgent(() => false, { slowExit: true })
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, warm: 1, idleTimeToLive: 0 })
      yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) =>
          i % 3 === 0
            ? chatAnswer(pool, `key-${i % 4}`, `k${i}`)
            : answer(pool, `q${i}`, i % 3 === 1 ? undefined : { model: "other" }),
        { concurrency: "unbounded", discard: true }
      )
      expect(counts.spawned).toBeGreaterThan(20)
      expect(counts.peak).toBeLessThanOrEqual(2)
    }))

  it.scoped("a session that fails to open frees its slot at once, not when the caller's scope closes", () =>
    Effect.gen(function*() {
      // The first CLI cannot be started; the next ones are healthy.
      let spawned = 0
      const agent = ClaudeAgent.make({
        transport: Layer.scoped(
          Transport,
          Effect.suspend(() => {
            spawned++
            return spawned === 1
              ? Effect.fail(new CLIConnectionError({ reason: "SpawnFailed", description: "no such file" }))
              : Effect.map(FakeCli.make(), ({ transport }) => transport)
          })
        )
      })
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, pendingTimeout: "5 seconds" })
      // Both attempts in one scope, as a caller that tries again after a failure does: the second
      // would wait for the first one's slot until the scope closed, then time out.
      const first = yield* Effect.either(pool.session())
      expect(Either.isLeft(first)).toBe(true)
      const second = yield* pool.session()
      yield* second.send("again")
      const result = yield* second.receiveResponse.pipe(Stream.runCollect, Effect.map(Chunk.findLast(Message.isResult)))
      expect(Option.isSome(result)).toBe(true)
      expect(spawned).toBe(2)
    }).pipe(Effect.timeout("20 seconds")))

  it.effect("pool settings are validated: a typed error naming the field and what it allows", () =>
    Effect.gen(function*() {
      const agent = ClaudeAgent.make({ transport: FakeCli.layer() })
      const cases: Array<[unknown, string, string]> = [
        [{ maxConcurrent: Number.NaN }, "maxConcurrent", "expected a positive integer; got NaN"],
        [{ maxConcurrent: 1.5 }, "maxConcurrent", "expected a positive integer; got 1.5"],
        [{ maxConcurrent: 0 }, "maxConcurrent", "expected a positive integer; got 0"],
        [{ maxConcurrent: "2" }, "maxConcurrent", "expected a positive integer; got \"2\""],
        [{ warm: "1" }, "warm", "expected a non-negative integer; got \"1\""],
        [{ warm: -1 }, "warm", "expected a non-negative integer; got -1"],
        [{ maxPending: -3 }, "maxPending", "expected a non-negative integer; got -3"],
        [{ pendingTimeout: "banana" }, "pendingTimeout", "banana"],
        [{ pendingTimeout: 0 }, "pendingTimeout", "positive"],
        [{ idleTimeToLive: -5 }, "idleTimeToLive", "got -5"],
        [{ shutdownTimeout: "forever" }, "shutdownTimeout", "forever"],
        [{ shutdownTimeout: Infinity }, "shutdownTimeout", "a finite duration"],
        [{ warmOptions: { maxTurns: -1 } }, "warmOptions.maxTurns", "-1"],
        [{ maxConcurency: 2 }, "maxConcurency", "unknown pool setting"]
      ]
      for (const [config, field, detail] of cases) {
        const error = yield* Effect.scoped(AgentPool.make(agent, settingsFrom(config))).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "OptionsError", field })
        expect(error.detail).toContain(detail)
      }
      // Zero is a meaning of its own for these two.
      yield* Effect.scoped(AgentPool.make(agent, { idleTimeToLive: 0, shutdownTimeout: 0 }))
      const priority = yield* Effect.scoped(
        Effect.flatMap(
          AgentPool.make(agent),
          (pool) => answer(pool, "hi").pipe(AgentPool.withPriority(priorityFrom("high")))
        )
      ).pipe(Effect.flip)
      expect(priority).toMatchObject({ _tag: "OptionsError", field: "priority" })
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

// A ClaudeAgent for keyed sessions: records the `resume` (and `model`) each fake CLI was started
// with, keeps each CLI's handle, and plays a turn at once unless the test gates that prompt.
const keyedAgent = (gated: (prompt: string) => boolean = () => false) =>
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
    const counts = { live: 0, spawned: 0 }
    const launches: Array<{ readonly resume: string | undefined; readonly model: string | undefined }> = []
    const clis: Array<FakeCli.FakeCliHandle> = []
    // When set, a CLI started with `resume` finds no conversation (its transcript is gone).
    const transcripts = { lost: false }
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport,
        Effect.flatMap(SessionServices.SessionLaunch, ({ options }) =>
          Effect.gen(function*() {
            const lost = transcripts.lost && options.resume !== undefined
            const { cli, transport } = yield* FakeCli.make({
              onUserMessage: (message, cli) =>
                Effect.gen(function*() {
                  const prompt = FakeCli.userText(message)
                  yield* Queue.offer(started, prompt)
                  if (lost) {
                    return yield* cli.emit(
                      FakeCli.frames.result(`No conversation found with session ID: ${options.resume}`, {
                        subtype: "error_during_execution",
                        isError: true
                      })
                    )
                  }
                  if (prompt === "crash") return yield* cli.exit({ exitCode: 3 })
                  if (!gated(prompt)) return yield* FakeCli.echoTurn(message, cli)
                  // A gated turn starts at once and ends when the test opens the gate.
                  yield* cli.emit(FakeCli.frames.systemInit())
                  yield* Deferred.await(yield* gate(prompt))
                  yield* cli.emit(FakeCli.frames.assistantText(`echo: ${prompt}`))
                  yield* cli.emit(FakeCli.frames.result(`echo: ${prompt}`))
                })
            })
            launches.push({ resume: options.resume, model: options.model })
            clis.push(cli)
            counts.spawned++
            counts.live++
            yield* Effect.addFinalizer(() => Effect.sync(() => void counts.live--))
            return transport
          }))
      )
    })
    const release = (prompt: string) => Effect.flatMap(gate(prompt), (d) => Deferred.succeed(d, undefined))
    return { agent, started, release, counts, launches, clis, transcripts }
  })

// The fake CLI's session id: the one a resumed session must be resumed on.
const FAKE_SESSION_ID = "00000000-0000-4000-8000-000000000001"

const chatAnswer = (
  pool: AgentPool.AgentPoolShape,
  key: string,
  prompt: string,
  options?: { readonly model?: string }
) =>
  pool.chat(key, prompt, options).pipe(
    Stream.filter(Message.isResult),
    Stream.runCollect,
    Effect.map((results) => Chunk.toArray(results).map((r) => ("result" in r ? r.result : r.subtype)))
  )

// Records the pool's events; returns once the recorder is subscribed (its fiber waits on the hub).
const recordEvents = (pool: AgentPool.AgentPoolShape) =>
  Effect.gen(function*() {
    const events: Array<AgentPool.PoolEvent> = []
    const fiber = yield* pool.events.pipe(Stream.runForEach((e) => Effect.sync(() => void events.push(e))), Effect.fork)
    yield* Effect.repeat(Effect.zipLeft(Fiber.status(fiber), Effect.yieldNow()), {
      until: (status) => status._tag === "Suspended"
    })
    return events
  })

const keyedOnly = (events: ReadonlyArray<AgentPool.PoolEvent>) =>
  events.filter((e) => e._tag === "Evicted" || e._tag === "Resumed" || e._tag === "Reused" || e._tag === "Crashed")
    .map((e) =>
      e._tag === "Evicted"
        ? `Evicted ${e.reason} ${e.key ?? "-"}`
        : e._tag === "Crashed"
        ? `Crashed ${e.key ?? "-"}`
        : `${e._tag} ${e.key}`
    )

describe("AgentPool keyed sessions (fake CLI)", () => {
  it.scoped("each use traces and logs in its caller's context; the session's own fibers in the pool's", () => {
    const logs: Array<{ readonly message: string; readonly annotations: Record<string, unknown> }> = []
    const logger = Logger.make(({ annotations, message }) => {
      logs.push({
        message: Array.isArray(message) ? message.join(" ") : String(message),
        annotations: Object.fromEntries(HashMap.toEntries(annotations))
      })
    })
    return Effect.gen(function*() {
      const { spans, tracer } = yield* SpanRecorder.make
      yield* Effect.withTracer(body(spans), tracer)
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    function body(spans: ReadonlyArray<Tracer.Span>) {
      return Effect.gen(function*() {
        const stopInput = {
          hook_event_name: "Stop",
          session_id: "s",
          transcript_path: "/t",
          cwd: "/",
          stop_hook_active: false
        }
        let turn = 0
        const agent = ClaudeAgent.make({
          transport: Layer.scoped(
            Transport,
            Effect.suspend(() =>
              Effect.map(
                FakeCli.make({
                  onUserMessage: (message, cli) =>
                    Effect.gen(function*() {
                      turn++
                      yield* cli.requestRaw(
                        { subtype: "hook_callback", callback_id: "hook_0", input: stopInput },
                        `hook-${turn}`
                      )
                      yield* FakeCli.echoTurn(message, cli)
                    })
                }),
                ({ transport }) => transport
              )
            )
          )
        })
        // Built once: a keyed session's options are compared by identity of their callbacks.
        const options = { hooks: { Stop: [{ hooks: [() => Effect.as(Effect.log("hook ran"), {})] }] } }
        const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 }).pipe(
          Effect.withSpan("pool-setup"),
          Effect.annotateLogs("owner", "pool")
        )
        const use = (n: number) =>
          pool.withSession("alice", options, (session) =>
            Effect.gen(function*() {
              yield* session.send(`prompt ${n}`)
              yield* session.receiveResponse.pipe(Stream.runDrain)
              yield* Effect.log(`use ${n} done`)
            })).pipe(Effect.withSpan(`use-${n}`), Effect.annotateLogs("use", String(n)))
        yield* use(1)
        yield* use(2)
        yield* Effect.yieldNow().pipe(
          Effect.repeat({
            until: () =>
              spans.filter((s) => s.name === "invoke_agent claude-code" && s.status._tag === "Ended").length === 2
          })
        )

        const named = (name: string) => spans.filter((s) => s.name === name)
        const parentOf = (span: Tracer.Span | undefined) =>
          span?.parent._tag === "Some" ? span.parent.value.spanId : undefined
        const [setup] = named("pool-setup")
        const [use1, use2] = [named("use-1")[0], named("use-2")[0]]
        const [open] = named("AgentPool.open")
        const [session] = named("ClaudeAgent.session")
        // One process for both uses, opened under the pool's span (linked to the use that asked).
        expect(named("ClaudeAgent.session").length).toBe(1)
        expect(parentOf(open)).toBe(setup?.spanId)
        const [lease1] = named("AgentPool.lease")
        expect(parentOf(lease1)).toBe(use1?.spanId)
        expect(open?.links.map((l) => l.span.spanId)).toEqual([lease1?.spanId])
        expect(parentOf(session)).toBe(open?.spanId)
        // Each use's turn is in that use's trace, and its hook span under the turn.
        const turns = named("invoke_agent claude-code")
        expect(turns.map(parentOf)).toEqual([use1?.spanId, use2?.spanId])
        expect(turns.map((t) => t.traceId)).toEqual([use1?.traceId, use2?.traceId])
        for (const t of turns) expect(t.links.map((l) => l.span.spanId)).toEqual([session?.spanId])
        const hooks = named("ControlChannel.hook_callback")
        expect(hooks.map(parentOf)).toEqual(turns.map((t) => t.spanId))
        // The hook callbacks run on the session's fibers: they log with the pool's annotations,
        // never with those of the use that opened the session; each use logs with its own.
        const hookLogs = logs.filter((l) => l.message === "hook ran")
        expect(hookLogs.length).toBe(2)
        for (const l of hookLogs) {
          expect(l.annotations.owner).toBe("pool")
          expect(l.annotations.use).toBeUndefined()
        }
        expect(logs.find((l) => l.message === "use 2 done")?.annotations.use).toBe("2")
      })
    }
  })

  it.scoped("a keyed session is kept open while idle and reused: one process for several turns", () =>
    Effect.gen(function*() {
      const { agent, counts, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const events = yield* recordEvents(pool)
      expect(yield* chatAnswer(pool, "alice", "one")).toEqual(["echo: one"])
      expect(yield* pool.stats).toMatchObject({ active: 0, idle: 1 })
      expect(yield* chatAnswer(pool, "alice", "two")).toEqual(["echo: two"])
      const answer = yield* pool.withSession("alice", undefined, (session) =>
        Effect.gen(function*() {
          yield* session.send("three")
          return yield* session.receiveResponse.pipe(Stream.filter(Message.isResult), Stream.runCollect)
        }))
      expect(Chunk.size(answer)).toBe(1)
      expect(yield* pool.stats).toMatchObject({ active: 0, idle: 1 })
      expect(counts).toEqual({ live: 1, spawned: 1 })
      expect(launches).toEqual([{ resume: undefined, model: undefined }])
      expect(keyedOnly(events)).toEqual(["Reused alice", "Reused alice"])
    }))

  it.scoped("uses of one key take turns: a second use waits until the first has ended", () =>
    Effect.gen(function*() {
      const { agent, clis, counts, release, started } = yield* keyedAgent((p) => p === "first")
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const first = yield* Effect.fork(chatAnswer(pool, "alice", "first"))
      expect(yield* Queue.take(started)).toBe("first")
      const second = yield* Effect.fork(chatAnswer(pool, "alice", "second"))
      yield* Effect.repeat(Effect.zipLeft(Fiber.status(second), Effect.yieldNow()), {
        until: (status) => status._tag === "Suspended"
      })
      // The second use is blocked before it could write its prompt to the (only) CLI.
      const userFrames = (yield* clis[0]!.sent).filter((f) => f.type === "user")
      expect(userFrames).toHaveLength(1)
      yield* release("first")
      expect(yield* Fiber.join(first)).toEqual(["echo: first"])
      expect(yield* Fiber.join(second)).toEqual(["echo: second"])
      expect(counts.spawned).toBe(1)
    }))

  it.scoped("a use that waits for its key longer than pendingTimeout fails with PoolTimeoutError; forget waits as long as it takes", () =>
    Effect.gen(function*() {
      const { agent, launches, release, started } = yield* keyedAgent((p) => p === "long")
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, pendingTimeout: "5 seconds" })
      const first = yield* Effect.fork(chatAnswer(pool, "a", "long"))
      yield* Queue.take(started)
      const second = yield* Effect.fork(chatAnswer(pool, "a", "second").pipe(Effect.flip))
      yield* awaitSleep(5_000)
      yield* TestClock.adjust("5 seconds")
      expect(yield* Fiber.join(second)).toMatchObject({ _tag: "PoolTimeoutError", timeoutMillis: 5000 })
      const forgetting = yield* Effect.fork(pool.forget("a"))
      yield* Effect.repeat(Effect.zipLeft(Fiber.status(forgetting), Effect.yieldNow()), {
        until: (status) => status._tag === "Suspended"
      })
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.poll(forgetting)).toEqual(Option.none())
      yield* release("long")
      expect(yield* Fiber.join(first)).toEqual(["echo: long"])
      yield* Fiber.join(forgetting)
      yield* chatAnswer(pool, "a", "new")
      expect(launches.map((l) => l.resume)).toEqual([undefined, undefined])
    }))

  it.scoped("idle sessions hold slots; the least recently used is evicted for a request and resumed at its next use", () =>
    Effect.gen(function*() {
      const { agent, counts, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const events = yield* recordEvents(pool)
      yield* chatAnswer(pool, "a", "hi")
      yield* chatAnswer(pool, "b", "hi")
      yield* chatAnswer(pool, "a", "again") // a is now the most recently used
      expect(yield* pool.stats).toMatchObject({ idle: 2, active: 0 })
      yield* chatAnswer(pool, "c", "hi") // evicts b
      expect(counts.live).toBe(2)
      yield* chatAnswer(pool, "b", "back") // evicts a, resumes b
      const plain = yield* answer(pool, "no key") // evicts c
      expect(plain).toEqual(["echo: no key"])
      expect(counts.live).toBe(1)
      expect(yield* pool.stats).toMatchObject({ idle: 1, active: 0 })
      expect(launches.map((l) => l.resume)).toEqual([undefined, undefined, undefined, FAKE_SESSION_ID, undefined])
      expect(keyedOnly(events)).toEqual([
        "Reused a",
        "Evicted slot-needed b",
        "Evicted slot-needed a",
        "Resumed b",
        "Evicted slot-needed c"
      ])
    }))

  it.scoped("a request waiting for a slot takes a keyed session's slot when its use ends", () =>
    Effect.gen(function*() {
      const { agent, counts, release, started } = yield* keyedAgent((p) => p === "long")
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      const keyedUse = yield* Effect.fork(chatAnswer(pool, "a", "long"))
      yield* Queue.take(started)
      const waiting = yield* Effect.fork(answer(pool, "queued"))
      yield* settle(pool, (s) => s.pending === 1)
      yield* release("long")
      expect(yield* Fiber.join(keyedUse)).toEqual(["echo: long"])
      expect(yield* Fiber.join(waiting)).toEqual(["echo: queued"])
      expect(yield* pool.stats).toMatchObject({ idle: 0, active: 0, pending: 0 })
      expect(counts.live).toBe(0)
    }))

  it.scoped("idleTimeToLive: an idle session is stopped after it (each use restarts the clock) and resumed later", () =>
    Effect.gen(function*() {
      const { agent, counts, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, idleTimeToLive: "1 minute" })
      const events = yield* recordEvents(pool)
      yield* chatAnswer(pool, "a", "one")
      yield* awaitSleep(60_000)
      yield* TestClock.adjust("40 seconds")
      yield* chatAnswer(pool, "a", "two")
      yield* awaitSleep(60_000)
      yield* TestClock.adjust("40 seconds")
      // 80 s since the first use, 40 s since the last: still open.
      expect(yield* pool.stats).toMatchObject({ idle: 1 })
      expect(counts.live).toBe(1)
      yield* TestClock.adjust("20 seconds")
      yield* settle(pool, (s) => s.idle === 0)
      expect(counts.live).toBe(0)
      expect(yield* chatAnswer(pool, "a", "three")).toEqual(["echo: three"])
      expect(launches.map((l) => l.resume)).toEqual([undefined, FAKE_SESSION_ID])
      expect(keyedOnly(events)).toEqual(["Reused a", "Evicted idle-expired a", "Resumed a"])
    }))

  it.scoped("idleTimeToLive 0 stops the process after each use; the conversation is resumed each time", () =>
    Effect.gen(function*() {
      const { agent, counts, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, idleTimeToLive: 0 })
      yield* chatAnswer(pool, "a", "one")
      yield* chatAnswer(pool, "a", "two")
      expect(counts.live).toBe(0)
      expect(launches.map((l) => l.resume)).toEqual([undefined, FAKE_SESSION_ID])
    }))

  it.scoped("a keyed CLI that dies mid-turn fails that turn; one that dies while idle frees its slot; both are resumed", () =>
    Effect.gen(function*() {
      const { agent, clis, counts, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      const events = yield* recordEvents(pool)
      yield* chatAnswer(pool, "a", "one")
      const error = yield* chatAnswer(pool, "a", "crash").pipe(Effect.flip)
      expect(error._tag).toBe("ProcessError")
      expect(yield* pool.stats).toMatchObject({ idle: 0, active: 0 })
      expect(yield* chatAnswer(pool, "a", "after")).toEqual(["echo: after"])
      // Its CLI exits while the session is idle.
      yield* clis[1]!.exit({ exitCode: 0 })
      yield* settle(pool, (s) => s.idle === 0)
      yield* eventually(() => counts.live === 0)
      expect(yield* chatAnswer(pool, "a", "later")).toEqual(["echo: later"])
      expect(launches.map((l) => l.resume)).toEqual([undefined, FAKE_SESSION_ID, FAKE_SESSION_ID])
      expect(keyedOnly(events)).toEqual([
        "Reused a",
        "Crashed a",
        "Evicted session-died a",
        "Resumed a",
        "Evicted session-died a",
        "Resumed a"
      ])
    }))

  it.scoped("a use that ends before its turn did stops the process; the session cannot be used after its use", () =>
    Effect.gen(function*() {
      const { agent, counts, launches, release } = yield* keyedAgent((p) => p === "partial")
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      const events = yield* recordEvents(pool)
      yield* chatAnswer(pool, "a", "hello") // the conversation's session id is known from here
      // Sent, never read: the next use would read this turn's messages.
      const escaped = yield* pool.withSession("a", undefined, (session) => Effect.as(session.send("unread"), session))
      expect(counts.live).toBe(0)
      const boom = yield* pool.withSession("a", undefined, () => Effect.fail("boom")).pipe(Effect.flip)
      expect(boom).toBe("boom")
      expect(counts.live).toBe(0)
      // A turn read only in part (the stream stopped before the result).
      const gotFirst = yield* Deferred.make<void>()
      const partial = yield* pool.chat("a", "partial").pipe(
        Stream.take(1),
        Stream.tap(() => Deferred.succeed(gotFirst, undefined)),
        Stream.runCollect,
        Effect.fork
      )
      yield* Deferred.await(gotFirst)
      yield* release("partial")
      expect(Chunk.toArray(yield* Fiber.join(partial)).map((m) => m.type)).toEqual(["system"])
      expect(counts.live).toBe(0)
      const error = yield* escaped.send("too late").pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "SessionClosedError", reason: "UseEnded" })
      expect(launches.map((l) => l.resume)).toEqual([undefined, FAKE_SESSION_ID, FAKE_SESSION_ID])
      expect(keyedOnly(events)).toEqual([
        "Reused a",
        "Evicted unfinished a",
        "Resumed a",
        "Evicted unfinished a",
        "Resumed a",
        "Evicted unfinished a"
      ])
    }))

  it.scoped("a use with other options reopens the session with them, resumed; equal options reuse it", () =>
    Effect.gen(function*() {
      const { agent, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      yield* chatAnswer(pool, "a", "one", { model: "m1" })
      yield* chatAnswer(pool, "a", "two", { model: "m1" })
      yield* chatAnswer(pool, "a", "three", { model: "m2" })
      expect(launches).toEqual([{ resume: undefined, model: "m1" }, { resume: FAKE_SESSION_ID, model: "m2" }])
    }))

  it.scoped("a conversation that cannot be resumed ends that turn with the CLI's error; the key's next use starts a new one", () =>
    Effect.gen(function*() {
      const { agent, launches, transcripts } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, idleTimeToLive: 0 })
      const events = yield* recordEvents(pool)
      yield* chatAnswer(pool, "a", "one")
      transcripts.lost = true
      expect(yield* chatAnswer(pool, "a", "two")).toEqual(["error_during_execution"])
      expect(yield* chatAnswer(pool, "a", "three")).toEqual(["echo: three"])
      expect(launches.map((l) => l.resume)).toEqual([undefined, FAKE_SESSION_ID, undefined])
      expect(keyedOnly(events)).toEqual([
        "Evicted idle-expired a",
        "Resumed a",
        "Evicted resume-failed a",
        "Evicted idle-expired a"
      ])
    }))

  it.scoped("forget ends the conversation: the key's next use starts a new one", () =>
    Effect.gen(function*() {
      const { agent, counts, launches } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      yield* chatAnswer(pool, "a", "one")
      yield* pool.forget("a")
      expect(counts.live).toBe(0)
      expect(yield* pool.stats).toMatchObject({ idle: 0 })
      yield* chatAnswer(pool, "a", "two")
      expect(launches.map((l) => l.resume)).toEqual([undefined, undefined])
    }))

  it.scoped("a new conversation claims a warm spare", () =>
    Effect.gen(function*() {
      const { agent, counts } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, warm: 1 })
      const events = yield* recordEvents(pool)
      yield* settle(pool, (s) => s.warm === 1)
      yield* chatAnswer(pool, "a", "one")
      yield* settle(pool, (s) => s.warm === 1)
      expect(counts.spawned).toBe(2)
      expect(events.filter((e) => e._tag === "ClaimedWarm")).toEqual([{ _tag: "ClaimedWarm", key: "a" }])
      expect(yield* pool.stats).toMatchObject({ idle: 1, warm: 1 })
    }))

  it.effect("closing the pool: a key's idle session stops at once, a turn mid-way gets shutdownTimeout, then its chat ends with PoolClosedError", () =>
    Effect.gen(function*() {
      const { agent, counts, started } = yield* keyedAgent((p) => p === "never answered")
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2, shutdownTimeout: "5 seconds" }).pipe(
        Scope.extend(scope)
      )
      const events = yield* recordEvents(pool)
      yield* chatAnswer(pool, "idle", "one")
      const inUse = yield* Effect.fork(chatAnswer(pool, "busy", "never answered").pipe(Effect.flip))
      expect(Chunk.toArray(yield* Queue.takeBetween(started, 2, 2))).toEqual(["one", "never answered"])
      // A second use of the key waits for the first.
      const waitsForKey = yield* Effect.fork(chatAnswer(pool, "busy", "next").pipe(Effect.flip))
      yield* Effect.repeat(Effect.zipLeft(Fiber.status(waitsForKey), Effect.yieldNow()), {
        until: (status) => status._tag === "Suspended"
      })
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      expect(yield* Fiber.join(waitsForKey)).toMatchObject({ _tag: "PoolClosedError", stage: "waiting" })
      yield* eventually(() => counts.live === 1)
      yield* awaitSleep(5_000)
      expect(yield* Fiber.poll(closing)).toEqual(Option.none())
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(closing)
      expect(counts.live).toBe(0)
      expect(yield* Fiber.join(inUse)).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
      expect(keyedOnly(events)).toEqual(["Evicted pool-closed idle", "Evicted pool-closed busy"])
      const closed = yield* chatAnswer(pool, "idle", "two").pipe(Effect.flip)
      expect(closed).toMatchObject({ _tag: "PoolClosedError", stage: "refused" })
    }))

  it.effect("closing the pool with shutdownTimeout 0 ends a keyed chat mid-turn with PoolClosedError, not with the interrupted result", () =>
    Effect.gen(function*() {
      const { agent, counts, started } = yield* keyedAgent((p) => p === "long")
      const scope = yield* Scope.make()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, shutdownTimeout: 0 }).pipe(Scope.extend(scope))
      const seen: Array<string> = []
      const turn = yield* pool.chat("a", "long").pipe(
        Stream.runForEach((m) => Effect.sync(() => void seen.push(m.type))),
        Effect.flip,
        Effect.fork
      )
      yield* Queue.take(started)
      yield* eventually(() => seen.length === 1)
      yield* Scope.close(scope, Exit.void)
      expect(counts.live).toBe(0)
      expect(yield* Fiber.join(turn)).toMatchObject({ _tag: "PoolClosedError", stage: "stopped" })
      expect(seen).toEqual(["system"])
    }))

  it.scoped("a session kept after withSession's use refuses every method: the key's next user's CLI gets nothing from it", () =>
    Effect.gen(function*() {
      const { agent, clis } = yield* keyedAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1 })
      const kept = yield* pool.withSession(
        "a",
        undefined,
        (session) => Effect.as(Effect.zipRight(session.send("hi"), Stream.runDrain(session.receiveResponse)), session)
      )
      const refusals = [
        kept.send("again"),
        kept.setModel("claude-other"),
        kept.interrupt(),
        kept.setPermissionMode("plan"),
        kept.mcpServerStatus(),
        kept.supportedModels,
        kept.initializationResult,
        kept.control.request(Control.SetModel, { model: "claude-other" }),
        Stream.runDrain(kept.messages),
        Stream.runDrain(kept.receiveResponse)
      ]
      for (const refused of refusals) {
        expect(yield* Effect.flip(refused)).toMatchObject({ _tag: "SessionClosedError", reason: "UseEnded" })
      }
      // The key's session is still open and idle: the kept handle reached none of it.
      expect(yield* chatAnswer(pool, "a", "next")).toEqual(["echo: next"])
      const controls = (yield* clis[0]!.sent).filter((f) => f.type === "control_request")
      expect(controls.map((f) => JSON.stringify(f))).not.toContainEqual(expect.stringContaining("set_model"))
      expect(controls.map((f) => JSON.stringify(f))).not.toContainEqual(expect.stringContaining("\"interrupt\""))
    }))
})
