/**
 * One connection to the relay: the hello (token first, then the session wanted) within a time
 * limit, the checks, one CLI, its streams bridged both ways, heartbeats, and the CLI stopped when
 * the connection ends, whichever side ends it.
 *
 * @internal
 */
import * as Socket from "@effect/platform/Socket"
import { Deferred, Duration, Effect, Either, Fiber, Option } from "effect"
import { messageOf } from "../process/errors.js"
import * as Cli from "./cli.js"
import * as Frames from "./frames.js"
import { isRawSocket, Outbound, type RawSocket } from "./outbound.js"
import * as Policy from "./policy.js"

/**
 * The relay's settings, resolved from its configuration.
 *
 * @internal
 */
export interface Settings {
  readonly policy: Policy.Policy
  /** The executable and the arguments that come before the host's (a script's runtime). */
  readonly command: string
  readonly commandArgs: ReadonlyArray<string>
  /** The CLI's environment before the host's allowed keys are added. */
  readonly baseEnv: Readonly<Record<string, string>>
  readonly maxMessageBytes: number
  readonly heartbeatInterval: Duration.Duration
  readonly heartbeatTimeout: Duration.Duration
  readonly helloTimeout: Duration.Duration
  readonly closeGracePeriod: Duration.Duration
}

const closeCodeOf = (code: Frames.ErrorCode): number => {
  switch (code) {
    case "unauthorized":
      return Frames.CloseCode.unauthorized
    case "forbidden":
      return Frames.CloseCode.forbidden
    case "timeout":
      return Frames.CloseCode.timeout
    case "spawn_failed":
      return Frames.CloseCode.spawnFailed
    case "bad_request":
      return Frames.CloseCode.badRequest
  }
}

interface State {
  cli: Cli.RelayCli | undefined
  helloSeen: boolean
  lastSeen: number
}

// Every message from the host, as it arrives.
const onMessage =
  (out: Outbound, state: State, hello: Deferred.Deferred<Frames.Hello, Policy.Refusal>) =>
  (data: string | Uint8Array): void => {
    state.lastSeen = Date.now()
    const fail = (message: string) => out.refuse({ code: "bad_request", message }, Frames.CloseCode.badRequest)
    if (typeof data !== "string") {
      const decoded = Frames.decodeData(data)
      if (state.cli === undefined || decoded === undefined || decoded.stream !== Frames.StreamId.stdin) {
        return fail("a data frame that is not for a running CLI's stdin")
      }
      return state.cli.write(decoded.bytes)
    }
    const parsed = Frames.parseControl(data)
    if (Either.isLeft(parsed)) return fail(parsed.left)
    const frame = parsed.right
    switch (frame.type) {
      case "hello":
        if (state.helloSeen) return fail("a second hello")
        state.helloSeen = true
        return Deferred.unsafeDone(hello, Effect.succeed(frame))
      case "eof":
        return state.cli?.endInput()
      case "kill":
        return state.cli?.terminate()
      case "ping":
        return out.control({ type: "pong" })
      case "credit":
        return out.credit(frame.bytes)
      case "pong":
        return
      default:
        return fail(`a ${frame.type} frame from the host`)
    }
  }

// Pings every interval; ends (closing the connection) when nothing came for the timeout.
const heartbeat = (settings: Settings, out: Outbound, ws: RawSocket, state: State) =>
  Effect.gen(function*() {
    const timeout = Duration.toMillis(settings.heartbeatTimeout)
    while (true) {
      yield* Effect.sleep(settings.heartbeatInterval)
      if (Date.now() - state.lastSeen >= timeout) {
        yield* Effect.logWarning(`effect-claude-agent relay: no message from the host for ${timeout} ms; closing`)
        out.control({ type: "error", code: "timeout", message: `no message for ${timeout} ms` })
        ws.close(Frames.CloseCode.timeout, "timeout")
        return
      }
      out.control({ type: "ping" })
    }
  })

const startCli = (settings: Settings, accepted: Policy.Accepted, out: Outbound) =>
  Cli.start({
    command: settings.command,
    args: [...settings.commandArgs, ...accepted.args],
    cwd: accepted.cwd,
    env: { ...settings.baseEnv, ...accepted.env },
    grace: settings.closeGracePeriod,
    onStdout: (bytes) => out.data(Frames.StreamId.stdout, bytes),
    onStderr: (bytes) => out.data(Frames.StreamId.stderr, bytes)
  })

/**
 * Serves one connection until it ends; the CLI is stopped when it does.
 *
 * @internal
 */
export const handle = (settings: Settings) => (socket: Socket.Socket) =>
  Effect.scoped(Effect.gen(function*() {
    // The server provides the connection's `ws` socket to the handler.
    const raw = Option.getOrUndefined(yield* Effect.serviceOption(Socket.WebSocket))
    if (!isRawSocket(raw)) return yield* Effect.logError("effect-claude-agent relay: not a ws socket")
    const ws = raw
    const out = new Outbound(ws, settings.maxMessageBytes)
    const state: State = { cli: undefined, helloSeen: false, lastSeen: Date.now() }
    const hello = yield* Deferred.make<Frames.Hello, Policy.Refusal>()
    const reading = yield* Effect.forkScoped(Effect.ignore(socket.runRaw(onMessage(out, state, hello))))

    // A host that leaves before its hello ends the wait at once.
    const left = Effect.zipRight(
      Fiber.join(reading),
      Effect.fail<Policy.Refusal>({ code: "bad_request", message: "closed before the hello" })
    )
    const checked = yield* Deferred.await(hello).pipe(
      Effect.raceFirst(left),
      Effect.timeoutFail({
        duration: settings.helloTimeout,
        onTimeout: (): Policy.Refusal => ({ code: "timeout", message: "no hello in time" })
      }),
      Effect.flatMap((frame) =>
        Either.match(Policy.check(settings.policy, frame), {
          onLeft: Effect.fail,
          onRight: Effect.succeed
        })
      ),
      Effect.either
    )
    if (Either.isLeft(checked)) {
      yield* Effect.logInfo(`effect-claude-agent relay: refused a connection: ${checked.left.message}`)
      out.refuse(checked.left, closeCodeOf(checked.left.code))
      return yield* Fiber.join(reading)
    }
    const started = yield* Effect.either(startCli(settings, checked.right, out))
    if (Either.isLeft(started)) {
      out.refuse({ code: "spawn_failed", message: messageOf(started.left) }, Frames.CloseCode.spawnFailed)
      return yield* Fiber.join(reading)
    }
    const cli = started.right
    state.cli = cli
    out.watch(cli.stdout)
    out.control({ type: "started", pid: cli.pid })
    yield* Effect.logDebug(`effect-claude-agent relay: started CLI ${cli.pid} in ${checked.right.cwd}`)
    yield* Effect.forkScoped(heartbeat(settings, out, ws, state))

    const exited = Effect.map(cli.closed, (ended) => {
      out.control({ type: "exit", code: ended.code, signal: ended.signal })
      ws.close(Frames.CloseCode.normal, "exit")
    })
    yield* Effect.raceFirst(exited, Fiber.join(reading))
  }))
