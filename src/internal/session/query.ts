// `query` on top of any way of opening sessions: `ClaudeAgent.make`'s, or the pool's.
import { Cause, Channel, Chunk, Effect, Either, Exit, Option, Predicate, type Scope, Stream } from "effect"
import * as AgentSession from "../../AgentSession.js"
import * as Message from "../../schema/Message.js"
import type * as Options from "../../schema/Options.js"
import { CLIEndedError, OptionsError, type SdkError } from "../../SdkError.js"
import * as MessagePull from "./messagePull.js"
import * as Pump from "./pump.js"
import * as Streams from "../effect/streams.js"

/** A prompt for `query`: a string, or a stream of prompts with its own error and services. */
export type QueryPrompt<E = never, R = never> = string | Stream.Stream<AgentSession.Prompt, E, R>

/** Opens a session in the caller's scope. */
export type OpenSession = <R = never>(
  options?: Options.Options<R>
) => Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R>

/** `query` over `open`: one session per query, ended with the stream. */
export const fromSessions = (open: OpenSession) =>
<R = never, E = never, RP = never>(
  prompt: QueryPrompt<E, RP>,
  options?: Options.Options<R>
): Stream.Stream<Message.Message, SdkError | E, R | RP> =>
  Streams.unwrapScoped(Effect.gen(function*() {
    if (typeof prompt !== "string" && !Predicate.hasProperty(prompt, Stream.StreamTypeId)) {
      return yield* Effect.fail(
        new OptionsError({ field: "prompt", detail: "expected a string or a Stream of prompts" })
      )
    }
    const s = yield* open(options)
    if (typeof prompt === "string") {
      // The reader counts results before it queues them, so once the response has ended, a count
      // above the one before the prompt says its result came: no stage that looks at every chunk.
      const before = (yield* s.control.runState).results
      yield* s.send(prompt)
      // The check as a channel that emits nothing: `Stream.drain(Stream.fromEffect(...))` runs a
      // read loop, an unwrap and a write for the same end.
      return Stream.concat(
        s.receiveResponse,
        Stream.fromChannel(Channel.fromEffect(Effect.flatMap(s.control.runState, (run) =>
          run.results > before ? Effect.void : Effect.fail(new CLIEndedError({ reason: "NoResult" })))))
      )
    }
    // One turn per prompt: the CLI merges prompts that arrive while a turn runs into that turn,
    // so each prompt is written after the previous prompt's `result`. Once the input has ended,
    // stdin stays open until the CLI is idle and no callback is running: callbacks of the last
    // turn need stdin to answer.
    const feed = forEachWhile(prompt, (next) =>
      Effect.gen(function*() {
        const before = (yield* s.control.runState).results
        // A failed write means the CLI is gone: the message stream reports why. A spent budget
        // ends the query with it.
        const sent = yield* Effect.either(s.send(next))
        if (Either.isLeft(sent)) {
          return sent.left._tag === "BudgetExceededError" ? yield* Effect.fail(sent.left) : false
        }
        yield* s.control.awaitRunState((run) =>
          run.results > before
        )
        return true
      })).pipe(
        Effect.zipRight(s.control.awaitRunState(AgentSession.isIdle)),
        Effect.zipRight(s.control.awaitNoneInFlight),
        Effect.zipRight(s.endInput)
      )
    // The prompt stream's failure or defect ends the query with it (and the scope, the process);
    // the run itself ends when the CLI's messages do.
    const pump = yield* Pump.make<Message.Message, AgentSession.MessageError, Effect.Effect.Error<typeof feed>>(
      MessagePull.pullOf(s.messages) ?? (yield* Stream.toPull(s.messages))
    )
    yield* Effect.forkScoped(Effect.onExit(feed, (exit) =>
      Effect.sync(() => {
        if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) pump.failed(exit.cause)
      })))
    return pump.stream
  }))

// `Stream.runForEachWhile` over the stream's pull: without a sink, the run of a short prompt
// stream costs about half the runtime steps (~290 fewer for one prompt). Stopping early closes
// the stream's scope, as the sink's end does.
const forEachWhile = <A, E, R, E2, R2>(
  stream: Stream.Stream<A, E, R>,
  f: (a: A) => Effect.Effect<boolean, E2, R2>
): Effect.Effect<void, E | E2, R | R2> =>
  Effect.scoped(Effect.flatMap(Stream.toPull(stream), (pull) => {
    const chunk = (as: Chunk.Chunk<A>, i: number): Effect.Effect<boolean, E2, R2> =>
      i >= as.length
        ? Effect.succeed(true)
        : Effect.flatMap(f(Chunk.unsafeGet(as, i)), (go) => go ? chunk(as, i + 1) : Effect.succeed(false))
    const loop: Effect.Effect<void, E | E2, R | R2> = Effect.matchEffect(pull, {
      onFailure: (end) => Option.isNone(end) ? Effect.void : Effect.fail(end.value),
      onSuccess: (as) => Effect.flatMap(chunk(as, 0), (go) => go ? loop : Effect.void)
    })
    return loop
  }))

const noResult = Stream.failSync(() => new CLIEndedError({ reason: "NoResult" }))

// Fails a single-prompt run whose CLI ended before the prompt's result.
export const requireResult = <E, R>(self: Stream.Stream<Message.Message, E, R>) =>
  Stream.suspend(() => {
    let sawResult = false
    return self.pipe(
      // Per chunk, not per message: this runs on every message of the run.
      Stream.mapChunks((chunk) => {
        if (!sawResult && Chunk.some(chunk, Message.isResult)) sawResult = true
        return chunk
      }),
      Stream.concat(Stream.suspend(() => sawResult ? Stream.empty : noResult))
    )
  })
