// End-to-end: a budget stops the real `claude` CLI mid-turn. A looping agent calls a tool turn
// after turn (each response reports 20 000 input tokens through ScriptedModel: $0.08 at the
// model's list price); a $0.25 cap on its tenant is crossed by the fourth response, priced while
// the turn runs:
// the SDK interrupts the turn through the protocol, the stream ends with BudgetExceededError, the
// CLI's result settles the spend and the tenant's next turn does not start.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema, Stream } from "effect"
import * as Budget from "../../src/Budget.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as McpServer from "../../src/McpServer.js"
import type * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const CAP = 0.25
// 20 000 input tokens at $4 a million (the CLI's price of the scripted model), and a few output tokens.
const PER_RESPONSE = 0.08

describe("e2e: budgets", () => {
  it.scopedLive("a looping agent is stopped mid-turn by a $ cap", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const step = Tool.make("step", {
        description: "Takes one more step",
        parameters: Schema.Struct({ n: Schema.Number }),
        handler: ({ n }) => Effect.as(Ref.update(calls, (c) => c + 1), Tool.text(`step ${n} done, go on`))
      })
      const loop = McpServer.make({ name: "loop", version: "1.0.0", tools: [step] })
      let n = 0
      const model = yield* ScriptedModel.make([
        {
          match: (req) => req.kind === "main",
          reply: ScriptedModel.withUsage(
            ScriptedModel.toolUse("mcp__loop__step", { n: ++n }),
            { inputTokens: 20_000, outputTokens: 20 }
          ),
          times: Infinity
        }
      ])
      const session = yield* ClaudeAgent.session({
        ...(yield* model.options()),
        mcpServers: { loop },
        allowedTools: ["mcp__loop__step"]
      }).pipe(Budget.withAccount({ tenant: "acme" }))
      yield* session.send("Keep stepping until told otherwise")
      const seen: Array<Message.Message> = []
      const error = yield* session.receiveResponse.pipe(
        Stream.runForEach((m) => Effect.sync(() => void seen.push(m))),
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "BudgetExceededError", scope: "tenant", id: "acme", stage: "running" })
      // Crossed by the response that took it over the cap, by less than one response.
      expect(error).toHaveProperty("spent", expect.closeTo(4 * PER_RESPONSE, 3))
      expect(seen.filter((m) => m.type === "assistant")).toHaveLength(4)
      // Interrupted within one message: the CLI asked the model at most once more.
      const requests = (yield* model.mainRequests).length
      expect(requests).toBeGreaterThanOrEqual(4)
      expect(requests).toBeLessThanOrEqual(5)
      // The turn's result (read by the session, not delivered) settles the tenant's spend.
      yield* session.control.awaitRunState((run) => run.results === 1)
      const usage = yield* session.usage
      const budget = yield* Budget.Budget
      const [standing] = yield* budget.standings({ tenant: "acme" })
      expect(standing?.spent).toBeCloseTo(usage.costUsd, 9)
      expect(usage.costUsd).toBeGreaterThanOrEqual(CAP)
      expect(usage.costUsd).toBeLessThan(CAP + 2 * PER_RESPONSE)
      // The next turn does not start.
      expect(yield* Effect.flip(session.send("Once more"))).toMatchObject({ stage: "start" })
      expect((yield* model.mainRequests).length).toBe(requests)
    }).pipe(
      Effect.provide(Budget.Budget.layerMemory({ caps: [{ scope: "tenant", usd: CAP }] })),
      Effect.provide(AgentLive)
    ), 120_000)
})
