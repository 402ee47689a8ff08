// Unit tests of the MCP bridge: `handleMessage` is called directly, as the control channel would
// call it for an `mcp_message` control request (no transport, no CLI).
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  ParseResult,
  Schema,
  Scope,
  Stream
} from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as McpServer from "../../src/McpServer.js"
import * as Control from "../../src/schema/Control.js"
import { McpBridge, make as makeBridge } from "../../src/services/McpBridge.js"
import type { McpBridgeShape } from "../../src/services/McpBridge.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as Tool from "../../src/Tool.js"
import { makeBlockingTool } from "../support/blockingTool.js"

const mcpMessage = (server: string, message: unknown) => ({ subtype: "mcp_message", server_name: server, message })

const send = (bridge: McpBridgeShape, server: string, message: unknown) =>
  bridge.handleMessage(mcpMessage(server, message), "control-req-1")

const callMessage = (id: number, name: string, args: unknown, toolUseId?: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: {
    name,
    arguments: args,
    _meta: toolUseId === undefined ? { progressToken: id } : { "claudecode/toolUseId": toolUseId, progressToken: id }
  }
})

class MockError extends Schema.TaggedError<MockError>()("MockError", { message: Schema.String }) {}

const add = Tool.make("add", {
  description: "Add two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  handler: ({ a, b }) => Effect.succeed(`sum=${a + b}`)
})

const double = Tool.make("double", {
  description: "Double a number given as a string",
  parameters: Schema.Struct({ n: Schema.NumberFromString }),
  handler: ({ n }, { toolUseId }) =>
    // `typeof n` proves the handler got the decoded value, not the wire string.
    Effect.succeed(Tool.text(`${typeof n}:${n * 2}:${toolUseId ?? "none"}`))
})

const failing = Tool.make("failing", {
  description: "Fails with a typed error",
  parameters: Schema.Struct({ kind: Schema.Literal("message", "plain") }),
  handler: ({ kind }) =>
    Effect.gen(function*() {
      if (kind === "message") return yield* Effect.fail(new MockError({ message: "boom" }))
      return yield* Effect.fail({ code: 7 })
    })
})

const dying = Tool.make("dying", {
  description: "Dies",
  parameters: Schema.Struct({}),
  handler: () => Effect.die(new Error("kaput"))
})

const media = Tool.make("media", {
  description: "Returns an image and a resource",
  parameters: Schema.Struct({}),
  handler: () =>
    Effect.succeed({
      content: [
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "hello" } }
      ]
    })
})

const calc = McpServer.make({ name: "calc", tools: [add, double, failing, dying, media] })

const withBridge = <A, E>(f: (bridge: McpBridgeShape) => Effect.Effect<A, E>) => Effect.flatMap(makeBridge([calc]), f)

describe("McpBridge", () => {
  it.scoped("answers initialize with the client's protocol version and the server info", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2099-01-01", capabilities: {}, clientInfo: { name: "claude-code", version: "2" } }
        })
        expect(reply).toEqual({
          mcp_response: {
            jsonrpc: "2.0",
            id: 0,
            result: {
              protocolVersion: "2099-01-01",
              capabilities: { tools: { listChanged: true } },
              serverInfo: { name: "calc", version: "1.0.0" }
            }
          }
        })
        expect(yield* bridge.serverNames).toEqual(["calc"])
      })
    ))

  it.scoped("acknowledges notifications/initialized the way the CLI accepts", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", { jsonrpc: "2.0", method: "notifications/initialized" })
        expect(reply).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      })
    ))

  it.scoped("answers ping with an empty result", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", { jsonrpc: "2.0", id: "p1", method: "ping" })
        expect(reply).toEqual({ mcp_response: { jsonrpc: "2.0", id: "p1", result: {} } })
      })
    ))

  it.scoped("lists tools with JSON Schemas generated from their Schemas", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", { jsonrpc: "2.0", id: 1, method: "tools/list" })
        expect(reply).toMatchObject({ mcp_response: { jsonrpc: "2.0", id: 1 } })
        const tools = (yield* Schema.decodeUnknown(
          Schema.Struct({
            mcp_response: Schema.Struct({
              result: Schema.Struct({
                tools: Schema.Array(Schema.Struct({
                  name: Schema.String,
                  description: Schema.String,
                  inputSchema: Schema.Record({ key: Schema.String, value: Schema.Unknown })
                }))
              })
            })
          })
        )(reply)).mcp_response.result.tools
        expect(tools.map((t) => t.name)).toEqual(["add", "double", "failing", "dying", "media"])
        const addSchema = tools[0]?.inputSchema
        expect(addSchema).toEqual({
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
          additionalProperties: false
        })
        expect(addSchema).not.toHaveProperty("$schema")
        expect(tools[0]?.description).toBe("Add two numbers")
        // The wire (encoded) side of NumberFromString is a string.
        expect(tools[1]?.inputSchema).toMatchObject({ properties: { n: { type: "string" } } })
      })
    ))

  it.scoped("lists a tool's MCP annotations when it has them, and no annotations key otherwise", () =>
    Effect.gen(function*() {
      const lookup = Tool.make("lookup", {
        description: "Looks a city up",
        parameters: Schema.Struct({ city: Schema.String }),
        annotations: {
          title: "City lookup",
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: true
        },
        handler: ({ city }) => Effect.succeed(city)
      })
      expect(lookup.annotations).toEqual({
        title: "City lookup",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true
      })
      const bridge = yield* makeBridge([McpServer.make({ name: "geo", tools: [lookup, add] })])
      const reply = yield* send(bridge, "geo", { jsonrpc: "2.0", id: 1, method: "tools/list" })
      const tools = (yield* Schema.decodeUnknown(
        Schema.Struct({
          mcp_response: Schema.Struct({
            result: Schema.Struct({ tools: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })) })
          })
        })
      )(reply)).mcp_response.result.tools
      expect(tools[0]).toMatchObject({
        name: "lookup",
        annotations: {
          title: "City lookup",
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: true
        }
      })
      expect(tools[1]?.name).toBe("add")
      expect(tools[1]).not.toHaveProperty("annotations")
    }))

  it.scoped("server extras: instructions in initialize, alwaysLoad and searchHint in the tools' _meta", () =>
    Effect.gen(function*() {
      const tool = (name: string, extras: { readonly alwaysLoad?: boolean; readonly searchHint?: string }) =>
        Tool.make(name, {
          description: name,
          parameters: Schema.Struct({}),
          handler: () => Effect.succeed(""),
          ...extras
        })
      const docs = McpServer.make({
        name: "docs",
        instructions: "Search before you read.",
        alwaysLoad: true,
        tools: [
          tool("search", { searchHint: "find lookup grep" }),
          tool("read", { alwaysLoad: false }),
          tool("plain", {})
        ]
      })
      const bridge = yield* makeBridge([docs, McpServer.make({ name: "bare", tools: [tool("x", {})] })])
      const init = yield* send(bridge, "docs", {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "1" }
      })
      expect(init).toMatchObject({ mcp_response: { result: { instructions: "Search before you read." } } })
      const bareInit = yield* send(bridge, "bare", {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "1" }
      })
      expect(bareInit).not.toHaveProperty("mcp_response.result.instructions")

      const listOf = (server: string) =>
        send(bridge, server, { jsonrpc: "2.0", id: 1, method: "tools/list" }).pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Struct({
            mcp_response: Schema.Struct({
              result: Schema.Struct({
                tools: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
              })
            })
          }))),
          Effect.map((reply) => reply.mcp_response.result.tools)
        )
      const tools = yield* listOf("docs")
      // The server's alwaysLoad is every tool's default; a tool's own value wins.
      expect(tools.map((t) => t._meta)).toEqual([
        { "anthropic/alwaysLoad": true, "anthropic/searchHint": "find lookup grep" },
        { "anthropic/alwaysLoad": false },
        { "anthropic/alwaysLoad": true }
      ])
      expect((yield* listOf("bare"))[0]).not.toHaveProperty("_meta")
    }))

  it.scoped("a server timeout becomes the initialize sdkMcpServerConfigs entry, in milliseconds", () =>
    Effect.gen(function*() {
      const bridge = yield* makeBridge([
        McpServer.make({ name: "slow", timeout: "90 seconds", tools: [add] }),
        McpServer.make({ name: "calc", tools: [add] })
      ])
      expect(yield* (bridge.serverConfigs ?? Effect.succeed(undefined))).toEqual({ slow: { timeout: 90_000 } })
      const none = yield* makeBridge([calc])
      expect(yield* (none.serverConfigs ?? Effect.succeed(undefined))).toEqual({})
    }))

  it.scoped("a server timeout under one second, infinite or malformed is an OptionsError naming the server", () =>
    Effect.gen(function*() {
      const bad = (timeout: Duration.DurationInput) =>
        Effect.flip(makeBridge([McpServer.make({ name: "slow", timeout, tools: [add] })]))
      const short = yield* bad("500 millis")
      expect(short).toMatchObject({ _tag: "OptionsError", field: "mcpServers.slow.timeout" })
      expect(short.detail).toContain("at least 1 second")
      expect(yield* bad(Duration.infinity)).toMatchObject({ field: "mcpServers.slow.timeout" })
      expect((yield* bad(-3)).detail).toContain("positive")
    }))

  it("inlines a Schema.Class at the top level and rejects non-object parameters", () => {
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Number, y: Schema.Number }) {}
    const tool = Tool.make("point", {
      description: "A point",
      parameters: Point,
      handler: (p) => Effect.succeed(`${p.x},${p.y}`)
    })
    expect(tool.inputSchema).toMatchObject({ type: "object", required: ["x", "y"] })
    expect(tool.inputSchema).not.toHaveProperty("$ref")
    expect(() =>
      Tool.make("either", {
        description: "A union is not an object schema",
        parameters: Schema.Union(Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String })),
        handler: () => Effect.succeed("")
      })
    ).toThrow(expect.objectContaining({ _tag: "OptionsError", field: `Tool "either" parameters` }))
  })

  it.scoped("calls a tool with the decoded input and the tool_use id", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", callMessage(2, "double", { n: "21" }, "toolu_1"))
        expect(reply).toEqual({
          mcp_response: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "number:42:toolu_1" }] } }
        })
        const sum = yield* send(bridge, "calc", callMessage(3, "add", { a: 2, b: 3 }))
        expect(sum).toEqual({
          mcp_response: { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "sum=5" }] } }
        })
      })
    ))

  it.scoped("answers arguments that do not decode with an error result naming the field", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", callMessage(4, "add", { a: "two", b: 3 }))
        expect(reply).toMatchObject({ mcp_response: { id: 4, result: { isError: true } } })
        const text = JSON.stringify(reply)
        expect(text).toContain("Invalid arguments for tool")
        expect(text).toContain("[\\\"a\\\"]")
        expect(text).toContain("Expected number")
      })
    ))

  it.scoped("decodes parameters whose Schema transforms asynchronously, valid or not", () => {
    // A transformation that waits for a promise: such a Schema cannot decode synchronously.
    const AsyncNumber = Schema.transformOrFail(Schema.String, Schema.Number, {
      strict: true,
      decode: (s, _, ast) =>
        Effect.flatMap(
          Effect.promise(() => Promise.resolve(Number(s))),
          (n) => Number.isNaN(n) ? Effect.fail(new ParseResult.Type(ast, s, "not a number")) : Effect.succeed(n)
        ),
      encode: (n) => Effect.succeed(String(n))
    })
    const slow = Tool.make("slow", {
      description: "Halves a number given as a string",
      parameters: Schema.Struct({ n: AsyncNumber }),
      handler: ({ n }) => Effect.succeed(`${typeof n}:${n / 2}`)
    })
    return Effect.gen(function*() {
      const bridge = yield* makeBridge([McpServer.make({ name: "slow", tools: [slow] })])
      const reply = yield* send(bridge, "slow", callMessage(1, "slow", { n: "42" }))
      expect(reply).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "number:21" }] } }
      })
      const invalid = yield* send(bridge, "slow", callMessage(2, "slow", { n: "many" }))
      expect(invalid).toMatchObject({ mcp_response: { id: 2, result: { isError: true } } })
      expect(JSON.stringify(invalid)).toContain("not a number")
    })
  })

  it.scoped("turns a handler's typed failure into an error result", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const withMessage = yield* send(bridge, "calc", callMessage(5, "failing", { kind: "message" }))
        expect(withMessage).toEqual({
          mcp_response: { jsonrpc: "2.0", id: 5, result: { content: [{ type: "text", text: "boom" }], isError: true } }
        })
        const plain = yield* send(bridge, "calc", callMessage(6, "failing", { kind: "plain" }))
        expect(plain).toEqual({
          mcp_response: {
            jsonrpc: "2.0",
            id: 6,
            result: { content: [{ type: "text", text: "{\"code\":7}" }], isError: true }
          }
        })
      })
    ))

  it.scoped("answers a handler's defect with JSON-RPC error -32603", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", callMessage(7, "dying", {}))
        expect(reply).toMatchObject({ mcp_response: { jsonrpc: "2.0", id: 7, error: { code: -32603 } } })
        expect(JSON.stringify(reply)).toContain("kaput")
      })
    ))

  it.scoped("passes image and resource content through", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", {
          jsonrpc: "2.0",
          id: 8,
          method: "tools/call",
          params: { name: "media" }
        })
        expect(reply).toEqual({
          mcp_response: {
            jsonrpc: "2.0",
            id: 8,
            result: {
              content: [
                { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
                { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "hello" } }
              ]
            }
          }
        })
      })
    ))

  it.scoped("answers an unknown method with -32601 and an unknown tool with -32602", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const method = yield* send(bridge, "calc", { jsonrpc: "2.0", id: 9, method: "resources/list" })
        expect(method).toMatchObject({ mcp_response: { id: 9, error: { code: -32601 } } })
        expect(JSON.stringify(method)).toContain("resources/list")
        const tool = yield* send(bridge, "calc", callMessage(10, "subtract", { a: 1, b: 2 }))
        expect(tool).toMatchObject({ mcp_response: { id: 10, error: { code: -32602 } } })
        expect(JSON.stringify(tool)).toContain("subtract")
      })
    ))

  it.scoped("answers an unknown server with -32601 naming it, like the empty bridge", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "weather", { jsonrpc: "2.0", id: 11, method: "tools/list" })
        expect(reply).toEqual({
          mcp_response: {
            jsonrpc: "2.0",
            id: 11,
            error: { code: -32601, message: "SDK MCP server not found: weather" }
          }
        })
        const empty = yield* send(McpBridge.empty, "weather", { jsonrpc: "2.0", id: 11, method: "tools/list" })
        expect(empty).toEqual(reply)
      })
    ))

  it.scoped("answers a malformed JSON-RPC message with -32600", () =>
    withBridge((bridge) =>
      Effect.gen(function*() {
        const reply = yield* send(bridge, "calc", { jsonrpc: "1.0", id: 12, method: "ping" })
        expect(reply).toMatchObject({ mcp_response: { jsonrpc: "2.0", id: 12, error: { code: -32600 } } })
        const response = yield* send(bridge, "calc", { jsonrpc: "2.0", id: 13, result: {} })
        expect(response).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      })
    ))

  it.scoped("provides the services captured when the bridge was built to the handlers", () => {
    class MockGreeter
      extends Context.Tag("test/MockGreeter")<MockGreeter, { readonly greet: (name: string) => string }>()
    {}
    class MockCounter
      extends Context.Tag("test/MockCounter")<MockCounter, { readonly next: Effect.Effect<number> }>()
    {}
    const greet = Tool.make("greet", {
      description: "Greets",
      parameters: Schema.Struct({ name: Schema.String }),
      handler: ({ name }) => Effect.map(MockGreeter, (g) => g.greet(name))
    })
    const count = Tool.make("count", {
      description: "Counts",
      parameters: Schema.Struct({}),
      handler: () => Effect.flatMap(MockCounter, (c) => c.next).pipe(Effect.map(String))
    })
    // R is inferred as the union of what the tools need.
    const server: McpServer.McpServer<MockGreeter | MockCounter> = McpServer.make({
      name: "svc",
      tools: [greet, count]
    })
    return Effect.gen(function*() {
      const bridge = yield* makeBridge([server]).pipe(
        Effect.provideService(MockGreeter, { greet: (name) => `hello ${name}` }),
        Effect.provideService(MockCounter, { next: Effect.succeed(41) })
      )
      const reply = yield* send(bridge, "svc", callMessage(1, "greet", { name: "ada" }))
      expect(reply).toMatchObject({ mcp_response: { result: { content: [{ type: "text", text: "hello ada" }] } } })
      const counted = yield* send(bridge, "svc", callMessage(2, "count", {}))
      expect(counted).toMatchObject({ mcp_response: { result: { content: [{ type: "text", text: "41" }] } } })
    })
  })

  it.scoped("runs tool calls concurrently", () =>
    Effect.gen(function*() {
      const aStarted = yield* Deferred.make<void>()
      const bStarted = yield* Deferred.make<void>()
      // Each side waits for the other to start: sequential calls would never finish.
      const rendezvous = Tool.make("rendezvous", {
        description: "Waits for the other side",
        parameters: Schema.Struct({ side: Schema.Literal("a", "b") }),
        handler: ({ side }) =>
          side === "a"
            ? Deferred.succeed(aStarted, undefined).pipe(Effect.zipRight(Deferred.await(bStarted)), Effect.as("a done"))
            : Deferred.succeed(bStarted, undefined).pipe(Effect.zipRight(Deferred.await(aStarted)), Effect.as("b done"))
      })
      const bridge = yield* makeBridge([McpServer.make({ name: "meet", tools: [rendezvous] })])
      const [a, b] = yield* Effect.all([
        send(bridge, "meet", callMessage(1, "rendezvous", { side: "a" })),
        send(bridge, "meet", callMessage(2, "rendezvous", { side: "b" }))
      ], { concurrency: "unbounded" })
      expect(a).toMatchObject({ mcp_response: { id: 1, result: { content: [{ text: "a done" }] } } })
      expect(b).toMatchObject({ mcp_response: { id: 2, result: { content: [{ text: "b done" }] } } })
    }))

  const makeBlocking = Effect.gen(function*() {
    const { blocking, interrupted, started } = yield* makeBlockingTool
    const bridge = yield* makeBridge([McpServer.make({ name: "slow", tools: [blocking] })])
    return { bridge, started, interrupted }
  })

  it.scoped("notifications/cancelled interrupts the running tool and the request gets no response", () =>
    Effect.gen(function*() {
      const { bridge, interrupted, started } = yield* makeBlocking
      const handler = yield* Effect.fork(send(bridge, "slow", callMessage(7, "blocking", {})))
      yield* Deferred.await(started)
      const ack = yield* send(bridge, "slow", {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 7, reason: "user interrupted" }
      })
      expect(ack).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      yield* Deferred.await(interrupted)
      const exit = yield* Fiber.await(handler)
      // An interrupted handler is how the control channel knows to write nothing.
      expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
    }))

  it.scoped("notifications/cancelled for another id or server leaves the tool running", () =>
    Effect.gen(function*() {
      const { bridge, interrupted, started } = yield* makeBlocking
      const handler = yield* Effect.fork(send(bridge, "slow", callMessage(7, "blocking", {})))
      yield* Deferred.await(started)
      yield* send(bridge, "slow", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "7" } })
      yield* send(bridge, "slow", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 8 } })
      expect(yield* Deferred.isDone(interrupted)).toBe(false)
      yield* Fiber.interrupt(handler)
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))

  it.scoped("interrupting the handler (control_cancel_request) interrupts the tool fiber", () =>
    Effect.gen(function*() {
      const { bridge, interrupted, started } = yield* makeBlocking
      const handler = yield* Effect.fork(send(bridge, "slow", callMessage(3, "blocking", {})))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(handler)
      // Fiber.interrupt waits for the handler, which waits for the tool's finalizers.
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))

  it.effect("closing the bridge's scope interrupts running tools", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { bridge, interrupted, started } = yield* Scope.extend(makeBlocking, scope)
      const handler = yield* Effect.fork(send(bridge, "slow", callMessage(1, "blocking", {})))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
      const exit = yield* Fiber.await(handler)
      expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
    }))

  it.effect("fails with OptionsError on duplicate tool names or server names", () =>
    Effect.gen(function*() {
      const dupTools = yield* makeBridge([McpServer.make({ name: "calc", tools: [add, add] })]).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect(dupTools._tag).toBe("OptionsError")
      expect(dupTools.field).toBe("mcpServers.calc.tools.add")
      const dupServers = yield* makeBridge([calc, McpServer.make({ name: "calc", tools: [] })]).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect(dupServers.field).toBe("mcpServers.calc")
      expect(dupServers.message).toContain("unique")
      const emptyName = yield* makeBridge([McpServer.make({ name: "", tools: [] })]).pipe(Effect.scoped, Effect.flip)
      expect(emptyName._tag).toBe("OptionsError")
    }))

  it("names tools the way the model sees them", () => {
    expect(McpServer.toolName("calc", "add")).toBe("mcp__calc__add")
    expect(McpServer.toolNames(calc)).toContain("mcp__calc__double")
  })
})

describe("McpBridge.setServers", () => {
  class Prefix extends Context.Tag("test/Prefix")<Prefix, string>() {}
  const shout = Tool.make("shout", {
    description: "Shouts with the prefix in context",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.map(Prefix, (prefix) => Tool.text(`${prefix}${text.toUpperCase()}`))
  })

  it.scoped("reports what was added, removed and replaced, and serves the new set", () =>
    Effect.gen(function*() {
      const bridge = yield* makeBridge([calc])
      const other = McpServer.make({ name: "other", tools: [add] })
      const loud = McpServer.make({ name: "loud", tools: [shout] })
      const first = yield* bridge.setServers([calc, other])
      expect(first).toEqual({ added: ["other"], removed: [], replaced: [] })
      // `loud` needs a service: the one in context at this call is what its tools get.
      const second = yield* bridge.setServers([McpServer.make({ name: "calc", tools: [add] }), loud]).pipe(
        Effect.provideService(Prefix, "> ")
      )
      expect(second).toEqual({ added: ["loud"], removed: ["other"], replaced: ["calc"] })
      expect(yield* bridge.serverNames).toEqual(["calc", "loud"])
      expect(yield* send(bridge, "loud", callMessage(1, "shout", { text: "hi" }))).toMatchObject({
        mcp_response: { result: { content: [{ type: "text", text: "> HI" }] } }
      })
      expect(yield* send(bridge, "other", { jsonrpc: "2.0", id: 2, method: "tools/list" })).toMatchObject({
        mcp_response: { error: { code: -32601 } }
      })
      const calcTools = yield* send(bridge, "calc", { jsonrpc: "2.0", id: 3, method: "tools/list" })
      expect(calcTools).toMatchObject({ mcp_response: { result: { tools: [{ name: "add" }] } } })
    }))

  it.scoped("an invalid set changes nothing", () =>
    Effect.gen(function*() {
      const bridge = yield* makeBridge([calc])
      const error = yield* bridge.setServers([McpServer.make({ name: "x", tools: [add, add] })]).pipe(Effect.flip)
      expect(error.field).toBe("mcpServers.x.tools.add")
      expect(yield* bridge.serverNames).toEqual(["calc"])
    }))

  it.scoped("layerEmpty starts with no server and accepts some later; empty refuses them", () =>
    Effect.gen(function*() {
      const bridge = Context.get(yield* Layer.build(McpBridge.layerEmpty), McpBridge)
      expect(yield* bridge.serverNames).toEqual([])
      expect(yield* bridge.setServers([calc])).toEqual({ added: ["calc"], removed: [], replaced: [] })
      expect(yield* send(bridge, "calc", callMessage(1, "add", { a: 1, b: 2 }))).toMatchObject({
        mcp_response: { result: { content: [{ type: "text", text: "sum=3" }] } }
      })
      expect(yield* McpBridge.empty.setServers([])).toEqual({ added: [], removed: [], replaced: [] })
      const refused = yield* McpBridge.empty.setServers([calc]).pipe(Effect.flip)
      expect(refused._tag).toBe("OptionsError")
    }))
})

describe("SDK server settings in initialize (fake CLI)", () => {
  it.effect("a session sends the bridge's server timeouts as sdkMcpServerConfigs next to sdkMcpServers", () =>
    Effect.gen(function*() {
      const initialize = yield* Deferred.make<Control.InitializePayload>()
      const layer = FakeCli.layerClaudeAgent({
        answers: [
          FakeCli.answer(
            Control.Initialize,
            (payload, _cli, byDefault) => Deferred.succeed(initialize, payload).pipe(Effect.zipRight(byDefault))
          )
        ]
      })
      const slow = McpServer.make({ name: "slow", timeout: Duration.seconds(5), tools: [add] })
      yield* ClaudeAgent.query("hi", { mcpServers: { slow, calc } }).pipe(Stream.runDrain, Effect.provide(layer))
      expect(yield* Deferred.await(initialize)).toMatchObject({
        sdkMcpServers: ["slow", "calc"],
        sdkMcpServerConfigs: { slow: { timeout: 5000 } }
      })
    }))
})

describe("tool handlers from untyped JavaScript", () => {
  it.effect("a handler returning a Promise (as the official SDK's tools do) answers the model with an error and logs a warning", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push([message].flat().map(String).join(" "))
      })
      const asyncTool = Tool.make("lookup", {
        description: "Looks something up",
        parameters: Schema.Struct({ q: Schema.String }),
        handler: () => Promise.resolve(Tool.text("found")) as unknown as Effect.Effect<Tool.ToolResult>
      })
      const result = yield* asyncTool.call({ q: "x" }, "toolu_1").pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain("tool \\\"lookup\\\" handler`: returned a Promise")
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("where an Effect is expected")
    }))
})
