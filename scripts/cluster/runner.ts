// One cluster runner process on PostgreSQL: `tsx scripts/cluster/runner.ts`. It serves the
// `AgentSession` entity (conversations with the `claude` CLI, at most AGENT_MAX_CONCURRENT CLI
// processes at once) and the `Probe` entity of scripts/cluster/layers.ts.
//
// Environment:
//   DATABASE_URL          postgres://… shared by every runner and client of the cluster (required)
//   AGENT_CLUSTER_SECRET  the cluster's shared secret, the same on every runner and client, at
//                         least 32 bytes (`openssl rand -base64 32`) (required: without it the
//                         runner does not start). Every connection to this runner must prove it
//                         before any request is read.
//   RUNNER_PORT           the port this runner listens on and advertises (required)
//   RUNNER_HOST           the address it advertises and binds (default 127.0.0.1)
//   CLUSTER_PREFIX        table prefix, so several clusters can share one database (default "cluster")
//   AGENT_CWD             the CLI's working directory (default: this process's); the same path on
//                         every runner, since the CLI files transcripts under a folder named after it
//   AGENT_MAX_CONCURRENT  CLI processes at once on this runner (default 8)
//   AGENT_ASK_CLIENT      tool names, comma-separated, whose uses wait for the client's decision
//                         (`askClient`; default: none). They wait in the approval store
//                         `<prefix>_approvals` on the cluster's database, so the wait survives
//                         this runner (`AnswerPermission` + `Continue` from any node).
//   AGENT_PERMISSION_TIMEOUT  how long such a use waits before it is decided `expired`
//                         (default: the approval store's 24 hours)
//   RUNNER_LOG_LEVEL      minimum log level (default Info)
//   CLUSTER_TIMINGS       "test": the short lock expiry and polls of `testTimings`; otherwise the
//                         socket layout's defaults (`AgentCluster.socketTimings`: 15 s lease, 1 s
//                         message polls)
//   ENTITY_POLL_MS        the message poll interval (entityMessagePollInterval), over the timings
//   AGENT_RETENTION_TURNS        delete finished turns' messages and replies this long after
//                                they ended, e.g. "7 days" (default: keep them)
//   AGENT_RETENTION_TRANSCRIPTS  delete the stored sessions of conversations not written for this
//                                long, e.g. "90 days"
//                                (default: keep them)
//   AGENT_RETENTION_INTERVAL     how often the retention runs (default "1 hour")
// The CLI inherits the rest of the environment (HOME, CLAUDE_CONFIG_DIR, ANTHROPIC_BASE_URL, …).
//
// Prints `ready <host>:<port>` on stdout once it serves; stops cleanly on SIGINT/SIGTERM (its
// entities' scopes close, so their CLI processes end). If it is killed outright, the
// OrphanGuard watchdog kills the CLI processes it leaves behind.
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Config, Effect, Layer, Logger, LogLevel, Option } from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as ApprovalStores from "../../src/layers/ApprovalStores.js"
import { AgentAdmin, AgentCluster, AgentEntity, OrphanGuard } from "../../src/cluster/index.js"
import { pgLayer, ProbeLive, runnerLayer, testTimings } from "./layers.js"

const program = Effect.gen(function*() {
  const url = yield* Config.string("DATABASE_URL")
  const host = yield* Config.string("RUNNER_HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.integer("RUNNER_PORT")
  const prefix = yield* Config.string("CLUSTER_PREFIX").pipe(Config.withDefault("cluster"))
  const cwd = yield* Config.string("AGENT_CWD").pipe(Config.withDefault(process.cwd()))
  const maxConcurrent = yield* Config.integer("AGENT_MAX_CONCURRENT").pipe(Config.withDefault(8))
  const timings = yield* Config.literal("test", "default")("CLUSTER_TIMINGS").pipe(Config.withDefault("default"))
  const pollMillis = yield* Config.option(Config.integer("ENTITY_POLL_MS"))
  const shardingConfig = {
    ...(timings === "test" ? testTimings : {}),
    ...Option.match(pollMillis, { onNone: () => ({}), onSome: (millis) => ({ entityMessagePollInterval: millis }) })
  }
  const keepTurns = yield* Config.option(Config.duration("AGENT_RETENTION_TURNS"))
  const keepTranscripts = yield* Config.option(Config.duration("AGENT_RETENTION_TRANSCRIPTS"))
  const interval = yield* Config.duration("AGENT_RETENTION_INTERVAL").pipe(Config.withDefault("1 hour"))
  const askTools = (yield* Config.string("AGENT_ASK_CLIENT").pipe(Config.withDefault(""))).split(",").filter((t) =>
    t.length > 0
  )
  const permissionTimeout = yield* Config.option(Config.duration("AGENT_PERMISSION_TIMEOUT"))

  // The conversations' sessions: tables `<prefix>_sessions` and `<prefix>_entries`.
  const store = Layer.orDie(AgentCluster.layerSessionStore({ tablePrefix: prefix }))
  // Tool uses the client decides wait in the approval store, on the cluster's database.
  const approvals = askTools.length === 0
    ? Layer.empty
    : Layer.orDie(
      Layer.unwrapEffect(
        Effect.map(SqlClient.SqlClient, (sql) => ApprovalStores.layerSql(sql, { tablePrefix: prefix }))
      )
    )
  const Agents = AgentEntity.layer({
    options: { cwd },
    ...(askTools.length === 0 ? {} : { askClient: (toolName: string) => askTools.includes(toolName) }),
    ...Option.match(permissionTimeout, { onNone: () => ({}), onSome: (timeout) => ({ permissionTimeout: timeout }) })
  }).pipe(
    Layer.provide(approvals),
    Layer.provide(AgentPool.layer({ maxConcurrent })),
    // The conversations travel with their sessions through the cluster's own database.
    Layer.provide(store),
    Layer.provide(OrphanGuard.layerWatchdog),
    Layer.provide(NodeContext.layer)
  )

  const Retention = Option.isNone(keepTurns) && Option.isNone(keepTranscripts)
    ? Layer.empty
    : AgentAdmin.layerRetention({
      finishedTurns: Option.getOrUndefined(keepTurns),
      idleTranscripts: Option.getOrUndefined(keepTranscripts),
      interval
    }).pipe(Layer.provide(AgentAdmin.layer({ prefix, cwd })), Layer.provide(store))

  const RunnerLive = Layer.mergeAll(Agents, ProbeLive, Retention).pipe(
    Layer.provideMerge(runnerLayer({ host, port, prefix, shardingConfig })),
    Layer.provideMerge(pgLayer(url))
  )
  yield* Layer.build(RunnerLive)
  yield* Effect.sync(() => process.stdout.write(`ready ${host}:${port}\n`))
  yield* Effect.log(`runner ${host}:${port} serving (pid ${process.pid})`)
  return yield* Effect.never
}).pipe(Effect.scoped)

const main = Effect.gen(function*() {
  const level = yield* Config.logLevel("RUNNER_LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
  return yield* Logger.withMinimumLogLevel(program, level)
})

NodeRuntime.runMain(main)
