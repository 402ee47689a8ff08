/**
 * The CLI's stderr, always drained whatever its subscribers do: a CLI blocked on a full stderr
 * pipe stops writing stdout too. Every line goes to a bounded tail (for error messages), the
 * `stderr` callback and the subscribers of the moment.
 *
 * @internal
 */
import type { Readable } from "node:stream"
import { Effect, PubSub, Runtime, Stream } from "effect"
import * as Defaults from "../defaults.js"
import { messageOf } from "./errors.js"

const SUBSCRIBER_BUFFER = 1024

/**
 * A bounded tail of the CLI's stderr, kept for error messages.
 *
 * @internal
 */
export class StderrTail {
  private lines: Array<string> = []
  private size = 0

  constructor(readonly maxChars: number) {}

  append(line: string): void {
    this.lines.push(line)
    this.size += line.length + 1
    while (this.size > this.maxChars && this.lines.length > 1) {
      const dropped = this.lines.shift()
      this.size -= (dropped?.length ?? 0) + 1
    }
  }

  get(): string {
    const text = this.lines.join("\n")
    return text.length > this.maxChars ? text.slice(text.length - this.maxChars) : text
  }
}

/**
 * stderr's lines, fed by any byte source: the tail, the callback, and a stream for subscribers.
 *
 * @internal
 */
export class StderrLines {
  readonly tail = new StderrTail(Defaults.stderrTailBytes)
  // Made for the first subscriber: most sessions never read `stderr` (and a subscriber sees the
  // lines from the moment it runs, not earlier ones).
  private hub: PubSub.PubSub<string> | undefined
  private open = true
  private decoder: InstanceType<typeof TextDecoder> | undefined
  private partial = ""
  private callbackFailed = false
  private ended = false

  constructor(
    private readonly onStderr: ((line: string) => void) | undefined,
    private readonly runtime: Runtime.Runtime<never>
  ) {}

  /**
   * Drains a Node stream (stderr of a process): its data and end; its errors end nothing here
   * (stdout and the exit tell what happened).
   *
   * @internal
   */
  static fromReadable(
    stderr: Readable,
    onStderr: ((line: string) => void) | undefined,
    runtime: Runtime.Runtime<never>
  ): StderrLines {
    const lines = new StderrLines(onStderr, runtime)
    stderr.on("data", (chunk: Uint8Array) => lines.onData(chunk))
    stderr.once("end", () => lines.onEnd())
    stderr.on("error", () => {})
    return lines
  }

  /** A chunk of stderr: its complete lines go out, a partial one waits for the next chunk. */
  onData(chunk: Uint8Array): void {
    const text = this.partial + (this.decoder ??= new TextDecoder("utf-8")).decode(chunk, { stream: true })
    let from = 0
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", from)) {
      this.line(text.slice(from, nl))
      from = nl + 1
    }
    this.partial = text.slice(from)
  }

  /** The end of stderr: a last line without a newline still counts; subscribers' streams end. */
  onEnd(): void {
    if (this.ended) return
    this.ended = true
    const rest = this.decoder === undefined ? this.partial : this.partial + this.decoder.decode()
    this.partial = ""
    if (rest.length > 0) this.line(rest)
    // Most sessions never subscribed: nothing to shut down, no fiber to start for it.
    if (this.hub === undefined) this.open = false
    else Runtime.runFork(this.runtime)(this.close)
  }

  private line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    this.tail.append(line)
    if (this.onStderr !== undefined) {
      try {
        this.onStderr(line)
      } catch (error) {
        // A throwing user callback must not stop the drain; it is reported once, not per line.
        if (!this.callbackFailed) {
          this.callbackFailed = true
          Runtime.runFork(this.runtime)(
            Effect.logWarning(
              `effect-claude-agent: the \`stderr\` callback threw (${
                messageOf(error)
              }); stderr is still drained, later failures are not reported`
            )
          )
        }
      }
    }
    this.hub?.unsafeOffer(line)
  }

  /** Ends the subscribers' streams. */
  readonly close: Effect.Effect<void> = Effect.suspend(() => {
    this.open = false
    return this.hub === undefined ? Effect.void : PubSub.shutdown(this.hub)
  })

  /** The lines from the moment the stream runs; a subscriber 1024 lines behind loses the oldest. */
  readonly lines: Stream.Stream<string> = Stream.unwrap(Effect.suspend(() => {
    if (!this.open) return Effect.succeed(Stream.empty)
    if (this.hub !== undefined) return Effect.succeed(Stream.fromPubSub(this.hub))
    return Effect.map(PubSub.sliding<string>(SUBSCRIBER_BUFFER), (hub) => {
      this.hub ??= hub
      return Stream.fromPubSub(this.hub)
    })
  }))
}
