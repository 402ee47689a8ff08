// The usage fold: each API response counted once, spend attributed to the main agent, each
// subagent and each tool call, and the parts adding up to what the result reports, on the
// recordings of the real CLI and over random turns.
import Anthropic from "@anthropic-ai/sdk"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber, Metric, MetricLabel, Option, PubSub, Ref, Stream } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Turns from "../../src/internal/session/turns.js"
import * as Spend from "../../src/internal/usage/metrics.js"
import { Tally } from "../../src/internal/usage/tally.js"
import * as Message from "../../src/schema/Message.js"
import type { ControlChannelShape } from "../../src/services/ControlChannel.js"
import * as Telemetry from "../../src/Telemetry.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Usage from "../../src/Usage.js"

type Frame = { readonly [key: string]: unknown }

const isFrame = (u: unknown): u is Frame => typeof u === "object" && u !== null && !Array.isArray(u)

const lines = (url: URL): ReadonlyArray<Frame> =>
  readFileSync(url, "utf8").split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line)).filter(
    isFrame
  )

const here = new URL("./usage/", import.meta.url)
const fixtures = new URL("../fixtures/transcripts/", import.meta.url)
const recording = (name: string) => lines(new URL(`${name}.stdout.jsonl`, here))
const recordings: ReadonlyArray<readonly [string, ReadonlyArray<Frame>]> = [
  ...readdirSync(fileURLToPath(here)).filter((f) => f.endsWith(".stdout.jsonl")).map((f) =>
    [f, lines(new URL(f, here))] as const
  ),
  ...readdirSync(fileURLToPath(fixtures)).filter((f) => f.endsWith(".stdout.jsonl")).map((f) =>
    [f, lines(new URL(f, fixtures))] as const
  )
]

const tokenKinds = ["inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"] as const

const sumOf = (all: ReadonlyArray<Usage.Spend>, key: keyof Usage.Spend) => all.reduce((n, s) => n + s[key], 0)

// The turn's own figures per model as the result reports them.
const reportedModels = (result: Frame): ReadonlyArray<Frame> => {
  const since = result.model_usage_since_last_result
  return isFrame(since) ? Object.values(since).filter(isFrame) : []
}

const fieldOf: Record<(typeof tokenKinds)[number], string> = {
  inputTokens: "inputTokens",
  outputTokens: "outputTokens",
  cacheReadInputTokens: "cacheReadInputTokens",
  cacheCreationInputTokens: "cacheCreationInputTokens"
}

const reportedSum = (result: Frame, field: string) =>
  reportedModels(result).reduce((n, m) => n + (typeof m[field] === "number" ? m[field] : 0), 0)

describe("Usage on the recordings of the real CLI", () => {
  it("counts a response once however many content blocks repeat its usage", () => {
    // a-plain-text.partial: one response; the main agent's figures are the result's.
    const [turn] = Usage.fromMessages(recording("a-plain-text.partial"))
    expect(turn?.main).toMatchObject({ inputTokens: 2541, outputTokens: 30, costUsd: expect.closeTo(0.010764, 12) })
    // two-subagents: the first response's two `Agent` blocks come as two assistant messages
    // with the same id and usage (2538 input tokens), counted once.
    const frames = recording("two-subagents")
    const blocks = frames.filter((f) =>
      f.type === "assistant" && isFrame(f.message) && f.message.id === "msg_scripted_1"
    )
    expect(blocks).toHaveLength(2)
    const [delegated] = Usage.fromMessages(frames)
    expect(delegated?.main.inputTokens).toBe(2538 + 3184)
  })

  it("splits a parent and two subagents on one model, as the result lumps them, to the token", () => {
    for (const name of ["two-subagents", "two-subagents.partial"]) {
      const [turn] = Usage.fromMessages(recording(name))
      if (turn === undefined) return expect.fail(`${name}: no turn`)
      // The result's usage is the main agent's; task_notification's total_tokens is each
      // subagent's single response, input (2117, 2114) plus output.
      expect(turn.main).toMatchObject({ inputTokens: 5722, outputTokens: 74 })
      expect(turn.subagents.map((s) => [s.toolUseId, s.agentType, s.inputTokens, s.outputTokens])).toEqual([
        ["toolu_a", "general-purpose", 2117, 10],
        ["toolu_b", "Explore", 2114, 15]
      ])
      expect(turn.unattributed.costUsd).toBe(0)
      expect(turn).toMatchObject({ inputTokens: 9953, outputTokens: 99 })
      expect(Math.abs(turn.costUsd - 0.041792)).toBeLessThan(1e-12)
      // One model: $4 per million input tokens and $20 per million output tokens.
      expect(turn.subagents[0]?.costUsd).toBeCloseTo((2117 * 4 + 10 * 20) / 1e6, 12)
      expect(turn.main.costUsd).toBeCloseTo((5722 * 4 + 74 * 20) / 1e6, 12)
      // Each `Agent` call carries half of the response that asked for both.
      expect(turn.tools.map((t) => [t.toolUseId, t.name, t.inputTokens])).toEqual([
        ["toolu_a", "Agent", 1269],
        ["toolu_b", "Agent", 1269]
      ])
    }
    // With partial messages the response's output is exact (65): 33 and 32.
    const [partial] = Usage.fromMessages(recording("two-subagents.partial"))
    expect(partial?.tools.map((t) => t.outputTokens)).toEqual([33, 32])
  })

  it("gives a subagent of several responses what the model's total leaves when every request shows", () => {
    const [turn, empty, reaction] = Usage.fromMessages(recording("two-subagents.tool-call"))
    // 131 output tokens in all: the main agent's 74 (the result's), the Explore subagent's 15
    // (its notification's 2129 − 2114), and so the other's 42, over its two responses.
    expect(turn?.subagents.map((s) => [s.agentType, s.inputTokens, s.outputTokens])).toEqual([
      ["general-purpose", 2117 + 2627, 42],
      ["Explore", 2114, 15]
    ])
    expect(turn?.unattributed.outputTokens).toBe(0)
    // The Read call carries the whole of the response that asked for it: 2117 input tokens.
    expect(turn?.tools.find((t) => t.name === "Read")).toMatchObject({ agentToolUseId: "toolu_a", inputTokens: 2117 })
    // A result with nothing since the last one, then the main agent's turn on the notifications.
    expect(empty).toMatchObject({ costUsd: 0, inputTokens: 0, subagents: [] })
    expect(reaction?.main).toMatchObject({ inputTokens: 3866, outputTokens: 9 })
  })

  it("puts the CLI's side requests under unattributed, per model, across a model change", () => {
    const [first, second] = Usage.fromMessages(recording("f-control-requests"))
    expect(first?.models).toEqual({
      "claude-opus-5-5": expect.objectContaining({ inputTokens: 2545, outputTokens: 9 })
    })
    expect(second?.main.models["claude-haiku-4-5"]).toMatchObject({ inputTokens: 3401, outputTokens: 9 })
    expect(second?.unattributed.models["claude-haiku-4-5"]).toMatchObject({ inputTokens: 71, outputTokens: 12 })
    // $1 / $5 per million for haiku.
    expect(second?.unattributed.costUsd).toBeCloseTo((71 + 12 * 5) / 1e6, 12)
  })

  it("every turn of every recording adds up to the result: tokens exactly, cost to the cent", () => {
    for (const [name, frames] of recordings) {
      const results = frames.filter((f) => f.type === "result")
      const turns = Usage.fromMessages(frames)
      expect(turns, name).toHaveLength(results.length)
      let before = 0
      turns.forEach((turn, i) => {
        const result = results[i] ?? {}
        const total = typeof result.total_cost_usd === "number" ? result.total_cost_usd : 0
        const parts = Usage.agents(turn)
        // total_cost_usd is the session's so far: the turn's is the change.
        expect(Math.abs(sumOf(parts, "costUsd") - (total - before)), `${name} turn ${i}`).toBeLessThan(0.005)
        expect(Math.abs(sumOf(parts, "costUsd") - (total - before))).toBeLessThan(1e-9)
        before = total
        for (const kind of tokenKinds) {
          if (reportedModels(result).length === 0) continue
          expect(sumOf(parts, kind), `${name} turn ${i} ${kind}`).toBe(reportedSum(result, fieldOf[kind]))
        }
      })
      const session = turns.reduce(Usage.combine, Usage.empty)
      expect(Math.abs(session.costUsd - before), name).toBeLessThan(1e-9)
      expect(session.turns).toBe(results.length)
    }
  })

  it("derives a turn's figures from the cumulative modelUsage when the result has no since-last figures", () => {
    const frames = recording("e-interrupt.no-partial").map((f) => {
      if (f.type !== "result") return f
      const { model_usage_since_last_result: _, ...rest } = f
      return rest
    })
    const [first, second] = Usage.fromMessages(frames)
    expect(first?.inputTokens).toBe(2546)
    expect(second?.inputTokens).toBe(2630)
    expect(second?.costUsd).toBeCloseTo(0.022064 - 0.011324, 12)
  })
})

// ---------------------------------------------------------------------------------------------
// random turns
// ---------------------------------------------------------------------------------------------

interface Truth {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheCreation: number
}

interface GenResponse extends Truth {
  readonly model: "m-big" | "m-small"
  readonly blocks: number
  readonly tools: number
}

const figures = fc.record({
  input: fc.nat(20_000),
  output: fc.nat(4_000),
  cacheRead: fc.nat(50_000),
  cacheCreation: fc.nat(8_000)
})
const response = (model: fc.Arbitrary<GenResponse["model"]>) =>
  fc.record({ model, blocks: fc.integer({ min: 1, max: 3 }), tools: fc.nat(2) }).chain((shape) =>
    figures.map((f): GenResponse => ({ ...f, ...shape }))
  )
const turnArb = fc.record({
  main: fc.array(response(fc.constant("m-big")), { minLength: 1, maxLength: 3 }),
  subagents: fc.array(fc.array(response(fc.constantFrom("m-big", "m-small")), { minLength: 1, maxLength: 3 }), {
    maxLength: 3
  }),
  side: fc.option(figures, { nil: undefined }),
  partial: fc.boolean(),
  // Dollars per input-token equivalent, per model: any price, and any cost the CLI reports.
  prices: fc.tuple(fc.double({ min: 1e-8, max: 1e-4, noNaN: true }), fc.double({ min: 1e-8, max: 1e-4, noNaN: true }))
})

type GenTurn = typeof turnArb extends fc.Arbitrary<infer T> ? T : never

const weightOf = (t: Truth) => t.input + 5 * t.output + 0.1 * t.cacheRead + 1.25 * t.cacheCreation

// The frames the CLI writes for a generated turn, and what each agent truly spent.
const framesOf = (turn: GenTurn) => {
  const frames: Array<Frame> = []
  let n = 0
  const emit = (r: GenResponse, agent: string | null) => {
    const id = `msg_${++n}`
    const usage = {
      input_tokens: r.input,
      output_tokens: 1,
      cache_read_input_tokens: r.cacheRead,
      cache_creation_input_tokens: r.cacheCreation
    }
    if (turn.partial) {
      frames.push({
        type: "stream_event",
        parent_tool_use_id: agent,
        event: { type: "message_start", message: { id, usage } }
      })
    }
    const blocks = [
      ...Array.from({ length: r.blocks }, (_, b) => ({ type: "text", text: "x".repeat(4 * (b + 1)) })),
      ...Array.from(
        { length: r.tools },
        (_, b) => ({ type: "tool_use", id: `toolu_${n}_${b}`, name: "Bash", input: {} })
      )
    ]
    // One assistant message per content block, each repeating the response's usage.
    for (const block of blocks) {
      frames.push({
        type: "assistant",
        parent_tool_use_id: agent,
        session_id: "s",
        message: { id, model: r.model, content: [block], usage }
      })
    }
    if (turn.partial) {
      frames.push({
        type: "stream_event",
        parent_tool_use_id: agent,
        event: { type: "message_delta", usage: { output_tokens: r.output } }
      })
    }
  }
  turn.subagents.forEach((responses, k) => {
    const id = `toolu_agent_${k}`
    frames.push({
      type: "system",
      subtype: "task_started",
      tool_use_id: id,
      subagent_type: `type-${k}`,
      task_id: `t${k}`
    })
    for (const r of responses) emit(r, id)
    const last = responses[responses.length - 1]
    if (last !== undefined) {
      const total = last.input + last.cacheRead + last.cacheCreation + last.output
      frames.push({ type: "system", subtype: "task_notification", tool_use_id: id, usage: { total_tokens: total } })
    }
  })
  for (const r of turn.main) emit(r, null)
  const all: Array<GenResponse> = [...turn.main, ...turn.subagents.flat()]
  const models: Record<string, Frame> = {}
  let totalCost = 0
  for (const [model, price] of [["m-big", turn.prices[0]], ["m-small", turn.prices[1]]] as const) {
    const used = all.filter((r) => r.model === model)
    const side = model === "m-big" ? turn.side : undefined
    if (used.length === 0 && side === undefined) continue
    const sum = (key: keyof Truth) => used.reduce((a, r) => a + r[key], 0) + (side?.[key] ?? 0)
    const t: Truth = {
      input: sum("input"),
      output: sum("output"),
      cacheRead: sum("cacheRead"),
      cacheCreation: sum("cacheCreation")
    }
    const costUSD = weightOf(t) * price
    totalCost += costUSD
    models[model] = {
      inputTokens: t.input,
      outputTokens: t.output,
      cacheReadInputTokens: t.cacheRead,
      cacheCreationInputTokens: t.cacheCreation,
      costUSD
    }
  }
  const mainOut = turn.main.reduce((a, r) => a + r.output, 0)
  frames.push({
    type: "result",
    subtype: "success",
    is_error: false,
    total_cost_usd: totalCost,
    usage: { input_tokens: turn.main.reduce((a, r) => a + r.input, 0), output_tokens: mainOut },
    modelUsage: models,
    model_usage_since_last_result: models
  })
  return { frames, totalCost, models }
}

const truthOf = (responses: ReadonlyArray<GenResponse>) => ({
  inputTokens: responses.reduce((a, r) => a + r.input, 0),
  cacheReadInputTokens: responses.reduce((a, r) => a + r.cacheRead, 0),
  cacheCreationInputTokens: responses.reduce((a, r) => a + r.cacheCreation, 0)
})

describe("Usage over random turns", () => {
  it.prop("the parts add up to total_cost_usd and every model's tokens, whatever the split", [turnArb], ([turn]) => {
    const { frames, models, totalCost } = framesOf(turn)
    const [usage] = Usage.fromMessages(frames)
    if (usage === undefined) return expect.fail("no turn")
    const parts = Usage.agents(usage)
    expect(Math.abs(sumOf(parts, "costUsd") - totalCost)).toBeLessThan(1e-9 * Math.max(1, totalCost))
    expect(Math.round(sumOf(parts, "costUsd") * 100)).toBe(Math.round(totalCost * 100))
    for (const [model, reported] of Object.entries(models)) {
      const perModel = parts.flatMap((p) => Option.toArray(Option.fromNullable(p.models[model])))
      expect(sumOf(perModel, "inputTokens")).toBe(reported.inputTokens)
      expect(sumOf(perModel, "outputTokens")).toBe(reported.outputTokens)
      expect(sumOf(perModel, "cacheReadInputTokens")).toBe(reported.cacheReadInputTokens)
      expect(sumOf(perModel, "cacheCreationInputTokens")).toBe(reported.cacheCreationInputTokens)
    }
    // Tool calls share their responses' figures: never more than the agents'.
    expect(sumOf(usage.tools, "costUsd")).toBeLessThanOrEqual(sumOf(parts, "costUsd") + 1e-9)
  })

  it.prop(
    "input and cache figures are exact per agent, and output wherever the CLI reports it",
    [turnArb],
    ([turn]) => {
      const { frames } = framesOf(turn)
      const [usage] = Usage.fromMessages(frames)
      if (usage === undefined) return expect.fail("no turn")
      expect(usage.main).toMatchObject({
        ...truthOf(turn.main),
        outputTokens: turn.main.reduce((a, r) => a + r.output, 0)
      })
      expect(usage.subagents.map((s) => s.agentType)).toEqual(turn.subagents.map((_, k) => `type-${k}`))
      turn.subagents.forEach((responses, k) => {
        const spent = usage.subagents[k]
        expect(spent).toMatchObject(truthOf(responses))
        if (turn.partial || responses.length === 1) {
          expect(spent?.outputTokens).toBe(responses.reduce((a, r) => a + r.output, 0))
        }
      })
      if (turn.partial) {
        // Every figure exact: each agent's cost is its tokens at its model's price.
        const price = (model: string) => (model === "m-big" ? turn.prices[0] : turn.prices[1])
        const cost = (rs: ReadonlyArray<GenResponse>) => rs.reduce((a, r) => a + weightOf(r) * price(r.model), 0)
        expect(usage.main.costUsd).toBeCloseTo(cost(turn.main), 9)
        turn.subagents.forEach((rs, k) => expect(usage.subagents[k]?.costUsd).toBeCloseTo(cost(rs), 9))
      }
    }
  )
})

describe("Usage.combine", () => {
  it("adds turns: a subagent across turns counted once, figures summed", () => {
    const turns = Usage.fromMessages(recording("two-subagents"))
    const twice = Usage.combine(turns[0] ?? Usage.empty, turns[0] ?? Usage.empty)
    expect(twice.turns).toBe(2)
    expect(twice.subagents).toHaveLength(2)
    expect(twice.subagents[0]?.inputTokens).toBe(2 * 2117)
    expect(twice.costUsd).toBeCloseTo(2 * 0.041792, 12)
    expect(Usage.combine(Usage.empty, twice)).toEqual(twice)
  })
})

describe("spend metrics", () => {
  it.effect("records cost and tokens tagged by agent and model", () =>
    Effect.gen(function*() {
      const [turn] = Usage.fromMessages(recording("two-subagents"))
      if (turn === undefined) return expect.fail("no turn")
      Spend.record(turn, [])
      const value = (metric: Metric.Metric.Counter<number>, ...tags: ReadonlyArray<readonly [string, string]>) =>
        Metric.value(tags.reduce((m, [k, v]) => m.pipe(Metric.tagged(k, v)), metric)).pipe(Effect.map((s) => s.count))
      const model = ["model", "claude-opus-5-5"] as const
      expect(yield* value(Telemetry.agentCostUsd, ["agent", "Explore"], model)).toBeCloseTo(
        (2114 * 4 + 15 * 20) / 1e6,
        12
      )
      expect(yield* value(Telemetry.agentTokens, ["agent", "main"], model, ["kind", "output"])).toBe(74)
      expect(yield* value(Telemetry.agentTokens, ["agent", "general-purpose"], model, ["kind", "input"])).toBe(2117)
      // The labels given (the fiber's, as `Metric.update` reads them) tag every counter too.
      Spend.record(turn, [MetricLabel.make("tenant", "spend-test")])
      expect(
        yield* value(Telemetry.agentTokens, ["agent", "main"], model, ["kind", "output"], ["tenant", "spend-test"])
      )
        .toBe(74)
    }))
})

describe("a session's usage (fake CLI)", () => {
  it.effect("each result carries its turn, and session.usage has every result already read", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      const turn = (prompt: string) =>
        Effect.gen(function*() {
          yield* session.send(prompt)
          const result = yield* session.receiveResponse.pipe(Stream.filter(Message.isResult), Stream.runLast)
          return Option.getOrThrow(result)
        })
      const first = yield* turn("one")
      // Read right after the result reached the consumer.
      expect(yield* session.usage).toMatchObject({ turns: 1, inputTokens: 10, costUsd: 0.001 })
      expect(Usage.ofResult(first).pipe(Option.map((u) => u.main.inputTokens))).toEqual(Option.some(10))
      const second = yield* turn("two")
      const total = yield* session.usage
      expect(total.turns).toBe(2)
      expect(total.main.inputTokens).toBe(20)
      expect(Usage.sessionUpTo(second).pipe(Option.map((u) => u.turns))).toEqual(Option.some(2))
      // A result that no session read has none.
      expect(Option.isNone(Usage.ofResult({ ...second }))).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(FakeCli.layerClaudeAgent())))
})

describe("session.usage and the results the tracker has not taken yet", () => {
  it.scoped("waits until the tracker has taken every result the reader counted", () =>
    Effect.gen(function*() {
      const hub = yield* PubSub.unbounded<Frame>()
      const counted = yield* Ref.make(0)
      const unused = Effect.dieMessage("not used by the tracker")
      const control: ControlChannelShape = {
        results: Effect.map(PubSub.subscribe(hub), (queue) => Stream.fromQueue(queue)),
        runState: Effect.map(Ref.get(counted), (results) => ({ state: undefined, afterResult: true, results })),
        closed: Effect.never,
        request: () => unused,
        start: () => unused,
        handle: () => Effect.void,
        messages: Stream.empty,
        inFlight: Effect.succeed(0),
        awaitNoneInFlight: Effect.void,
        lastSessionId: Effect.succeed(undefined),
        awaitSessionId: unused,
        awaitRunState: () => unused
      }
      const turns = yield* Turns.track(control)
      // The reader has counted a result (settled by its tally) that the tracker has not taken.
      const tally = new Tally()
      const [result] = recording("a-plain-text.partial").filter((f) => {
        tally.observe(f)
        return f.type === "result"
      })
      yield* Ref.set(counted, 1)
      const waiting = yield* Effect.fork(turns.usage)
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      if (result !== undefined) yield* PubSub.publish(hub, result)
      const usage = yield* Fiber.join(waiting)
      expect(usage).toMatchObject({ turns: 1, inputTokens: 2541, outputTokens: 30 })
    }))
})

describe("ScriptedModel.withUsage", () => {
  const params = (content: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model: "claude-test",
    max_tokens: 1024,
    tools: [{ name: "Bash", description: "run", input_schema: { type: "object", properties: {} } }],
    messages: [{ role: "user", content }]
  })

  it.scopedLive("reports the chosen figures: input and cache at message_start, output at message_delta", () =>
    Effect.gen(function*() {
      const figures = { inputTokens: 1234, outputTokens: 56, cacheReadInputTokens: 789, cacheCreationInputTokens: 10 }
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.withUsage(ScriptedModel.text("hi"), figures), times: 2 },
        { reply: ScriptedModel.withUsage(ScriptedModel.text("partly"), { outputTokens: 3 }) }
      ])
      const client = new Anthropic({ apiKey: "x", baseURL: model.url, maxRetries: 0 })
      const events = yield* Effect.promise(async () => {
        const seen: Array<unknown> = []
        const stream = client.messages.stream(params("a"))
        stream.on("streamEvent", (event) => {
          // Copied: the client folds message_delta into the same object.
          if (event.type === "message_start") seen.push({ ...event.message.usage })
          if (event.type === "message_delta") seen.push(event.usage)
        })
        await stream.finalMessage()
        return seen
      })
      expect(events).toMatchObject([
        { input_tokens: 1234, output_tokens: 1, cache_read_input_tokens: 789, cache_creation_input_tokens: 10 },
        { output_tokens: 56 }
      ])
      const whole = yield* Effect.promise(() => client.messages.create(params("b")))
      expect(whole.usage).toMatchObject({ input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 789 })
      // Figures not chosen keep their estimates: input from the request's size, no cache.
      const partly = yield* Effect.promise(() => client.messages.create(params("c")))
      expect(partly.usage).toMatchObject({ output_tokens: 3, cache_read_input_tokens: 0 })
      expect(partly.usage.input_tokens).toBeGreaterThan(0)
    }))
})

describe("Telemetry.costUsd", () => {
  it.effect("counts each turn's own cost: the result's total_cost_usd is the session's so far", () =>
    Effect.gen(function*() {
      const before = (yield* Metric.value(Telemetry.costUsd)).count
      const session = yield* ClaudeAgent.session()
      for (const prompt of ["one", "two"]) {
        yield* session.send(prompt)
        yield* session.receiveResponse.pipe(Stream.runDrain)
      }
      yield* session.usage
      expect((yield* Metric.value(Telemetry.costUsd)).count - before).toBeCloseTo(0.03, 12)
    }).pipe(
      Effect.scoped,
      Effect.provide(FakeCli.layerClaudeAgent({
        onUserMessage: (_message, cli) =>
          Effect.gen(function*() {
            const turns = (yield* cli.sent).filter((f) => f.type === "user").length
            yield* cli.emit(cli.frames.assistantText("ok"))
            // What the real CLI reports: $0.01 for the first turn, $0.02 for the second.
            yield* cli.emit({ ...cli.frames.result("ok"), total_cost_usd: turns === 1 ? 0.01 : 0.03 })
          })
      }))
    ))
})
