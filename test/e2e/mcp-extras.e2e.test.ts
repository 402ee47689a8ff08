// End-to-end MCP server and tool extras (`instructions`, `alwaysLoad`, `searchHint`, `timeout`):
// the real `claude` binary against ScriptedModel. Each test shows the CLI acting on the extra,
// in what it sends the model or in how it runs the tool.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Predicate, Schema, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as McpServer from "../../src/McpServer.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const afterToolResults = (n: number) => (req: ScriptedModel.RecordedRequest) => ScriptedModel.toolResultCount(req) === n

const echo = (name: string, extras: { readonly alwaysLoad?: boolean; readonly searchHint?: string } = {}) =>
  Tool.make(name, {
    description: `Echoes its input (${name})`,
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(text),
    ...extras
  })

// The tools the CLI sent the model with their full definition (deferred ones are listed by name only).
const loadedTools = (req: ScriptedModel.RecordedRequest | undefined): ReadonlyArray<string> => {
  const body = req?.body
  const tools = Predicate.isRecord(body) && Array.isArray(body.tools) ? body.tools : []
  return tools.flatMap((tool: unknown) =>
    Predicate.isRecord(tool) && typeof tool.name === "string" && tool.defer_loading !== true ? [tool.name] : []
  )
}

// Every text block of the request's messages: the CLI sends MCP server instructions (with its
// environment section) as a `system` role message, not in the top-level `system` prompt.
const messageTexts = (req: ScriptedModel.RecordedRequest | undefined): string =>
  (req?.messages ?? []).flatMap((message) =>
    Predicate.isRecord(message) && Array.isArray(message.content)
      ? message.content.flatMap((block: unknown) =>
        Predicate.isRecord(block) && typeof block.text === "string" ? [block.text] : []
      )
      : []
  ).join("\n")

const contentText = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content))

describe("e2e: MCP server and tool extras against the real claude CLI", () => {
  it.scopedLive("instructions reach the system prompt; alwaysLoad tools are loaded up front, others deferred", () =>
    Effect.gen(function*() {
      const notes = McpServer.make({
        name: "notes",
        instructions: "Always file notes under the project name.",
        alwaysLoad: true,
        tools: [echo("file"), echo("archive", { alwaysLoad: false })]
      })
      const misc = McpServer.make({ name: "misc", tools: [echo("ping"), echo("pong", { alwaysLoad: true })] })
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("ok") }])
      yield* ClaudeAgent.query("hi", { ...(yield* model.options()), mcpServers: { notes, misc } }).pipe(Stream.runDrain)

      const [request] = yield* model.mainRequests
      expect(messageTexts(request)).toContain("# MCP Server Instructions")
      expect(messageTexts(request)).toContain("## notes\nAlways file notes under the project name.")
      const loaded = loadedTools(request)
      expect(loaded).toEqual(expect.arrayContaining(["mcp__notes__file", "mcp__misc__pong"]))
      expect(loaded).not.toContain("mcp__notes__archive")
      expect(loaded).not.toContain("mcp__misc__ping")
      // The deferred ones are still offered, by name, for the tool search.
      expect(messageTexts(request)).toContain("mcp__notes__archive")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("the CLI's tool search finds a deferred tool by its searchHint", () =>
    Effect.gen(function*() {
      const tools = McpServer.make({
        name: "tools",
        tools: [echo("hinted", { searchHint: "zebra giraffe" }), echo("unhinted")]
      })
      const model = yield* ScriptedModel.make([
        { match: afterToolResults(0), reply: ScriptedModel.toolUse("ToolSearch", { query: "zebra" }) },
        { match: afterToolResults(1), reply: ScriptedModel.text("found it") }
      ])
      yield* ClaudeAgent.query("find the zebra tool", { ...(yield* model.options()), mcpServers: { tools } }).pipe(
        Stream.runDrain
      )

      const [search] = (yield* model.mainRequests).slice(1).flatMap(ScriptedModel.toolResults)
      // Neither name nor description says "zebra": only the hint can have matched.
      expect(contentText(search?.content)).toContain("mcp__tools__hinted")
      expect(contentText(search?.content)).not.toContain("mcp__tools__unhinted")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a server timeout: the CLI fails a call that runs too long, and the handler is interrupted", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const hang = Tool.make("hang", {
        description: "Never finishes",
        parameters: Schema.Struct({}),
        handler: () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      })
      const slow = McpServer.make({ name: "slow", timeout: "1 second", alwaysLoad: true, tools: [hang] })
      const model = yield* ScriptedModel.make([
        { match: afterToolResults(0), reply: ScriptedModel.toolUse("mcp__slow__hang", {}) },
        { match: afterToolResults(1), reply: ScriptedModel.text("it timed out") }
      ])
      yield* ClaudeAgent.query("run hang", {
        ...(yield* model.options()),
        mcpServers: { slow },
        allowedTools: ["mcp__slow__hang"]
      }).pipe(Stream.runDrain)

      const [result] = (yield* model.mainRequests).slice(1).flatMap(ScriptedModel.toolResults)
      expect(result?.is_error).toBe(true)
      expect(contentText(result?.content)).toContain("timed out after 1s")
      // The CLI cancelled the call (`notifications/cancelled`): the handler's fiber was interrupted.
      yield* Deferred.await(interrupted)
    }).pipe(Effect.provide(AgentLive)))
})
