/**
 * The pool's close as the sessions it handed out see it. Once the pool has waited
 * `shutdownTimeout` for its running requests, it stops those still running: it sets `forced`
 * first, then stops their processes. A stopped session's message streams then end with a
 * failure (not with the `result` the CLI writes for the interrupt, nor with the exit of the
 * process), and the pool's own operations report `PoolClosedError`.
 *
 * @internal
 */
import { Chunk, Deferred, Effect, FiberId, type Scope, Stream } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type * as Message from "../../schema/Message.js"
import { CLIConnectionError, PoolClosedError } from "../../SdkError.js"

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

const stoppedError = () =>
  new CLIConnectionError({
    reason: "The agent pool was closed and stopped this session: its turn outlived the pool's shutdownTimeout"
  })

/**
 * A session's message stream that ends with a failure once the pool stops the session: what the
 * CLI writes while it is being stopped is not delivered. The stream ends (or fails) when the
 * stopped process exits, so no watcher is needed; per chunk this costs one test of a flag.
 *
 * @internal
 */
export const guardStream = <E>(
  shutdown: Shutdown,
  messages: Stream.Stream<Message.Message, E>
): Stream.Stream<Message.Message, E | CLIConnectionError> =>
  messages.pipe(
    Stream.mapChunks((chunk) => (shutdown.forced ? Chunk.empty() : chunk)),
    Stream.catchAll((error) => Stream.fail(shutdown.forced ? stoppedError() : error)),
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

/**
 * A failure of a pool operation: `PoolClosedError` when the pool stopped it.
 *
 * @internal
 */
export const failure = <E>(shutdown: Shutdown, error: E): E | PoolClosedError =>
  shutdown.forced && !(error instanceof PoolClosedError) ? new PoolClosedError({ stage: "stopped" }) : error

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
