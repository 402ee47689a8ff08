/**
 * The pool's close as the sessions it handed out see it. Once the pool has waited
 * `shutdownTimeout` for its running requests, it stops those still running: it sets `forced`,
 * interrupts their turns through the protocol, lets their readers end their uses, then stops
 * the processes left. A stopped session's message streams end with a failure (not with the
 * `result` the CLI writes for the interrupt, nor with the exit of the process), and the pool's
 * own operations report `PoolClosedError`.
 *
 * @internal
 */
import { Cause, Chunk, Clock, Deferred, Duration, Effect, Either, FiberId, Option, type Scope, Stream } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type * as Message from "../../schema/Message.js"
import { PoolClosedError } from "../../SdkError.js"

/**
 * Whether, and from when, the pool stops what still runs.
 *
 * @internal
 */
export interface Shutdown {
  /** Set once the grace period is over, before any running process is stopped. */
  forced: boolean
}

/**
 * A pool's shutdown state, before its close.
 *
 * @internal
 */
export const make = (): Shutdown => ({ forced: false })

/**
 * Marks the pool as stopping what still runs; the caller stops the processes next.
 *
 * @internal
 */
export const force = (shutdown: Shutdown): Effect.Effect<void> =>
  Effect.sync(() => {
    shutdown.forced = true
  })

/**
 * Asks a session's CLI to end its running turn, through the protocol (harmless when it is idle):
 * the turn's stream then ends at the CLI's `result`, which the guard turns into a failure, so its
 * reader ends its use itself. Bounded, on the live clock; a CLI that does not answer is stopped.
 *
 * @internal
 */
export const interruptTurn = (session: AgentSession.AgentSession): Effect.Effect<void> =>
  session.interrupt({ timeout: Duration.seconds(1) }).pipe(Effect.ignore, Effect.withClock(liveClock))

const liveClock = Clock.make()

const stoppedError = () => new PoolClosedError({ stage: "stopped" })

/**
 * A session's message stream that ends with a failure once the pool stops the session: what the
 * CLI writes while it is being stopped is not delivered: a turn interrupted by the pool
 * (`interruptTurn`) ends with a failure instead of its `result`, so its reader ends its use itself
 * before the pool stops the process (which would otherwise interrupt the read). Per chunk this
 * costs one test of a flag.
 *
 * @internal
 */
export const guardStream = <E>(
  shutdown: Shutdown,
  messages: Stream.Stream<Message.Message, E>
): Stream.Stream<Message.Message, E | PoolClosedError> =>
  messages.pipe(
    Stream.mapChunks((chunk) => (shutdown.forced ? Chunk.empty() : chunk)),
    // Stopping the session also shuts its message queue: a pull may end interrupted, not failed.
    Stream.catchAllCause((cause): Stream.Stream<never, E | PoolClosedError> =>
      shutdown.forced ? Stream.fail(stoppedError()) : Stream.failCause(cause)
    ),
    Stream.concat(Stream.suspend(() => (shutdown.forced ? Stream.fail(stoppedError()) : Stream.empty)))
  )

/**
 * A session whose message streams are guarded (`guardStream`).
 *
 * @internal
 */
export const guardSession = (shutdown: Shutdown, session: AgentSession.AgentSession): AgentSession.AgentSession => ({
  ...session,
  messages: guardStream(shutdown, session.messages),
  receiveResponse: guardStream(shutdown, session.receiveResponse)
})

// What a pool operation ended with, once the pool has stopped it: `PoolClosedError`. A stopped
// session may end its reader's pull interrupted rather than failed; defects stay defects.
const onStopped = <E>(
  shutdown: Shutdown,
  cause: Cause.Cause<E>
): Either.Either<Cause.Cause<E>, E | PoolClosedError> => {
  if (!shutdown.forced) return Either.right(cause)
  const failed = Cause.failureOption(cause)
  if (Option.isSome(failed)) {
    return Either.left(
      failed.value instanceof PoolClosedError ? failed.value : new PoolClosedError({ stage: "stopped" })
    )
  }
  return Cause.isInterruptedOnly(cause) ? Either.left(new PoolClosedError({ stage: "stopped" })) : Either.right(cause)
}

/**
 * A pool operation's stream, ending with `PoolClosedError` once the pool has stopped it.
 *
 * @internal
 */
export const stoppedStream =
  (shutdown: Shutdown) => <A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E | PoolClosedError, R> =>
    Stream.catchAllCause(self, (cause) =>
      Either.match(onStopped(shutdown, cause), {
        onLeft: (error): Stream.Stream<never, E | PoolClosedError> => Stream.fail(error),
        onRight: (cause) => Stream.failCause(cause)
      }))

/**
 * A pool operation, failing with `PoolClosedError` once the pool has stopped it.
 *
 * @internal
 */
export const stoppedEffect =
  (shutdown: Shutdown) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | PoolClosedError, R> =>
    Effect.catchAllCause(self, (cause) =>
      Either.match(onStopped(shutdown, cause), {
        onLeft: (error): Effect.Effect<never, E | PoolClosedError> => Effect.fail(error),
        onRight: (cause) => Effect.failCause(cause)
      }))

/**
 * Counts the current scope in `running` until it closes (its finalizers added after this one
 * run first: what it started has stopped by then).
 *
 * @internal
 */
export const track = (running: Set<Deferred.Deferred<void>>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(Effect.acquireRelease(
    Effect.sync(() => {
      const done = Deferred.unsafeMake<void>(FiberId.none)
      running.add(done)
      return done
    }),
    (done) =>
      Effect.suspend(() => {
        running.delete(done)
        return Deferred.succeed(done, undefined)
      })
  ))

/**
 * Waits for everything `running` counts now.
 *
 * @internal
 */
export const awaitAll = (running: Set<Deferred.Deferred<void>>): Effect.Effect<void> =>
  Effect.suspend(() => Effect.forEach(Array.from(running), Deferred.await, { discard: true }))
