/**
 * What the relay sends to the host, and the flow control of the CLI's stdout: it is paused while
 * the host has no credit left (it is not reading) or while too much is sent but not yet written to
 * the network, so a slow host slows the CLI down instead of filling the relay's memory.
 *
 * @internal
 */
import { Predicate } from "effect"
import * as Frames from "./frames.js"
import type * as Policy from "./policy.js"

/**
 * The part of `ws`'s WebSocket the relay uses directly: sends with a completion callback (for
 * flow control) from the CLI's pipe events, without a fiber per chunk.
 *
 * @internal
 */
export interface RawSocket {
  readonly send: (data: Uint8Array | string, done?: (error?: Error) => void) => void
  readonly close: (code?: number, reason?: string) => void
}

/**
 * Whether the connection's socket is one the relay can drive directly.
 *
 * @internal
 */
export const isRawSocket = (u: unknown): u is RawSocket =>
  Predicate.hasProperty(u, "send") && typeof u.send === "function" &&
  Predicate.hasProperty(u, "close") && typeof u.close === "function"

/**
 * What can be paused: the CLI's stdout.
 *
 * @internal
 */
export interface Pausable {
  readonly pause: () => unknown
  readonly resume: () => unknown
}

/**
 * Bytes sent and not yet written to the network above which stdout is paused.
 *
 * @internal
 */
export const HIGH_WATER_BYTES = 1024 * 1024

/**
 * ... and below which it may resume.
 *
 * @internal
 */
export const LOW_WATER_BYTES = 256 * 1024

/**
 * The relay's sending side of one connection.
 *
 * @internal
 */
export class Outbound {
  private unsent = 0
  private creditLeft = Frames.initialCredit
  private paused = false
  private stdout: Pausable | undefined

  constructor(private readonly ws: RawSocket, private readonly maxMessageBytes: number) {}

  /** The stream to pause and resume. */
  watch(stdout: Pausable): void {
    this.stdout = stdout
  }

  control(frame: Frames.Control): void {
    this.ws.send(Frames.encodeControl(frame))
  }

  data(stream: number, bytes: Uint8Array): void {
    for (const message of Frames.encodeDataSplit(stream, bytes, this.maxMessageBytes)) {
      this.unsent += message.length
      this.ws.send(message, () => {
        this.unsent -= message.length
        this.flow()
      })
    }
    if (stream === Frames.StreamId.stdout) this.creditLeft -= bytes.length
    this.flow()
  }

  /** The host read `bytes` more of stdout. */
  credit(bytes: number): void {
    this.creditLeft += bytes
    this.flow()
  }

  refuse(refusal: Policy.Refusal, closeCode: number): void {
    this.control({ type: "error", code: refusal.code, message: refusal.message })
    this.ws.close(closeCode, refusal.code)
  }

  private flow(): void {
    if (this.stdout === undefined) return
    if (!this.paused && (this.creditLeft <= 0 || this.unsent > HIGH_WATER_BYTES)) {
      this.paused = true
      this.stdout.pause()
    } else if (this.paused && this.creditLeft > 0 && this.unsent < LOW_WATER_BYTES) {
      this.paused = false
      this.stdout.resume()
    }
  }
}
