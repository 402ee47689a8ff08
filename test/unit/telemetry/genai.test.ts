// GenAI spans and metrics of whole sessions over the fake CLI (a mock transport): the span tree a
// turn with a subagent and tool calls gives, with the callbacks of a call under it; spans that
// never see their end (the CLI dies, the consumer gives up); and no per-message work under
// Effect's default tracer.
import { describe, expect, it, vi } from "@effect/vitest"
import { Effect, Exit, Fiber, Metric, Schema, Stream, type Tracer } from "effect"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import { AgentSpans } from "../../../src/internal/telemetry/agentSpans.js"
import * as McpServer from "../../../src/McpServer.js"
import * as SpanTree from "../../../src/SpanTree.js"
import * as Telemetry from "../../../src/Telemetry.js"
import * as Tool from "../../../src/Tool.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"
import * as SpanRecorder from "../../../src/testing/SpanRecorder.js"

type Frame = FakeCli.JsonObject

const MODEL = "claude-genai-1"
// The fake CLI's session id.
const SESSION = "00000000-0000-4000-8000-000000000001"

const assistant = (
  cli: FakeCli.FakeCliHandle,
  id: string,
  content: ReadonlyArray<Frame>,
  parent: string | null = null
) =>
  cli.emit({
    type: "assistant",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: MODEL,
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50 }
    },
    parent_tool_use_id: parent,
    session_id: cli.sessionId
  })

const toolResult = (cli: FakeCli.FakeCliHandle, id: string, isError = false, parent: string | null = null) =>
  cli.emit({
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok", is_error: isError }] },
    parent_tool_use_id: parent,
    session_id: cli.sessionId
  })

// The turn's figures: three responses of the main agent and one of the subagent, as above.
const result = (cli: FakeCli.FakeCliHandle) =>
  cli.emit({
    ...cli.frames.result("done"),
    usage: { input_tokens: 300, output_tokens: 60, cache_read_input_tokens: 3000, cache_creation_input_tokens: 150 },
    total_cost_usd: 0.04,
    modelUsage: {
      [MODEL]: {
        inputTokens: 400,
        outputTokens: 80,
        cacheReadInputTokens: 4000,
        cacheCreationInputTokens: 200,
        costUSD: 0.04,
        webSearchRequests: 0,
        contextWindow: 200000,
        maxOutputTokens: 32000
      }
    }
  })

const preToolUse = (id: string) => ({
  subtype: "hook_callback",
  callback_id: "hook_0",
  tool_use_id: id,
  input: {
    hook_event_name: "PreToolUse",
    session_id: "s",
    transcript_path: "/t",
    cwd: "/",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    tool_use_id: id
  }
})

const add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  handler: ({ a, b }) => Effect.succeed(`${a + b}`)
})

// A turn: the main agent runs Bash (a PreToolUse hook asks about it) and the in-process MCP tool,
// and starts a backgrounded Explore subagent that runs Grep, which fails.
const turnWithSubagent = FakeCli.layerClaudeAgent({
  onUserMessage: (_message, cli) =>
    Effect.gen(function*() {
      yield* cli.emit(cli.frames.systemInit({ model: MODEL }))
      yield* assistant(cli, "m1", [
        { type: "tool_use", id: "t_bash", name: "Bash", input: { command: "ls" } },
        { type: "tool_use", id: "t_add", name: "mcp__calc__add", input: { a: 2, b: 3 } },
        { type: "tool_use", id: "t_agent", name: "Agent", input: { subagent_type: "Explore", prompt: "look" } }
      ])
      yield* cli.requestRaw(preToolUse("t_bash"))
      yield* toolResult(cli, "t_bash")
      yield* cli.requestRaw({
        subtype: "mcp_message",
        server_name: "calc",
        message: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "add", arguments: { a: 2, b: 3 }, _meta: { "claudecode/toolUseId": "t_add" } }
        }
      })
      yield* toolResult(cli, "t_add")
      yield* cli.emit({
        type: "system",
        subtype: "task_started",
        task_id: "task_1",
        tool_use_id: "t_agent",
        description: "look",
        subagent_type: "Explore",
        is_backgrounded: true,
        uuid: "00000000-0000-4000-8000-0000000000f1",
        session_id: cli.sessionId
      })
      yield* toolResult(cli, "t_agent")
      yield* assistant(
        cli,
        "m2",
        [{ type: "tool_use", id: "t_grep", name: "Grep", input: { pattern: "x" } }],
        "t_agent"
      )
      yield* toolResult(cli, "t_grep", true, "t_agent")
      yield* cli.emit({
        type: "system",
        subtype: "task_notification",
        task_id: "task_1",
        tool_use_id: "t_agent",
        status: "completed",
        output_file: "/tmp/task.output",
        summary: "found",
        uuid: "00000000-0000-4000-8000-0000000000f2",
        session_id: cli.sessionId
      })
      yield* assistant(cli, "m3", [{ type: "text", text: "done" }])
      yield* result(cli)
    })
})

const parentOf = (span: Tracer.Span | undefined) => span?.parent._tag === "Some" ? span.parent.value.spanId : undefined
const failedWith = (span: Tracer.Span | undefined) =>
  span?.status._tag === "Ended" && Exit.isFailure(span.status.exit) ? span.attributes.get("error.type") : undefined

describe("GenAI telemetry (fake CLI)", () => {
  it.effect("a turn with a subagent and tools: invoke_agent → execute_tool / invoke_agent → execute_tool, callbacks under their call", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* SpanRecorder.make
      const tokens = Telemetry.genAiTokenUsage.pipe(
        Metric.tagged("gen_ai.operation.name", "invoke_agent"),
        Metric.tagged("gen_ai.provider.name", "anthropic"),
        Metric.tagged("gen_ai.request.model", MODEL),
        Metric.tagged("gen_ai.response.model", MODEL),
        Metric.tagged("gen_ai.token.type", "input")
      )
      const duration = Telemetry.genAiOperationDuration.pipe(
        Metric.tagged("gen_ai.operation.name", "invoke_agent"),
        Metric.tagged("gen_ai.provider.name", "anthropic"),
        Metric.tagged("gen_ai.request.model", MODEL)
      )
      const before = (yield* Metric.value(tokens)).sum
      const invocations = (yield* Metric.value(duration)).count
      yield* ClaudeAgent.query("go", {
        model: MODEL,
        hooks: { PreToolUse: [{ hooks: [() => Effect.succeed({})] }] },
        mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) }
      }).pipe(Stream.runDrain, Effect.provide(turnWithSubagent), Effect.withTracer(tracer))

      const byName = (name: string) => spans.find((s) => s.name === name)
      const session = byName("ClaudeAgent.session")
      const turn = byName("invoke_agent claude-code")
      const bash = byName("execute_tool Bash")
      const mcp = byName("execute_tool mcp__calc__add")
      const agent = byName("invoke_agent Explore")
      const grep = byName("execute_tool Grep")
      expect(parentOf(turn)).toBe(session?.spanId)
      expect([parentOf(bash), parentOf(mcp), parentOf(agent)]).toEqual([turn?.spanId, turn?.spanId, turn?.spanId])
      expect(parentOf(grep)).toBe(agent?.spanId)
      // The callbacks of a call sit under its span: the hook, and the MCP tool call in the tool's
      // one span (no request span around it).
      expect(parentOf(byName("ControlChannel.hook_callback"))).toBe(bash?.spanId)
      const tool = byName("Tool.add")
      expect(parentOf(tool)).toBe(mcp?.spanId)
      expect(tool?.attributes.get("method")).toBe("tools/call")
      expect(
        spans.filter((s) => s.name === "ControlChannel.mcp_message" && s.attributes.get("method") === "tools/call")
      )
        .toEqual([])

      expect(turn?.kind).toBe("client")
      expect(Object.fromEntries(turn?.attributes ?? [])).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.system": "anthropic",
        "gen_ai.agent.name": "claude-code",
        "gen_ai.request.model": MODEL,
        "gen_ai.response.model": MODEL,
        "gen_ai.conversation.id": SESSION,
        "gen_ai.response.finish_reasons": ["end_turn"],
        // The turn's whole spend, subagent included; input with the cached tokens.
        "gen_ai.usage.input_tokens": 4600,
        "gen_ai.usage.output_tokens": 80,
        "gen_ai.usage.cache_read.input_tokens": 4000,
        "gen_ai.usage.cache_creation.input_tokens": 200,
        "claude.usage.cost_usd": expect.closeTo(0.04, 12),
        // The library's own attributes stay.
        "claude.result.subtype": "success",
        "claude.usage.input_tokens": 300
      })
      expect(typeof turn?.attributes.get("gen_ai.response.id")).toBe("string")
      expect(Object.fromEntries(agent?.attributes ?? [])).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Explore",
        "gen_ai.agent.id": "t_agent",
        "gen_ai.conversation.id": SESSION,
        // One response of the four: 1150 of the model's 4600 input tokens.
        "gen_ai.usage.input_tokens": 1150,
        "gen_ai.usage.cache_read.input_tokens": 1000
      })
      expect(agent?.kind).toBe("internal")
      expect(mcp?.attributes.get("gen_ai.tool.type")).toBe("extension")
      expect(bash?.attributes.get("gen_ai.tool.call.id")).toBe("t_bash")
      expect(failedWith(bash)).toBeUndefined()
      expect(failedWith(grep)).toBe("tool_error")
      expect(spans.filter((s) => s.status._tag !== "Ended").map((s) => s.name)).toEqual([])
      // The development tree shows the agents' tokens and cost, and a failed call's error.type.
      const tree = SpanTree.render(spans)
      expect(tree).toMatch(
        /└─ invoke_agent claude-code {2}\S+ ms {2}success {2}4600 in \/ 80 out tokens {2}\$0\.0400\n/
      )
      expect(tree).toMatch(/invoke_agent Explore {2}\S+ ms {2}1150 in \/ \d+ out tokens {2}\$0\.\d{4}\n/)
      expect(tree).toMatch(/└─ execute_tool Grep {2}\S+ ms {2}tool_error {2}failed\n/)
      expect(tree).toMatch(/execute_tool Bash {2}\S+ ms\n\s+│?\s*└─ ControlChannel\.hook_callback/)
      // The convention's token histogram: the turn's input tokens for its model.
      expect((yield* Metric.value(tokens)).sum - before).toBe(4600)
      // And the invocation's duration, in seconds.
      const durations = yield* Metric.value(duration)
      expect(durations.count - invocations).toBe(1)
      expect(durations.max).toBeLessThan(60)
    }))

  it.effect("the CLI dies mid-turn: the turn and its open calls end failed with the error's tag", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* SpanRecorder.make
      const dying = FakeCli.layerClaudeAgent({
        onUserMessage: (_message, cli) =>
          Effect.gen(function*() {
            yield* cli.emit(cli.frames.systemInit())
            yield* assistant(cli, "m1", [{ type: "tool_use", id: "t1", name: "Bash", input: {} }])
            yield* cli.exit({ exitCode: 137 })
          })
      })
      const exit = yield* ClaudeAgent.query("go").pipe(
        Stream.runDrain,
        Effect.provide(dying),
        Effect.withTracer(tracer),
        Effect.exit
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const turn = spans.find((s) => s.name === "invoke_agent claude-code")
      expect(failedWith(turn)).toBe("ProcessError")
      expect(turn?.attributes.get("claude.turn.unfinished")).toBe(true)
      expect(failedWith(spans.find((s) => s.name === "execute_tool Bash"))).toBe("ProcessError")
    }))

  it.effect("the consumer gives up mid-turn: every span ends, the unfinished ones failed with session_closed", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* SpanRecorder.make
      const hanging = FakeCli.layerClaudeAgent({
        onUserMessage: (_message, cli) =>
          Effect.gen(function*() {
            yield* cli.emit(cli.frames.systemInit())
            yield* assistant(cli, "m1", [{
              type: "tool_use",
              id: "t1",
              name: "Agent",
              input: { subagent_type: "Plan" }
            }])
          })
      })
      const reading = yield* ClaudeAgent.query("go").pipe(
        Stream.takeUntil((m) => m.type === "assistant"),
        Stream.runDrain,
        Effect.zipRight(Effect.never),
        Effect.provide(hanging),
        Effect.withTracer(tracer),
        Effect.fork
      )
      yield* Effect.yieldNow().pipe(Effect.repeat({ until: () => spans.some((s) => s.name === "invoke_agent Plan") }))
      yield* Fiber.interrupt(reading)
      expect(spans.filter((s) => s.status._tag !== "Ended").map((s) => s.name)).toEqual([])
      expect(failedWith(spans.find((s) => s.name === "invoke_agent claude-code"))).toBe("session_closed")
      expect(failedWith(spans.find((s) => s.name === "invoke_agent Plan"))).toBe("session_closed")
    }))

  it.effect("under Effect's default tracer no message is looked at", () =>
    Effect.gen(function*() {
      const frame = vi.spyOn(AgentSpans.prototype, "frame")
      try {
        yield* ClaudeAgent.query("go").pipe(Stream.runDrain, Effect.provide(turnWithSubagent))
        expect(frame).not.toHaveBeenCalled()
        const { tracer } = yield* SpanRecorder.make
        yield* ClaudeAgent.query("go").pipe(
          Stream.runDrain,
          Effect.provide(turnWithSubagent),
          Effect.withTracer(tracer)
        )
        expect(frame).toHaveBeenCalled()
      } finally {
        frame.mockRestore()
      }
    }))
})
