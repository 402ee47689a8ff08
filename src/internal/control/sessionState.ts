/**
 * The session's state as the channel publishes it: the session id and run state as a chain of
 * versions (each published change is one, so a waiter sees every value, not only the latest), the
 * `result` frames on a `PubSub`, the tool counter. Fed from the protocol core's `SessionState`,
 * once per chunk of messages.
 *
 * @internal
 */
import { Cause, Deferred, Effect, Either, Metric, Option, PubSub, Queue, type Scope, type Stream } from "effect"
import { CLIEndedError } from "../../SdkError.js"
import type { RunState, StreamError } from "../../services/ControlChannel.js"
import * as Telemetry from "../../Telemetry.js"
import { initialRun, SessionState as Book, type Changes } from "../protocol/sessionState.js"
import type { RawObject } from "../protocol/router.js"
import * as Drain from "./drain.js"
import { each, sequence } from "./sequence.js"

// The most results taken at once, as `Stream.fromQueue`'s default chunk size.
const RESULTS_CHUNK = 4096

/**
 * The published state's operations.
 *
 * @internal
 */
export interface SessionState {
  /** The protocol core's bookkeeping, fed by the reader. */
  readonly book: Book
  /** Publishes what changed in one chunk; at most one effect per kind of change. */
  readonly publish: (changes: Changes) => Effect.Effect<void>
  readonly lastSessionId: Effect.Effect<string | undefined>
  readonly awaitSessionId: Effect.Effect<string, StreamError | CLIEndedError>
  readonly runState: Effect.Effect<RunState>
  readonly awaitRunState: (predicate: (state: RunState) => boolean) => Effect.Effect<void>
  readonly results: Effect.Effect<Stream.Stream<RawObject>, never, Scope.Scope>
  /** Called once `terminal` is complete: every wait ends. */
  readonly end: () => void
}

// One published state; `next` is set, and `changed` opened, when the following one is published.
interface Version {
  readonly run: RunState
  readonly sessionId: string | undefined
  next: Version | undefined
  readonly changed: Effect.Latch
}

const version = (run: RunState, sessionId: string | undefined): Version => ({
  run,
  sessionId,
  next: undefined,
  changed: Effect.unsafeMakeLatch(false)
})

/**
 * The published state of one session; waits end when `terminal` completes.
 *
 * @internal
 */
export const make = (terminal: Deferred.Deferred<void, StreamError>): Effect.Effect<SessionState> =>
  Effect.gen(function*() {
    const book = new Book()
    let latest = version(initialRun, undefined)
    let ended = false
    // Made by the first subscriber: most sessions have none (their turn tracker is fed by the
    // reader), and a hub nobody reads costs its making and a publish per result.
    let resultHub: PubSub.PubSub<RawObject> | undefined
    // Counters tagged by tool name, made once per name.
    const toolCounters = new Map<string, Metric.Metric.Counter<number>>()
    const countTool = (name: string) => {
      let counter = toolCounters.get(name)
      if (counter === undefined) {
        counter = Telemetry.toolCalls.pipe(Metric.tagged("tool", name))
        toolCounters.set(name, counter)
      }
      return Metric.increment(counter)
    }

    // Before the messages are queued: whoever sees a message can already read its session id.
    const advance = (changes: Changes) => {
      const previous = latest
      latest = version(changes.run ?? previous.run, changes.sessionId ?? previous.sessionId)
      previous.next = latest
      previous.changed.unsafeOpen()
    }

    const publish = (changes: Changes): Effect.Effect<void> => {
      const effects: Array<Effect.Effect<unknown>> = []
      if (changes.run !== undefined || changes.sessionId !== undefined) {
        effects.push(Effect.sync(() => advance(changes)))
      }
      if (changes.results !== undefined && resultHub !== undefined) {
        effects.push(PubSub.publishAll(resultHub, changes.results))
      }
      if (changes.tools !== undefined) effects.push(each(changes.tools, countTool))
      return sequence(effects)
    }

    // Walks the versions from `from` until one satisfies `done`, or the channel has ended.
    const waitFrom = (from: Version, done: (v: Version) => boolean): Effect.Effect<Version> =>
      Effect.suspend(() => {
        let current = from
        while (!done(current) && current.next !== undefined) current = current.next
        if (done(current) || ended) return Effect.succeed(current)
        const at = current
        return Effect.zipRight(at.changed.await, waitFrom(at, done))
      })

    const noId = () => new CLIEndedError({ reason: "NoSessionId" })
    // A session that crashed before its id came fails with the crash, not a missing id.
    const atEnd = Effect.flatMap(
      Effect.either(Deferred.await(terminal)),
      (end): Effect.Effect<string, StreamError | CLIEndedError> =>
        latest.sessionId !== undefined
          ? Effect.succeed(latest.sessionId)
          : Either.isLeft(end)
          ? Effect.fail(end.left)
          : Effect.fail(noId())
    )
    const hasId = (v: Version) => v.sessionId !== undefined
    const awaitSessionId = Effect.suspend(() =>
      latest.sessionId !== undefined
        ? Effect.succeed(latest.sessionId)
        : Effect.flatMap(
          waitFrom(latest, hasId),
          (v) => v.sessionId !== undefined ? Effect.succeed(v.sessionId) : atEnd
        )
    )

    return {
      book,
      publish,
      lastSessionId: Effect.sync(() => latest.sessionId),
      awaitSessionId,
      runState: Effect.sync(() => latest.run),
      // Already true (the usual case when a session closes): nothing to wait for.
      awaitRunState: (predicate) =>
        Effect.suspend(() =>
          predicate(latest.run) ? Effect.void : Effect.asVoid(waitFrom(latest, (v) => predicate(v.run)))
        ),
      // As `Stream.fromPubSub(hub, { scoped: true })`, with its take at hand for `Drain.forEachChunk`.
      results: Effect.map(
        Effect.flatMap(
          Effect.suspend(() =>
            resultHub !== undefined
              ? Effect.succeed(resultHub)
              : Effect.map(PubSub.unbounded<RawObject>(), (made) => resultHub ??= made)
          ),
          PubSub.subscribe
        ),
        (subscription) =>
          Drain.fromPull(
            Queue.takeBetween(subscription, 1, RESULTS_CHUNK).pipe(
              Effect.catchAllCause((cause) =>
                Effect.flatMap(
                  Queue.isShutdown(subscription),
                  (down): Effect.Effect<never, Option.Option<never>> =>
                    down && Cause.isInterruptedOnly(cause) ? Effect.fail(Option.none()) : Effect.failCause(cause)
                )
              )
            )
          )
      ),
      end: () => {
        if (ended) return
        ended = true
        latest.changed.unsafeOpen()
      }
    }
  })
