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
 * The stop sequence runs when the scope closes: end stdin, wait, SIGTERM to the process group,
 * wait, SIGKILL. The CLI is started in a process group of its own (not on Windows) so that what it
 * started goes with it.
 *
 * @internal
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Deferred, Duration, Effect, Exit, Option, type Runtime, type Scope } from "effect"
import { CLIConnectionError, type CLINotFoundError } from "../../SdkError.js"
import type { ExitStatus, SubprocessConfig, TransportShape } from "../../services/Transport.js"
import * as Defaults from "../defaults.js"
import { startError } from "./errors.js"
import * as Orphans from "./orphans.js"
import { isWindows, signalGroup } from "./signals.js"
import { StderrLines } from "./stderr.js"
import { StdinFrames } from "./stdin.js"
import { StdoutFrames } from "./stdout.js"

interface Started {
  readonly child: ChildProcess
  readonly pid: number
  readonly stdin: StdinFrames
  readonly stdout: StdoutFrames
  readonly stderr: StderrLines
  readonly exited: () => ExitStatus | undefined
}

// Spawns the CLI and listens to everything it can emit before anything can be emitted: its
// pipes, its exit (which may come before this fiber runs again).
const start = (config: SubprocessConfig, runtime: Runtime.Runtime<never>, exitStatus: Deferred.Deferred<ExitStatus>) =>
  Effect.async<Started, CLINotFoundError | CLIConnectionError>((resume) => {
    let child: ChildProcess
    try {
      child = spawn(config.command, config.args, {
        stdio: ["pipe", "pipe", "pipe"],
        cwd: config.cwd,
        env: config.env,
        detached: !isWindows
      })
    } catch (defect) {
      // Some failures are thrown at once (ENOTDIR for a `cwd` that is a file, for one).
      resume(Effect.fail(startError(config, defect)))
      return
    }
    const { stderr, stdin, stdout } = child
    if (stdin === null || stdout === null || stderr === null) {
      child.kill("SIGKILL")
      resume(Effect.fail(
        new CLIConnectionError({
          reason: "SpawnFailed",
          description: `Could not start ${config.command}: no pipes to the process`
        })
      ))
      return
    }
    const pipes = {
      stdin: new StdinFrames(stdin),
      stdout: StdoutFrames.fromReadable(stdout, config.maxBufferSize),
      stderr: StderrLines.fromReadable(stderr, config.onStderr, runtime)
    }
    let status: ExitStatus | undefined
    let unregister = () => {}
    child.once("exit", (code, signal) => {
      status = { exitCode: code ?? undefined, signal: signal ?? undefined }
      unregister()
      Deferred.unsafeDone(exitStatus, Exit.succeed(status))
    })
    let spawned = false
    child.on("error", (error) => {
      // After the start, a failure (a signal that cannot be sent) is not the session's concern.
      if (!spawned) resume(Effect.fail(startError(config, error)))
    })
    child.once("spawn", () => {
      spawned = true
      const pid = child.pid
      if (pid === undefined) {
        resume(Effect.fail(
          new CLIConnectionError({
            reason: "SpawnFailed",
            description: `Could not start ${config.command}: no process id`
          })
        ))
        return
      }
      unregister = Orphans.register(pid)
      resume(Effect.succeed({ child, pid, ...pipes, exited: () => status }))
    })
  })

// Waits up to `graceMillis` for the process to exit; succeeds with whether it did. On the
// process's own event and a timer: the stop sequence runs in a finalizer, where a wait bounded
// by `Effect.timeout` would need an interruptible region (cut short by a pending interruption)
// and two fibers racing.
const exitWithin = (child: ChildProcess, exited: () => ExitStatus | undefined, graceMillis: number) =>
  Effect.async<boolean>((resume) => {
    if (exited() !== undefined) return resume(Effect.succeed(true))
    const onExit = () => {
      clearTimeout(timer)
      resume(Effect.succeed(true))
    }
    const timer = setTimeout(() => {
      child.off("exit", onExit)
      resume(Effect.succeed(exited() !== undefined))
    }, graceMillis)
    child.once("exit", onExit)
  })

// The stop sequence, run when the scope closes: end stdin, wait, SIGTERM to the group, wait,
// SIGKILL; every wait bounded by the grace period.
const stop = (grace: Duration.Duration) => ({ child, exited, pid, stderr, stdin }: Started): Effect.Effect<void> => {
  const graceMillis = Duration.toMillis(grace)
  const kill = (signal: NodeJS.Signals) =>
    Effect.sync(() => {
      if (exited() === undefined) signalGroup(child, pid, signal)
    })
  const escalate = (done: boolean, log: Effect.Effect<void>, signal: NodeJS.Signals) =>
    done
      ? Effect.succeed(true)
      : log.pipe(Effect.zipRight(kill(signal)), Effect.zipRight(exitWithin(child, exited, graceMillis)))
  const sequence = stdin.end.pipe(
    Effect.zipRight(exitWithin(child, exited, graceMillis)),
    Effect.flatMap((done) =>
      escalate(
        done,
        Effect.logDebug(`effect-claude-agent: CLI ${pid} still running after stdin EOF; SIGTERM`),
        "SIGTERM"
      )
    ),
    Effect.flatMap((done) =>
      escalate(done, Effect.logWarning(`effect-claude-agent: CLI ${pid} ignored SIGTERM; SIGKILL`), "SIGKILL")
    )
  )
  // As the platform's `Command` did: a CLI that exited with an error may have left what it
  // started (MCP servers, tool processes) in its group.
  const cleanup = Effect.sync(() => {
    const code = exited()?.exitCode
    if (code !== undefined && code !== 0 && !isWindows) signalGroup(child, pid, "SIGTERM")
  })
  return Effect.suspend(() => exited() === undefined ? Effect.asVoid(sequence) : Effect.void).pipe(
    Effect.zipRight(cleanup),
    Effect.zipRight(stderr.close)
  )
}

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
    const grace = config.closeGracePeriod === undefined
      ? Defaults.closeGracePeriod
      : Duration.decode(config.closeGracePeriod)
    const exitStatus = yield* Deferred.make<ExitStatus>()
    const started = yield* Effect.acquireRelease(start(config, runtime, exitStatus), stop(grace))
    const { child, pid, stderr, stdin, stdout } = started

    const transport: TransportShape = {
      send: stdin.send,
      frames: stdout.stream,
      endInput: stdin.end,
      terminate: Effect.suspend(() => {
        if (started.exited() === undefined) signalGroup(child, pid, "SIGTERM")
        return Effect.asVoid(Deferred.await(exitStatus))
      }),
      exitStatus: Deferred.await(exitStatus),
      stderrTail: Effect.sync(() => stderr.tail.get()),
      stderr: stderr.lines,
      pid: Option.some(pid)
    }
    return transport
  })
