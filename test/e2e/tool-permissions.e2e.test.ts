// In-process tools and the CLI's permission rules, on the real CLI against a scripted model: a
// tool nobody allowed never runs (the model is told so); `allowedTools` with
// `McpServer.toolNames`, or a rule naming the whole server, lets it run.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as McpServer from "../../src/McpServer.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const addTool = (handler: (sum: number) => Effect.Effect<string>) =>
  Tool.make("add", {
    description: "Adds two numbers",
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    handler: ({ a, b }) => handler(a + b)
  })
// The server as the README shows it, for the names `McpServer.toolNames` gives.
const calc = McpServer.make({ name: "calc", tools: [addTool((sum) => Effect.succeed(`${sum}`))] })

// One call of mcp__calc__add, then a text answer; returns how often the handler ran and what
// the model was told.
const callAdd = (allowedTools: ReadonlyArray<string> | undefined) =>
  Effect.gen(function*() {
    const ran = yield* Ref.make(0)
    const add = addTool((sum) => Effect.as(Ref.update(ran, (n) => n + 1), `${sum}`))
    const model = yield* ScriptedModel.make([
      {
        match: (r) => ScriptedModel.toolResultCount(r) === 0,
        reply: ScriptedModel.toolUse("mcp__calc__add", { a: 2, b: 3 })
      },
      { match: (r) => ScriptedModel.toolResultCount(r) === 1, reply: ScriptedModel.text("done") }
    ])
    yield* ClaudeAgent.query("add 2 and 3", {
      ...(yield* model.options()),
      mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) },
      ...(allowedTools === undefined ? {} : { allowedTools })
    }).pipe(Stream.runDrain)
    const told = (yield* model.mainRequests)
      .flatMap((r) => ScriptedModel.toolResults(r))
      .map((result) => JSON.stringify(result.content))
    return { ran: yield* Ref.get(ran), told }
  })

describe("in-process tools need a permission rule (real CLI)", () => {
  it.scopedLive("with no allowedTools and no canUseTool the handler never runs; the model is told it was not granted", () =>
    Effect.gen(function*() {
      const { ran, told } = yield* callAdd(undefined)
      expect(ran).toBe(0)
      expect(told.join("\n")).toContain(
        "Claude requested permissions to use mcp__calc__add, but you haven't granted it yet"
      )
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("allowedTools: McpServer.toolNames(server) lets it run", () =>
    Effect.gen(function*() {
      expect(McpServer.toolNames(calc)).toEqual(["mcp__calc__add"])
      const { ran, told } = yield* callAdd(McpServer.toolNames(calc))
      expect(ran).toBe(1)
      expect(told.join("\n")).toContain("5")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("allowedTools: [McpServer.permissionRule(server)] (mcp__calc) allows all its tools", () =>
    Effect.gen(function*() {
      expect(McpServer.permissionRule(calc)).toBe("mcp__calc")
      const { ran } = yield* callAdd([McpServer.permissionRule(calc)])
      expect(ran).toBe(1)
    }).pipe(Effect.provide(AgentLive)))
})
