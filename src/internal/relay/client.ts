/**
 * The host's side of the relay: a WebSocket (`@effect/platform`'s `Socket`) turned into the
 * `ByteStreams` that `Transport.fromByteStreams` reads, so the framing, the line limit, stderr and
 * the exit are handled exactly as for a local CLI. The hello (token, arguments, working directory,
 * environment) goes first; the relay answers `started` or refuses.
 *
 * @internal
 */
import * as Socket from "@effect/platform/Socket"
import {
  Cause,
  type Chunk,
  Context,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  Mailbox,
  Redacted,
  type Scope,
  Stream
} from "effect"
import type { SessionLaunch } from "../../layers/SessionServices.js"
import { CLIConnectionError } from "../../SdkError.js"
import type { ByteStreams, ExitStatus, WebSocketConfig } from "../../services/Transport.js"
import * as Defaults from "../defaults.js"
import { messageOf } from "../process/errors.js"
import * as Frames from "./frames.js"

/**
 * What the host asks the relay to start.
 *
 * @internal
 */
export interface Session {
  readonly args: ReadonlyArray<string>
  readonly cwd: string | undefined
  readonly env: Readonly<Record<string, string>>
}

const lostError = (url: string, why: string, cause?: unknown) =>
  new CLIConnectionError({
    reason: "ReadFailed",
    description: `The connection to the relay at ${url} was lost: ${why}`,
    cause
  })

const refusedError = (url: string, code: string, message: string) =>
  new CLIConnectionError({
    reason: "SpawnFailed",
    description: `The relay at ${url} refused the session: ${code}: ${message}`
  })

// How the socket's end reads, when no frame said why.
const endReason = (cause: unknown): string =>
  Socket.isSocketError(cause) && cause.reason === "Close"
    ? `closed with code ${"code" in cause ? String(cause.code) : "?"}`
    : messageOf(cause)

interface Inbox {
  readonly stdout: Mailbox.Mailbox<Uint8Array, CLIConnectionError>
  readonly stderr: Mailbox.Mailbox<Uint8Array>
  readonly started: Deferred.Deferred<number, CLIConnectionError>
  readonly exit: Deferred.Deferred<ExitStatus, CLIConnectionError>
  lastSeen: number
  // Set once the connection is over: the error every later write fails with.
  ended: CLIConnectionError | undefined
  // What the relay said in its `error` frame, for when the close follows.
  refusal: CLIConnectionError | undefined
}

// The connection is over: everything still waiting learns why.
const finish = (inbox: Inbox, error: CLIConnectionError) => {
  inbox.ended ??= error
  Deferred.unsafeDone(inbox.started, Exit.fail(error))
  Deferred.unsafeDone(inbox.exit, Exit.fail(error))
  inbox.stdout.unsafeDone(Exit.fail(error))
  inbox.stderr.unsafeDone(Exit.void)
}

const onMessage =
  (url: string, inbox: Inbox, send: (chunk: string) => Effect.Effect<void, CLIConnectionError>) =>
  (data: string | Uint8Array): Effect.Effect<void, CLIConnectionError> | void => {
    inbox.lastSeen = Date.now()
    if (typeof data !== "string") {
      const decoded = Frames.decodeData(data)
      if (decoded?.stream === Frames.StreamId.stdout) inbox.stdout.unsafeOffer(decoded.bytes)
      else if (decoded?.stream === Frames.StreamId.stderr) inbox.stderr.unsafeOffer(decoded.bytes)
      return
    }
    const parsed = Frames.parseControl(data)
    if (Either.isLeft(parsed)) return
    const frame = parsed.right
    switch (frame.type) {
      case "started":
        return Deferred.unsafeDone(inbox.started, Exit.succeed(frame.pid))
      case "exit":
        // Everything the CLI wrote came before this frame.
        inbox.stdout.unsafeDone(Exit.void)
        inbox.stderr.unsafeDone(Exit.void)
        return Deferred.unsafeDone(
          inbox.exit,
          Exit.succeed({ exitCode: frame.code ?? undefined, signal: frame.signal ?? undefined })
        )
      case "error": {
        const error = refusedError(url, frame.code, frame.message)
        inbox.refusal = error
        return Deferred.unsafeDone(inbox.started, Exit.fail(error))
      }
      case "ping":
        return send(Frames.encodeControl({ type: "pong" }))
      default:
        return
    }
  }

// Pings every interval; ends the connection when the relay said nothing for the timeout.
const heartbeat = (
  url: string,
  inbox: Inbox,
  send: (chunk: string | Socket.CloseEvent) => Effect.Effect<void, CLIConnectionError>,
  interval: Duration.Duration,
  timeout: Duration.Duration
) =>
  Effect.gen(function*() {
    const millis = Duration.toMillis(timeout)
    while (inbox.ended === undefined) {
      yield* Effect.sleep(interval)
      if (Date.now() - inbox.lastSeen >= millis) {
        // Closed first: once finished, nothing more is sent.
        yield* Effect.ignore(send(new Socket.CloseEvent(Frames.CloseCode.timeout, "timeout")))
        return finish(inbox, lostError(url, `no message for ${millis} ms`))
      }
      yield* Effect.ignore(send(Frames.encodeControl({ type: "ping" })))
    }
  })

/**
 * Connects, sends the hello and waits for the CLI to start; the connection lives in the current
 * scope.
 *
 * @internal
 */
export const open = (
  config: WebSocketConfig,
  session: Session
): Effect.Effect<ByteStreams, CLIConnectionError, Scope.Scope | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const url = config.url
    const socket = yield* Socket.makeWebSocket(url, {
      openTimeout: config.openTimeout ?? Duration.seconds(10),
      closeCodeIsError: () => true
    })
    const write = yield* socket.writer
    const inbox: Inbox = {
      stdout: yield* Mailbox.make<Uint8Array, CLIConnectionError>(),
      stderr: yield* Mailbox.make<Uint8Array>(),
      started: yield* Deferred.make<number, CLIConnectionError>(),
      exit: yield* Deferred.make<ExitStatus, CLIConnectionError>(),
      lastSeen: Date.now(),
      ended: undefined,
      refusal: undefined
    }
    const send = (chunk: Uint8Array | string | Socket.CloseEvent): Effect.Effect<void, CLIConnectionError> =>
      Effect.suspend(() =>
        inbox.ended === undefined
          ? Effect.mapError(write(chunk), (error) => lostError(url, messageOf(error), error))
          : Effect.fail(inbox.ended)
      )
    const hello = Frames.encodeControl({
      type: "hello",
      version: Frames.version,
      token: Redacted.value(config.token),
      args: session.args,
      ...(session.cwd === undefined ? {} : { cwd: session.cwd }),
      env: session.env
    })
    yield* socket.runRaw(onMessage(url, inbox, send), { onOpen: Effect.ignore(send(hello)) }).pipe(
      Effect.matchCause({
        onFailure: (cause) => {
          const squashed = Cause.squash(cause)
          const opened = Socket.isSocketError(squashed) && squashed.reason !== "Open" &&
            squashed.reason !== "OpenTimeout"
          finish(
            inbox,
            inbox.refusal ?? (opened
              ? lostError(url, endReason(squashed), squashed)
              : new CLIConnectionError({
                reason: "SpawnFailed",
                description: `Cannot connect to the relay at ${url}: ${endReason(squashed)}`,
                cause: squashed
              }))
          )
        },
        onSuccess: () => finish(inbox, lostError(url, "closed"))
      }),
      Effect.forkScoped
    )
    const pid = yield* Deferred.await(inbox.started)
    const interval = Duration.decode(config.heartbeatInterval ?? Duration.seconds(10))
    const timeout = Duration.decode(config.heartbeatTimeout ?? Duration.times(interval, 3))
    yield* Effect.forkScoped(heartbeat(url, inbox, send, interval, timeout))
    const maxMessageBytes = config.maxMessageBytes ?? Defaults.maxBufferSize
    // Credit for what the reader took, granted in quarters of the window: the relay sends at most
    // `initialCredit` bytes that the reader has not taken.
    let taken = 0
    const grant = (chunk: Chunk.Chunk<Uint8Array>) => {
      for (const bytes of chunk) taken += bytes.length
      if (taken < Frames.initialCredit / 4) return Effect.succeed(chunk)
      const bytes = taken
      taken = 0
      return Effect.as(Effect.ignore(send(Frames.encodeControl({ type: "credit", bytes }))), chunk)
    }
    const streams: ByteStreams = {
      stdin: {
        write: (bytes) =>
          Effect.forEach(Frames.encodeDataSplit(Frames.StreamId.stdin, bytes, maxMessageBytes), send, {
            discard: true
          }),
        end: send(Frames.encodeControl({ type: "eof" }))
      },
      stdout: Mailbox.toStream(inbox.stdout).pipe(Stream.mapChunksEffect(grant)),
      stderr: Mailbox.toStream(inbox.stderr),
      exit: Deferred.await(inbox.exit),
      close: Effect.ignore(send(Frames.encodeControl({ type: "kill" }))),
      pid
    }
    return streams
  })

/**
 * `SessionLaunch` by its key: importing the class would close a module cycle (SessionServices →
 * Transport → here → SessionServices) that CommonJS cannot load. Context finds services by key.
 *
 * @internal
 */
export const Launch = Context.GenericTag<SessionLaunch, SessionLaunch["Type"]>(
  "effect-claude-agent/SessionServices/SessionLaunch"
)

/**
 * The session's hello from its launch: its arguments and working directory, and of its
 * environment only what the options set and the SDK's own keys (the relay's environment is the
 * base; the host's is not sent).
 *
 * @internal
 */
export const sessionOf = Effect.map(Launch, ({ launch, options }): Session => {
  const env: Record<string, string> = {}
  for (const key of [...Object.keys(options.env ?? {}), ...Frames.sdkEnvKeys]) {
    const value = launch.env[key]
    if (value !== undefined) env[key] = value
  }
  return { args: launch.args, cwd: launch.cwd, env }
})

/**
 * The session's launch options that the transport over the relay keeps.
 *
 * @internal
 */
export const readerOptions = Effect.map(Launch, ({ options }) => ({
  maxBufferSize: options.maxBufferSize,
  closeGracePeriod: options.closeGracePeriod,
  onStderr: options.stderr
}))
