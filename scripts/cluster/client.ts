// A client-only node: sends one turn to a conversation and prints its messages as they stream.
//
//   DATABASE_URL=postgres://… AGENT_CLUSTER_SECRET=… npx tsx scripts/cluster/client.ts <conversation-id> <prompt…>
//
// It never registers as a runner and owns no shards: the conversation runs on whichever runner
// owns it (scripts/cluster/runner.ts). AGENT_CLUSTER_SECRET (the runners' secret: the runners refuse
// a node that cannot prove it), CLUSTER_PREFIX and CLUSTER_TIMINGS as for the runners.
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Stream } from "effect"
import { AgentEntity } from "../../src/cluster/index.js"
import * as Message from "../../src/schema/Message.js"
import { clientLayer, pgLayer, testTimings } from "./layers.js"

const program = Effect.gen(function*() {
  const url = yield* Config.string("DATABASE_URL")
  const prefix = yield* Config.string("CLUSTER_PREFIX").pipe(Config.withDefault("cluster"))
  const timings = yield* Config.literal("test", "default")("CLUSTER_TIMINGS").pipe(Config.withDefault("default"))
  const [conversationId, ...words] = process.argv.slice(2)
  if (conversationId === undefined || words.length === 0) {
    return yield* Effect.dieMessage("usage: client.ts <conversation-id> <prompt…>")
  }
  yield* AgentEntity.send(conversationId, words.join(" ")).pipe(
    Stream.runForEach((message) =>
      Effect.sync(() => {
        if (Message.isAssistant(message)) process.stdout.write(`${Message.assistantText(message)}\n`)
        else if (Message.isResult(message)) process.stdout.write(`[${message.subtype}]\n`)
      })
    ),
    Effect.provide(clientLayer({ prefix, shardingConfig: timings === "test" ? testTimings : {} })),
    Effect.provide(pgLayer(url))
  )
})

NodeRuntime.runMain(program)
