// The GenAI span builder on frames as the reader hands them over: a recording of the real CLI (a
// main agent starting two background subagents, one of which calls a tool it is refused) and
// scripted turns (tools that succeed, fail or never end; a subagent that outlives its turn).
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, FastCheck as fc, Tracer } from "effect"
import { readFileSync } from "node:fs"
import { AgentSpans } from "../../../src/internal/telemetry/agentSpans.js"
import { settledFor, Tally } from "../../../src/internal/usage/tally.js"
import * as SpanTree from "../../../src/SpanTree.js"
import type * as Usage from "../../../src/Usage.js"

type Frame = { readonly [key: string]: unknown }

const isFrame = (u: unknown): u is Frame => typeof u === "object" && u !== null && !Array.isArray(u)

const recording = (name: string): ReadonlyArray<Frame> =>
  readFileSync(new URL(`../usage/${name}.stdout.jsonl`, import.meta.url), "utf8").split("\n")
    .filter((line) => line.length > 0).map((line) => JSON.parse(line)).filter(isFrame)

// A session's reader in miniature: the usage tally sees each frame, then the spans do. Time is a
// counter, one tick per frame, so each span's start and end say which frames bounded it.
const harness = Effect.gen(function*() {
  const recorder = yield* SpanTree.record
  let tick = BigInt(0)
  const turn = yield* Effect.makeSpan("invoke_agent claude-code", { kind: "client" }).pipe(
    Effect.withTracer(recorder.tracer)
  )
  let running: Tracer.Span | undefined = turn
  const spans = new AgentSpans({
    tracer: recorder.tracer,
    context: Context.empty(),
    now: () => tick,
    turn: () => running,
    fallback: undefined
  })
  const tally = new Tally()
  const feed = (frames: ReadonlyArray<Frame>) => {
    for (const frame of frames) {
      tick += BigInt(1)
      // The reader gives the spans the same objects the tally settled.
      tally.observe(frame)
      spans.frame(frame)
    }
  }
  const named = (name: string) => recorder.spans.filter((span) => span.name === name)
  const one = (name: string) => {
    const [span] = named(name)
    if (span === undefined) throw new Error(`no span ${name}`)
    return span
  }
  return {
    recorder,
    spans,
    turn,
    feed,
    named,
    one,
    endTurn: () => {
      running = undefined
    }
  }
})

const parentId = (span: Tracer.Span) => span.parent._tag === "Some" ? span.parent.value.spanId : undefined
const ended = (span: Tracer.Span) => span.status._tag === "Ended" ? span.status : undefined
const failedWith = (span: Tracer.Span) => {
  const status = ended(span)
  return status !== undefined && Exit.isFailure(status.exit) ? span.attributes.get("error.type") : undefined
}
const spendOf = (span: Tracer.Span) => ({
  input: span.attributes.get("gen_ai.usage.input_tokens"),
  output: span.attributes.get("gen_ai.usage.output_tokens"),
  cacheRead: span.attributes.get("gen_ai.usage.cache_read.input_tokens"),
  cacheCreation: span.attributes.get("gen_ai.usage.cache_creation.input_tokens"),
  cost: span.attributes.get("claude.usage.cost_usd")
})
const expected = (spend: Usage.Spend) => ({
  input: spend.inputTokens + spend.cacheReadInputTokens + spend.cacheCreationInputTokens,
  output: spend.outputTokens,
  cacheRead: spend.cacheReadInputTokens,
  cacheCreation: spend.cacheCreationInputTokens,
  cost: spend.costUsd
})

const session = "s-1"
const assistant = (id: string, content: ReadonlyArray<Frame>, parent: string | null = null): Frame => ({
  type: "assistant",
  message: {
    id,
    type: "message",
    role: "assistant",
    model: "claude-test-1",
    content,
    usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
  },
  parent_tool_use_id: parent,
  session_id: session
})
const toolUse = (id: string, name: string, input: Frame = {}): Frame => ({ type: "tool_use", id, name, input })
const toolResult = (id: string, isError = false, parent: string | null = null): Frame => ({
  type: "user",
  message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "x", is_error: isError }] },
  parent_tool_use_id: parent,
  session_id: session
})
const result = (cost: number): Frame => ({
  type: "result",
  subtype: "success",
  is_error: false,
  session_id: session,
  total_cost_usd: cost,
  usage: { input_tokens: 0, output_tokens: 0 },
  modelUsage: {}
})

describe("AgentSpans", () => {
  it.effect("a recorded turn: the turn → two subagents → the refused Read, with each subagent's own usage", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const frames = recording("two-subagents.tool-call")
      const first = frames.findIndex((f) => f.type === "result")
      h.feed(frames.slice(0, first + 1))

      const a = h.one("invoke_agent general-purpose")
      const b = h.one("invoke_agent Explore")
      const read = h.one("execute_tool Read")
      expect(h.recorder.spans.map((s) => s.name).sort()).toEqual([
        "execute_tool Read",
        "invoke_agent Explore",
        "invoke_agent claude-code",
        "invoke_agent general-purpose"
      ])
      expect([parentId(a), parentId(b), parentId(read)]).toEqual([h.turn.spanId, h.turn.spanId, a.spanId])
      expect(a.kind).toBe("internal")
      expect(Object.fromEntries(a.attributes)).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.agent.name": "general-purpose",
        "gen_ai.agent.id": "toolu_a",
        "gen_ai.conversation.id": "2bef472e-abc9-4d9a-91b5-a089bb44a704",
        "gen_ai.response.model": "claude-opus-5-5",
        "claude.task.status": "completed"
      })
      expect(Object.fromEntries(read.attributes)).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Read",
        "gen_ai.tool.call.id": "toolu_scripted_3_1",
        "gen_ai.tool.type": "function"
      })
      // The CLI refused the call: the span fails with the reason.
      expect(failedWith(read)).toBe("permission_denied")

      // Each subagent's span has its spend as the turn's `Usage` has it; the two add up to the
      // subagents' part of the turn.
      const turn = settledFor(frames[first] ?? {})?.turn
      if (turn === undefined) return expect.fail("the result was not settled")
      const [usageA, usageB] = turn.subagents
      if (usageA === undefined || usageB === undefined) return expect.fail("two subagents expected")
      expect(spendOf(a)).toEqual(expected(usageA))
      expect(spendOf(b)).toEqual(expected(usageB))
      expect(usageA.inputTokens).toBeGreaterThan(0)

      // Backgrounded: a subagent's span runs from its tool use to its notification, not to the
      // tool result that says it was launched.
      const index = (pred: (f: Frame) => boolean) => BigInt(frames.findIndex(pred) + 1)
      const notified = (id: string) =>
        index((f) => f.type === "system" && f.subtype === "task_notification" && f.tool_use_id === id)
      expect(a.status.startTime).toBe(index((f) => JSON.stringify(f.message ?? "").includes("\"id\":\"toolu_a\"")))
      expect(ended(a)?.endTime).toBe(notified("toolu_a"))
      expect(ended(b)?.endTime).toBe(notified("toolu_b"))
      expect(failedWith(a)).toBeUndefined()
      // Nothing left open: the result settled and ended every span of the turn.
      expect(h.spans.open).toBe(0)
    }))

  it.effect("tool calls: under the agent that made them, extension for MCP tools, error.type when they fail", () =>
    Effect.gen(function*() {
      const h = yield* harness
      h.feed([
        { type: "system", subtype: "init", session_id: session, model: "claude-test-1" },
        assistant("m1", [toolUse("t1", "Bash", { command: "ls" }), toolUse("t2", "mcp__calc__add", { a: 1 })])
      ])
      const bash = h.one("execute_tool Bash")
      const add = h.one("execute_tool mcp__calc__add")
      // Control requests about a running call sit under its span: by `tool_use_id`, or an MCP
      // call's `_meta`.
      expect(h.spans.parentFor({ subtype: "can_use_tool", tool_name: "Bash", tool_use_id: "t1" })).toBe(bash)
      expect(h.spans.parentFor({
        subtype: "mcp_message",
        message: { method: "tools/call", params: { name: "add", _meta: { "claudecode/toolUseId": "t2" } } }
      })).toBe(add)
      expect(h.spans.parentFor({ subtype: "hook_callback", tool_use_id: "unknown" })).toBeUndefined()

      h.feed([toolResult("t1"), toolResult("t2", true)])
      expect(add.attributes.get("gen_ai.tool.type")).toBe("extension")
      expect(bash.attributes.get("gen_ai.tool.type")).toBe("function")
      expect(ended(bash)?.endTime).toBe(BigInt(3))
      expect(failedWith(bash)).toBeUndefined()
      expect(failedWith(add)).toBe("tool_error")
      // Once it has ended, a call's requests go to the turn.
      expect(h.spans.parentFor({ subtype: "can_use_tool", tool_use_id: "t1" })).toBeUndefined()
      expect([parentId(bash), parentId(add)]).toEqual([h.turn.spanId, h.turn.spanId])
    }))

  it.effect("a subagent that outlives its turn: its spend adds up over the turns, it ends at the next result", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const first = result(0.01)
      const second = result(0.02)
      h.feed([
        assistant("m1", [toolUse("ag", "Agent", { subagent_type: "Explore", prompt: "p" })]),
        { type: "system", subtype: "task_started", tool_use_id: "ag", subagent_type: "Explore", is_backgrounded: true },
        toolResult("ag"),
        assistant("m2", [toolUse("g1", "Grep")], "ag"),
        first
      ])
      const agent = h.one("invoke_agent Explore")
      const grep = h.one("execute_tool Grep")
      expect(parentId(grep)).toBe(agent.spanId)
      // Still running: neither it nor its call ended with the turn.
      expect(ended(agent)).toBeUndefined()
      expect(ended(grep)).toBeUndefined()
      h.endTurn()
      h.feed([
        toolResult("g1", false, "ag"),
        assistant("m3", [{ type: "text", text: "found" }], "ag"),
        { type: "system", subtype: "task_notification", tool_use_id: "ag", status: "completed" }
      ])
      expect(ended(agent)).toBeUndefined()
      h.feed([second])
      expect(ended(agent)?.endTime).toBe(BigInt(8))
      expect(failedWith(agent)).toBeUndefined()
      // Its two responses (100 input tokens each), one in each turn: the sum of its two parts.
      const part = (r: Frame) => settledFor(r)?.turn.subagents.find((s) => s.toolUseId === "ag")
      const [one, two] = [part(first), part(second)]
      if (one === undefined || two === undefined) return expect.fail("the subagent spent in both turns")
      expect(spendOf(agent)).toEqual({
        ...expected({
          inputTokens: one.inputTokens + two.inputTokens,
          outputTokens: one.outputTokens + two.outputTokens,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          costUsd: one.costUsd + two.costUsd
        }),
        input: 200
      })
      expect(h.spans.open).toBe(0)
    }))

  it.effect("spans that never end: the turn's unfinished calls fail at its result, the rest when the session closes", () =>
    Effect.gen(function*() {
      const h = yield* harness
      h.feed([
        assistant("m1", [toolUse("t1", "Bash"), toolUse("ag", "Task", { subagent_type: "Plan" })]),
        { type: "system", subtype: "task_started", tool_use_id: "ag", is_backgrounded: true },
        toolResult("ag"),
        assistant("m2", [toolUse("t2", "Read")], "ag"),
        result(0.01)
      ])
      // The main agent's call got no result in its turn.
      expect(failedWith(h.one("execute_tool Bash"))).toBe("unfinished")
      expect(h.spans.open).toBe(2)
      h.spans.close("ProcessError")
      expect(failedWith(h.one("invoke_agent Plan"))).toBe("ProcessError")
      expect(failedWith(h.one("execute_tool Read"))).toBe("ProcessError")
      expect(h.spans.open).toBe(0)
      // Frames after the close start nothing.
      h.feed([assistant("m3", [toolUse("t3", "Bash")])])
      expect(h.named("execute_tool Bash")).toHaveLength(1)
      expect(h.spans.open).toBe(0)
      // Every span the builder made has ended.
      expect(h.recorder.spans.filter((s) => s !== h.turn && ended(s) === undefined)).toEqual([])
    }))

  // Any order of calls, subagents, results and notifications: once the session closes, every span
  // made has ended, each exactly once.
  it.prop("whatever the frames, closing ends every span exactly once", {
    steps: fc.array(
      fc.tuple(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean()
      ),
      { maxLength: 40 }
    )
  }, ({ steps }) => {
    const made: Array<{ ends: number }> = []
    const tracer = Tracer.make({
      span: (name, parent, context, links, startTime, kind) => {
        const record = { ends: 0 }
        made.push(record)
        const attributes = new Map<string, unknown>()
        return {
          _tag: "Span",
          name,
          spanId: String(made.length),
          traceId: "t",
          parent,
          context,
          links,
          sampled: true,
          kind,
          status: { _tag: "Started", startTime },
          attributes,
          end: () => void record.ends++,
          attribute: (key, value) => void attributes.set(key, value),
          event: () => undefined,
          addLinks: () => undefined
        }
      },
      context: (f) => f()
    })
    const spans = new AgentSpans({
      tracer,
      context: Context.empty(),
      now: () => BigInt(0),
      turn: () => undefined,
      fallback: undefined
    })
    const tally = new Tally()
    const agentId = (n: number) => `ag${n}`
    const parent = (n: number, inAgent: boolean) => inAgent ? agentId(n) : null
    for (const [kind, a, b, flag] of steps) {
      const frames: ReadonlyArray<Frame> = kind === 0
        ? [assistant(`m${a}${b}`, [toolUse(`t${a}`, "Bash")], parent(b, flag))]
        : kind === 1
        ? [assistant(`n${a}`, [toolUse(agentId(a), "Agent", { subagent_type: "Explore" })], parent(b, flag && a !== b))]
        : kind === 2
        ? [toolResult(flag ? `t${a}` : agentId(a), flag && b === 0)]
        : kind === 3
        ? [{ type: "system", subtype: "task_started", tool_use_id: agentId(a), is_backgrounded: flag }]
        : kind === 4
        ? [{
          type: "system",
          subtype: "task_notification",
          tool_use_id: agentId(a),
          status: flag ? "completed" : "failed"
        }]
        : kind === 5
        ? [{ type: "system", subtype: "permission_denied", tool_use_id: `t${a}` }]
        : [result(0.001)]
      for (const frame of frames) {
        tally.observe(frame)
        spans.frame(frame)
      }
      // An ended span is never ended again.
      if (made.some((m) => m.ends > 1)) return false
    }
    spans.close("session_closed")
    return spans.open === 0 && made.every((m) => m.ends === 1)
  })
})
