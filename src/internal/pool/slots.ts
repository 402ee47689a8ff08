/**
 * The pool's slots: a priority semaphore, one permit per CLI process (spares and idle keyed
 * sessions included). It owns the count and the waiters; a request that finds every slot taken
 * first asks `reclaim` for a process to stop (a spare, the least recently used idle keyed
 * session) and takes its slot, else waits, ordered by priority and then by arrival.
 *
 * The bookkeeping is synchronous, so it cannot interleave; effects (stopping a process,
 * completing a waiter) follow it.
 *
 * @internal
 */
import { Clock, Deferred, Duration, Effect, Exit, FiberId, FiberRef, Metric, Option, type Scope } from "effect"
import { PoolClosedError, PoolFullError, PoolTimeoutError } from "../../SdkError.js"
import * as Telemetry from "../../Telemetry.js"

/**
 * The queue priority of the pool requests a fiber makes (`AgentPool.withPriority`).
 *
 * @internal
 */
export const priorityRef = FiberRef.unsafeMake(0)

/**
 * What waiting for a slot can fail with.
 *
 * @internal
 */
export type SlotError = PoolFullError | PoolTimeoutError | PoolClosedError

/**
 * Settings and hooks of `make`.
 *
 * @internal
 */
export interface SlotsConfig {
  readonly maxConcurrent: number
  readonly maxPending: number
  readonly pendingTimeout: Duration.Duration | undefined
  /**
   * Picks a process to stop for a request (synchronously, so nothing else takes it meanwhile) and
   * returns the effect that stops it and releases its slot; the slot passes to the request.
   */
  readonly reclaim: () => Option.Option<Effect.Effect<void>>
  /** Runs when a slot is released and nobody waits for it (the spares refill). */
  readonly onFree: Effect.Effect<void>
  /** Runs when a request starts waiting, with the number waiting. */
  readonly onQueued: (pending: number) => Effect.Effect<void>
}

/**
 * The pool's slots.
 *
 * @internal
 */
export interface Slots {
  readonly maxConcurrent: number
  /** Slots held. */
  readonly used: () => number
  /** Requests waiting. */
  readonly pending: () => number
  readonly isClosed: () => boolean
  /** Takes a slot if one is free and nobody waits, synchronously. */
  readonly tryTake: () => boolean
  /** Holds a slot until the current scope closes. Only the wait is interruptible. */
  readonly acquire: Effect.Effect<void, SlotError, Scope.Scope>
  /** Releases a slot: to the next waiter, or `onFree` when nobody waits. */
  readonly release: Effect.Effect<void>
  /** Releases a slot to the next waiter, without `onFree`. */
  readonly releaseQuietly: Effect.Effect<void>
  /** `wait`, failing with `PoolTimeoutError` after `pendingTimeout`. */
  readonly withPendingTimeout: <A, E>(wait: Effect.Effect<A, E>) => Effect.Effect<A, E | PoolTimeoutError>
  /** Refuses new requests from now on; the returned effect fails those waiting. */
  readonly close: () => Effect.Effect<void>
  /** Fails with `PoolClosedError` (`waiting`) once `close` was called: for other waits to race. */
  readonly whenClosed: Effect.Effect<never, PoolClosedError>
}

interface Waiter {
  readonly priority: number
  readonly granted: Deferred.Deferred<void, PoolClosedError>
}

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

interface State {
  readonly config: SlotsConfig
  used: number
  closed: boolean
  readonly closing: Deferred.Deferred<void>
  /** By priority, then arrival. */
  readonly waiters: Array<Waiter>
}

const grantNext = (state: State): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (state.used >= state.config.maxConcurrent) return Effect.void
    const next = state.waiters.shift()
    if (next !== undefined) {
      state.used++
      return Effect.zipRight(Deferred.succeed(next.granted, undefined), grantNext(state))
    }
    return state.config.onFree
  })

const release = (state: State) =>
  Effect.suspend(() => {
    state.used--
    return grantNext(state)
  })

const withPendingTimeout =
  (state: State) => <A, E>(wait: Effect.Effect<A, E>): Effect.Effect<A, E | PoolTimeoutError> => {
    const { maxConcurrent, pendingTimeout } = state.config
    return pendingTimeout === undefined ? wait : wait.pipe(Effect.timeoutFail({
      duration: pendingTimeout,
      onTimeout: () => new PoolTimeoutError({ timeoutMillis: Duration.toMillis(pendingTimeout), maxConcurrent })
    }))
  }

// Waits in the queue, by priority then arrival. The wait's length and the queue's depth go to
// the pool metrics, whatever ends the wait.
const enqueue = (state: State, restore: Restore) =>
  Effect.gen(function*() {
    const { waiters } = state
    const priority = yield* FiberRef.get(priorityRef)
    const waiter: Waiter = { priority, granted: yield* Deferred.make<void, PoolClosedError>() }
    const at = waiters.findIndex((w) => w.priority < priority)
    if (at === -1) waiters.push(waiter)
    else waiters.splice(at, 0, waiter)
    yield* state.config.onQueued(waiters.length)
    yield* Metric.set(Telemetry.poolPending, waiters.length)
    const queuedAt = yield* Clock.currentTimeMillis
    const measured = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.zipRight(
        Metric.update(Telemetry.poolWait, now - queuedAt),
        Effect.suspend(() => Metric.set(Telemetry.poolPending, waiters.length))
      ))
    yield* restore(withPendingTimeout(state)(Deferred.await(waiter.granted))).pipe(Effect.onExit((exit) =>
      (Exit.isSuccess(exit) ? Effect.void : Effect.suspend(() => {
        const index = waiters.indexOf(waiter)
        if (index !== -1) {
          waiters.splice(index, 1)
          return Effect.void
        }
        // Granted while it was giving up: pass the slot on.
        return Deferred.isDone(waiter.granted).pipe(
          Effect.flatMap((granted) => (granted ? release(state) : Effect.void))
        )
      })).pipe(Effect.zipRight(measured))
    ))
  })

// A free slot at once, else a reclaimed one, else a place in the queue. Invariant: while a
// request waits, no spare and no idle keyed session holds a slot (each is stopped for it).
const take = (state: State, restore: Restore) =>
  Effect.suspend((): Effect.Effect<void, SlotError> => {
    const { maxConcurrent, maxPending } = state.config
    if (state.closed) return Effect.fail(new PoolClosedError({ stage: "refused" }))
    if (state.used < maxConcurrent && state.waiters.length === 0) {
      state.used++
      return Effect.void
    }
    if (state.waiters.length === 0) {
      const reclaimed = state.config.reclaim()
      if (Option.isSome(reclaimed)) {
        // The stopped process's slot passes straight to this request.
        state.used++
        return reclaimed.value
      }
    }
    if (state.waiters.length >= maxPending) {
      return Effect.fail(new PoolFullError({ pending: state.waiters.length, maxConcurrent }))
    }
    return enqueue(state, restore)
  })

/**
 * Slots for `config.maxConcurrent` processes.
 *
 * @internal
 */
export const make = (config: SlotsConfig): Slots => {
  const state: State = { config, used: 0, closed: false, closing: Deferred.unsafeMake(FiberId.none), waiters: [] }
  return {
    maxConcurrent: config.maxConcurrent,
    used: () => state.used,
    pending: () => state.waiters.length,
    isClosed: () => state.closed,
    tryTake: () => {
      if (state.used >= config.maxConcurrent || state.waiters.length > 0) return false
      state.used++
      return true
    },
    acquire: Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(take(state, restore), Effect.addFinalizer(() => release(state)))
    ),
    release: release(state),
    releaseQuietly: Effect.suspend(() => {
      state.used--
      return state.waiters.length > 0 ? grantNext(state) : Effect.void
    }),
    withPendingTimeout: withPendingTimeout(state),
    close: () => {
      state.closed = true
      const pending = state.waiters.splice(0)
      return Effect.forEach(
        pending,
        (w) => Deferred.fail(w.granted, new PoolClosedError({ stage: "waiting" })),
        { discard: true }
      ).pipe(Effect.zipRight(Deferred.succeed(state.closing, undefined)))
    },
    whenClosed: Effect.zipRight(Deferred.await(state.closing), Effect.fail(new PoolClosedError({ stage: "waiting" })))
  }
}
