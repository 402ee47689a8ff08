// End-to-end callbacks: the real `claude` binary against ScriptedModel, with SDK MCP tools, hooks
// and canUseTool written as Effects. Each test proves the callback changed what the CLI did.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Layer, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as McpServer from "../../src/McpServer.js"
import * as Permission from "../../src/Permission.js"
import * as Hook from "../../src/Hook.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

// The request made after n tool calls were answered.
const afterToolResults = (n: number) => (req: ScriptedModel.RecordedRequest) => ScriptedModel.toolResultCount(req) === n

const contentText = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content))

const results = (messages: Chunk.Chunk<Message.Message>) => Chunk.toArray(messages).filter(Message.isResult)

describe("e2e: callbacks against the real claude CLI", () => {
  it.scopedLive("an SDK MCP tool gets Schema-decoded input and its result reaches the model", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<{ readonly a: number; readonly b: number }>()
      const add = Tool.make("add", {
        description: "Adds two numbers",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        handler: ({ a, b }) => Deferred.succeed(seen, { a, b }).pipe(Effect.as(Tool.text(`sum=${a + b}`)))
      })
      const calc = McpServer.make({ name: "calc", version: "1.0.0", tools: [add] })
      const model = yield* ScriptedModel.make([
        { match: afterToolResults(0), reply: ScriptedModel.toolUse("mcp__calc__add", { a: 2, b: 3 }) },
        { match: afterToolResults(1), reply: ScriptedModel.text("The sum is 5.") }
      ])
      const messages = yield* ClaudeAgent.query("What is 2 + 3?", {
        ...(yield* model.options()),
        mcpServers: { calc },
        allowedTools: ["mcp__calc__add"]
      }).pipe(Stream.runCollect)

      expect(yield* Deferred.await(seen)).toEqual({ a: 2, b: 3 })
      const toolResults = (yield* model.mainRequests).flatMap(ScriptedModel.toolResults)
      expect(toolResults).toHaveLength(1)
      expect(contentText(toolResults[0]?.content)).toContain("sum=5")
      expect(results(messages).map((r) => r.subtype)).toEqual(["success"])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a PreToolUse hook denies Bash: the command never runs and the model sees the reason", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: afterToolResults(0),
          reply: ScriptedModel.toolUse("Bash", { command: "touch hook_marker && echo touched", description: "touch" })
        },
        { match: afterToolResults(1), reply: ScriptedModel.text("I could not run it.") }
      ])
      const options = yield* model.options()
      const inputs: Array<Hook.HookInput> = []
      yield* ClaudeAgent.query("touch the marker", {
        ...options,
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [(input) => Effect.sync(() => inputs.push(input)).pipe(Effect.as(Hook.deny("blocked by test hook")))]
          }]
        }
      }).pipe(Stream.runDrain)

      expect(inputs.map((i) => i.hook_event_name)).toEqual(["PreToolUse"])
      const [input] = inputs
      expect(input?.hook_event_name === "PreToolUse" ? input.tool_name : undefined).toBe("Bash")
      expect(fs.existsSync(path.join(options.cwd, "hook_marker"))).toBe(false)
      const [result] = (yield* model.mainRequests).flatMap(ScriptedModel.toolResults)
      expect(result?.is_error).toBe(true)
      expect(contentText(result?.content)).toContain("blocked by test hook")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a PreToolUse hook allows with updatedInput; a PostToolUse hook adds context for the model", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: afterToolResults(0),
          reply: ScriptedModel.toolUse("Bash", { command: "echo original > out.txt", description: "write" })
        },
        { match: afterToolResults(1), reply: ScriptedModel.text("done") }
      ])
      const options = yield* model.options()
      yield* ClaudeAgent.query("write the file", {
        ...options,
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [
              () => Effect.succeed(Hook.allow("rewritten", { command: "echo updated > out.txt", description: "write" }))
            ]
          }],
          PostToolUse: [{
            matcher: "Bash",
            hooks: [() => Effect.succeed(Hook.addContext("PostToolUse", "POST-HOOK-CONTEXT-42"))]
          }]
        }
      }).pipe(Stream.runDrain)

      expect(fs.readFileSync(path.join(options.cwd, "out.txt"), "utf8").trim()).toBe("updated")
      const second = (yield* model.mainRequests).find(afterToolResults(1))
      expect(JSON.stringify(second?.messages)).toContain("POST-HOOK-CONTEXT-42")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("canUseTool allows Write with updatedInput and denies another call", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: afterToolResults(0),
          reply: ScriptedModel.toolUse("Write", { file_path: "out.txt", content: "original content" })
        },
        {
          match: afterToolResults(1),
          reply: ScriptedModel.toolUse("Write", { file_path: "denied.txt", content: "never" })
        },
        { match: afterToolResults(2), reply: ScriptedModel.text("done") }
      ])
      const options = yield* model.options()
      const asked: Array<string> = []
      const messages = yield* ClaudeAgent.query("write two files", {
        ...options,
        canUseTool: (toolName, input, context) =>
          Effect.sync(() => {
            asked.push(`${toolName}:${context.toolUseID.length > 0}`)
            return String(input.file_path).endsWith("out.txt")
              ? Permission.allow({ updatedInput: { ...input, content: "rewritten by host" } })
              : Permission.deny("denied by host")
          })
      }).pipe(Stream.runCollect)

      expect(asked).toEqual(["Write:true", "Write:true"])
      expect(fs.readFileSync(path.join(options.cwd, "out.txt"), "utf8")).toBe("rewritten by host")
      expect(fs.existsSync(path.join(options.cwd, "denied.txt"))).toBe(false)
      const toolResults = (yield* model.mainRequests).flatMap(ScriptedModel.toolResults)
      expect(contentText(toolResults[toolResults.length - 1]?.content)).toContain("denied by host")
      expect(results(messages).map((r) => (r.subtype === "success" ? r.result : r.subtype))).toEqual(["done"])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("an interrupt while a permission prompt is pending cancels the callback's fiber", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { match: afterToolResults(0), reply: ScriptedModel.toolUse("Write", { file_path: "x.txt", content: "x" }) },
        { reply: ScriptedModel.text("after the interrupt"), times: Infinity }
      ])
      const options = yield* model.options()
      const asked = yield* Deferred.make<void>()
      const cancelled = yield* Deferred.make<void>()
      const session = yield* ClaudeAgent.session({
        ...options,
        canUseTool: () =>
          Deferred.succeed(asked, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined))
          )
      })
      yield* session.send("write x")
      const turn = yield* session.receiveResponse.pipe(Stream.runCollect, Effect.fork)
      yield* Deferred.await(asked)
      yield* session.interrupt()
      yield* Deferred.await(cancelled)
      const [result] = results(yield* Fiber.join(turn))
      expect(result?.subtype).toBe("error_during_execution")
      expect(fs.existsSync(path.join(options.cwd, "x.txt"))).toBe(false)
    }).pipe(Effect.provide(AgentLive)))
})
