/**
 * The reader: the loop over the transport's frames, which routes control traffic at once and
 * queues the rest for the user, and the end of the stream, which tells a clean exit from a crash
 * and ends every wait with it.
 *
 * @internal
 */
import { type Chunk, type Context, Deferred, Duration, Effect, Option, type Scope } from "effect"
import { CLIConnectionError, CLIEndedError, ProcessError } from "../../SdkError.js"
import type { RequestError, StreamError } from "../../services/ControlChannel.js"
import type { Frame, TransportShape } from "../../services/Transport.js"
import * as Drain from "./drain.js"
import { nextOf } from "../process/stdout.js"
import type { PendingTable } from "../protocol/pending.js"
import { isControl, isObject, type RawObject, route } from "../protocol/router.js"
import type { Watch } from "../budget/guard.js"
import type { Mirror } from "../session/mirror.js"
import type { CurrentTurn } from "../session/turns.js"
import type { Inbound } from "./inbound.js"
import type { MessageQueue } from "./messageQueue.js"
import type { Outbound, Waiter } from "./outbound.js"
import { sequence } from "./sequence.js"
import type { SessionState } from "./sessionState.js"

/** How long to wait for the exit status once stdout has closed. */
const EXIT_WAIT = Duration.seconds(10)

/**
 * The parts the reader feeds.
 *
 * @internal
 */
export interface Parts {
  readonly transport: TransportShape
  readonly table: PendingTable<Waiter>
  readonly outbound: Outbound
  readonly inbound: Inbound
  readonly queue: MessageQueue
  readonly state: SessionState
  readonly terminal: Deferred.Deferred<void, StreamError>
  /** The session store's mirror, when the session has a store. */
  readonly mirror?: Mirror | undefined
  /** Records a turn that stopped at a deferred call, when the session has an approval store. */
  readonly deferred?: ((result: RawObject) => Effect.Effect<void> | undefined) | undefined
  /** The budget's watch, when a `Budget` caps the session. */
  readonly budget?: Watch | undefined
  /** The session's running turn, whose GenAI spans (when a tracer records) see each message. */
  readonly turn?: Context.Tag.Service<CurrentTurn> | undefined
}

// What a pending request fails with when the connection ends: the process's death or the
// connection's end as they are; a framing failure as a failed read, with its cause.
const toRequestError = (error: StreamError): RequestError =>
  error._tag === "CLIJSONDecodeError"
    ? new CLIConnectionError({
      reason: "ReadFailed",
      description: `The connection to the CLI failed: ${error.message}`,
      cause: error
    })
    : error

const routeControl = ({ inbound, outbound, table }: Parts, frame: RawObject): Effect.Effect<void> => {
  const routed = route(frame)
  switch (routed._tag) {
    case "Request":
      return inbound.run(routed.requestId, routed.request)
    case "MalformedRequest":
      return Effect.logWarning("effect-claude-agent: malformed control_request ignored", frame)
    case "Cancel":
      return inbound.cancel(routed.requestId)
    case "Ignored":
    case "Message":
      return Effect.void
    default: {
      const outcome = table.resolve(routed)
      if (outcome === undefined) {
        return routed._tag === "MalformedResponse"
          ? Effect.logDebug("effect-claude-agent: malformed control_response ignored", frame)
          : Effect.logDebug(`effect-claude-agent: control_response for unknown request ${routed.requestId}`)
      }
      const settled = outbound.settle(outcome)
      return outcome._tag === "Succeeded" && outcome.entry.subtype === "initialize"
        ? Effect.zipRight(settled, inbound.redeliver(outcome.envelope))
        : settled
    }
  }
}

// A new array for the messages of a chunk, which goes through the queue to the consumer. Not an
// array literal: V8 allocates the arrays of a literal in the old generation once enough of them
// have outlived a young collection (the consumer holds its chunk while the next read is parsed),
// and an old array keeps the young frames it holds alive through every young collection until the
// next full one: all frames are promoted. `Array.of` allocates through a builtin, with no
// allocation site to pretenure (docs/performance.md, "Warm-up and deoptimisations").
const newBatch = (): Array<unknown> => Array.of()

/**
 * One pass over a chunk of frames with plain bookkeeping, then at most one effect per kind of
 * change and one offer for the messages (made during the pass when nothing else is to run, as
 * the bookkeeping is). Control frames are acted on before the chunk's messages are queued, so a
 * slow consumer never delays a reply.
 *
 * @internal
 */
export const routeChunk = (parts: Parts) => (chunk: Chunk.Chunk<Frame>): Effect.Effect<void> => {
  const book = parts.state.book
  let out = newBatch()
  let bytes = 0
  const effects: Array<Effect.Effect<void>> = []
  const mirror = parts.mirror
  const budget = parts.budget
  const agentSpans = parts.turn?.agentSpans
  for (const { bytes: size, value: frame } of chunk) {
    if (isObject(frame)) {
      if (isControl(frame.type)) {
        effects.push(routeControl(parts, frame))
        continue
      }
      // Internal to the SDK: never a message. The turn's entries are stored before its result
      // is delivered.
      if (frame.type === "transcript_mirror") {
        const append = mirror?.frame(frame)
        if (append !== undefined) {
          // What came before the frame is queued before what its append may report.
          if (out.length > 0) effects.push(parts.queue.offer(out, bytes))
          out = newBatch()
          bytes = 0
          effects.push(append)
        }
        continue
      }
      if (mirror !== undefined && frame.type === "result" && mirror.pending()) {
        if (out.length > 0) effects.push(parts.queue.offer(out, bytes))
        out = newBatch()
        bytes = 0
        effects.push(mirror.flush)
      }
      // After the mirror: the approval names a turn that is in the store.
      const recorded = parts.deferred !== undefined && frame.type === "result" ? parts.deferred(frame) : undefined
      if (recorded !== undefined) {
        if (out.length > 0) effects.push(parts.queue.offer(out, bytes))
        out = newBatch()
        bytes = 0
        effects.push(recorded)
      }
      book.observe(frame)
      if (agentSpans !== undefined) agentSpans.frame(frame)
      const charge = budget?.frame(frame, book.usage)
      if (charge !== undefined) {
        // A turn stopped at this frame ends after it: what came before is queued first. A
        // result's charge needs no order: it is in before the result is queued.
        out.push(frame)
        bytes += size
        if (frame.type !== "result") {
          effects.push(parts.queue.offer(out, bytes))
          out = newBatch()
          bytes = 0
        }
        effects.push(charge)
        continue
      }
    }
    out.push(frame)
    bytes += size
  }
  const changes = book.takeChanges()
  if (changes !== undefined) {
    const onResults = changes.results !== undefined ? parts.turn?.onResults : undefined
    if (onResults !== undefined && changes.results !== undefined) effects.push(onResults(changes.results))
    effects.push(parts.state.publish(changes))
  }
  if (out.length > 0) {
    // A chunk of messages alone (the usual one) is queued now, with no effect to run for it.
    if (effects.length === 0) return parts.queue.push(out, bytes) ?? Effect.void
    effects.push(parts.queue.offer(out, bytes))
  }
  return effects.length === 1 && effects[0] !== undefined ? effects[0] : sequence(effects)
}

// What ended the stream, once stdout is closed: a clean exit, an exit explained by an error
// `result` the user already has, or a crash.
const onStdoutEnd = ({ state, transport }: Parts) =>
  Effect.gen(function*() {
    const status = yield* transport.exitStatus.pipe(Effect.timeout(EXIT_WAIT), Effect.option)
    const stderrTail = yield* transport.stderrTail
    if (Option.isNone(status)) {
      return Option.some<StreamError>(
        new CLIConnectionError({
          reason: "OutputClosed",
          description: "The Claude Code CLI closed its stdout but did not exit"
        })
      )
    }
    const { exitCode, signal } = status.value
    const lastResult = state.book.lastResult
    const lastWasError = state.book.lastWasError
    if (exitCode === 0 || (exitCode === 1 && lastWasError)) return Option.none<StreamError>()
    return Option.some<StreamError>(
      new ProcessError({
        ...(exitCode !== undefined ? { exitCode } : {}),
        ...(signal !== undefined ? { signal } : {}),
        stderrTail,
        ...(lastWasError && lastResult !== undefined ? { lastErrorResult: lastResult } : {})
      })
    )
  })

const finish = ({ outbound, queue, state, terminal }: Parts, error: Option.Option<StreamError>) =>
  Effect.suspend(() => {
    const failed = Option.isSome(error)
      ? toRequestError(error.value)
      : new CLIEndedError({ reason: "NoAnswer" })
    const ended = Option.getOrUndefined(error)
    return outbound.failAll(failed).pipe(
      Effect.zipRight(Effect.sync(() => queue.end(ended))),
      Effect.zipRight(ended === undefined ? Deferred.succeed(terminal, undefined) : Deferred.fail(terminal, ended)),
      Effect.zipRight(Effect.sync(state.end))
    )
  })

/**
 * Starts the reader in the current scope. A pull loop rather than `Stream.runForEachChunk`: see
 * ./drain.ts; straight on the transport's take (`StdoutFrames.next`) when its frames come from one.
 *
 * @internal
 */
export const start = (parts: Parts): Effect.Effect<void, never, Scope.Scope> => {
  const next = nextOf(parts.transport.frames)
  const drained = next === undefined
    ? Drain.forEachChunk(parts.transport.frames, routeChunk(parts))
    : Drain.forEachNext(next, routeChunk(parts))
  // Frames that came after the last result are stored before the stream ends.
  const read = parts.mirror === undefined ? drained : Effect.ensuring(drained, parts.mirror.flush)
  return read.pipe(
    Effect.matchEffect({
      onFailure: (e) => finish(parts, Option.some(e)),
      onSuccess: () => Effect.flatMap(onStdoutEnd(parts), (error) => finish(parts, error))
    }),
    Effect.forkScoped,
    Effect.asVoid
  )
}
