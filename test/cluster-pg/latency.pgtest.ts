// What a turn costs from a client-only node: one runner process on the real CLI answering at once,
// this process as the client. The runner polls for stored messages only every 10 s (the cluster's
// own default), so a turn that reached it by that poll would take seconds: a client node's first
// sends, made before it knows which runner owns the conversation, reach the runner through the
// wake-up (the stored request's NOTIFY, which the runner LISTENs to). The figures are logged.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Layer, Scope, Stream } from "effect"
import { clientLayer, pgLayer } from "../../scripts/cluster/layers.js"
import { AgentEntity } from "../../src/cluster/index.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { databaseUrl, startRunner } from "./harness.js"

describe("cluster on PostgreSQL: latency from a client-only node", () => {
  it.scopedLive("a fresh client node's first turn is not held up by the runner's message poll", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("at once"), times: Infinity }])
      const options = yield* model.options()
      const prefix = `latency_${Date.now().toString(36)}`
      yield* startRunner({
        env: {
          ...options.env,
          DATABASE_URL: url,
          CLUSTER_PREFIX: prefix,
          CLUSTER_TIMINGS: "default",
          ENTITY_POLL_MS: "10000",
          AGENT_CWD: options.cwd
        }
      })
      const buildClient = (scope: Scope.Scope) =>
        Layer.buildWithScope(clientLayer({ prefix }).pipe(Layer.provide(pgLayer(url))), scope)
      const turnOn = (client: Effect.Effect.Success<ReturnType<typeof buildClient>>, id: string) =>
        Effect.gen(function*() {
          const start = Date.now()
          const messages = yield* AgentEntity.send(id, "hi").pipe(Stream.runCollect, Effect.provide(client))
          const result = Chunk.toArray(messages).find(Message.isResult)
          expect(result !== undefined && "result" in result ? result.result : undefined).toBe("at once")
          return Date.now() - start
        })

      // A long-lived client: the conversation's CLI is open on the runner after the first turn.
      const longLived = yield* buildClient(yield* Effect.scope)
      const same = yield* Effect.forEach([1, 2, 3, 4, 5], () => turnOn(longLived, "latency-same"))
      // Fresh client nodes (an API server just started, a CLI script): each sends at once.
      const fresh = yield* Effect.forEach([1, 2, 3, 4, 5], () =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const client = yield* buildClient(scope)
          const millis = yield* turnOn(client, "latency-same")
          yield* Scope.close(scope, Exit.void)
          return millis
        }))
      yield* Effect.log(
        `long-lived client, 5 turns: ${same.join(", ")} ms; 5 fresh client nodes: ${fresh.join(", ")} ms`
      )
      // The first turn includes the CLI's start; every later one, from any client, is a round trip
      // to a CLI already open, woken rather than polled: well under the 10 s poll.
      expect(Math.max(...same.slice(1), ...fresh)).toBeLessThan(2000)
    }).pipe(Effect.provide(NodeContext.layer)))
})
