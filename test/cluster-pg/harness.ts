// Runner processes for the multi-runner tests: each is `node --import tsx scripts/cluster/runner.ts`
// (one OS process, so `kill -9` on its pid kills the runner itself and nothing else).
import { Deferred, Duration, Effect, Exit, Schedule } from "effect"
import * as cp from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { isAlive } from "../support/processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const runnerScript = path.join(root, "scripts", "cluster", "runner.ts")

/** `DATABASE_URL` as set by `scripts/ci/with-postgres.sh`; these tests have no other database. */
export const databaseUrl = Effect.suspend(() => {
  const url = process.env.DATABASE_URL
  return url === undefined || url === ""
    ? Effect.dieMessage(
      "DATABASE_URL is not set: run these tests with `npm run test:cluster-pg` (scripts/ci/with-postgres.sh starts a database)"
    )
    : Effect.succeed(url)
})

/** A port that was free a moment ago on 127.0.0.1. */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = address !== null && typeof address === "object" ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

export interface RunnerProcess {
  readonly pid: number
  readonly address: string
  /** Everything the runner printed so far (stdout and stderr), for failure messages. */
  readonly output: () => string
  /** Completes with the exit code (or the signal name) when the process has ended. */
  readonly exited: Deferred.Deferred<string>
  readonly kill9: Effect.Effect<void>
  /** SIGTERM, as a process manager stops it; dies if it has not ended within 20 s. */
  readonly stop: Effect.Effect<void>
}

/**
 * Starts a runner and waits for its `ready` line. Closing the scope stops it (SIGTERM, then
 * SIGKILL if it has not ended within 10 s) and waits for it to end.
 */
export const startRunner = (options: {
  readonly port: number
  readonly env: Readonly<Record<string, string>>
}) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<string>()
    const ready = yield* Deferred.make<void>()
    let output = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        cp.spawn(process.execPath, ["--import", "tsx", runnerScript], {
          cwd: root,
          env: { ...process.env, ...options.env, RUNNER_HOST: "127.0.0.1", RUNNER_PORT: String(options.port) },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.gen(function*() {
          if (yield* Deferred.isDone(exited)) return
          child.kill("SIGTERM")
          const stopped = yield* Deferred.await(exited).pipe(Effect.timeout("10 seconds"), Effect.exit)
          if (Exit.isFailure(stopped)) {
            child.kill("SIGKILL")
            yield* Deferred.await(exited)
          }
        })
    )
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (output.includes(`ready 127.0.0.1:${options.port}\n`)) Deferred.unsafeDone(ready, Exit.void)
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code, signal) => Deferred.unsafeDone(exited, Exit.succeed(signal ?? String(code))))
    const pid = child.pid ?? -1

    yield* Effect.raceFirst(
      Deferred.await(ready),
      Effect.flatMap(Deferred.await(exited), (how) =>
        Effect.dieMessage(`runner on port ${options.port} ended (${how}) before it was ready:\n${output}`))
    ).pipe(
      Effect.timeoutFail({
        duration: "60 seconds",
        onTimeout: () => new Error(`runner on port ${options.port} not ready after 60 s:\n${output}`)
      }),
      Effect.orDie
    )

    return {
      pid,
      address: `127.0.0.1:${options.port}`,
      output: () => output,
      exited,
      kill9: Effect.gen(function*() {
        process.kill(pid, "SIGKILL")
        yield* Deferred.await(exited)
      }),
      stop: Effect.gen(function*() {
        process.kill(pid, "SIGTERM")
        yield* Deferred.await(exited).pipe(
          Effect.timeoutFail({
            duration: "20 seconds",
            onTimeout: () => new Error(`runner on port ${options.port} did not stop on SIGTERM:\n${output}`)
          }),
          Effect.orDie
        )
      })
    } satisfies RunnerProcess
  })

/**
 * Waits until `check` holds, re-checking every `every`; dies with `describe()` after `within`.
 * For conditions outside the test's control (the process table, a lock expiring in another
 * process), where nothing can be awaited directly.
 */
export const eventually = <A, E, R>(
  check: Effect.Effect<A, E, R>,
  options: {
    readonly within: Duration.DurationInput
    readonly every?: Duration.DurationInput
    readonly describe: () => string
  }
) =>
  check.pipe(
    Effect.retry(Schedule.spaced(options.every ?? "200 millis")),
    Effect.timeoutFail({
      duration: options.within,
      onTimeout: () => new Error(`not within ${Duration.format(options.within)}: ${options.describe()}`)
    }),
    Effect.orDie
  )

/** Whether no process in `pids` is alive any more. */
export const allEnded = (pids: ReadonlyArray<number>) => pids.every((pid) => !isAlive(pid))
