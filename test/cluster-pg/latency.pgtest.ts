// What a turn costs from a client-only node with the cluster's default timings (10 s message
// polls): one runner process on the real CLI answering at once, this process as the client. The
// figures are logged. Measured on 2 shared cores: one conversation 10504, 338, 292, 261, 293 ms with
// the cluster's 10 s poll; 2071, 372, 594, 776, 477 ms with layerSocketRunner's 1 s.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import { clientLayer, pgLayer } from "../../scripts/cluster/layers.js"
import { AgentEntity } from "../../src/cluster/index.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { databaseUrl, startRunner } from "./harness.js"

describe("cluster on PostgreSQL: latency from a client-only node", () => {
  it.scopedLive("turns with the default timings", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("at once"), times: Infinity }])
      const options = yield* model.options()
      const prefix = `latency_${Date.now().toString(36)}`
      yield* startRunner({
        env: { ...options.env, DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "default", AGENT_CWD: options.cwd }
      })
      const client = yield* Layer.build(clientLayer({ prefix }).pipe(Layer.provide(pgLayer(url))))
      const timed = (id: string) =>
        Effect.gen(function*() {
          const start = Date.now()
          const messages = yield* AgentEntity.send(id, "hi").pipe(Stream.runCollect, Effect.provide(client))
          const result = Chunk.toArray(messages).find(Message.isResult)
          expect(result !== undefined && "result" in result ? result.result : undefined).toBe("at once")
          return Date.now() - start
        })
      const same = yield* Effect.forEach([1, 2, 3, 4, 5], () => timed("latency-same"))
      const fresh = yield* Effect.forEach([1, 2, 3, 4, 5], (i) => timed(`latency-${i}`))
      yield* Effect.log(`one conversation, 5 turns: ${same.join(", ")} ms; 5 new conversations: ${fresh.join(", ")} ms`)
      // The first turn is sent before the client knows who owns the conversation: the runner finds
      // it at its next message poll (10 s by default in @effect/cluster, 1 s in layerSocketRunner).
      expect(Math.max(...same, ...fresh)).toBeLessThan(6000)
    }).pipe(Effect.provide(NodeContext.layer)))
})
