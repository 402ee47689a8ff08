/**
 * The pool's warm spares: sessions started and initialized ahead of any request, each holding a
 * slot. A request whose options equal `warmOptions` (or that gives none) claims one; with `park`,
 * spares are parked CLIs (`--await-claim`) and any request whose host-level options match binds
 * one with `claim_session`. A request that needs a slot while every one is taken stops one
 * (`reclaim`). Spares are started by one
 * fiber of the pool's own, never by a request's fiber: a spare must not inherit the context
 * (scope, logger, interruption) of whichever request triggered it.
 *
 * @internal
 */
import { Cause, Effect, Exit, FiberSet, Mailbox, Option, Scope } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type { EvictionReason, PoolEvent } from "../../AgentPool.js"
import type * as ClaudeAgent from "../../ClaudeAgent.js"
import type * as Options from "../../schema/Options.js"
import type { ClaimRefused, OptionsError, SdkError } from "../../SdkError.js"
import * as Claim from "../session/claim.js"
import { sameOptions } from "./options.js"
import type { Slots } from "./slots.js"

/**
 * A spare: its session and the scope its process lives in.
 *
 * @internal
 */
export interface Spare {
  readonly session: AgentSession.AgentSession
  readonly scope: Scope.CloseableScope
  /** A parked spare's claim. */
  readonly parked: Claim.Spare | undefined
}

/**
 * A spare taken for a request: `bind` makes it the request's session (a parked spare's claim, or
 * a started spare as it is). A refused claim has stopped the spare's process; `scope` (and the
 * slot) stay the request's.
 *
 * @internal
 */
export interface Taken {
  readonly scope: Scope.CloseableScope
  readonly bind: Effect.Effect<Bound, ClaimRefused | OptionsError>
}

/**
 * A bound spare: its session, and the folder a parked spare was bound to.
 *
 * @internal
 */
export interface Bound {
  readonly session: AgentSession.AgentSession
  readonly cwd: string | undefined
}

/**
 * Settings and collaborators of `make`.
 *
 * @internal
 */
export interface SparesConfig {
  readonly agent: ClaudeAgent.ClaudeAgentShape
  /** How many spares to keep. */
  readonly warm: number
  readonly warmOptions: Options.Options
  /** Park the spares and claim them (`PoolConfig.park`). Default `false`. */
  readonly park?: boolean | undefined
  readonly slots: Slots
  readonly publish: (event: PoolEvent) => Effect.Effect<unknown>
}

/**
 * The spares.
 *
 * @internal
 */
export interface Spares {
  /** Spares ready to be claimed. */
  readonly ready: () => number
  /** Spares starting. */
  readonly starting: () => number
  /**
   * Takes a ready spare for a request with `options`, with its slot, if they match `warmOptions`
   * and nobody waits for a slot. The caller then owns the spare's scope and calls `refill`.
   */
  readonly claim: <R>(options: Options.Options<R> | undefined) => Option.Option<Taken>
  /** Picks a ready spare to stop for a request (`Slots`' `reclaim`). */
  readonly reclaim: () => Option.Option<Effect.Effect<void>>
  /** Starts spares while fewer than `warm` are ready or starting, slots are free and nobody waits. */
  readonly refill: Effect.Effect<void>
  /**
   * Takes every ready spare; the returned effect stops them and the spares still starting, and
   * returns once their processes have exited (the pool is closing).
   */
  readonly close: () => Effect.Effect<void>
}

/**
 * Spares in the current scope (the pool's): their starter fiber runs until it closes.
 *
 * @internal
 */
export const make = (config: SparesConfig): Effect.Effect<Spares, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { slots, publish, warm } = config
    const poolScope = yield* Effect.scope
    const ready: Array<Spare> = []
    let starting = 0

    const stop = (spare: Spare, reason: EvictionReason) =>
      Scope.close(spare.scope, Exit.void).pipe(
        Effect.zipRight(publish({ _tag: "Evicted", reason })),
        // Closing: no spare starts in the freed slot.
        Effect.zipRight(reason === "pool-closed" ? slots.releaseQuietly : slots.release)
      )

    // A spare whose CLI dies while it waits is dropped and its slot freed.
    const watch = (spare: Spare) =>
      spare.session.control.closed.pipe(
        Effect.exit,
        Effect.flatMap(() => {
          const index = ready.indexOf(spare)
          if (index === -1) return Effect.void
          ready.splice(index, 1)
          return stop(spare, "spare-died")
        }),
        // Started from the spare's uninterruptible start: closing the spare's scope must stop it.
        Effect.interruptible,
        Effect.forkIn(spare.scope)
      )

    const started = (spare: Spare) =>
      Effect.gen(function*() {
        starting--
        if (slots.isClosed()) {
          // Nobody waits once the pool is closed: the slot is only counted back.
          yield* Scope.close(spare.scope, Exit.void)
          return yield* slots.releaseQuietly
        }
        // A request started waiting while this spare started: it needs the slot more.
        if (slots.pending() > 0) return yield* stop(spare, "slot-needed")
        ready.push(spare)
        yield* publish({ _tag: "WarmReady" })
        yield* watch(spare)
      })

    // A parked spare waits under the host-level half of `warmOptions`, in their `cwd` if any.
    const parkOptions = config.park === true ? parkingOptions(config.warmOptions) : undefined
    const open: Effect.Effect<
      { readonly session: AgentSession.AgentSession; readonly parked: Claim.Spare | undefined },
      SdkError,
      Scope.Scope
    > = parkOptions === undefined
      ? config.agent.session(config.warmOptions).pipe(
        Effect.tap((session) => session.initializationResult),
        Effect.map((session) => ({ session, parked: undefined }))
      )
      : Effect.map(
        Claim.park(config.agent.session, parkOptions.parkAs),
        (parked) => ({ session: parked.parked, parked })
      )

    // A start the pool's close interrupts stops its process too: the close waits for it.
    const start = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const opened = yield* restore(Scope.extend(open, scope)).pipe(Effect.exit)
        if (Exit.isSuccess(opened)) return yield* started({ ...opened.value, scope })
        if (!Cause.isInterruptedOnly(opened.cause)) {
          const why = Option.match(Cause.failureOption(opened.cause), {
            onNone: () => Cause.pretty(opened.cause),
            onSome: (error) => error.message
          })
          yield* Effect.logWarning(`effect-claude-agent: a warm spare failed to start: ${why}`)
        }
        yield* Scope.close(scope, Exit.void)
        starting--
        // Not refilled at once: a spare that cannot start would otherwise be retried in a loop.
        yield* slots.releaseQuietly
      })
    )

    const startingFibers = yield* FiberSet.make<void>()
    const starts = yield* Mailbox.make<void>()
    yield* starts.take.pipe(
      Effect.flatMap(() => FiberSet.run(startingFibers, start)),
      Effect.forever,
      Effect.forkIn(poolScope)
    )

    const refill: Effect.Effect<void> = Effect.suspend(() => {
      if (slots.isClosed() || warm === 0) return Effect.void
      const missing = warm - ready.length - starting
      let count = 0
      while (count < missing && slots.tryTake()) {
        starting++
        count++
      }
      if (count === 0) return Effect.void
      return starts.offerAll(Array.from({ length: count }, () => undefined))
    })

    return {
      ready: () => ready.length,
      starting: () => starting,
      claim: (options) => {
        if (ready.length === 0 || slots.pending() > 0) return Option.none()
        if (parkOptions !== undefined) {
          const claim = claimFor(options ?? {}, parkOptions.host)
          if (Option.isNone(claim)) return Option.none()
          return Option.map(Option.fromNullable(ready.shift()), (spare) => bindParked(spare, claim.value))
        }
        if (options !== undefined && !sameOptions(options, config.warmOptions)) return Option.none()
        return Option.map(Option.fromNullable(ready.shift()), (spare) => ({
          scope: spare.scope,
          bind: Effect.succeed({ session: spare.session, cwd: undefined })
        }))
      },
      reclaim: () => {
        const spare = ready.shift()
        return spare === undefined ? Option.none() : Option.some(stop(spare, "slot-needed"))
      },
      refill,
      close: () => {
        const stopped = ready.splice(0)
        return Effect.zipRight(
          FiberSet.clear(startingFibers),
          Effect.forEach(stopped, (spare) => stop(spare, "pool-closed"), { concurrency: "unbounded", discard: true }),
          { concurrent: true }
        )
      }
    }
  })

// The host-level half of the spares' options (what a request must match) and what they are
// parked with (that half, in `warmOptions`' own `cwd` if it gives one).
const parkingOptions = (warmOptions: Options.Options) => {
  const { host } = Claim.splitOptions(warmOptions)
  return { host, parkAs: warmOptions.cwd === undefined ? host : { ...host, cwd: warmOptions.cwd } }
}

// The claim for a request whose host-level options are the spares'; none otherwise. A request
// without a `cwd` runs where a cold session would: in this process's working directory.
const claimFor = <R>(options: Options.Options<R>, host: Options.Options): Option.Option<Options.ClaimOptions> => {
  const cwd = options.cwd ?? processCwd()
  if (cwd === undefined) return Option.none()
  const split = Claim.splitOptions({ ...options, cwd })
  return sameOptions(split.host, host) ? split.claim : Option.none()
}

const bindParked = (spare: Spare, claim: Options.ClaimOptions): Taken => ({
  scope: spare.scope,
  bind: spare.parked === undefined
    ? Effect.succeed({ session: spare.session, cwd: undefined })
    : Effect.map(spare.parked.claim(undefined, claim), (claimed) => ({ session: claimed.session, cwd: claimed.cwd }))
})

const processCwd = (): string | undefined => {
  const proc: unknown = Reflect.get(globalThis, "process")
  if (typeof proc !== "object" || proc === null) return undefined
  const cwd: unknown = Reflect.get(proc, "cwd")
  if (typeof cwd !== "function") return undefined
  const dir: unknown = Reflect.apply(cwd, proc, [])
  return typeof dir === "string" ? dir : undefined
}
