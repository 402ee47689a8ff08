// A runner process for the failover test (test/e2e/cluster.e2e.test.ts): one SingleRunner on the
// SQLite file $DB with the AgentEntity, the real CLI with the session options $OPTS (JSON, from
// ScriptedModel), and the orphan guard. It runs the turns $TURNS (JSON [conversationId, turnId,
// prompt][]) one after the other and prints every message as a JSON line
// `{ "turnId", "message" }`, then `{ "done": true }`, and exits.
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { RunnerAddress } from "@effect/cluster"
import { Effect, Layer, Option, Stream } from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as AgentCluster from "../../src/cluster/AgentCluster.js"
import * as AgentEntity from "../../src/cluster/AgentEntity.js"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`clusterRunner: ${name} is not set`)
  return value
}

const turns: ReadonlyArray<readonly [string, string, string]> = JSON.parse(env("TURNS"))
const options = JSON.parse(env("OPTS"))

const Cluster = AgentCluster.layerSqlite({
  filename: env("DB"),
  options,
  // A dead process's shard locks expire after 4 s: the next process takes its turns over then.
  // Each process is a runner of its own address ($RUNNER_PORT; nothing listens on it).
  shardingConfig: {
    runnerAddress: Option.some(RunnerAddress.make("localhost", Number(env("RUNNER_PORT")))),
    entityMessagePollInterval: 500,
    shardLockRefreshInterval: 1000,
    shardLockExpiration: 4000
  }
}).pipe(
  Layer.provide(AgentPool.layer({ maxConcurrent: 2 })),
  Layer.provide(NodeContext.layer)
)

const print = (line: unknown) => Effect.sync(() => process.stdout.write(`${JSON.stringify(line)}\n`))

Effect.forEach(turns, ([conversationId, turnId, prompt]) =>
  AgentEntity.send(conversationId, prompt, { turnId }).pipe(
    Stream.runForEach((message) => print({ turnId, message }))
  )).pipe(
    Effect.zipRight(print({ done: true })),
    Effect.provide(Cluster),
    NodeRuntime.runMain
  )
