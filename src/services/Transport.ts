/**
 * `Transport`: one connection to one Claude Code CLI process (or to something that plays one).
 *
 * It moves JSON frames and nothing else: `send` serialises a frame onto stdin, `frames` parses
 * stdout into JSON values, and it reports how the process ended. The control protocol, message
 * decoding and sessions are built on top of it, so swapping this one service (a fake CLI, a
 * recording) is all a test needs.
 *
 * @since 0.1.0
 */
import type * as Socket from "@effect/platform/Socket"
import type { Duration, Option, Redacted, Scope, Sink, Stream } from "effect"
import { Context, Effect, Layer } from "effect"
import type { SessionLaunch } from "../layers/SessionServices.js"
import type { CLIConnectionError, CLIJSONDecodeError, CLINotFoundError } from "../SdkError.js"
import * as internal from "../internal/process/subprocess.js"
import * as relayClient from "../internal/relay/client.js"
import * as byteStreams from "../internal/transport/byteStreams.js"

/**
 * What reading the CLI's stdout can fail with: a line that is too long or not JSON, or the pipe.
 *
 * @since 0.1.0
 * @category models
 */
export type ReadError = CLIJSONDecodeError | CLIConnectionError

/**
 * One JSON value from the CLI's stdout, with the size of the line it came in (for bounding what
 * is buffered by bytes).
 *
 * @example
 * ```ts
 * import type { Transport } from "effect-claude-agent"
 * const frame: Transport.Frame = { value: { type: "keep_alive" }, bytes: 20 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Frame {
  readonly value: unknown
  /** The size of the line in UTF-8 bytes as the CLI wrote it, newline included. */
  readonly bytes: number
}

/**
 * How the CLI process ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitStatus {
  /** The exit code, when it exited on its own. */
  readonly exitCode: number | undefined
  /** The signal that killed it, e.g. `SIGTERM`. */
  readonly signal: string | undefined
}

/**
 * The transport's operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface TransportShape {
  /**
   * Writes one frame as a line on stdin. Frames from concurrent senders never interleave.
   * Fails with `CLIConnectionError` once input was ended or the process is gone.
   */
  readonly send: (frame: unknown) => Effect.Effect<void, CLIConnectionError>
  /**
   * Every JSON value the CLI writes to stdout, in order, with its line's size. Single consumer: run it once.
   * Ends when stdout ends; fails with `CLIJSONDecodeError` on a line that is too long or not JSON.
   */
  readonly frames: Stream.Stream<Frame, ReadError>
  /** Closes stdin after every frame already sent is written (the CLI's end of input). */
  readonly endInput: Effect.Effect<void>
  /**
   * Asks the process to stop now (SIGTERM; over byte streams, their `close`, or the end of
   * input without one), for when nothing it would still do is wanted: a
   * session closed before the CLI answered `initialize`. Closing the scope still runs the whole
   * stop sequence after it.
   */
  readonly terminate: Effect.Effect<void>
  /** Waits until the process has exited. */
  readonly exitStatus: Effect.Effect<ExitStatus>
  /** The last 2 KiB of stderr. */
  readonly stderrTail: Effect.Effect<string>
  /**
   * stderr lines from the moment the stream is run (each run is a new subscriber; a subscriber
   * that falls more than 1024 lines behind loses the oldest). Ends when stderr closes.
   */
  readonly stderr: Stream.Stream<string>
  /** The process id, when there is a process. */
  readonly pid: Option.Option<number>
}

/**
 * What `Transport.layerSubprocess` needs to start the CLI.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubprocessConfig {
  /** The executable (an absolute path or a name on PATH). */
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The complete child environment (not merged with the parent's here). */
  readonly env: Readonly<Record<string, string>>
  readonly cwd?: string | undefined
  /** Maximum stdout line size in bytes. */
  readonly maxBufferSize: number
  /** Wait after stdin EOF before SIGTERM, and after SIGTERM before SIGKILL. Default 5 seconds. */
  readonly closeGracePeriod?: Duration.DurationInput | undefined
  /** Called with every stderr line. */
  readonly onStderr?: ((line: string) => void) | undefined
}

/**
 * A function that writes bytes to the CLI's stdin, for `ByteStreams.stdin`: `write` is called by
 * one fiber at a time, each time with whole lines; `end` (when given) sends the end of input
 * after the last write. Cheaper per frame than a `Sink` (no stream machinery around each write).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Transport } from "effect-claude-agent"
 *
 * declare const channel: { write(bytes: Uint8Array, done: () => void): void; end(): void }
 * const stdin: Transport.ByteWriter = {
 *   write: (bytes) => Effect.async<void>((resume) => channel.write(bytes, () => resume(Effect.void))),
 *   end: Effect.sync(() => channel.end())
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ByteWriter {
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, unknown>
  readonly end?: Effect.Effect<void, unknown> | undefined
}

/**
 * A CLI reached through byte streams (a sandbox SDK's process, `docker exec`, an SSH channel),
 * for `Transport.fromByteStreams`. Errors of any type are accepted: they become
 * `CLIConnectionError`s with the original as `cause`. Chunks of `stdout` must not be reused by
 * their source once emitted (the reader keeps them until a line completes).
 *
 * @example
 * ```ts
 * import type { Effect, Sink, Stream } from "effect"
 * import type { Transport } from "effect-claude-agent"
 *
 * declare const remote: {
 *   readonly stdin: Sink.Sink<void, Uint8Array>
 *   readonly stdout: Stream.Stream<Uint8Array, Error>
 *   readonly stderr: Stream.Stream<Uint8Array, Error>
 *   readonly exitCode: Effect.Effect<number, Error>
 *   readonly kill: Effect.Effect<void>
 * }
 * const streams: Transport.ByteStreams = {
 *   stdin: remote.stdin,
 *   stdout: remote.stdout,
 *   stderr: remote.stderr,
 *   exit: remote.exitCode,
 *   close: remote.kill
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ByteStreams {
  /** The CLI's stdin: a sink (its input ends when the transport's does) or a `ByteWriter`. */
  readonly stdin: Sink.Sink<unknown, Uint8Array, unknown, unknown> | ByteWriter
  /** The CLI's stdout; it must end when the CLI exits. */
  readonly stdout: Stream.Stream<Uint8Array, unknown>
  /** The CLI's stderr, always drained; none, when the channel merges it or has none. */
  readonly stderr?: Stream.Stream<Uint8Array, unknown> | undefined
  /**
   * Completes when the CLI has exited, with its exit code or status. Failing means the exit is
   * not known (the connection was lost): the frames fail with `CLIConnectionError` if stdout is
   * still open, and the exit status is unknown.
   */
  readonly exit: Effect.Effect<number | ExitStatus, unknown>
  /**
   * Stops the CLI and releases the channel (a kill, closing the connection). Runs once: at
   * `terminate`, or when the scope closes after stdin was ended and the CLI had
   * `closeGracePeriod` to exit, whichever comes first.
   */
  readonly close?: Effect.Effect<void> | undefined
  /** Maximum stdout line size in bytes. Default 1 MiB. */
  readonly maxBufferSize?: number | undefined
  /** Wait after stdin EOF before `close`. Default 5 seconds. */
  readonly closeGracePeriod?: Duration.DurationInput | undefined
  /** Called with every stderr line. */
  readonly onStderr?: ((line: string) => void) | undefined
  /**
   * The CLI's process id, reported as the session's `pid`. Give it only for a process on this
   * host (a cluster runner's resource guard watches it); a remote process has none here.
   */
  readonly pid?: number | undefined
}

/**
 * Where and how `Transport.layerWebSocket` reaches a relay (`effect-claude-agent/relay`).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Transport } from "effect-claude-agent"
 *
 * const config: Transport.WebSocketConfig = {
 *   url: "wss://sandbox.example.com:8765",
 *   token: Redacted.make("a long random secret"),
 *   heartbeatInterval: "10 seconds"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface WebSocketConfig {
  /** `ws://` or `wss://` (use `wss` anywhere but loopback). */
  readonly url: string
  /** The relay's token, sent first on every connection. */
  readonly token: Redacted.Redacted<string>
  /** How long connecting may take. Default 10 seconds. */
  readonly openTimeout?: Duration.DurationInput | undefined
  /** How often the host pings the relay. Default 10 seconds. */
  readonly heartbeatInterval?: Duration.DurationInput | undefined
  /** A relay silent this long is taken for gone (a `CLIConnectionError`). Default 3 × `heartbeatInterval`. */
  readonly heartbeatTimeout?: Duration.DurationInput | undefined
  /** The relay's message size limit: stdin is sent in messages no larger. Default 1 MiB. */
  readonly maxMessageBytes?: number | undefined
}

/**
 * The `Transport` service.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Transport } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const transport = yield* Transport.Transport
 *   yield* transport.send({ type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null, session_id: "" })
 *   yield* transport.endInput
 *   yield* Stream.runForEach(transport.frames, (frame) => Effect.log(frame.value))
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Tag("effect-claude-agent/Transport")<Transport, TransportShape>() {
  /**
   * Spawns the CLI as a scoped resource, with `node:child_process` (Node, Bun and Deno all
   * provide it; for anything else, provide a `Transport` of your own). Closing the scope ends
   * stdin, waits `closeGracePeriod`, sends SIGTERM to the process group, waits again, then
   * SIGKILL, all inside an uninterruptible finalizer, so the process never outlives the scope.
   *
   * @example
   * ```ts
   * import { Transport } from "effect-claude-agent"
   *
   * declare const process: { readonly env: Record<string, string | undefined> }
   * const layer = Transport.Transport.layerSubprocess({
   *   command: "claude", args: ["--output-format", "stream-json", "--input-format", "stream-json", "--verbose"],
   *   env: { PATH: process.env.PATH ?? "" }, maxBufferSize: 1 << 20, closeGracePeriod: "5 seconds"
   * })
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerSubprocess = (
    config: SubprocessConfig
  ): Layer.Layer<Transport, CLINotFoundError | CLIConnectionError> =>
    Layer.scoped(Transport, internal.makeSubprocess(config))

  /**
   * Spawns the CLI and returns the transport in the current scope.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { Transport } from "effect-claude-agent"
   *
   * declare const config: Transport.SubprocessConfig
   * const program = Effect.scoped(Effect.gen(function* () {
   *   const transport = yield* Transport.Transport.makeSubprocess(config)
   *   yield* transport.endInput
   * }))
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly makeSubprocess = (
    config: SubprocessConfig
  ): Effect.Effect<
    TransportShape,
    CLINotFoundError | CLIConnectionError,
    Scope.Scope
  > => internal.makeSubprocess(config)

  /**
   * A transport over byte streams: the CLI runs wherever the streams lead (a sandbox, a
   * container through `docker exec`, a host over SSH). It reads stdout with the subprocess
   * transport's reader (the line limit as `CLIJSONDecodeError`, multi-byte characters split
   * across chunks, `\r\n`), writes each frame whole from one writer, always drains stderr, and
   * turns the exit into the same errors. Closing the scope ends stdin, waits `closeGracePeriod`
   * for the exit, then runs `close`.
   *
   * @example
   * ```ts
   * import { Effect, Sink, Stream } from "effect"
   * import { Transport } from "effect-claude-agent"
   *
   * declare const sandbox: {
   *   readonly exec: (argv: ReadonlyArray<string>) => Effect.Effect<{
   *     readonly stdin: Sink.Sink<void, Uint8Array>
   *     readonly stdout: Stream.Stream<Uint8Array, Error>
   *     readonly stderr: Stream.Stream<Uint8Array, Error>
   *     readonly exitCode: Effect.Effect<number, Error>
   *     readonly kill: Effect.Effect<void>
   *   }, Error>
   * }
   * const program = Effect.scoped(Effect.gen(function* () {
   *   const remote = yield* sandbox.exec(["claude", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose"])
   *   const transport = yield* Transport.Transport.fromByteStreams({
   *     stdin: remote.stdin, stdout: remote.stdout, stderr: remote.stderr, exit: remote.exitCode, close: remote.kill
   *   })
   *   yield* transport.endInput
   * }))
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly fromByteStreams = (streams: ByteStreams): Effect.Effect<TransportShape, never, Scope.Scope> =>
    byteStreams.make(streams)

  /**
   * `fromByteStreams` as a layer, from an effect that opens the streams in the layer's scope
   * (for a session: read `SessionServices.SessionLaunch` for the CLI's argv and environment).
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { ClaudeAgent, SessionServices, Transport } from "effect-claude-agent"
   *
   * declare const exec: (argv: ReadonlyArray<string>) => Effect.Effect<Transport.ByteStreams>
   * const transport = Transport.Transport.layerByteStreams(
   *   Effect.flatMap(SessionServices.SessionLaunch, ({ launch }) => exec(["claude", ...launch.args]))
   * )
   * const agent = ClaudeAgent.make({ transport })
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerByteStreams = <E, R>(
    open: Effect.Effect<ByteStreams, E, R>
  ): Layer.Layer<Transport, E, Exclude<R, Scope.Scope>> =>
    Layer.scoped(Transport, Effect.flatMap(open, byteStreams.make))

  /**
   * The CLI behind a relay (`effect-claude-agent/relay`, running next to it in a sandbox or a
   * container), over a WebSocket: `fromByteStreams` on the relay's streams, so the framing, the
   * line limit, stderr and the exit are those of a local CLI. The session's arguments, working
   * directory and environment (what its options set, not the host's own) go to the relay, which
   * checks them against what it allows; a refusal, a wrong token or a relay that cannot be
   * reached fails the session with `CLIConnectionError` (`SpawnFailed`), and a connection lost
   * later fails its reads with `CLIConnectionError` (`ReadFailed`). Needs a
   * `Socket.WebSocketConstructor` (`NodeSocket.layerWebSocketConstructor` on Node).
   *
   * @example
   * ```ts
   * import { NodeSocket } from "@effect/platform-node"
   * import { Layer, Redacted } from "effect"
   * import { ClaudeAgent, Transport } from "effect-claude-agent"
   *
   * const transport = Transport.Transport.layerWebSocket({
   *   url: "wss://sandbox.example.com:8765",
   *   token: Redacted.make("a long random secret")
   * }).pipe(Layer.provide(NodeSocket.layerWebSocketConstructor))
   * const agent = ClaudeAgent.make({ transport })
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerWebSocket = (
    config: WebSocketConfig
  ): Layer.Layer<Transport, CLIConnectionError, SessionLaunch | Socket.WebSocketConstructor> =>
    Layer.scoped(
      Transport,
      Effect.gen(function*() {
        const session = yield* relayClient.sessionOf
        const reader = yield* relayClient.readerOptions
        const streams = yield* relayClient.open(config, session)
        return yield* byteStreams.make({ ...streams, ...reader })
      })
    )
}
