/**
 * The session's state as the channel publishes it: the session id and run state as
 * `SubscriptionRef`s, the `result` frames on a `PubSub`, the tool counter. Fed from the protocol
 * core's `SessionState`, once per chunk of messages.
 *
 * @internal
 */
import { Deferred, Effect, Either, Metric, Option, PubSub, type Scope, Stream, SubscriptionRef } from "effect"
import { CLIEndedError } from "../../SdkError.js"
import type { RunState, StreamError } from "../../services/ControlChannel.js"
import * as Telemetry from "../../Telemetry.js"
import { initialRun, SessionState as Book, type Changes } from "../protocol/sessionState.js"
import type { RawObject } from "../protocol/router.js"

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
}

/**
 * The published state of one session; waits end when `terminal` completes.
 *
 * @internal
 */
export const make = (terminal: Deferred.Deferred<void, StreamError>): Effect.Effect<SessionState> =>
  Effect.gen(function*() {
    const book = new Book()
    const sessionId = yield* SubscriptionRef.make<string | undefined>(undefined)
    const runState = yield* SubscriptionRef.make<RunState>(initialRun)
    const resultHub = yield* PubSub.unbounded<RawObject>()
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
    const ended = Effect.ignore(Deferred.await(terminal))

    const publish = (changes: Changes): Effect.Effect<void> => {
      const effects: Array<Effect.Effect<unknown>> = []
      if (changes.run !== undefined) effects.push(SubscriptionRef.set(runState, changes.run))
      // Before the messages are queued: whoever sees a message can already read its session id.
      if (changes.sessionId !== undefined) effects.push(SubscriptionRef.set(sessionId, changes.sessionId))
      if (changes.results !== undefined) effects.push(PubSub.publishAll(resultHub, changes.results))
      if (changes.tools !== undefined) effects.push(Effect.forEach(changes.tools, countTool, { discard: true }))
      return Effect.all(effects, { discard: true })
    }

    const awaitSessionId = Effect.gen(function*() {
      const current = yield* SubscriptionRef.get(sessionId)
      if (current !== undefined) return current
      const noId = new CLIEndedError({ reason: "NoSessionId" })
      const fromChanges = sessionId.changes.pipe(
        Stream.filter((id): id is string => id !== undefined),
        Stream.runHead,
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(noId), onSome: Effect.succeed }))
      )
      // A session that crashed before its id came fails with the crash, not a missing id.
      const atEnd = Effect.either(Deferred.await(terminal)).pipe(
        Effect.zip(SubscriptionRef.get(sessionId)),
        Effect.flatMap(([end, id]): Effect.Effect<string, StreamError | CLIEndedError> =>
          id !== undefined ? Effect.succeed(id) : Either.isLeft(end) ? Effect.fail(end.left) : Effect.fail(noId)
        )
      )
      return yield* Effect.raceFirst(fromChanges, atEnd)
    })

    return {
      book,
      publish,
      lastSessionId: SubscriptionRef.get(sessionId),
      awaitSessionId,
      runState: SubscriptionRef.get(runState),
      // Already true (the usual case when a session closes): no subscription, no race.
      awaitRunState: (predicate) =>
        Effect.flatMap(SubscriptionRef.get(runState), (now) =>
          predicate(now) ? Effect.void : runState.changes.pipe(
            Stream.filter(predicate),
            Stream.take(1),
            Stream.runDrain,
            Effect.raceFirst(ended)
          )),
      results: Stream.fromPubSub(resultHub, { scoped: true })
    }
  })
