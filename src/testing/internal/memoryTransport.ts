/**
 * A `Transport` with no process behind it, shared by the testing kit's CLI doubles (the fake CLI
 * and the recording player): stdout pushed as bytes into the same frame reader as the real
 * transport's, the end of input, stderr, and an exit status, tied to a scope like the real
 * transport.
 *
 * The double decides what the CLI does: it receives each frame sent (as the CLI would read it)
 * and the end of input, and writes stdout lines, stderr lines and the exit.
 *
 * @internal
 */
import { Deferred, Effect, type Option, PubSub, type Scope, Stream } from "effect"
import * as Defaults from "../../internal/defaults.js"
import { StdoutFrames } from "../../internal/process/stdout.js"
import { encodeFrame, parseJsonBoundary } from "../../internal/protocol/json.js"
import { CLIConnectionError } from "../../SdkError.js"
import type { ExitStatus, TransportShape } from "../../services/Transport.js"

/**
 * What the double does with the code's input.
 *
 * @internal
 */
export interface Options {
  /** Each frame sent while the input is open, encoded and parsed again as the CLI would read it. */
  readonly onSend: (frame: unknown) => Effect.Effect<void, CLIConnectionError>
  /** Runs once, when the code first ends the input. */
  readonly onEndInput: Effect.Effect<void>
  /** The stdout line limit. */
  readonly maxBufferSize: number
  readonly pid: Option.Option<number>
}

/**
 * The transport and the CLI's side of it.
 *
 * @internal
 */
export interface MemoryTransport {
  readonly transport: TransportShape
  /** Writes one stdout line (without its newline). */
  readonly writeLine: (line: string) => Effect.Effect<void>
  /** Writes a frame to stdout as the CLI would. */
  readonly writeFrame: (frame: unknown) => Effect.Effect<void>
  /** Writes one stderr line. */
  readonly writeStderr: (line: string) => Effect.Effect<void>
  /** Ends stdout and stderr and reports the exit status; only the first exit counts. */
  readonly exit: (status: ExitStatus) => Effect.Effect<void>
  /** Whether the CLI has exited. */
  readonly exited: Effect.Effect<boolean>
}

/**
 * Builds the transport in the current scope. Closing the scope ends a CLI that is still running
 * (exit by `SIGTERM`), as the real transport does.
 *
 * @internal
 */
export const make = (options: Options): Effect.Effect<MemoryTransport, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stdout = new StdoutFrames(options.maxBufferSize)
    const exitStatus = yield* Deferred.make<ExitStatus>()
    const stderrHub = yield* PubSub.sliding<string>(1024)
    let stderrTail: string | undefined
    let inputOpen = true

    const exit = (status: ExitStatus) =>
      Effect.sync(() => stdout.onEnd()).pipe(
        Effect.zipRight(PubSub.shutdown(stderrHub)),
        Effect.zipRight(Deferred.succeed(exitStatus, status)),
        Effect.asVoid
      )

    // Lines go in as the bytes the CLI would write, through the real reader, so noise and
    // malformed lines behave as in production.
    const encoder = new TextEncoder()
    const writeLine = (line: string) => Effect.sync(() => stdout.onData(encoder.encode(line + "\n")))

    yield* Effect.addFinalizer(() =>
      Effect.flatMap(
        Deferred.isDone(exitStatus),
        (done) => done ? Effect.void : exit({ exitCode: undefined, signal: "SIGTERM" })
      )
    )

    const transport: TransportShape = {
      send: (frame) =>
        Effect.suspend(() =>
          inputOpen
            ? options.onSend(parseJsonBoundary(encodeFrame(frame)))
            : Effect.fail(
              new CLIConnectionError({
                reason: "InputClosed",
                description: "Cannot write to the Claude Code CLI: its input was already closed"
              })
            )
        ),
      frames: stdout.stream,
      endInput: Effect.suspend(() => {
        if (!inputOpen) return Effect.void
        inputOpen = false
        return options.onEndInput
      }),
      terminate: Effect.flatMap(
        Deferred.isDone(exitStatus),
        (done) => done ? Effect.void : exit({ exitCode: undefined, signal: "SIGTERM" })
      ),
      exitStatus: Deferred.await(exitStatus),
      stderrTail: Effect.sync(() => stderrTail ?? ""),
      stderr: Stream.fromPubSub(stderrHub),
      pid: options.pid
    }

    return {
      transport,
      writeLine,
      writeFrame: (frame) => Effect.sync(() => stdout.onData(encoder.encode(encodeFrame(frame)))),
      writeStderr: (line) =>
        Effect.suspend(() => {
          stderrTail = (stderrTail === undefined ? line : `${stderrTail}\n${line}`).slice(-Defaults.stderrTailBytes)
          return PubSub.publish(stderrHub, line)
        }).pipe(Effect.asVoid),
      exit,
      exited: Deferred.isDone(exitStatus)
    }
  })
