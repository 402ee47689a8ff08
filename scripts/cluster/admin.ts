// The operator's view of a cluster, from a client-only node (AgentAdmin):
//
//   npx tsx scripts/cluster/admin.ts list [limit]          conversations, most recent first
//   npx tsx scripts/cluster/admin.ts inspect <id>          owner runner, state, turns, last error
//   npx tsx scripts/cluster/admin.ts delete <id>           stop its CLI, delete its turns and stored session
//   npx tsx scripts/cluster/admin.ts runners               runners, health, turns not over on each
//   npx tsx scripts/cluster/admin.ts prune <turns> [transcripts]
//                                                          apply a retention policy once, e.g.
//                                                          `prune "7 days" "90 days"`
//
// Environment as for scripts/cluster/client.ts: DATABASE_URL, AGENT_CLUSTER_SECRET (required),
// CLUSTER_PREFIX (default "cluster"), CLUSTER_TIMINGS, AGENT_CWD (the runners' one). `inspect` and `delete` ask the
// conversation's runner (5 s at most): state `unknown` / `stopped: null` when it does not answer.
// Prints JSON (one object per line for `list` and `runners`).
import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Duration, Effect, Layer, Option } from "effect"
import { AgentAdmin, AgentCluster } from "../../src/cluster/index.js"
import { clientLayer, pgLayer, testTimings } from "./layers.js"

const usage = "usage: admin.ts list [limit] | inspect <id> | delete <id> | runners | prune <turns> [transcripts]"

const run = (command: string | undefined, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const admin = yield* AgentAdmin.AgentAdmin
    const [first, second] = args
    switch (command) {
      case "list": {
        const conversations = yield* admin.list({ limit: first === undefined ? 100 : Number(first) })
        for (const conversation of conversations) yield* Console.log(JSON.stringify(conversation))
        return
      }
      case "inspect": {
        if (first === undefined) return yield* Effect.dieMessage(usage)
        const found = yield* admin.inspect(first)
        if (Option.isNone(found)) return yield* Effect.dieMessage(`no conversation ${first} in the database`)
        return yield* Console.log(JSON.stringify(found.value, null, 2))
      }
      case "delete": {
        if (first === undefined) return yield* Effect.dieMessage(usage)
        return yield* Console.log(JSON.stringify(yield* admin.remove(first)))
      }
      case "runners": {
        for (const runner of yield* admin.runners()) yield* Console.log(JSON.stringify(runner))
        return
      }
      case "prune": {
        const turns = Option.flatMap(Option.fromNullable(first), Duration.decodeUnknown)
        const transcripts = Option.flatMap(Option.fromNullable(second), Duration.decodeUnknown)
        if (Option.isNone(turns) || (second !== undefined && Option.isNone(transcripts))) {
          return yield* Effect.dieMessage(`${usage} (durations as "7 days", "12 hours")`)
        }
        const policy: AgentAdmin.RetentionPolicy = {
          finishedTurns: turns.value,
          idleTranscripts: Option.getOrUndefined(transcripts)
        }
        return yield* Console.log(JSON.stringify(yield* admin.applyRetention(policy)))
      }
      default:
        return yield* Effect.dieMessage(usage)
    }
  })

const program = Effect.gen(function*() {
  const url = yield* Config.string("DATABASE_URL")
  const prefix = yield* Config.string("CLUSTER_PREFIX").pipe(Config.withDefault("cluster"))
  const timings = yield* Config.literal("test", "default")("CLUSTER_TIMINGS").pipe(Config.withDefault("default"))
  const cwd = yield* Config.string("AGENT_CWD").pipe(Config.withDefault(process.cwd()))
  const [command, ...args] = process.argv.slice(2)
  const Admin = AgentAdmin.layer({ prefix, cwd }).pipe(
    Layer.provide(Layer.orDie(AgentCluster.layerSessionStore({ tablePrefix: prefix }))),
    Layer.provideMerge(clientLayer({ prefix, shardingConfig: timings === "test" ? testTimings : {} })),
    Layer.provideMerge(pgLayer(url))
  )
  yield* run(command, args).pipe(Effect.provide(Admin))
})

NodeRuntime.runMain(program)
