/**
 * One CLI process as a scoped resource, shared by the subprocess transport and the relay: spawned
 * in a process group of its own (not on Windows) so that what it starts goes with it, start errors
 * typed, registered with the orphan hook while it runs, and stopped when the scope closes: end its
 * input, wait, SIGTERM to the group, wait, SIGKILL, every wait bounded by the grace period.
 *
 * What reads the pipes is the caller's: `attach` runs synchronously right after the spawn, before
 * any pipe or the process can emit.
 *
 * @internal
 */
import { type ChildProcess, spawn } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { Duration, Effect, Scope } from "effect"
import { CLIConnectionError, type CLINotFoundError } from "../../SdkError.js"
import type { ExitStatus } from "../../services/Transport.js"
import { startError } from "./errors.js"
import * as Orphans from "./orphans.js"
import { isWindows, signalGroup } from "./signals.js"

/**
 * The process's three pipes.
 *
 * @internal
 */
export interface Pipes {
  readonly stdin: Writable
  readonly stdout: Readable
  readonly stderr: Readable
}

/**
 * What to start, how to read it and what to do around its stop.
 *
 * @internal
 */
export interface Options<A> {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly grace: Duration.Duration
  /** Listens to the pipes; runs before anything can be emitted. */
  readonly attach: (pipes: Pipes, child: ChildProcess) => A
  /** Ends the process's input: the first step of the stop sequence. */
  readonly endInput: (attached: A) => Effect.Effect<void>
  /** Called once, on the process's exit. */
  readonly onExit?: ((status: ExitStatus) => void) | undefined
  /** Runs after the stop sequence (also when the process had exited before it). */
  readonly afterStop?: ((process: Child<A>) => Effect.Effect<void>) | undefined
  /**
   * When the orphan hook forgets the process: on its exit, or once its pipes are closed too
   * (what it started may still hold them).
   */
  readonly forgetOn?: "exit" | "close" | undefined
  /** Prefix of the escalation's log lines. */
  readonly logPrefix?: string | undefined
}

/**
 * A started process.
 *
 * @internal
 */
export interface Child<A> {
  readonly child: ChildProcess
  readonly pid: number
  readonly attached: A
  /** How it exited, once it has. */
  readonly exited: () => ExitStatus | undefined
  /** SIGTERM to the group, unless it has exited. */
  readonly terminate: () => void
}

const spawnFailed = (command: string, why: string) =>
  new CLIConnectionError({ reason: "SpawnFailed", description: `Could not start ${command}: ${why}` })

const start = <A>(options: Options<A>) =>
  Effect.async<Child<A>, CLINotFoundError | CLIConnectionError>((resume) => {
    let child: ChildProcess
    try {
      child = spawn(options.command, options.args, {
        stdio: ["pipe", "pipe", "pipe"],
        cwd: options.cwd,
        env: options.env,
        detached: !isWindows
      })
    } catch (defect) {
      // Some failures are thrown at once (ENOTDIR for a `cwd` that is a file, for one).
      resume(Effect.fail(startError(options, defect)))
      return
    }
    const { stderr, stdin, stdout } = child
    if (stdin === null || stdout === null || stderr === null) {
      child.kill("SIGKILL")
      resume(Effect.fail(spawnFailed(options.command, "no pipes to the process")))
      return
    }
    const attached = options.attach({ stdin, stdout, stderr }, child)
    let status: ExitStatus | undefined
    let forget = () => {}
    child.once(options.forgetOn ?? "exit", () => forget())
    child.once("exit", (code, signal) => {
      status = { exitCode: code ?? undefined, signal: signal ?? undefined }
      options.onExit?.(status)
    })
    let spawned = false
    child.on("error", (error) => {
      // After the start, a failure (a signal that cannot be sent) is not the caller's concern.
      if (!spawned) resume(Effect.fail(startError(options, error)))
    })
    child.once("spawn", () => {
      spawned = true
      const pid = child.pid
      if (pid === undefined) return resume(Effect.fail(spawnFailed(options.command, "no process id")))
      forget = Orphans.register(pid)
      const exited = () => status
      resume(Effect.succeed({
        child,
        pid,
        attached,
        exited,
        terminate: () => {
          if (status === undefined) signalGroup(child, pid, "SIGTERM")
        }
      }))
    })
  })

// Waits up to `graceMillis` for the process to exit; succeeds with whether it did. On the
// process's own event and a timer: the stop sequence runs in a finalizer, where a wait bounded
// by `Effect.timeout` would need an interruptible region (cut short by a pending interruption)
// and two fibers racing.
const exitWithin = <A>(process: Child<A>, graceMillis: number) =>
  Effect.async<boolean>((resume) => {
    if (process.exited() !== undefined) return resume(Effect.succeed(true))
    const onExit = () => {
      clearTimeout(timer)
      resume(Effect.succeed(true))
    }
    const timer = setTimeout(() => {
      process.child.off("exit", onExit)
      resume(Effect.succeed(process.exited() !== undefined))
    }, graceMillis)
    process.child.once("exit", onExit)
  })

const stop = <A>(options: Options<A>) => (process: Child<A>): Effect.Effect<void> => {
  const graceMillis = Duration.toMillis(options.grace)
  const prefix = options.logPrefix ?? "effect-claude-agent"
  const escalate =
    (signal: NodeJS.Signals, log: (message: string) => Effect.Effect<void>, why: string) => (done: boolean) =>
      done ? Effect.succeed(true) : log(`${prefix}: CLI ${process.pid} ${why}; ${signal}`).pipe(
        Effect.zipRight(Effect.sync(() => {
          if (process.exited() === undefined) signalGroup(process.child, process.pid, signal)
        })),
        Effect.zipRight(exitWithin(process, graceMillis))
      )
  const sequence = options.endInput(process.attached).pipe(
    Effect.zipRight(exitWithin(process, graceMillis)),
    Effect.flatMap(escalate("SIGTERM", Effect.logDebug, "still running after stdin EOF")),
    Effect.flatMap(escalate("SIGKILL", Effect.logWarning, "ignored SIGTERM"))
  )
  const stopped = Effect.suspend(() => process.exited() === undefined ? Effect.asVoid(sequence) : Effect.void)
  const { afterStop } = options
  return afterStop === undefined
    ? stopped
    : Effect.zipRight(stopped, Effect.suspend(() => afterStop(process)))
}

/**
 * Spawns the process in the current scope. The start and the stop sequence are one resource,
 * acquired and released atomically: no interruption can leave the process behind. The stop is the
 * scope's own finalizer, uninterruptible as `Effect.acquireRelease`'s release is, without the diff
 * and patch of the fiber's refs that `acquireRelease` runs around it.
 *
 * @internal
 */
export const spawnScoped = <A>(
  options: Options<A>
): Effect.Effect<Child<A>, CLINotFoundError | CLIConnectionError, Scope.Scope> =>
  Effect.uninterruptible(Effect.flatMap(Effect.scope, (scope) =>
    Effect.tap(
      start(options),
      (process) => Scope.addFinalizer(scope, Effect.uninterruptible(stop(options)(process)))
    )))

/**
 * Ends what a process that failed left in its group (MCP servers, tool processes), as the
 * platform's `Command` does; nothing after a clean exit, nothing on Windows.
 *
 * @internal
 */
export const cleanUpAfterFailure = <A>(process: Child<A>): void => {
  const code = process.exited()?.exitCode
  if (code !== undefined && code !== 0 && !isWindows) signalGroup(process.child, process.pid, "SIGTERM")
}
