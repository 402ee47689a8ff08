/**
 * The CLI's stdin: one `write` per frame, on the caller's fiber.
 *
 * @internal
 */
import type { Writable } from "node:stream"
import { Effect } from "effect"
import type { CLIConnectionError } from "../../SdkError.js"
import { encodeFrame } from "../protocol/json.js"
import { inputClosed, writeFailed } from "./errors.js"

/**
 * Frames onto a Node `Writable`, waiting only when the pipe asks for it (`drain`).
 *
 * @internal
 */
export class StdinFrames {
  private ended = false
  private failure: unknown
  // Closed while the pipe is full; `drain` (or the pipe's close) opens it for every held sender.
  private readonly writable = Effect.unsafeMakeLatch(true)

  constructor(private readonly stdin: Writable) {
    stdin.on("error", (error: unknown) => {
      this.failure ??= error
    })
    const release = () => this.writable.unsafeOpen()
    stdin.on("drain", release)
    stdin.on("close", release)
  }

  /** Writes one frame; frames from concurrent senders never interleave. */
  readonly send = (frame: unknown): Effect.Effect<void, CLIConnectionError> =>
    Effect.suspend(() => {
      if (this.failure !== undefined) return Effect.fail(writeFailed(this.failure))
      if (this.ended || !this.stdin.writable) return Effect.fail(inputClosed())
      // Frames written while the pipe is busy leave together (Node's `writev`).
      if (this.stdin.write(encodeFrame(frame))) return Effect.void
      this.writable.unsafeClose()
      return this.writable.await
    })

  /** Closes stdin after what was written. */
  readonly end: Effect.Effect<void> = Effect.sync(() => {
    if (this.ended) return
    this.ended = true
    this.stdin.end()
  })
}
