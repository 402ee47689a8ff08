/**
 * The pool's sessions for single requests (`session`, `query`): a claimed spare (its slot moves
 * with it) or a new process in a slot of its own. Each process lives in a scope of the pool's,
 * closed with the caller's scope, or by the pool's close once `shutdownTimeout` has passed; its
 * slot is freed only once its process has exited.
 *
 * @internal
 */
import { Deferred, Effect, ExecutionStrategy, Exit, FiberId, Option, Scope } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type { PoolEvent } from "../../AgentPool.js"
import type * as ClaudeAgent from "../../ClaudeAgent.js"
import type * as Options from "../../schema/Options.js"
import { PoolClosedError, type SdkError } from "../../SdkError.js"
import * as PoolBudget from "../budget/pool.js"
import { guardSession, interruptTurn, type Shutdown } from "./shutdown.js"
import type { Slots } from "./slots.js"
import type * as Spares from "./spares.js"

/**
 * Collaborators of `make`.
 *
 * @internal
 */
export interface RequestsConfig {
  readonly agent: ClaudeAgent.ClaudeAgentShape
  readonly slots: Slots
  readonly spares: Spares.Spares
  readonly publish: (event: PoolEvent) => Effect.Effect<unknown>
  readonly shutdown: Shutdown
  /** The pool's name, for `Budget` caps of scope `pool`. */
  readonly name: string
}

/**
 * The request sessions.
 *
 * @internal
 */
export interface Requests {
  readonly session: ClaudeAgent.ClaudeAgentShape["session"]
  /** Sessions open (or opening) for requests. */
  readonly active: () => number
  /** Waits until every request session has ended and its process has exited. */
  readonly awaitAll: Effect.Effect<void>
  /** Asks every open request session's CLI to end its turn (the protocol's `interrupt`). */
  readonly interruptAll: Effect.Effect<void>
  /** Stops every request session (once opened); returns once their processes have exited. */
  readonly stopAll: Effect.Effect<void>
}

// A request's process: closed once, by whichever comes first of its caller and the pool's close;
// the other waits for that close to end.
interface Running {
  readonly scope: Scope.CloseableScope
  closing: boolean
  readonly closed: Deferred.Deferred<void>
  /** Completed once the session has opened or failed to. */
  readonly opened: Deferred.Deferred<void>
  /** Completed once the caller's scope has closed it and freed its slot. */
  readonly done: Deferred.Deferred<void>
  /** Once opened. */
  session: AgentSession.AgentSession | undefined
}

const closeOnce = (running: Running, exit: Exit.Exit<unknown, unknown>) =>
  Effect.suspend(() => {
    if (running.closing) return Deferred.await(running.closed)
    running.closing = true
    return Scope.close(running.scope, exit).pipe(Effect.ensuring(Deferred.succeed(running.closed, undefined)))
  })

/**
 * Request sessions over `config.agent`.
 *
 * @internal
 */
export const make = (config: RequestsConfig): Requests => {
  const { agent, publish, shutdown, slots, spares } = config
  const running = new Set<Running>()

  // Counts `scope`'s process as the caller's until the caller's scope closes; then closes it
  // and frees its slot (after the process has exited).
  const register = (scope: Scope.CloseableScope, release: Effect.Effect<void>) =>
    Effect.uninterruptible(Effect.gen(function*() {
      const entry: Running = {
        scope,
        closing: false,
        closed: Deferred.unsafeMake(FiberId.none),
        opened: Deferred.unsafeMake(FiberId.none),
        done: Deferred.unsafeMake(FiberId.none),
        session: undefined
      }
      running.add(entry)
      yield* Effect.addFinalizer((exit) =>
        closeOnce(entry, exit).pipe(
          Effect.zipRight(Effect.sync(() => void running.delete(entry))),
          Effect.zipRight(publish({ _tag: "Released" })),
          Effect.zipRight(release),
          Effect.zipRight(Deferred.succeed(entry.done, undefined))
        )
      )
      return entry
    }))

  // A process the pool's close stopped did not crash.
  const watchCrash = (opened: AgentSession.AgentSession) =>
    opened.control.closed.pipe(
      Effect.catchAll((error) => (shutdown.forced ? Effect.void : publish({ _tag: "Crashed", error }))),
      Effect.forkScoped
    )

  // Takes a spare, its slot and its scope now (before anything can interrupt); binding it may
  // take a round trip (a parked spare's claim).
  const take = (options: Options.Options<unknown> | undefined) =>
    Effect.uninterruptible(Effect.gen(function*() {
      const taken = spares.claim(options)
      if (Option.isNone(taken)) return Option.none()
      const entry = yield* register(taken.value.scope, slots.release)
      // The pool's close may stop a claim in flight at once (the claim then fails): no need to
      // wait for it to end.
      yield* Deferred.succeed(entry.opened, undefined)
      return Option.some({ taken: taken.value, entry })
    }))

  // A refused claim has stopped the spare's process and never ran anything: the request starts
  // cold in the spare's slot and scope, unless the pool is closing (which stopped the claim).
  const bind = <R>(taken: Spares.Taken, entry: Running, options: Options.Options<R> | undefined) =>
    taken.bind.pipe(
      Effect.tap((bound) => publish({ _tag: "ClaimedWarm", cwd: bound.cwd })),
      Effect.map((bound) => bound.session),
      Effect.catchTag("ClaimRefused", (refused) =>
        slots.isClosed()
          ? Effect.fail(new PoolClosedError({ stage: "stopped" }))
          : publish({ _tag: "ClaimFellBack", reason: refused.reason, code: refused.code }).pipe(
            Effect.zipRight(publish({ _tag: "Started" })),
            Effect.zipRight(Scope.extend(agent.session(options), entry.scope))
          )),
      Effect.tap((session) => Effect.sync(() => void (entry.session = session)))
    )

  // Under a `Budget` (`recheck` defined) the request opens its own process: a spare has no guard.
  const open = <R>(options: Options.Options<R> | undefined, recheck: Effect.Effect<void, SdkError> | undefined) =>
    Effect.gen(function*() {
      const claimed = recheck === undefined ? yield* take(options) : Option.none()
      if (Option.isSome(claimed)) {
        const opened = yield* bind(claimed.value.taken, claimed.value.entry, options)
        yield* watchCrash(opened)
        yield* spares.refill
        return guardSession(shutdown, opened)
      }
      yield* slots.acquire
      // The tenant may have spent its budget while the request waited.
      if (recheck !== undefined) yield* recheck
      const entry = yield* register(yield* Scope.make(), Effect.void)
      yield* publish({ _tag: "Started" })
      const opened = yield* agent.session(options).pipe(
        Scope.extend(entry.scope),
        Effect.tap((session) => Effect.sync(() => void (entry.session = session))),
        Effect.ensuring(Deferred.succeed(entry.opened, undefined))
      )
      yield* watchCrash(opened)
      return guardSession(shutdown, opened)
    })

  // The slot and the process belong to a scope of their own inside the caller's: a session that
  // fails to open frees its slot at once, not when the caller's scope closes (a caller that tries
  // again in the same scope, as the cluster's resume-or-start does, would hold two).
  const openScoped = <R>(options: Options.Options<R> | undefined, recheck: Effect.Effect<void, SdkError> | undefined) =>
    Effect.flatMap(
      Effect.scope,
      (outer) =>
        Effect.flatMap(Scope.fork(outer, ExecutionStrategy.sequential), (inner) =>
          open(options, recheck).pipe(
            Scope.extend(inner),
            Effect.onError((cause) => Scope.close(inner, Exit.failCause(cause)))
          ))
    )

  const session: ClaudeAgent.ClaudeAgentShape["session"] = (options) =>
    PoolBudget.request(config.name, undefined, options, (recheck) => openScoped(options, recheck)).pipe(
      Effect.withSpan("AgentPool.session")
    )

  return {
    session,
    active: () => running.size,
    awaitAll: Effect.suspend(() =>
      Effect.forEach(Array.from(running), (entry) => Deferred.await(entry.done), { discard: true })
    ),
    interruptAll: Effect.suspend(() =>
      Effect.forEach(
        Array.from(running).flatMap((entry) => (entry.session === undefined ? [] : [entry.session])),
        interruptTurn,
        { concurrency: "unbounded", discard: true }
      )
    ),
    stopAll: Effect.suspend(() =>
      Effect.forEach(
        Array.from(running),
        (entry) => Effect.zipRight(Deferred.await(entry.opened), closeOnce(entry, Exit.void)),
        { concurrency: "unbounded", discard: true }
      )
    )
  }
}
