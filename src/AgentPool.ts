/**
 * `AgentPool`: many agents on one machine, within limits.
 *
 * Every CLI process costs hundreds of MB. The pool runs at most `maxConcurrent` of them; more
 * requests wait in a bounded FIFO queue (ordered by priority first, see `withPriority`) and fail
 * with `PoolFullError` or `PoolTimeoutError` when it overflows or a wait runs out. It can keep
 * `warm` spares started and initialized, so a request that matches claims one and its first
 * answer skips the CLI's start-up. It has the same API as `ClaudeAgent`, and `AgentPool.layer`
 * provides `ClaudeAgent` too: code moves onto the pool by changing a Layer.
 *
 * @since 0.1.0
 */
import type { CommandExecutor, FileSystem, Path } from "@effect/platform"
import {
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  FiberRef,
  Layer,
  Mailbox,
  Option,
  PubSub,
  Scope,
  Stream
} from "effect"
import type * as AgentSession from "./AgentSession.js"
import * as ClaudeAgent from "./ClaudeAgent.js"
import * as Query from "./internal/query.js"
import type * as Options from "./schema/Options.js"
import { CLIConnectionError, PoolFullError, PoolTimeoutError, type SdkError } from "./SdkError.js"

/**
 * How the pool behaves. Every field is optional.
 *
 * @example
 * ```ts
 * import { AgentPool } from "effect-claude-agent"
 *
 * const config: AgentPool.PoolConfig = { maxConcurrent: 4, maxPending: 100, pendingTimeout: "2 minutes", warm: 1 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PoolConfig {
  /** At most this many CLI processes at once, spares included. Default `min(4, cores)`. */
  readonly maxConcurrent?: number | undefined
  /** At most this many requests waiting for a process; one more fails with `PoolFullError`. Default 1000. */
  readonly maxPending?: number | undefined
  /** How long a request may wait for a process before it fails with `PoolTimeoutError`. Default: no limit. */
  readonly pendingTimeout?: Duration.DurationInput | undefined
  /** How many started-and-initialized spares to keep ready. Default 0. */
  readonly warm?: number | undefined
  /**
   * The options spares are started with. A request claims a spare only when its options are the
   * same (callbacks compared by identity), or when it gives none. Default `{}`.
   */
  readonly warmOptions?: Options.Options | undefined
}

/**
 * Something that happened in the pool, for dashboards and tests (`pool.events`).
 *
 * @example
 * ```ts
 * import { AgentPool } from "effect-claude-agent"
 *
 * const describe = (event: AgentPool.PoolEvent) => event._tag === "Queued" ? `${event.pending} waiting` : event._tag
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type PoolEvent =
  /** A request found every process busy and waits (`pending` counts it). */
  | { readonly _tag: "Queued"; readonly pending: number }
  /** A request got a slot and starts a new CLI process. */
  | { readonly _tag: "Started" }
  /** A request claimed a warm spare. */
  | { readonly _tag: "ClaimedWarm" }
  /** A spare is started and initialized. */
  | { readonly _tag: "WarmReady" }
  /** A spare was stopped: to free its slot for a request with other options, or because its CLI died. */
  | { readonly _tag: "Evicted"; readonly reason: "slot-needed" | "spare-died" }
  /** A session's CLI ended with an error while in use. */
  | { readonly _tag: "Crashed"; readonly error: SdkError }
  /** A session ended and its slot is free. */
  | { readonly _tag: "Released" }

/**
 * The pool's state now.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 *
 * const busy = Effect.map(AgentPool.AgentPool, (pool) => pool.stats).pipe(Effect.flatten, Effect.map((s) => s.active))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PoolStats {
  /** Sessions in use. */
  readonly active: number
  /** Spares ready to be claimed. */
  readonly warm: number
  /** Spares starting. */
  readonly starting: number
  /** Requests waiting for a process. */
  readonly pending: number
  readonly maxConcurrent: number
}

/**
 * The pool's operations: `ClaudeAgent`'s, plus what it knows.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentPoolShape extends ClaudeAgent.ClaudeAgentShape {
  readonly stats: Effect.Effect<PoolStats>
  /** Every event from the moment the stream is run. */
  readonly events: Stream.Stream<PoolEvent>
}

/**
 * The `AgentPool` service.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 *
 * const answers = Effect.gen(function* () {
 *   const pool = yield* AgentPool.AgentPool
 *   return yield* Effect.forEach(["a", "b", "c"], (q) => pool.query(q).pipe(Stream.runCollect), { concurrency: "unbounded" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentPool extends Context.Tag("effect-claude-agent/AgentPool")<AgentPool, AgentPoolShape>() {}

const priorityRef = FiberRef.unsafeMake(0)

/**
 * Runs `effect` with a queue priority for the pool requests it makes: a waiting request with a
 * higher priority gets the next free process first; equal priorities are served in arrival order.
 * Default 0.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const urgent = ClaudeAgent.query("page the on-call").pipe(Stream.runDrain, AgentPool.withPriority(10))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPriority = (priority: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, priorityRef, priority)

interface Waiter {
  readonly priority: number
  readonly granted: Deferred.Deferred<void, CLIConnectionError>
}

interface Spare {
  readonly session: AgentSession.AgentSession
  readonly scope: Scope.CloseableScope
}

const defaultMaxConcurrent = (): number => {
  const os: unknown = Reflect.get(globalThis, "navigator")
  const cores = typeof os === "object" && os !== null && "hardwareConcurrency" in os &&
      typeof os.hardwareConcurrency === "number"
    ? os.hardwareConcurrency
    : 4
  return Math.max(1, Math.min(4, cores))
}

// Options are the same when their data is, and their callbacks are the same functions.
const sameOptions = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a).filter((k) => Reflect.get(a, k) !== undefined)
  const keysB = Object.keys(b).filter((k) => Reflect.get(b, k) !== undefined)
  if (keysA.length !== keysB.length) return false
  return keysA.every((k) => sameOptions(Reflect.get(a, k), Reflect.get(b, k)))
}

/**
 * Builds a pool over `agent` (which opens the sessions) in the current scope. Closing the scope
 * stops the spares and fails the requests still waiting; sessions in use end with their own scopes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const pool = Effect.flatMap(ClaudeAgent.ClaudeAgent, (agent) => AgentPool.make(agent, { maxConcurrent: 2 }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  agent: ClaudeAgent.ClaudeAgentShape,
  config: PoolConfig = {}
): Effect.Effect<AgentPoolShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxConcurrent = Math.max(1, Math.floor(config.maxConcurrent ?? defaultMaxConcurrent()))
    const maxPending = Math.max(0, Math.floor(config.maxPending ?? 1000))
    const pendingTimeout = config.pendingTimeout === undefined ? undefined : Duration.decode(config.pendingTimeout)
    const warmTarget = Math.max(0, Math.floor(config.warm ?? 0))
    const warmOptions: Options.Options = config.warmOptions ?? {}
    const poolScope = yield* Effect.scope
    const hub = yield* PubSub.unbounded<PoolEvent>()
    const publish = (event: PoolEvent) => PubSub.publish(hub, event)

    // Slots: one per CLI process, spares included. All bookkeeping is synchronous, so it cannot
    // interleave; effects (closing spares, completing waiters) follow it.
    let slotsUsed = 0
    let active = 0
    let starting = 0
    let closed = false
    const waiters: Array<Waiter> = []
    const spares: Array<Spare> = []

    const grantNext = (): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (slotsUsed >= maxConcurrent) return Effect.void
        const next = waiters.shift()
        if (next !== undefined) {
          slotsUsed++
          return Effect.zipRight(Deferred.succeed(next.granted, undefined), grantNext())
        }
        return refill
      })

    const releaseSlot = Effect.suspend(() => {
      slotsUsed--
      return grantNext()
    })

    const closeSpare = (spare: Spare, reason: "slot-needed" | "spare-died") =>
      Scope.close(spare.scope, Exit.void).pipe(
        Effect.zipRight(publish({ _tag: "Evicted", reason })),
        Effect.zipRight(releaseSlot)
      )

    // Keeps `warm` spares while slots are free and nobody waits for one.
    const refill: Effect.Effect<void> = Effect.suspend(() => {
      if (closed || warmTarget === 0) return Effect.void
      const missing = warmTarget - spares.length - starting
      let started = 0
      while (started < missing && slotsUsed < maxConcurrent && waiters.length === 0) {
        slotsUsed++
        starting++
        started++
      }
      if (started === 0) return Effect.void
      return spareStarts.offerAll(Array.from({ length: started }, () => undefined))
    })

    const startSpare = Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* agent.session(warmOptions).pipe(
        Effect.tap((session) => session.initializationResult),
        Scope.extend(scope),
        Effect.matchEffect({
          onFailure: (error) =>
            Effect.logWarning(`effect-claude-agent: a warm spare failed to start: ${error.message}`).pipe(
              Effect.zipRight(Scope.close(scope, Exit.void)),
              Effect.zipRight(Effect.sync(() => void starting--)),
              // Not refilled at once: a spare that cannot start would otherwise be retried in a loop.
              Effect.zipRight(Effect.suspend(() => {
                slotsUsed--
                return waiters.length > 0 ? grantNext() : Effect.void
              }))
            ),
          onSuccess: (session) =>
            Effect.gen(function*() {
              starting--
              if (closed) {
                yield* Scope.close(scope, Exit.void)
                slotsUsed--
                return
              }
              const spare: Spare = { session, scope }
              // A request started waiting while this spare started: it needs the slot more.
              if (waiters.length > 0) return yield* closeSpare(spare, "slot-needed")
              spares.push(spare)
              yield* publish({ _tag: "WarmReady" })
              // A spare whose CLI dies while it waits is dropped and its slot freed.
              yield* session.control.closed.pipe(
                Effect.exit,
                Effect.flatMap(() => {
                  const index = spares.indexOf(spare)
                  if (index === -1) return Effect.void
                  spares.splice(index, 1)
                  return closeSpare(spare, "spare-died")
                }),
                Effect.forkIn(scope)
              )
            })
        })
      )
    })

    // Spares are started by one fiber of the pool's own, never by a request's fiber: a spare must
    // not inherit the context (scope, logger, interruption) of whichever request triggered it.
    const spareStarts = yield* Mailbox.make<void>()
    yield* spareStarts.take.pipe(
      Effect.flatMap(() => Effect.forkIn(startSpare, poolScope)),
      Effect.forever,
      Effect.forkIn(poolScope)
    )

    // Waits for a slot: at once if one is free, else by evicting a spare, else in the queue.
    const acquireSlot: Effect.Effect<void, PoolFullError | PoolTimeoutError | CLIConnectionError> = Effect.gen(
      function*() {
        if (closed) return yield* Effect.fail(new CLIConnectionError({ reason: "The agent pool is closed" }))
        if (slotsUsed < maxConcurrent && waiters.length === 0) {
          slotsUsed++
          return
        }
        const spare = waiters.length === 0 ? spares.shift() : undefined
        if (spare !== undefined) {
          // The spare's slot passes straight to this request.
          slotsUsed++
          yield* closeSpare(spare, "slot-needed")
          return
        }
        if (waiters.length >= maxPending) {
          return yield* Effect.fail(new PoolFullError({ pending: waiters.length, maxConcurrent }))
        }
        const priority = yield* FiberRef.get(priorityRef)
        const waiter: Waiter = { priority, granted: yield* Deferred.make<void, CLIConnectionError>() }
        const at = waiters.findIndex((w) => w.priority < priority)
        if (at === -1) waiters.push(waiter)
        else waiters.splice(at, 0, waiter)
        yield* publish({ _tag: "Queued", pending: waiters.length })
        const wait = pendingTimeout === undefined
          ? Deferred.await(waiter.granted)
          : Deferred.await(waiter.granted).pipe(Effect.timeoutFail({
            duration: pendingTimeout,
            onTimeout: () => new PoolTimeoutError({ timeoutMillis: Duration.toMillis(pendingTimeout), maxConcurrent })
          }))
        yield* wait.pipe(Effect.onExit((exit) =>
          Exit.isSuccess(exit) ? Effect.void : Effect.suspend(() => {
            const index = waiters.indexOf(waiter)
            if (index !== -1) {
              waiters.splice(index, 1)
              return Effect.void
            }
            // Granted while it was giving up: pass the slot on.
            return Deferred.isDone(waiter.granted).pipe(
              Effect.flatMap((granted) => (granted ? releaseSlot : Effect.void))
            )
          })
        ))
      }
    )

    const claimSpare = <R>(options: Options.Options<R> | undefined): Option.Option<Spare> => {
      if (spares.length === 0 || waiters.length > 0) return Option.none()
      if (options !== undefined && !sameOptions(options, warmOptions)) return Option.none()
      const spare = spares.shift()
      return spare === undefined ? Option.none() : Option.some(spare)
    }

    const session: ClaudeAgent.ClaudeAgentShape["session"] = (options) =>
      Effect.gen(function*() {
        const claimed = claimSpare(options)
        if (Option.isSome(claimed)) {
          const spare = claimed.value
          // The slot moves with the spare; its scope now ends with the caller's.
          active++
          yield* Effect.addFinalizer((exit) =>
            Scope.close(spare.scope, exit).pipe(
              Effect.zipRight(Effect.sync(() => void active--)),
              Effect.zipRight(publish({ _tag: "Released" })),
              Effect.zipRight(releaseSlot)
            )
          )
          yield* publish({ _tag: "ClaimedWarm" })
          yield* watchCrash(spare.session)
          yield* refill
          return spare.session
        }
        // The wait is interruptible (a deadline, the caller giving up); the slot, once held, is
        // released with the caller's scope.
        yield* Effect.uninterruptibleMask((restore) =>
          restore(acquireSlot).pipe(
            Effect.zipRight(Effect.sync(() => void active++)),
            Effect.zipRight(Effect.addFinalizer(() =>
              Effect.sync(() => void active--).pipe(
                Effect.zipRight(publish({ _tag: "Released" })),
                Effect.zipRight(releaseSlot)
              )
            ))
          )
        )
        yield* publish({ _tag: "Started" })
        const opened = yield* agent.session(options)
        yield* watchCrash(opened)
        return opened
      }).pipe(Effect.withSpan("AgentPool.session"))

    const watchCrash = (opened: AgentSession.AgentSession) =>
      opened.control.closed.pipe(
        Effect.catchAll((error) => publish({ _tag: "Crashed", error })),
        Effect.forkScoped
      )

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        const pending = waiters.splice(0)
        const idle = spares.splice(0)
        return Effect.forEach(idle, (spare) => Scope.close(spare.scope, Exit.void), {
          concurrency: "unbounded",
          discard: true
        }).pipe(
          Effect.zipRight(Effect.forEach(
            pending,
            (w) => Deferred.fail(w.granted, new CLIConnectionError({ reason: "The agent pool was closed" })),
            { discard: true }
          )),
          Effect.zipRight(PubSub.shutdown(hub))
        )
      })
    )

    yield* refill

    return {
      session,
      query: Query.fromSessions(session),
      stats: Effect.sync((): PoolStats => ({
        active,
        warm: spares.length,
        starting,
        pending: waiters.length,
        maxConcurrent
      })),
      events: Stream.fromPubSub(hub)
    }
  })

/**
 * A pool over the `ClaudeAgent` in context, providing both `AgentPool` and a `ClaudeAgent` that
 * goes through the pool: code written against `ClaudeAgent` runs within the pool's limits.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const test = ClaudeAgent.query("hi").pipe(
 *   Stream.runCollect,
 *   Effect.provide(AgentPool.layerOver({ maxConcurrent: 2 })),
 *   Effect.provide(FakeCli.layerClaudeAgent())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOver = (
  config: PoolConfig = {}
): Layer.Layer<AgentPool | ClaudeAgent.ClaudeAgent, never, ClaudeAgent.ClaudeAgent> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const agent = yield* ClaudeAgent.ClaudeAgent
      const pool = yield* make(agent, config)
      return Context.make(AgentPool, pool).pipe(
        Context.add(ClaudeAgent.ClaudeAgent, { session: pool.session, query: pool.query })
      )
    })
  )

/**
 * A pool of real `claude` processes: `layerOver` on `ClaudeAgent.layer`. Provides `AgentPool`
 * and `ClaudeAgent`.
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const questions = ["What is 2 + 2?", "Name a prime", "Spell 'effect'"]
 * Effect.forEach(questions, (q) => ClaudeAgent.query(q).pipe(Stream.runDrain), { concurrency: "unbounded" }).pipe(
 *   Effect.provide(AgentPool.layer({ maxConcurrent: 2 }).pipe(Layer.provide(NodeContext.layer))),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: PoolConfig = {}
): Layer.Layer<
  AgentPool | ClaudeAgent.ClaudeAgent,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path
> => layerOver(config).pipe(Layer.provide(ClaudeAgent.layer))
