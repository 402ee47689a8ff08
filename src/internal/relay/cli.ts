/**
 * The CLI the relay starts for one connection: started and stopped by `process/child.ts`, as the
 * subprocess transport's is (own process group, orphan hook, end stdin, wait, SIGTERM to the group,
 * wait, SIGKILL), its stdout and stderr handed on as raw chunks (the host's reader frames them).
 *
 * @internal
 */
import { Deferred, type Duration, Effect, Exit, type Scope } from "effect"
import type { CLIConnectionError, CLINotFoundError } from "../../SdkError.js"
import * as Child from "../process/child.js"

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

/**
 * Starts the CLI in the current scope; closing the scope runs the stop sequence.
 *
 * @internal
 */
export const start = (options: Spawn): Effect.Effect<RelayCli, CLINotFoundError | CLIConnectionError, Scope.Scope> =>
  Effect.gen(function*() {
    const closed = yield* Deferred.make<Ended>()
    const process = yield* Child.spawnScoped({
      command: options.command,
      args: options.args,
      cwd: options.cwd,
      env: options.env,
      grace: options.grace,
      attach: ({ stderr, stdin, stdout }, child) => {
        // A write after the CLI is gone fails with EPIPE: the exit frame tells the host.
        stdin.on("error", () => {})
        stdout.on("data", options.onStdout)
        stderr.on("data", options.onStderr)
        child.once("close", (code, signal) => Deferred.unsafeDone(closed, Exit.succeed({ code, signal })))
        return { stdin, stdout }
      },
      endInput: ({ stdin }) => Effect.sync(() => stdin.end()),
      forgetOn: "close",
      logPrefix: "effect-claude-agent relay"
    })
    const { stdin, stdout } = process.attached
    return {
      pid: process.pid,
      stdout,
      write: (bytes) => {
        if (stdin.writable) stdin.write(bytes)
      },
      endInput: () => {
        stdin.end()
      },
      terminate: process.terminate,
      closed: Deferred.await(closed)
    }
  })
