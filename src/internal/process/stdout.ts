/**
 * The stdout side of every transport: bytes pushed in by their source (a Node `Readable`, the
 * testing kit's in-memory CLI, replay), frames pulled out by the reader of `Transport.frames`.
 *
 * Chunks are kept as they arrive and read (split and parsed) when the reader takes them, all at
 * once, or as they arrive while it waits for them: chunks waiting here are bytes outside the JavaScript heap, and parsed messages (several
 * times the size of their bytes) are made only when the reader is ready for them, so they never
 * wait for a busy reader, where they would outlive young-generation collections.
 *
 * @internal
 */
import type { Readable } from "node:stream"
import { Chunk, Effect, Option, Stream } from "effect"
import { CLIJSONDecodeError } from "../../SdkError.js"
import type { Frame, ReadError } from "../../services/Transport.js"
import { FrameReader, type ReadProblem } from "../protocol/reader.js"
import { readFailed } from "./errors.js"

/**
 * Bytes held for a reader that is not taking them before the source is paused. Node's own buffer
 * (64 KiB) and the pipe's come on top; a line longer than this still completes (it is bounded by
 * `maxBufferSize`).
 *
 * @internal
 */
export const READ_AHEAD_BYTES = 1024 * 1024

/**
 * How a source that can be held back is paused and resumed.
 *
 * @internal
 */
export interface Flow {
  readonly pause: () => void
  readonly resume: () => void
}

/**
 * The next frames, all that are complete (`undefined`: the end). The end is a value rather than a
 * failure so that a loop over it needs no error mapping per chunk.
 *
 * @internal
 */
export type Next = Effect.Effect<Chunk.Chunk<Frame> | undefined, ReadError>

// The take behind each `StdoutFrames` stream: a reader given the stream takes frames from it
// directly, without a stream's channel machinery around every take.
const nexts = new WeakMap<Stream.Stream<Frame, ReadError>, Next>()

/**
 * The take behind `frames` when a `StdoutFrames` made it; `undefined` for any other stream.
 *
 * @internal
 */
export const nextOf = (frames: Stream.Stream<Frame, ReadError>): Next | undefined => nexts.get(frames)

const decodeError = (problem: ReadProblem): CLIJSONDecodeError => new CLIJSONDecodeError(problem)

const END: Next = Effect.succeed(undefined)

/**
 * Frames for one reader, fed by any byte source.
 *
 * @internal
 */
export class StdoutFrames {
  private chunks: Array<Uint8Array> = []
  private bufferedBytes = 0
  // Set by the source's end or failure, or by a protocol problem: no more chunks are kept.
  private closed: "ended" | ReadError | undefined
  // What the reader gets once the frames before it are taken: `None` for the end.
  private outcome: Option.Option<ReadError> | undefined
  private delivered = false
  private paused = false
  private waiter: ((next: Next) => void) | undefined
  private readonly reader: FrameReader

  constructor(maxBytes: number, private readonly flow?: Flow) {
    this.reader = new FrameReader(maxBytes)
    // Field initialisers have run: `next` and `stream` are set.
    nexts.set(this.stream, this.next)
  }

  /**
   * Reads a Node stream (stdout of a process): its data, end and error.
   *
   * @internal
   */
  static fromReadable(stdout: Readable, maxBytes: number): StdoutFrames {
    const frames = new StdoutFrames(maxBytes, { pause: () => stdout.pause(), resume: () => stdout.resume() })
    stdout.on("data", (chunk: Uint8Array) => frames.onData(chunk))
    stdout.on("end", () => frames.onEnd())
    stdout.on("error", (error: unknown) => frames.onFailure(readFailed("stdout", error)))
    return frames
  }

  /** A chunk from the source; the source must not reuse it. */
  onData(chunk: Uint8Array): void {
    // After the end, an error or a protocol problem nothing more is kept, but the source is still
    // drained: a CLI blocked on a full pipe would never see its stdin close.
    if (this.closed !== undefined) return
    this.chunks.push(chunk)
    this.bufferedBytes += chunk.length
    this.wake()
    // Only a reader that is not waiting (busy, or held back by a full message queue) lets chunks
    // pile up here. Pausing and resuming a pipe costs a system call each, so it is not done while
    // the reader keeps up.
    if (this.waiter === undefined && this.bufferedBytes >= READ_AHEAD_BYTES && !this.paused && this.flow) {
      this.paused = true
      this.flow.pause()
    }
  }

  /** The source's end: a last line without a newline is still read. */
  onEnd(): void {
    if (this.closed !== undefined) return
    this.closed = "ended"
    this.wake()
  }

  /** The source's failure: the reader gets it after the frames of the chunks before it. */
  onFailure(error: ReadError): void {
    if (this.closed !== undefined) return
    this.closed = error
    this.resumeSource()
    this.wake()
  }

  private resumeSource(): void {
    if (!this.paused) return
    this.paused = false
    this.flow?.resume()
  }

  // A waiting reader is ready for frames: they are read (split and parsed) now, and a chunk that
  // completes no line (a part of a long line) does not wake it at all. The reader takes them on its
  // own fiber (`next`), so a waiter whose fiber was interrupted takes nothing: the frames wait for
  // the next take.
  private wake(): void {
    const waiter = this.waiter
    if (waiter === undefined) return
    if (this.outcome === undefined) this.read()
    if (!this.reader.hasOutput() && this.outcome === undefined) return
    this.waiter = undefined
    waiter(this.next)
  }

  // Reads the pending chunks, and the end once the source is closed.
  private read(): void {
    let problem: ReadProblem | undefined
    if (this.chunks.length > 0) {
      const chunks = this.chunks
      // Not a literal, as `FrameReader.takeFrames`'s: the array waits for the next data, and an
      // array V8 pretenured would keep the chunks pushed into it until a full collection.
      this.chunks = Array.of()
      this.bufferedBytes = 0
      this.resumeSource()
      for (const chunk of chunks) {
        problem = this.reader.push(chunk)
        if (problem !== undefined) break
      }
    }
    if (problem === undefined && this.closed === "ended") problem = this.reader.end()
    if (problem !== undefined) {
      this.outcome = Option.some(decodeError(problem))
      this.closed ??= "ended"
      this.chunks = []
      this.bufferedBytes = 0
      this.resumeSource()
    } else if (this.closed !== undefined) {
      this.outcome = this.closed === "ended" ? Option.none() : Option.some(this.closed)
    }
  }

  // Everything complete so far, or the end, or the failure; undefined when there is nothing yet.
  private take(): Next | undefined {
    if (this.outcome === undefined) this.read()
    const frames = this.reader.takeFrames()
    let next: Next | undefined
    if (frames.length > 0) {
      next = Effect.succeed(Chunk.unsafeFromArray(frames))
    } else if (this.outcome !== undefined) {
      next = this.delivered || Option.isNone(this.outcome) ? END : Effect.fail(this.outcome.value)
      this.delivered = true
    }
    const noise = this.reader.takeNoise()
    if (noise === undefined) return next
    const logged = Effect.logDebug("effect-claude-agent: skipped non-JSON stdout lines", noise)
    return Effect.zipRight(logged, next ?? this.next)
  }

  // The wait for data, with no canceler (and a register function of one parameter: one that takes
  // the `AbortSignal` too gets the same wrapping): `Effect.async` wraps a wait that has one in
  // `Effect.onInterrupt`, whose objects V8 can come to allocate in the old generation (they are
  // alive while the reader waits, across the read of the next request), and an old one keeps the
  // wait's young objects through young collections: ~0.8 KB promoted per hook round trip
  // (docs/performance.md, "Callback allocation"). A waiter left by an interrupted reader is
  // harmless: it is resumed with `next`, which its fiber never runs, and the next reader's wait
  // replaces it.
  private readonly wait: Next = Effect.async<Chunk.Chunk<Frame> | undefined, ReadError>((resume) => {
    this.waiter = resume
  })

  /** The next frames, all that are complete; `undefined` at the end. Single reader. */
  readonly next: Next = Effect.suspend(() => this.take() ?? this.wait)

  /** The frames as a stream: single consumer, run it once. */
  readonly stream: Stream.Stream<Frame, ReadError> = Stream.repeatEffectChunkOption(
    Effect.flatMap(
      Effect.mapError(this.next, Option.some),
      (chunk) => chunk === undefined ? END_OF_STREAM : Effect.succeed(chunk)
    )
  )
}

const END_OF_STREAM = Effect.fail(Option.none())
