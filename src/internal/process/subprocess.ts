/**
 * The subprocess `Transport`: the real CLI started with `node:child_process` (Node, Bun and Deno
 * all provide it), its pipes driven by their own events.
 *
 * Why not `@effect/platform`'s `Command`: every frame went through a writer fiber and the
 * platform's stdin `Sink` (a fiber wake-up and a channel step per write, waiting for the write's
 * callback), every read through the platform's `Readable` stream (a channel step and a pull per
 * read), and its start ran a `FileSystem.access` of the working directory, a fiber for the exit
 * code and a stream per pipe. Measured over the bench's fake CLI, dropping it took a quarter off a
 * hook round trip's CPU and a fifth off a session's set-up (README, Performance, sixth round). Here:
 * - stdout's chunks are kept as they arrive and read when the reader takes them, all at once;
 *   stdout is paused when the reader is not waiting and `READ_AHEAD_BYTES` are pending (so a
 *   reader that stops pulling — a full message queue — stops the reading) (`stdout.ts`);
 * - `send` writes on the caller's fiber (one `write` per frame, in call order, never interleaved)
 *   and waits only when the pipe asks it to (`stdin.ts`);
 * - stderr is always drained, whatever its subscribers do (`stderr.ts`).
 *
 * The spawn, the process group, the orphan hook and the stop sequence (end stdin, wait, SIGTERM to
 * the process group, wait, SIGKILL) are `child.ts`'s, shared with the relay.
 *
 * @internal
 */
import { Deferred, Duration, Effect, Exit, Option, type Runtime, type Scope } from "effect"
import type { CLIConnectionError, CLINotFoundError } from "../../SdkError.js"
import type { ExitStatus, SubprocessConfig, TransportShape } from "../../services/Transport.js"
import * as Defaults from "../defaults.js"
import * as Child from "./child.js"
import { StderrLines } from "./stderr.js"
import { StdinFrames } from "./stdin.js"
import { StdoutFrames } from "./stdout.js"

const options = (
  config: SubprocessConfig,
  runtime: Runtime.Runtime<never>,
  exitStatus: Deferred.Deferred<ExitStatus>
): Child.Options<{ readonly stdin: StdinFrames; readonly stdout: StdoutFrames; readonly stderr: StderrLines }> => ({
  command: config.command,
  args: config.args,
  cwd: config.cwd,
  env: config.env,
  grace: config.closeGracePeriod === undefined ? Defaults.closeGracePeriod : Duration.decode(config.closeGracePeriod),
  attach: (pipes) => ({
    stdin: new StdinFrames(pipes.stdin),
    stdout: StdoutFrames.fromReadable(pipes.stdout, config.maxBufferSize),
    stderr: StderrLines.fromReadable(pipes.stderr, config.onStderr, runtime)
  }),
  endInput: ({ stdin }) => stdin.end,
  onExit: (status) => Deferred.unsafeDone(exitStatus, Exit.succeed(status)),
  afterStop: (process) =>
    Effect.suspend(() => {
      Child.cleanUpAfterFailure(process)
      return process.attached.stderr.close
    })
})

/**
 * Spawns the CLI in the current scope. The start and the stop sequence are one resource,
 * acquired and released atomically: no interruption can leave the process behind.
 *
 * @internal
 */
export const makeSubprocess = (
  config: SubprocessConfig
): Effect.Effect<TransportShape, CLINotFoundError | CLIConnectionError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const exitStatus = yield* Deferred.make<ExitStatus>()
    const process = yield* Child.spawnScoped(options(config, runtime, exitStatus))
    const { stderr, stdin, stdout } = process.attached
    const transport: TransportShape = {
      send: stdin.send,
      frames: stdout.stream,
      endInput: stdin.end,
      terminate: Effect.suspend(() => {
        process.terminate()
        return Effect.asVoid(Deferred.await(exitStatus))
      }),
      exitStatus: Deferred.await(exitStatus),
      stderrTail: Effect.sync(() => stderr.tail.get()),
      stderr: stderr.lines,
      pid: Option.some(process.pid)
    }
    return transport
  })
