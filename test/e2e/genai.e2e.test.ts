// End-to-end: the OpenTelemetry GenAI spans of a turn on the real `claude` CLI, exported through
// @effect/opentelemetry's NodeSdk into the in-memory exporter. The main agent (ScriptedModel) runs
// Bash (a PreToolUse hook allows it) and an in-process MCP tool, and starts an Explore subagent
// that runs Bash too: the turn is an `invoke_agent` span, the subagent a child `invoke_agent`, each
// call an `execute_tool` under the agent that made it, the library's callback spans under their
// call, and the spans' tokens and cost are the turn's `Usage`, which adds up to the result's.
import { NodeSdk } from "@effect/opentelemetry"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Hook from "../../src/Hook.js"
import * as McpServer from "../../src/McpServer.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"
import * as Usage from "../../src/Usage.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  handler: ({ a, b }) => Effect.succeed(`sum=${a + b}`)
})

const firstMessage = (tag: string) => (req: ScriptedModel.RecordedRequest) =>
  JSON.stringify(req.messages[0]).includes(tag)

describe("e2e: OpenTelemetry GenAI spans", () => {
  it.scopedLive("a turn with tools and a subagent: the invoke_agent / execute_tool tree, attributed, adding up", () => {
    const exporter = new InMemorySpanExporter()
    const Tracing = NodeSdk.layer(() => ({
      resource: { serviceName: "genai-e2e" },
      spanProcessor: new SimpleSpanProcessor(exporter)
    }))
    return Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: (req) => firstMessage("SUBTASK")(req) && ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.toolUse("Bash", { command: "cat notes.txt", description: "read" }, {
            id: "toolu_sub_bash"
          })
        },
        { match: firstMessage("SUBTASK"), reply: ScriptedModel.text("the notes say hello"), times: Infinity },
        {
          match: (req) => ScriptedModel.toolResultCount(req) === 0 && ScriptedModel.lastUserText(req).includes("go"),
          reply: ScriptedModel.sequence(
            ScriptedModel.toolUse("Bash", { command: "echo hi", description: "say hi" }, { id: "toolu_bash" }),
            ScriptedModel.toolUse("mcp__calc__add", { a: 2, b: 3 }, { id: "toolu_add" }),
            ScriptedModel.toolUse("Agent", { description: "Read", prompt: "SUBTASK", subagent_type: "Explore" }, {
              id: "toolu_agent"
            })
          )
        },
        { reply: ScriptedModel.text("all done"), times: Infinity }
      ])
      const options = yield* model.options()
      fs.writeFileSync(path.join(options.cwd, "notes.txt"), "hello\n")
      const read = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({
          ...options,
          mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) },
          allowedTools: ["mcp__calc__add"],
          hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(Hook.allow("test"))] }] }
        })
        yield* session.send("go")
        // The subagent ends before or after the turn's result: read up to the first result after
        // its notification.
        let notified = false
        return yield* session.messages.pipe(
          Stream.takeUntil((m) => {
            if (m.type === "system" && m.subtype === "task_notification") notified = true
            return notified && m.type === "result"
          }),
          Stream.runCollect
        )
      }))
      const results = [...read].filter(Message.isResult)
      const [first] = results
      const last = results[results.length - 1]
      if (first === undefined || last === undefined) return expect.fail("no result")

      // Read before the layer is released: shutting the exporter down clears it.
      const finished = exporter.getFinishedSpans()
      const named = (name: string): ReadableSpan => {
        const found = finished.find((span) => span.name === name)
        if (found === undefined) return expect.fail(`no span ${name} in ${finished.map((s) => s.name).join(", ")}`)
        return found
      }
      const id = (span: ReadableSpan) => span.spanContext().spanId
      const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
      const turns = finished.filter((span) => span.name === "invoke_agent claude-code")
      const turn = turns.find((span) => span.attributes["gen_ai.response.id"] === first.uuid) ?? named("-")
      const bash = named("execute_tool Bash")
      const calc = named("execute_tool mcp__calc__add")
      const agent = named("invoke_agent Explore")
      const subBash = finished.find((span) => span.attributes["gen_ai.tool.call.id"] === "toolu_sub_bash") ?? named("-")

      // The tree.
      expect(parentOf(turn)).toBe(id(named("ClaudeAgent.session")))
      expect([parentOf(bash), parentOf(calc), parentOf(agent)]).toEqual([id(turn), id(turn), id(turn)])
      expect(parentOf(subBash)).toBe(id(agent))
      // Each Bash call's PreToolUse hook, the subagent's too, sits under the call.
      const hooks = finished.filter((span) =>
        span.name === "ControlChannel.hook_callback" && span.attributes.hook_event_name === "PreToolUse"
      )
      expect(hooks.map(parentOf).sort()).toEqual([id(bash), id(subBash)].sort())
      // The MCP tool call's one span is the tool's, under the call.
      expect(
        finished.filter((span) => span.name === "ControlChannel.mcp_message" && span.attributes.method === "tools/call")
      ).toEqual([])
      expect(parentOf(named("Tool.add"))).toBe(id(calc))
      expect(named("Tool.add").attributes).toMatchObject({ method: "tools/call", "tool.name": "add" })
      expect([turn.kind, agent.kind, bash.kind]).toEqual([SpanKind.CLIENT, SpanKind.INTERNAL, SpanKind.INTERNAL])

      // The attributes.
      const turnUsage = Option.getOrThrow(Usage.ofResult(first))
      const inputOf = (s: Usage.Spend) => s.inputTokens + s.cacheReadInputTokens + s.cacheCreationInputTokens
      expect(turn.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.agent.name": "claude-code",
        "gen_ai.conversation.id": first.session_id,
        "gen_ai.response.model": Object.keys(first.modelUsage ?? {})[0],
        "gen_ai.usage.input_tokens": inputOf(turnUsage),
        "gen_ai.usage.output_tokens": turnUsage.outputTokens,
        "gen_ai.usage.cache_read.input_tokens": turnUsage.cacheReadInputTokens,
        "claude.result.subtype": "success"
      })
      expect(turn.attributes["claude.usage.cost_usd"]).toBeCloseTo(turnUsage.costUsd, 12)
      expect(bash.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Bash",
        "gen_ai.tool.call.id": "toolu_bash",
        "gen_ai.tool.type": "function"
      })
      expect(calc.attributes["gen_ai.tool.type"]).toBe("extension")
      expect(subBash.attributes["error.type"]).toBeUndefined()
      expect(agent.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Explore",
        "gen_ai.agent.id": "toolu_agent",
        "claude.task.status": "completed"
      })

      // The subagent's span has its spend over the turns it ran in, and the spans add up to the
      // session's: the turns' invoke_agent spans to the results' total cost.
      const upTo = Option.getOrThrow(Usage.sessionUpTo(last))
      const explore = Option.getOrThrow(Usage.subagent(upTo, "toolu_agent"))
      expect(explore.inputTokens).toBeGreaterThan(0)
      expect(agent.attributes["gen_ai.usage.input_tokens"]).toBe(inputOf(explore))
      expect(agent.attributes["gen_ai.usage.output_tokens"]).toBe(explore.outputTokens)
      expect(agent.attributes["claude.usage.cost_usd"]).toBeCloseTo(explore.costUsd, 12)
      const costOfTurns = turns.reduce((n, span) => n + Number(span.attributes["claude.usage.cost_usd"] ?? 0), 0)
      expect(costOfTurns).toBeCloseTo(last.total_cost_usd ?? 0, 9)
    }).pipe(Effect.provide(Layer.merge(AgentLive, Tracing)))
  })
})
