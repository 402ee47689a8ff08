// End-to-end: spend per agent on the real `claude` CLI. A parent starts two subagents (the
// `Agent` tool) on the same model; ScriptedModel reports usage figures chosen per response, so
// the split of what the result's `modelUsage` lumps together is asserted to the token, and the
// parts add up to the result's `total_cost_usd` and token totals.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Metric, Option, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as Telemetry from "../../src/Telemetry.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Usage from "../../src/Usage.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

// The figures each scripted response reports.
const delegating = {
  inputTokens: 3000,
  outputTokens: 120,
  cacheReadInputTokens: 10_000,
  cacheCreationInputTokens: 2000
}
const answering = { inputTokens: 4000, outputTokens: 25, cacheReadInputTokens: 12_000, cacheCreationInputTokens: 100 }
const reacting = { inputTokens: 4500, outputTokens: 7, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
const subA = { inputTokens: 1500, outputTokens: 40, cacheReadInputTokens: 500, cacheCreationInputTokens: 0 }
const subB = { inputTokens: 1200, outputTokens: 60, cacheReadInputTokens: 0, cacheCreationInputTokens: 800 }

const tokensOf = (s: Usage.Spend) => ({
  inputTokens: s.inputTokens,
  outputTokens: s.outputTokens,
  cacheReadInputTokens: s.cacheReadInputTokens,
  cacheCreationInputTokens: s.cacheCreationInputTokens
})

// A model's cost is split in proportion to tokens at list-price ratios (output 5×, cache reads
// 0.1×, cache writes 1.25× an input token): a part's cost is its share of the model's.
const weightOf = (t: typeof subA) =>
  t.inputTokens + 5 * t.outputTokens + 0.1 * t.cacheReadInputTokens + 1.25 * t.cacheCreationInputTokens

const firstMessage = (tag: string) => (req: ScriptedModel.RecordedRequest) =>
  JSON.stringify(req.messages[0]).includes(tag)

describe("e2e: spend per agent and per tool", () => {
  it.scopedLive("a parent and two subagents on one model: each gets its own figures, and they add up", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { match: firstMessage("SUBTASK-A"), reply: ScriptedModel.withUsage(ScriptedModel.text("A found it"), subA) },
        { match: firstMessage("SUBTASK-B"), reply: ScriptedModel.withUsage(ScriptedModel.text("B found it"), subB) },
        {
          match: (req) =>
            ScriptedModel.toolResultCount(req) === 0 && ScriptedModel.lastUserText(req).includes("delegate"),
          reply: ScriptedModel.withUsage(
            ScriptedModel.sequence(
              ScriptedModel.toolUse("Agent", {
                description: "Look A",
                prompt: "SUBTASK-A",
                subagent_type: "general-purpose"
              }, { id: "toolu_a" }),
              ScriptedModel.toolUse("Agent", { description: "Look B", prompt: "SUBTASK-B", subagent_type: "Explore" }, {
                id: "toolu_b"
              })
            ),
            delegating
          )
        },
        {
          match: (req) => ScriptedModel.toolResultCount(req) > 0,
          reply: ScriptedModel.withUsage(ScriptedModel.text("all done"), answering)
        },
        // The CLI may run one more turn on the subagents' notifications.
        { reply: ScriptedModel.withUsage(ScriptedModel.text("noted"), reacting), times: Infinity }
      ])
      // Partial messages give each response's final output count: the parent's two responses
      // (and so the tool calls) are exact too, not estimated from their size.
      const session = yield* ClaudeAgent.session({ ...(yield* model.options()), includePartialMessages: true })
      yield* session.send("delegate")
      // Both subagents end before or after the turn's result: read up to the first result after
      // both notifications. Whichever turn their spend lands in, the session's total has it.
      let notified = 0
      const messages = yield* session.messages.pipe(
        Stream.takeUntil((m) => {
          if (m.type === "system" && m.subtype === "task_notification") notified++
          return notified === 2 && m.type === "result"
        }),
        Stream.runCollect
      )
      const results = [...messages].filter(Message.isResult)
      const last = results[results.length - 1]
      if (last === undefined) return expect.fail("no result")
      const upTo = Option.getOrThrow(Usage.sessionUpTo(last))
      const turns = results.map((r) => Option.getOrThrow(Usage.ofResult(r)))

      // The subagents, apart from each other and from the parent, to the token. They are listed in
      // the order their spend first shows, which depends on which of the two runs first: sorted here.
      const byToolUse = [...upTo.subagents].sort((a, b) => (a.toolUseId ?? "").localeCompare(b.toolUseId ?? ""))
      expect(byToolUse.map((s) => [s.toolUseId, s.agentType, tokensOf(s)])).toEqual([
        ["toolu_a", "general-purpose", subA],
        ["toolu_b", "Explore", subB]
      ])
      // In each turn, each part's cost is its share of the turn's.
      for (const turn of turns) {
        for (const part of Usage.agents(turn)) {
          const share = turn.costUsd * weightOf(tokensOf(part)) / Math.max(1, weightOf(tokensOf(turn)))
          expect(part.costUsd).toBeCloseTo(share, 12)
        }
      }
      const turnOfB = turns.find((t) => Option.isSome(Usage.subagent(t, "toolu_b")))
      const costOfB = (turnOfB?.costUsd ?? 0) * weightOf(subB) / weightOf(tokensOf(turnOfB ?? Usage.empty))
      expect(Usage.subagent(upTo, "toolu_b").pipe(Option.map((s) => s.costUsd))).toEqual(
        Option.some(expect.closeTo(costOfB, 12))
      )
      // The parent: its two responses, and the reaction to the notifications if it came first.
      const reacted = upTo.main.inputTokens > delegating.inputTokens + answering.inputTokens
      const mainResponses = reacted ? [delegating, answering, reacting] : [delegating, answering]
      expect(tokensOf(upTo.main)).toEqual({
        inputTokens: mainResponses.reduce((n, r) => n + r.inputTokens, 0),
        outputTokens: mainResponses.reduce((n, r) => n + r.outputTokens, 0),
        cacheReadInputTokens: mainResponses.reduce((n, r) => n + r.cacheReadInputTokens, 0),
        cacheCreationInputTokens: mainResponses.reduce((n, r) => n + r.cacheCreationInputTokens, 0)
      })
      // Each Agent call carries half of the response that asked for both.
      expect(upTo.tools.map((t) => [t.toolUseId, t.name, t.agentToolUseId, t.inputTokens, t.outputTokens])).toEqual([
        ["toolu_a", "Agent", undefined, 1500, 60],
        ["toolu_b", "Agent", undefined, 1500, 60]
      ])

      // The parts add up to what the result reports for the session so far: its cumulative
      // modelUsage (one model) and total_cost_usd.
      const reported = Object.values(last.modelUsage ?? {})
      expect(reported).toHaveLength(1)
      const [figures] = reported
      const parts = Usage.agents(upTo)
      const sum = (key: keyof Usage.Spend) => parts.reduce((n, p) => n + p[key], 0)
      expect(figures).toMatchObject({
        inputTokens: sum("inputTokens"),
        outputTokens: sum("outputTokens"),
        cacheReadInputTokens: sum("cacheReadInputTokens"),
        cacheCreationInputTokens: sum("cacheCreationInputTokens")
      })
      expect(Math.abs(sum("costUsd") - (last.total_cost_usd ?? 0))).toBeLessThan(1e-9)
      expect(Math.round(sum("costUsd") * 100)).toBe(Math.round((last.total_cost_usd ?? 0) * 100))

      // Each result carries its turn; the session's running total has every result read so far.
      expect(turns.reduce(Usage.combine, Usage.empty).costUsd).toBeCloseTo(upTo.costUsd, 12)
      const total = yield* session.usage
      expect(total.turns).toBeGreaterThanOrEqual(results.length)
      expect(total.costUsd).toBeGreaterThanOrEqual(upTo.costUsd - 1e-12)

      // The metrics, labelled by agent and model.
      const explore = Telemetry.agentCostUsd.pipe(
        Metric.tagged("agent", "Explore"),
        Metric.tagged("model", "claude-opus-5-5")
      )
      expect((yield* Metric.value(explore)).count).toBeCloseTo(costOfB, 12)
    }).pipe(Effect.provide(AgentLive)))
})
