// Runner processes for the multi-runner tests: each is `node --import tsx scripts/cluster/runner.ts`
// (one OS process, so `kill -9` on its pid kills the runner itself and nothing else).
import { Deferred, Duration, Effect, Exit, Layer, Schedule } from "effect"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { clientLayer, pgLayer, Probe, testTimings } from "../../scripts/cluster/layers.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { isAlive } from "../support/processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

/**
 * Where runner output goes (one file per runner, kept after the run): `CLUSTER_PG_LOGS`, else
 * `<tmp>/cluster-pg-logs`. Runners log at `RUNNER_LOG_LEVEL` (default Debug in the tests).
 */
export const logDir = process.env.CLUSTER_PG_LOGS ?? path.join(os.tmpdir(), "cluster-pg-logs")
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

const canBind = (port: number) =>
  Effect.async<boolean>((resume) => {
    const server = net.createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen(port, "127.0.0.1", () => server.close(() => resume(Effect.succeed(true))))
  })

/**
 * A port that was free a moment ago on 127.0.0.1, below Linux's ephemeral range (32768-60999):
 * a port the OS handed out for `listen(0)` can be taken the next moment as the local port of an
 * outgoing connection (the runners' own connections to Postgres), before the runner binds it.
 */
export const freePort: Effect.Effect<number> = Effect.gen(function*() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000)
    if (yield* canBind(port)) return port
  }
})

export interface RunnerProcess {
  readonly pid: number
  readonly address: string
  /** The file its output is copied to. */
  readonly logFile: string
  /** Everything the runner printed so far (stdout and stderr), for failure messages. */
  readonly output: () => string
  /** Completes with the exit code (or the signal name) when the process has ended. */
  readonly exited: Deferred.Deferred<string>
  readonly kill9: Effect.Effect<void>
  /** SIGTERM, as a process manager stops it; dies if it has not ended within 20 s. */
  readonly stop: Effect.Effect<void>
  /**
   * SIGSTOP, as a hung host or a long partition looks to the others: the process answers
   * nothing, its sockets and database sessions stay open. The scope it was started in sends
   * SIGCONT before it stops the runner.
   */
  readonly freeze: Effect.Effect<void>
  /** SIGCONT: the frozen runner runs on from where it stopped. */
  readonly thaw: Effect.Effect<void>
}

/**
 * Starts a runner on a free port and waits for its `ready` line; if it could not bind the port
 * (taken between the check and the bind), tries another. Closing the scope stops it (SIGTERM,
 * then SIGKILL if it has not ended within 10 s) and waits for it to end.
 */
export const startRunner = (options: { readonly env: Readonly<Record<string, string>> }) =>
  Effect.gen(function*() {
    for (let attempt = 1;; attempt++) {
      const port = yield* freePort
      const started = yield* Effect.either(startRunnerOn(port, options.env))
      if (started._tag === "Right") return started.right
      if (attempt >= 3 || !started.left.output.includes("EADDRINUSE")) {
        return yield* Effect.dieMessage(started.left.message)
      }
    }
  })

class NotStarted {
  readonly _tag = "NotStarted"
  constructor(readonly message: string, readonly output: string) {}
}

const startRunnerOn = (port: number, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<string>()
    const ready = yield* Deferred.make<void>()
    let output = ""
    fs.mkdirSync(logDir, { recursive: true })
    const logFile = path.join(logDir, `${env.CLUSTER_PREFIX ?? "cluster"}-${port}.log`)
    const log = fs.createWriteStream(logFile)
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        log.end(() => resume(Effect.void))
      })
    )
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        cp.spawn(process.execPath, ["--import", "tsx", runnerScript], {
          cwd: root,
          env: {
            RUNNER_LOG_LEVEL: "Debug",
            ...process.env,
            ...env,
            RUNNER_HOST: "127.0.0.1",
            RUNNER_PORT: String(port)
          },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.gen(function*() {
          if (yield* Deferred.isDone(exited)) return
          child.kill("SIGCONT")
          child.kill("SIGTERM")
          const stopped = yield* Deferred.await(exited).pipe(Effect.timeout("10 seconds"), Effect.exit)
          if (Exit.isFailure(stopped)) {
            child.kill("SIGKILL")
            yield* Deferred.await(exited)
          }
        })
    )
    const onData = (chunk: Buffer) => {
      log.write(chunk)
      if (output.length < 200_000) output += chunk.toString("utf8")
      if (output.includes(`ready 127.0.0.1:${port}\n`)) Deferred.unsafeDone(ready, Exit.void)
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code, signal) => Deferred.unsafeDone(exited, Exit.succeed(signal ?? String(code))))
    const pid = child.pid ?? -1

    yield* Effect.raceFirst(
      Deferred.await(ready),
      Effect.flatMap(Deferred.await(exited), (how) =>
        Effect.fail(new NotStarted(`runner on port ${port} ended (${how}) before it was ready:\n${output}`, output)))
    ).pipe(
      Effect.timeoutFail({
        duration: "60 seconds",
        onTimeout: () =>
          new NotStarted(`runner on port ${port} not ready after 60 s:\n${output}`, output)
      })
    )

    return {
      pid,
      address: `127.0.0.1:${port}`,
      logFile,
      output: () =>
        output,
      exited,
      kill9: Effect.gen(function*() {
        process.kill(pid, "SIGKILL")
        yield* Deferred.await(exited)
      }),
      freeze: Effect.sync(() => void process.kill(pid, "SIGSTOP")),
      thaw: Effect.sync(() => void process.kill(pid, "SIGCONT")),
      stop: Effect.gen(function*() {
        process.kill(pid, "SIGTERM")
        yield* Deferred.await(exited).pipe(
          Effect.timeoutFail({
            duration: "20 seconds",
            onTimeout: () => new Error(`runner on port ${port} did not stop on SIGTERM:\n${output}`)
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

/**
 * A client-only node of the cluster `prefix` (scoped), with the `Probe` entity's client, and where
 * each of `candidates` lives (`placement`, the runner address of each): `where` is the first
 * placement that spans both runners, once the second has joined the ring and the first released
 * its shards.
 */
export const spreadClient = (options: {
  readonly prefix: string
  readonly url: string
  readonly candidates: ReadonlyArray<string>
}) =>
  Effect.gen(function*() {
    const client = yield* Layer.build(
      clientLayer({ prefix: options.prefix, shardingConfig: testTimings }).pipe(Layer.provide(pgLayer(options.url)))
    )
    const probe = yield* Effect.provide(Probe.client, client)
    const placement = Effect.forEach(options.candidates, (id) =>
      // A volatile call sent while the runners are still trading shards can be lost: ask again.
      probe(id).Where().pipe(Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => "no answer" })), {
      concurrency: "unbounded"
    })
    const where = yield* eventually(
      Effect.filterOrFail(placement, (at) => new Set(at).size === 2),
      { within: "30 seconds", describe: () => "the shards never spread over both runners" }
    )
    return { client, probe, placement, where }
  })

/** Whether no process in `pids` is alive any more. */
export const allEnded = (pids: ReadonlyArray<number>) => pids.every((pid) => !isAlive(pid))

/** What the model is asked and answers in turn `turn` of conversation `id`. */
// The id is bracketed so that no prompt contains another's ("conversation-1" is in "conversation-10",
// and the model's rules match prompts by inclusion).
export const prompt = (turn: number, id: string) => `turn ${turn} of [${id}]`
export const answer = (turn: number, id: string) => `answer ${turn} for [${id}]`
/**
 * The second turn's answer: 240 characters streamed 4 every 100 ms (≈ 6 s), longer than a kill
 * and a takeover, or than `entityTerminationTimeout` (2 s in the test timings).
 */
export const slowAnswer = (id: string) => `${answer(2, id)} `.padEnd(240, "~")

/** The model's script for three turns of each conversation: quick, slow, quick. */
export const threeTurns = (ids: ReadonlyArray<string>): Array<ScriptedModel.Rule> =>
  ids.flatMap((id) => [
    {
      match: (r: ScriptedModel.RecordedRequest) => ScriptedModel.lastUserText(r).includes(prompt(1, id)),
      reply: ScriptedModel.text(answer(1, id)),
      times: Infinity
    },
    {
      match: (r: ScriptedModel.RecordedRequest) => ScriptedModel.lastUserText(r).includes(prompt(2, id)),
      reply: ScriptedModel.slowText(slowAnswer(id), { chunkSize: 4, delayMs: 100 }),
      times: Infinity
    },
    {
      match: (r: ScriptedModel.RecordedRequest) => ScriptedModel.lastUserText(r).includes(prompt(3, id)),
      reply: ScriptedModel.text(answer(3, id)),
      times: Infinity
    }
  ])
