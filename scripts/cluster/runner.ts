// One cluster runner process on PostgreSQL: `tsx scripts/cluster/runner.ts`.
//
// Environment:
//   DATABASE_URL    postgres://… shared by every runner and client of the cluster (required)
//   RUNNER_PORT     the port this runner listens on and advertises (required)
//   RUNNER_HOST     the address it advertises and binds (default 127.0.0.1)
//   CLUSTER_PREFIX  table prefix, so several clusters can share one database (default "cluster")
//
// Prints `ready <host>:<port>` on stdout once it serves; stops cleanly on SIGINT/SIGTERM (its
// entities' scopes close, so their CLI processes end).
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer } from "effect"
import { pgLayer, ProbeLive, runnerLayer } from "./layers.js"

const program = Effect.gen(function*() {
  const url = yield* Config.string("DATABASE_URL")
  const host = yield* Config.string("RUNNER_HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.integer("RUNNER_PORT")
  const prefix = yield* Config.string("CLUSTER_PREFIX").pipe(Config.withDefault("cluster"))

  const RunnerLive = ProbeLive.pipe(
    Layer.provideMerge(runnerLayer({ host, port, prefix })),
    Layer.provide(pgLayer(url))
  )
  yield* Layer.build(RunnerLive)
  yield* Effect.sync(() => process.stdout.write(`ready ${host}:${port}\n`))
  yield* Effect.log(`runner ${host}:${port} serving (pid ${process.pid})`)
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
