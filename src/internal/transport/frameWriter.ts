/**
 * The CLI's stdin over any byte sink: `send` queues a frame's line, and one writer fiber hands
 * the sink whatever lines are queued, as one chunk per write. A single writer is what keeps
 * concurrent frames whole (no sink or writer has to promise atomic writes), and frames sent
 * while a write is in flight leave together in the next one.
 *
 * @internal
 */
import { Cause, Chunk, Effect, Option, type Sink, Stream } from "effect"
import type { CLIConnectionError } from "../../SdkError.js"
import * as Drain from "../control/drain.js"
import { inputClosed, writeFailed } from "../process/errors.js"
import { encodeFrame } from "../protocol/json.js"

/**
 * Characters of queued lines above which a sender waits for the writer (the role of a pipe's
 * high-water mark).
 *
 * @internal
 */
export const HIGH_WATER_CHARS = 64 * 1024

/**
 * A sink of bytes, or a function that writes bytes, with what ends the input.
 *
 * @internal
 */
export type Target =
  | Sink.Sink<unknown, Uint8Array, unknown, unknown>
  | {
    readonly write: (bytes: Uint8Array) => Effect.Effect<void, unknown>
    readonly end?: Effect.Effect<void, unknown> | undefined
  }

const encoder = new TextEncoder()

// What writes the chunks `take` gives until the input ends. A write function is driven by a plain
// pull loop: a stream and a sink around each write cost more than the write itself (about 12
// against 20 CPU µs per frame written on its own, over a Node `Writable`).
const drive = (
  take: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>>,
  target: Target
): Effect.Effect<void, unknown> => {
  if (!("write" in target)) return Stream.run(Stream.repeatEffectChunkOption(take), target)
  const { end, write } = target
  const writes = Drain.forEachPulled(take, (chunk) => Effect.forEach(chunk, write, { discard: true }))
  return end === undefined ? writes : Effect.zipRight(writes, end)
}

/**
 * Frames onto one sink, in the order they were sent.
 *
 * @internal
 */
export class FrameWriter {
  private pending: Array<string> = []
  private pendingChars = 0
  private ended = false
  // Set when the sink failed or stopped taking input: every later send fails with it.
  private failure: CLIConnectionError | undefined
  // Open while lines are queued or the input was ended: the writer has something to do.
  private readonly ready = Effect.unsafeMakeLatch(false)
  // Closed while the queued lines exceed the high-water mark; the writer opens it as it takes them.
  private readonly room = Effect.unsafeMakeLatch(true)

  /** Queues one frame; waits only while the writer is behind by more than the high-water mark. */
  readonly send = (frame: unknown): Effect.Effect<void, CLIConnectionError> =>
    Effect.suspend(() => {
      if (this.failure !== undefined) return Effect.fail(this.failure)
      if (this.ended) return Effect.fail(inputClosed())
      const line = encodeFrame(frame)
      this.pending.push(line)
      this.pendingChars += line.length
      this.ready.unsafeOpen()
      if (this.pendingChars < HIGH_WATER_CHARS) return Effect.void
      this.room.unsafeClose()
      return this.room.await
    })

  /** Ends the input once every frame already sent is written. */
  readonly end: Effect.Effect<void> = Effect.sync(() => {
    this.ended = true
    this.ready.unsafeOpen()
  })

  // The queued lines as one chunk of bytes, waiting for some; fails with `None` at the end.
  private readonly take: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>> = Effect.suspend(() => {
    if (this.pending.length > 0) {
      const text = this.pending.length === 1 ? this.pending[0] ?? "" : this.pending.join("")
      this.pending = []
      this.pendingChars = 0
      this.room.unsafeOpen()
      return Effect.succeed(Chunk.of(encoder.encode(text)))
    }
    if (this.ended) return Effect.fail(Option.none())
    this.ready.unsafeClose()
    return Effect.zipRight(this.ready.await, this.take)
  })

  // The writer stopped: the sink failed, or it ended before the input did.
  private stop(error: CLIConnectionError): void {
    this.failure ??= error
    this.pending = []
    this.pendingChars = 0
    this.room.unsafeOpen()
  }

  /** The writer: runs until the input ends and is written, or the sink fails. */
  run(target: Target): Effect.Effect<void> {
    return drive(this.take, target).pipe(
      Effect.matchCause({
        onFailure: (cause) => this.stop(writeFailed(Cause.squash(cause))),
        onSuccess: () => {
          if (!this.ended) this.stop(inputClosed())
        }
      })
    )
  }
}
