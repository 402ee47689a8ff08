/**
 * The transport over any byte streams (a sandbox's process, `docker exec`, an SSH channel): the
 * same stdout reader (`StdoutFrames`), stderr drain (`StderrLines`) and frame encoding as the
 * subprocess transport, fed by Effect streams instead of Node pipes, with stdin written by one
 * writer fiber (`FrameWriter`) and the process's end told by the caller's exit signal.
 *
 * @internal
 */
import { Cause, Clock, Deferred, Duration, Effect, Exit, Option, type Runtime, type Scope, Stream } from "effect"
import type { ByteStreams, ExitStatus, TransportShape } from "../../services/Transport.js"
import * as Defaults from "../defaults.js"
import { runDetached } from "../effect/detached.js"
import { messageOf, readFailed } from "../process/errors.js"
import { StderrLines } from "../process/stderr.js"
import { StdoutFrames } from "../process/stdout.js"
import { FrameWriter } from "./frameWriter.js"

// stdout into the reader. The pump stops pulling while the reader holds `READ_AHEAD_BYTES` it has
// not taken (the reader's flow closes the latch), as a paused pipe stops the subprocess's stdout.
const pumpStdout = (stdout: ByteStreams["stdout"], maxBytes: number) => {
  const flowing = Effect.unsafeMakeLatch(true)
  const frames = new StdoutFrames(maxBytes, {
    pause: () => flowing.unsafeClose(),
    resume: () => flowing.unsafeOpen()
  })
  const pump = Stream.runForEachChunk(stdout, (chunk) => {
    for (const bytes of chunk) frames.onData(bytes)
    return flowing.await
  }).pipe(
    Effect.matchCause({
      onFailure: (cause) => frames.onFailure(readFailed("stdout", Cause.squash(cause))),
      onSuccess: () => frames.onEnd()
    })
  )
  return { frames, pump }
}

// stderr, always drained: the pump never waits on anyone.
const pumpStderr = (
  stderr: ByteStreams["stderr"],
  onStderr: ((line: string) => void) | undefined,
  runtime: Runtime.Runtime<never>
) => {
  const lines = new StderrLines(onStderr, runtime)
  const pump = stderr === undefined
    ? Effect.sync(() => lines.onEnd())
    : Stream.runForEachChunk(stderr, (chunk) =>
      Effect.sync(() => {
        for (const bytes of chunk) lines.onData(bytes)
      })).pipe(Effect.ignore, Effect.ensuring(Effect.sync(() => lines.onEnd())))
  return { lines, pump }
}

// The grace period runs on the live clock, as the subprocess's timers do: a test under `TestClock`
// whose CLI never exits must still be able to close its scope.
const liveClock = Clock.make()

const statusOf = (exit: number | ExitStatus): ExitStatus =>
  typeof exit === "number" ? { exitCode: exit, signal: undefined } : exit

// The exit signal into `exitStatus`. A failed signal (the connection to the process was lost)
// ends the frames with a `CLIConnectionError` if stdout is still open, leaves its reason in the
// stderr tail (what `ProcessError` quotes), and reports an unknown status.
const watchExit = (
  exit: ByteStreams["exit"],
  exitStatus: Deferred.Deferred<ExitStatus>,
  frames: StdoutFrames,
  stderr: StderrLines
) =>
  Effect.matchCause(exit, {
    onFailure: (cause) => {
      const error = Cause.squash(cause)
      frames.onFailure(readFailed("exit status", error))
      stderr.tail.append(`effect-claude-agent: the CLI's exit status is unknown: ${messageOf(error)}`)
      Deferred.unsafeDone(exitStatus, Exit.succeed({ exitCode: undefined, signal: undefined }))
    },
    onSuccess: (status) => Deferred.unsafeDone(exitStatus, Exit.succeed(statusOf(status)))
  })

/**
 * Builds the transport in the current scope. Closing the scope ends stdin, waits up to
 * `closeGracePeriod` for the exit, then runs `close` (once, whether or not `terminate` ran it)
 * and stops the pumps.
 *
 * @internal
 */
export const make = (streams: ByteStreams): Effect.Effect<TransportShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const grace = streams.closeGracePeriod === undefined
      ? Defaults.closeGracePeriod
      : Duration.decode(streams.closeGracePeriod)
    const exitStatus = yield* Deferred.make<ExitStatus>()
    const close = yield* Effect.once(streams.close ?? Effect.void)
    const stdin = new FrameWriter()
    const stdout = pumpStdout(streams.stdout, streams.maxBufferSize ?? Defaults.maxBufferSize)
    const stderr = pumpStderr(streams.stderr, streams.onStderr, runtime)

    yield* Effect.forkScoped(stdin.run(streams.stdin))
    yield* Effect.forkScoped(stdout.pump)
    yield* Effect.forkScoped(stderr.pump)
    yield* Effect.forkScoped(watchExit(streams.exit, exitStatus, stdout.frames, stderr.lines))
    // Added after the fibers, so it runs before they are interrupted: the writer is still there
    // to write what is queued and end the input.
    yield* Effect.addFinalizer(() =>
      stdin.end.pipe(
        Effect.zipRight(Deferred.await(exitStatus).pipe(Effect.timeoutOption(grace), Effect.interruptible)),
        Effect.withClock(liveClock),
        runDetached,
        Effect.zipRight(close),
        Effect.zipRight(stderr.lines.close)
      )
    )

    const transport: TransportShape = {
      send: stdin.send,
      frames: stdout.frames.stream,
      endInput: stdin.end,
      // Without a `close`, ending the input is the only way to ask the CLI to stop.
      terminate: Effect.zipRight(
        streams.close === undefined ? stdin.end : close,
        Effect.asVoid(Deferred.await(exitStatus))
      ),
      exitStatus: Deferred.await(exitStatus),
      stderrTail: Effect.sync(() => stderr.lines.tail.get()),
      stderr: stderr.lines.lines,
      pid: Option.fromNullable(streams.pid)
    }
    return transport
  })
