/**
 * The pool's keyed sessions: per-key exclusive leases on a session that stays open while idle,
 * for `idleTimeToLive`, and is reopened with `resume` on its session id when its process was
 * stopped (evicted for another request, expired, crashed). Modelled on Effect's `RcMap`
 * (`lookup`, `idleTimeToLive`, `invalidate`) and `KeyedPool`: a lookup holds the key's lock for
 * its scope, so uses of one key take turns.
 *
 * @internal
 */
import { Deferred, Duration, Effect, Exit, FiberId, Option, Scope } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type { EvictionReason, PoolEvent } from "../../AgentPool.js"
import { Budget } from "../../Budget.js"
import type * as ClaudeAgent from "../../ClaudeAgent.js"
import type * as Options from "../../schema/Options.js"
import { PoolClosedError, type SdkError } from "../../SdkError.js"
import { leased, type Use } from "./leasedSession.js"
import { resumeOptions, sameKeyedOptions } from "./options.js"
import { awaitAll, interruptTurn, type Shutdown, track } from "./shutdown.js"
import type { Slots } from "./slots.js"
import type { Spares } from "./spares.js"

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * Settings and collaborators of `make`.
 *
 * @internal
 */
export interface KeyedLeasesConfig {
  readonly agent: ClaudeAgent.ClaudeAgentShape
  readonly slots: Slots
  readonly spares: Spares
  readonly publish: (event: PoolEvent) => Effect.Effect<unknown>
  readonly idleTimeToLive: Duration.Duration
  readonly shutdown: Shutdown
  /** Runs a key's session opening in the pool's context (its span, logger), not the caller's. */
  readonly inPoolContext: (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * The keyed leases.
 *
 * @internal
 */
export interface KeyedLeases {
  /** The session under `key` for the current scope, exclusively. */
  readonly lookup: <R = never>(
    key: string,
    options: Options.Options<R> | undefined
  ) => Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R>
  /** Waits for the key's current use, stops its process and forgets its session id. */
  readonly invalidate: (key: string) => Effect.Effect<void>
  /** Keyed sessions in use. */
  readonly inUse: () => number
  /** Keyed sessions open and not in use. */
  readonly idle: () => number
  /** Picks the least recently used idle session to stop for a request (`Slots`' `reclaim`). */
  readonly reclaim: () => Option.Option<Effect.Effect<void>>
  /** Stops the idle sessions (the pool is closing); returns once their processes have exited. */
  readonly closeIdle: Effect.Effect<void>
  /** Waits until no use is running (each ended, its process stopped or idle). */
  readonly awaitUses: Effect.Effect<void>
  /** Asks the CLI of every session in use to end its turn (the protocol's `interrupt`). */
  readonly interruptUses: Effect.Effect<void>
  /**
   * Stops every session, those in use included, once the ones opening have opened; returns once
   * their processes have exited (the pool is closing, past its grace period).
   */
  readonly stopAll: Effect.Effect<void>
}

// What the pool keeps per key: the conversation's session id (to resume it) and, while its
// process runs, that process. The lock makes uses of one key take turns.
interface Keyed {
  readonly key: string
  readonly lock: Effect.Semaphore
  /** Uses holding or waiting for the lock, and `invalidate`s: while non-zero the entry stays mapped. */
  holders: number
  sessionId: string | undefined
  live: Live | undefined
  /** Completed when the last stopped process of this key has exited: a resume waits for it. */
  stopping: Deferred.Deferred<void> | undefined
}

interface Live {
  readonly session: AgentSession.AgentSession
  readonly scope: Scope.CloseableScope
  readonly options: Options.Options<unknown> | undefined
  /** Releases the process's slot. */
  readonly release: Effect.Effect<void>
  inUse: boolean
  dead: boolean
  /** Completing it cancels the idle timer. */
  idleTimer: Deferred.Deferred<void> | undefined
  /** Completed once its process has exited (after `detach`). */
  readonly stopped: Deferred.Deferred<void>
  /** The CLI found no conversation to resume (it answered a prompt with "No conversation found"). */
  resumeFailed: boolean
}

interface State {
  readonly config: KeyedLeasesConfig
  readonly poolScope: Scope.Scope
  readonly keyed: Map<string, Keyed>
  /** The keyed sessions open and not in use, least recently used first (a Set keeps insertion order). */
  readonly idle: Set<Keyed>
  inUse: number
  /** Completed when each use has ended, or each process opening has opened (or failed to). */
  readonly uses: Set<Deferred.Deferred<void>>
  readonly openings: Set<Deferred.Deferred<void>>
}

const entryFor = (state: State, key: string): Keyed => {
  const existing = state.keyed.get(key)
  if (existing !== undefined) return existing
  const entry: Keyed = {
    key,
    lock: Effect.unsafeMakeSemaphore(1),
    holders: 0,
    sessionId: undefined,
    live: undefined,
    stopping: undefined
  }
  state.keyed.set(key, entry)
  return entry
}

// An entry with nothing to remember and nobody using it is dropped.
const dropIfUnused = (state: State, entry: Keyed) => {
  if (
    entry.holders === 0 && entry.live === undefined && entry.sessionId === undefined &&
    state.keyed.get(entry.key) === entry
  ) {
    state.keyed.delete(entry.key)
  }
}

// Holds the entry (so it stays mapped) and its lock, until the current scope closes. A use
// waits for the lock at most `pendingTimeout`; `invalidate` as long as it takes.
const holdKey = <E>(state: State, key: string, wait: (take: Effect.Effect<number>) => Effect.Effect<number, E>) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const entry = entryFor(state, key)
      entry.holders++
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          entry.holders--
          dropIfUnused(state, entry)
        })
      )
      yield* restore(wait(entry.lock.take(1)))
      yield* Effect.addFinalizer(() => entry.lock.release(1))
      return entry
    })
  )

// Stops a keyed session's process and frees its slot; the key keeps its session id, so its
// next use resumes the conversation. If that process is already being stopped, waits for it.
const retire = (state: State, entry: Keyed, live: Live, reason: EvictionReason): Effect.Effect<void> =>
  Effect.uninterruptible(Effect.suspend(() => detach(state, entry, live, reason) ?? Deferred.await(live.stopped)))

// Takes the process from its key at once (synchronously: nobody else can reuse or stop it from
// then on) and returns the effect that stops it; `undefined` if it is no longer the key's.
const detach = (state: State, entry: Keyed, live: Live, reason: EvictionReason): Effect.Effect<void> | undefined => {
  if (entry.live !== live) return undefined
  entry.live = undefined
  state.idle.delete(entry)
  const stopping = Deferred.unsafeMake<void>(FiberId.none)
  entry.stopping = stopping
  return Effect.gen(function*() {
    if (live.idleTimer !== undefined) yield* Deferred.succeed(live.idleTimer, undefined)
    const id = yield* live.session.control.lastSessionId
    if (id !== undefined && reason !== "forgotten" && reason !== "resume-failed") entry.sessionId = id
    yield* Scope.close(live.scope, Exit.void)
    yield* Deferred.succeed(live.stopped, undefined)
    yield* Deferred.succeed(stopping, undefined)
    yield* state.config.publish({ _tag: "Evicted", reason, key: entry.key })
    yield* live.release
  })
}

// The process's watcher: a keyed session whose CLI exits while idle is retired at once (its
// slot freed); one in use is retired when its use ends.
const watch = (state: State, entry: Keyed, live: Live) =>
  live.session.control.closed.pipe(
    Effect.either,
    Effect.flatMap((ended) =>
      Effect.suspend(() => {
        const crash = died(state, entry, live, ended._tag === "Left" ? ended.left : undefined)
        if (entry.live !== live || live.inUse) return crash
        return Effect.zipRight(crash, retire(state, entry, live, "session-died"))
      })
    ),
    Effect.interruptible,
    Effect.forkIn(live.scope)
  )

// Marks the process dead, once: by its watcher, or by the use that read its failure (which may
// end, and retire the process, before the watcher has run).
const died = (state: State, entry: Keyed, live: Live, error: SdkError | undefined): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (live.dead) return Effect.void
    live.dead = true
    // A process the pool's close stopped did not crash.
    return error === undefined || state.config.shutdown.forced
      ? Effect.void
      : Effect.asVoid(state.config.publish({ _tag: "Crashed", error, key: entry.key }))
  })

const adopt = (
  state: State,
  entry: Keyed,
  opened: Pick<Live, "session" | "scope" | "options" | "release">
) =>
  Effect.suspend(() => {
    const live: Live = {
      ...opened,
      inUse: true,
      dead: false,
      idleTimer: undefined,
      stopped: Deferred.unsafeMake(FiberId.none),
      resumeFailed: false
    }
    entry.live = live
    state.inUse++
    return Effect.as(watch(state, entry, live), live)
  })

// Opens the key's process (holding its lock): a fresh conversation may claim a spare; a known
// one is resumed on a new process.
const open = <R>(state: State, entry: Keyed, options: Options.Options<R> | undefined, restore: Restore) =>
  Effect.gen(function*() {
    const { agent, inPoolContext, publish, slots, spares } = state.config
    const sessionId = entry.sessionId
    // A spare has no budget guard: a session under a `Budget` starts its own process.
    if (sessionId === undefined && Option.isNone(yield* Effect.serviceOption(Budget))) {
      const claimed = spares.claim(options)
      if (Option.isSome(claimed)) {
        const { bind, scope } = claimed.value
        // A refused claim stopped the spare and ran nothing: a cold start in its slot and scope.
        const session = yield* restore(bind).pipe(
          Effect.tap((bound) => publish({ _tag: "ClaimedWarm", key: entry.key, cwd: bound.cwd })),
          Effect.map((bound) => bound.session),
          Effect.catchTag(
            "ClaimRefused",
            (refused) =>
              slots.isClosed() ?
                Effect.fail(new PoolClosedError({ stage: "stopped" })) :
                publish({ _tag: "ClaimFellBack", reason: refused.reason, code: refused.code, key: entry.key }).pipe(
                  Effect.zipRight(publish({ _tag: "Started", key: entry.key })),
                  Effect.zipRight(restore(agent.session(options).pipe(Scope.extend(scope), inPoolContext(entry.key))))
                )
          ),
          Effect.onError(() => Scope.close(scope, Exit.void).pipe(Effect.zipRight(slots.release)))
        )
        const live = yield* adopt(state, entry, { session, scope, options, release: slots.release })
        yield* spares.refill
        return live
      }
    }
    const slot = yield* Scope.make()
    const scope = yield* Scope.make()
    // The pool's close waits for an opening to end before it stops the keyed processes.
    const opening = Deferred.unsafeMake<void>(FiberId.none)
    state.openings.add(opening)
    return yield* Effect.gen(function*() {
      yield* restore(Scope.extend(slots.acquire, slot))
      // Two processes must not write one conversation: the one stopped last must be gone.
      if (entry.stopping !== undefined) yield* restore(Deferred.await(entry.stopping))
      yield* publish({ _tag: "Started", key: entry.key })
      if (sessionId !== undefined) yield* publish({ _tag: "Resumed", key: entry.key, sessionId })
      return yield* restore(
        agent.session(sessionId === undefined ? options : resumeOptions(options, sessionId)).pipe(
          Scope.extend(scope),
          inPoolContext(entry.key)
        )
      ).pipe(
        // A session store without the key's conversation fails this use before any CLI starts;
        // resuming again would fail again: the next use starts a new conversation.
        Effect.tapErrorTag("SessionNotFoundError", () =>
          Effect.sync(() => {
            if (entry.sessionId === sessionId) entry.sessionId = undefined
          }))
      )
    }).pipe(
      Effect.onError(() => Scope.close(scope, Exit.void).pipe(Effect.zipRight(Scope.close(slot, Exit.void)))),
      Effect.flatMap((session) =>
        adopt(state, entry, { session, scope, options, release: Scope.close(slot, Exit.void) })
      ),
      Effect.ensuring(Effect.suspend(() => {
        state.openings.delete(opening)
        return Deferred.succeed(opening, undefined)
      }))
    )
  })

// Keeps an idle session open for `idleTimeToLive` (forever when it is infinite), unless its key
// is used again first.
const keepIdle = (state: State, entry: Keyed, live: Live, cancel: Deferred.Deferred<void>) => {
  const ttl = state.config.idleTimeToLive
  state.idle.add(entry)
  live.idleTimer = cancel
  if (!Duration.isFinite(ttl)) return Effect.void
  return Effect.raceFirst(
    Effect.as(Effect.sleep(ttl), true),
    Effect.as(Deferred.await(cancel), false)
  ).pipe(
    Effect.flatMap((expired) =>
      expired && entry.live === live && !live.inUse ? retire(state, entry, live, "idle-expired") : Effect.void
    ),
    Effect.interruptible,
    Effect.forkIn(state.poolScope),
    Effect.asVoid
  )
}

// Ends a use: the session goes back to idle if the use read every turn it started to its end
// and its CLI is alive; otherwise its process is stopped (the next use resumes it).
const endUse = (state: State, entry: Keyed, live: Live, exit: Exit.Exit<unknown, unknown>, use: Use) =>
  Effect.gen(function*() {
    const run = yield* live.session.control.runState
    const id = yield* live.session.control.lastSessionId
    const cancel = yield* Deferred.make<void>()
    return yield* Effect.suspend(() => {
      state.inUse--
      if (entry.live !== live) return Effect.void
      if (id !== undefined) entry.sessionId = id
      live.inUse = false
      if (live.resumeFailed) {
        // Resuming again would fail again: the next use starts a new conversation.
        entry.sessionId = undefined
        return retire(state, entry, live, "resume-failed")
      }
      if (live.dead) return retire(state, entry, live, "session-died")
      // Whether or not the use finished its turn, the pool's close is why the process stops.
      if (state.config.slots.isClosed()) return retire(state, entry, live, "pool-closed")
      const finished = Exit.isSuccess(exit) && use.sent === use.read && run.results - use.resultsBefore === use.read
      if (!finished) return retire(state, entry, live, "unfinished")
      if (state.config.slots.pending() > 0) return retire(state, entry, live, "slot-needed")
      const ttl = state.config.idleTimeToLive
      if (!Duration.isFinite(ttl) || Duration.toMillis(ttl) > 0) return keepIdle(state, entry, live, cancel)
      return retire(state, entry, live, "idle-expired")
    })
  })

// Takes the key's idle session, or opens one, for this use; the use ends with the current scope.
const begin = <R>(state: State, entry: Keyed, options: Options.Options<R> | undefined) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      yield* track(state.uses)
      const reused = entry.live
      let live: Live
      if (reused !== undefined) {
        state.idle.delete(entry)
        reused.inUse = true
        state.inUse++
        if (reused.idleTimer !== undefined) yield* Deferred.succeed(reused.idleTimer, undefined)
        reused.idleTimer = undefined
        yield* state.config.publish({ _tag: "Reused", key: entry.key })
        live = reused
      } else {
        live = yield* open(state, entry, options, restore)
      }
      const use: Use = { sent: 0, read: 0, resultsBefore: (yield* live.session.control.runState).results, ended: false }
      yield* Effect.addFinalizer((exit) =>
        Effect.suspend(() => {
          use.ended = true
          return endUse(state, entry, live, exit, use)
        })
      )
      return leased(live, use, state.config.shutdown, (error) => died(state, entry, live, error))
    })
  )

const lookup = <R>(
  state: State,
  key: string,
  options: Options.Options<R> | undefined
): Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R> =>
  Effect.gen(function*() {
    const { slots } = state.config
    if (slots.isClosed()) return yield* new PoolClosedError({ stage: "refused" })
    const entry = yield* holdKey(
      state,
      key,
      (take) => Effect.raceFirst(slots.withPendingTimeout(take), slots.whenClosed)
    )
    const current = entry.live
    if (current !== undefined && (current.dead || !sameKeyedOptions(current.options, options))) {
      yield* retire(state, entry, current, current.dead ? "session-died" : "options-changed")
    }
    return yield* begin(state, entry, options)
  }).pipe(Effect.withSpan("AgentPool.lease", { attributes: { key } }))

/**
 * Keyed leases in the current scope (the pool's: idle timers run in it).
 *
 * @internal
 */
export const make = (config: KeyedLeasesConfig): Effect.Effect<KeyedLeases, never, Scope.Scope> =>
  Effect.map(Effect.scope, (poolScope): KeyedLeases => {
    const state: State = {
      config,
      poolScope,
      keyed: new Map(),
      idle: new Set(),
      inUse: 0,
      uses: new Set(),
      openings: new Set()
    }
    const retireAll = (which: (live: Live) => boolean) =>
      Effect.suspend(() => {
        const lives = Array.from(state.keyed.values()).flatMap((entry) =>
          entry.live === undefined || !which(entry.live) ? [] : [{ entry, live: entry.live }]
        )
        return Effect.forEach(lives, ({ entry, live }) => retire(state, entry, live, "pool-closed"), {
          concurrency: "unbounded",
          discard: true
        })
      })
    return {
      lookup: (key, options) => lookup(state, key, options),
      invalidate: (key) =>
        Effect.suspend(() => {
          if (!state.keyed.has(key)) return Effect.void
          return Effect.scoped(Effect.gen(function*() {
            const entry = yield* holdKey(state, key, (take) => take)
            if (entry.live !== undefined) yield* retire(state, entry, entry.live, "forgotten")
            entry.sessionId = undefined
          }))
        }),
      inUse: () => state.inUse,
      idle: () => state.idle.size,
      reclaim: () => {
        // Detached when picked: the slot's new owner waits for this very process to exit.
        for (const entry of state.idle) {
          const stop = entry.live === undefined ? undefined : detach(state, entry, entry.live, "slot-needed")
          if (stop !== undefined) return Option.some(Effect.uninterruptible(stop))
        }
        return Option.none()
      },
      closeIdle: retireAll((live) => !live.inUse),
      awaitUses: awaitAll(state.uses),
      interruptUses: Effect.suspend(() =>
        Effect.forEach(
          Array.from(state.keyed.values()).flatMap((entry) =>
            entry.live !== undefined && entry.live.inUse ? [entry.live.session] : []
          ),
          interruptTurn,
          { concurrency: "unbounded", discard: true }
        )
      ),
      stopAll: Effect.zipRight(awaitAll(state.openings), retireAll(() => true))
    }
  })
