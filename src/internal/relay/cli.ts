/**
 * The CLI the relay starts for one connection: spawned in a process group of its own (so what it
 * starts goes with it), registered with the orphan hook, its stdout and stderr handed on as raw
 * chunks (the host's reader frames them), and stopped as the subprocess transport stops it: end
 * stdin, wait, SIGTERM to the group, wait, SIGKILL.
 *
 * @internal
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Deferred, Duration, Effect, Exit, type Scope } from "effect"
import { CLIConnectionError, type CLINotFoundError } from "../../SdkError.js"
import { startError } from "../process/errors.js"
import * as Orphans from "../process/orphans.js"
import { isWindows, signalGroup } from "../process/signals.js"

/**
 * How the CLI ended.
 *
 * @internal
 */
export interface Ended {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * What the connection needs of the running CLI.
 *
 * @internal
 */
export interface RelayCli {
  readonly pid: number
  readonly stdout: NodeJS.ReadableStream
  /** Writes bytes to stdin (dropped once stdin is closed). */
  readonly write: (bytes: Uint8Array) => void
  readonly endInput: () => void
  /** SIGTERM to the group. */
  readonly terminate: () => void
  /** Completes once the CLI has exited and its stdout and stderr are closed. */
  readonly closed: Effect.Effect<Ended>
}

/**
 * What to start and where its output goes.
 *
 * @internal
 */
export interface Spawn {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly grace: Duration.Duration
  readonly onStdout: (bytes: Uint8Array) => void
  readonly onStderr: (bytes: Uint8Array) => void
}

const open = (options: Spawn, closed: Deferred.Deferred<Ended>) =>
  Effect.async<{ readonly child: ChildProcess; readonly pid: number }, CLINotFoundError | CLIConnectionError>(
    (resume) => {
      const config = {
        command: options.command,
        args: options.args,
        env: options.env,
        cwd: options.cwd,
        maxBufferSize: 0
      }
      let child: ChildProcess
      try {
        child = spawn(options.command, options.args, {
          stdio: ["pipe", "pipe", "pipe"],
          cwd: options.cwd,
          env: options.env,
          detached: !isWindows
        })
      } catch (defect) {
        resume(Effect.fail(startError(config, defect)))
        return
      }
      let spawned = false
      child.on("error", (error) => {
        if (!spawned) resume(Effect.fail(startError(config, error)))
      })
      // A write after the CLI is gone fails with EPIPE: the exit frame tells the host.
      child.stdin?.on("error", () => {})
      child.stdout?.on("data", options.onStdout)
      child.stderr?.on("data", options.onStderr)
      child.once("spawn", () => {
        spawned = true
        const pid = child.pid
        if (pid === undefined) {
          resume(Effect.fail(new CLIConnectionError({ reason: "SpawnFailed", description: "no process id" })))
          return
        }
        const unregister = Orphans.register(pid)
        child.once("close", (code, signal) => {
          unregister()
          Deferred.unsafeDone(closed, Exit.succeed({ code, signal }))
        })
        resume(Effect.succeed({ child, pid }))
      })
    }
  )

const exitedWithin = (child: ChildProcess, millis: number) =>
  Effect.async<boolean>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(true))
    const onExit = () => {
      clearTimeout(timer)
      resume(Effect.succeed(true))
    }
    const timer = setTimeout(() => {
      child.off("exit", onExit)
      resume(Effect.succeed(false))
    }, millis)
    child.once("exit", onExit)
  })

const stop = (grace: Duration.Duration) => ({ child, pid }: { readonly child: ChildProcess; readonly pid: number }) => {
  const millis = Duration.toMillis(grace)
  const escalate = (signal: NodeJS.Signals) => (done: boolean) =>
    done ? Effect.succeed(true) : Effect.zipRight(
      Effect.sync(() => signalGroup(child, pid, signal)),
      exitedWithin(child, millis)
    )
  return Effect.sync(() => child.stdin?.end()).pipe(
    Effect.zipRight(exitedWithin(child, millis)),
    Effect.flatMap(escalate("SIGTERM")),
    Effect.flatMap(escalate("SIGKILL")),
    Effect.asVoid
  )
}

/**
 * Starts the CLI in the current scope; closing the scope runs the stop sequence.
 *
 * @internal
 */
export const start = (options: Spawn): Effect.Effect<RelayCli, CLINotFoundError | CLIConnectionError, Scope.Scope> =>
  Effect.gen(function*() {
    const closed = yield* Deferred.make<Ended>()
    const { child, pid } = yield* Effect.acquireRelease(open(options, closed), stop(options.grace))
    const stdin = child.stdin
    const stdout = child.stdout
    if (stdin === null || stdout === null) {
      return yield* new CLIConnectionError({ reason: "SpawnFailed", description: "no pipes to the process" })
    }
    return {
      pid,
      stdout,
      write: (bytes) => {
        if (stdin.writable) stdin.write(bytes)
      },
      endInput: () => {
        stdin.end()
      },
      terminate: () => {
        if (child.exitCode === null && child.signalCode === null) signalGroup(child, pid, "SIGTERM")
      },
      closed: Deferred.await(closed)
    }
  })
