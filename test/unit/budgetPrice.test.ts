// The price of a running turn before its result: the session's own price for a model once a
// result showed it, else the list price of the model's family, else the dearest.
import { describe, expect, it } from "@effect/vitest"
import * as Price from "../../src/internal/budget/price.js"
import * as Fold from "../../src/internal/usage/fold.js"

const assistant = (id: string, model: string, input: number, text: string) => ({
  type: "assistant",
  message: { id, model, content: [{ type: "text", text }], usage: { input_tokens: input, output_tokens: 1 } },
  parent_tool_use_id: null
})

describe("the running price", () => {
  it("prices each response by its model's list price; output from the stream's delta, else the text's size", () => {
    let state = Fold.observe(Fold.make(), assistant("m1", "claude-sonnet-4-5", 1000, "x".repeat(400)))
    state = Fold.observe(state, assistant("m2", "claude-haiku-4-5", 2000, "y".repeat(40)))
    expect(Price.running(state)).toEqual({
      usd: expect.closeTo((1000 + 5 * 100) * 3e-6 + (2000 + 5 * 10) * 1e-6, 12),
      tokens: 1100 + 2010
    })
    // A block of the same response adds its size, not its input again.
    state = Fold.observe(state, assistant("m2", "claude-haiku-4-5", 2000, "y".repeat(40)))
    expect(Price.running(state).tokens).toBe(1100 + 2020)
  })

  it("an unknown model is priced at the dearest list price; a model a result priced, at that price", () => {
    const unknown = Fold.observe(Fold.make(), assistant("m1", "some-model", 1000, ""))
    expect(Price.running(unknown).usd).toBeCloseTo(1000 * 15e-6, 12)
    const priced = Fold.settle(unknown, {
      type: "result",
      total_cost_usd: 0.002,
      modelUsage: { "some-model": { inputTokens: 1000, outputTokens: 0, costUSD: 0.002 } }
    }).state
    const next = Fold.observe(priced, assistant("m2", "some-model", 500, ""))
    expect(Price.running(next).usd).toBeCloseTo(500 * 2e-6, 12)
  })

  it("RunningTotal follows running one touched response at a time: new responses, blocks, output deltas, a new turn", () => {
    const total = new Price.RunningTotal()
    let state = Fold.make()
    const delta = (output: number) => ({
      type: "stream_event",
      event: { type: "message_delta", usage: { output_tokens: output } },
      parent_tool_use_id: null
    })
    const start = (id: string) => ({
      type: "stream_event",
      event: { type: "message_start", message: { id } },
      parent_tool_use_id: null
    })
    const frames = [
      start("m1"),
      assistant("m1", "claude-sonnet-4-5", 1000, "x".repeat(400)),
      assistant("m1", "claude-sonnet-4-5", 1000, "y".repeat(80)),
      delta(130),
      start("m2"),
      assistant("m2", "claude-haiku-4-5", 2000, "z".repeat(40)),
      assistant("m3", "some-model", 10, "w")
    ]
    for (const frame of frames) {
      state = Fold.observe(state, frame)
      const incremental = total.of(state)
      const full = Price.running(state)
      expect(incremental.tokens).toBe(full.tokens)
      expect(incremental.usd).toBeCloseTo(full.usd, 12)
    }
    // The next turn starts from nothing.
    state = Fold.settle(state, { type: "result", total_cost_usd: 0.01 }).state
    state = Fold.observe(state, assistant("m4", "claude-haiku-4-5", 500, ""))
    expect(total.of(state)).toEqual(Price.running(state))
  })
})
