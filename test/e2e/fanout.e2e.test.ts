// The README's `npm run example:fanout`, run offline by the suite so it cannot rot: a planner, three
// workers with their own in-process tools on an AgentPool of 2, and a reviewer, each a real
// `claude` process against ScriptedModel.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FINAL_PLAN, MAX_CONCURRENT, PoolLive, runOffline, type SpanNode } from "../../scripts/examples/fanout.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"

describe("e2e: the fan-out example (npm run example:fanout)", () => {
  it.scopedLive("plans, runs the workers on the pool in parallel with their tools, merges, and prints the usage", () =>
    Effect.gen(function*() {
      let printed = ""
      const run = yield* runOffline((text) => {
        printed += text
      })

      // The planner's structured plan drove the fan-out; every agent's run succeeded.
      expect(run.plan.subtasks.map((s) => s.worker)).toEqual(["weather", "budget", "sights"])
      expect(run.runs.map((r) => [r.agent, r.result.subtype, r.result.is_error])).toEqual([
        ["planner", "success", false],
        ["weather", "success", false],
        ["budget", "success", false],
        ["sights", "success", false],
        ["reviewer", "success", false]
      ])
      expect(run.final).toBe(FINAL_PLAN)

      // Each worker's tool ran in this process, and its output went back to the model.
      const sent = JSON.stringify(run.requests.map((r) => r.messages))
      expect(sent).toContain("Saturday: 24°C, sunny; Sunday: 21°C, breezy")
      expect(sent).toContain("600 EUR = 648.00 USD (rate 1.08)")
      expect(sent).toContain("Belém Tower, Jerónimos Monastery, São Jorge Castle")
      // The reviewer was given every worker's answer.
      const review = run.requests.find((r) => ScriptedModel.lastUserText(r).includes("You are the reviewer."))
      const reviewPrompt = review === undefined ? "" : ScriptedModel.lastUserText(review)
      for (const worker of run.runs.slice(1, 4)) {
        expect(worker.answer.length).toBeGreaterThan(0)
        expect(reviewPrompt).toContain(`## ${worker.agent}\n${worker.answer}`)
      }

      // The workers ran in parallel, within the pool's limit.
      expect(run.peakProcesses).toBe(MAX_CONCURRENT)
      // Live progress per agent, then the plan and the usage table.
      expect(printed).toContain("[planner ] plan: weather, budget, sights")
      expect(printed).toContain("[weather ] → mcp__weather__forecast {\"city\":\"Lisbon\",\"days\":2}")
      expect(printed).toContain("[budget  ] ← 600 EUR = 648.00 USD (rate 1.08)")
      expect(printed).toContain("[sights  ] says: Belém Tower, the Jerónimos Monastery and São Jorge Castle.")
      expect(printed).toContain(`Plan:\n${FINAL_PLAN}\n`)
      for (const agent of ["planner", "weather", "budget", "sights", "reviewer"]) {
        expect(printed).toMatch(new RegExp(`^${agent} +[12] +\\d+ ms +\\d+ +\\d+ +\\$\\d+\\.\\d{4}$`, "m"))
      }
      expect(printed).toMatch(/^total +9 +\d+ ms +\d+ +\d+ +\$\d+\.\d{4}$/m)
      expect(printed).toMatch(/at most 2 CLI processes ran at once/)
      expect(claudePids(run.home)).toEqual([])

      // The span tree: fanout → each agent → its session → its turn(s) → the worker's tool call,
      // one trace; the turns carry the result's cost and tokens.
      const shape = (node: SpanNode): unknown => ({ [node.name]: node.children.map(shape) })
      const agent = (name: string, tool?: string) => ({
        [`agent ${name}`]: [{
          "ClaudeAgent.session": [{ "invoke_agent claude-code": tool === undefined ? [] : [{ [`Tool.${tool}`]: [] }] }]
        }]
      })
      const agents = run.spans.children
      expect(run.spans.name).toBe("fanout")
      expect(agents.map((a) => a.name)).toHaveLength(5)
      expect(shape(agents[0]!)).toEqual(agent("planner"))
      expect(shape(agents[4]!)).toEqual(agent("reviewer"))
      // The workers started in parallel, in whatever order they reached the pool.
      const byName = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b))
      expect(agents.slice(1, 4).map(shape).sort(byName)).toEqual(
        [agent("budget", "convert"), agent("sights", "search"), agent("weather", "forecast")].sort(byName)
      )
      const all = (node: SpanNode): ReadonlyArray<SpanNode> => [node, ...node.children.flatMap(all)]
      expect(new Set(all(run.spans).map((n) => n.span.traceId)).size).toBe(1)
      const turns = all(run.spans).filter((n) => n.name === "invoke_agent claude-code")
      expect(turns.map((t) => t.span.attributes.get("claude.result.subtype"))).toEqual(Array(5).fill("success"))
      expect(printed).toContain("Spans (")
      expect(printed).toMatch(/└─ Tool\.forecast {2}[\d.]+ ms\n/)
    }).pipe(Effect.provide(PoolLive)))
})
