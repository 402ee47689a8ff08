// SDK MCP tool calls through the control channel, where a `tools/call` of a served tool runs in
// the answer's own fiber under its `Tool.<name>` span, the request's one span (`Captured.spanning`):
// answers, errors, cancellation (notifications/cancelled, control_cancel_request, a server's
// removal), the tool's services and spans.
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, FastCheck as fc, Fiber, Layer, Schema, type Scope, type Tracer } from "effect"
import * as McpServer from "../../src/McpServer.js"
import * as Control from "../../src/schema/Control.js"
import { ControlChannel } from "../../src/services/ControlChannel.js"
import { make as makeBridge } from "../../src/services/McpBridge.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"
import * as Tool from "../../src/Tool.js"
import { makeBlockingTool } from "../support/blockingTool.js"

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

const env = ControlChannel.layer().pipe(Layer.provideMerge(FakeCli.layer()))

// The test's body over a channel whose reader, and so the answers' fibers, record their spans.
const traced = <A, E>(
  body: (spans: ReadonlyArray<Tracer.Span>) => Effect.Effect<A, E, ControlChannel | FakeCli.FakeCli | Scope.Scope>
) =>
  Effect.flatMap(
    SpanRecorder.make,
    ({ spans, tracer }) => body(spans).pipe(Effect.provide(env), Effect.withTracer(tracer))
  )

const call = (id: number, name: string, args: unknown) => ({
  subtype: "mcp_message",
  server_name: "srv",
  message: { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }
})
const list = (id: number) => ({
  subtype: "mcp_message",
  server_name: "srv",
  message: { jsonrpc: "2.0", id, method: "tools/list" }
})
const cancelled = (requestId: number) => ({
  subtype: "mcp_message",
  server_name: "srv",
  message: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } }
})

const tools = Effect.gen(function*() {
  const { blocking, interrupted, started } = yield* makeBlockingTool
  const greet = Tool.make("greet", {
    description: "Greets",
    parameters: Schema.Struct({ name: Schema.String }),
    handler: ({ name }) =>
      Effect.flatMap(Greeting, (greeting) => Effect.succeed(`${greeting}, ${name}`)).pipe(
        Effect.withSpan("user.greet")
      )
  })
  const dying = Tool.make("dying", {
    description: "Dies",
    parameters: Schema.Struct({}),
    handler: () => Effect.die(new Error("kaboom"))
  })
  // A tool written by hand whose `call` throws rather than returning an effect.
  const thrower: Tool.Tool = {
    name: "thrower",
    description: "Throws",
    inputSchema: { type: "object", properties: {} },
    call: () => {
      throw new Error("thrown")
    }
  }
  return { tools: [greet, blocking, dying, thrower], started, interrupted }
})

const setUp = Effect.gen(function*() {
  const control = yield* ControlChannel
  const cli = yield* FakeCli.FakeCli
  const { interrupted, started, tools: served } = yield* tools
  const bridge = yield* makeBridge([McpServer.make({ name: "srv", tools: served })]).pipe(
    Effect.provideService(Greeting, "hello")
  )
  yield* control.handle(Control.McpMessage, bridge.handleMessage)
  return { bridge, cli, interrupted, started }
})

const responsesTo = (cli: FakeCli.FakeCliHandle, requestId: string) =>
  Effect.map(
    cli.sent,
    (frames) =>
      frames.filter((f) =>
        f.type === "control_response" && typeof f.response === "object" && f.response !== null &&
        Reflect.get(f.response, "request_id") === requestId
      )
  )

describe("McpBridge through the control channel", () => {
  it.scoped("a tool call is answered with the server's services, in one span Tool.<name> with its spans under it", () =>
    traced((spans) =>
      Effect.gen(function*() {
        const { cli } = yield* setUp
        yield* cli.requestRaw(list(0), "r-0")
        const answer = yield* cli.requestRaw(call(1, "greet", { name: "Ada" }), "r-1")
        expect(answer).toMatchObject({
          subtype: "success",
          response: {
            mcp_response: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "hello, Ada" }] } }
          }
        })
        const named = (name: string) => spans.filter((s) => s.name === name)
        const tools = named("Tool.greet")
        const requests = named("ControlChannel.mcp_message")
        const [inner] = named("user.greet")
        expect(tools).toHaveLength(1)
        const [tool] = tools
        // The call's one span is the tool's; `tools/list` keeps the request's, and both sit where
        // the channel puts its requests.
        expect(requests.map((s) => s.attributes.get("method"))).toEqual(["tools/list"])
        expect(tool?.parent).toEqual(requests[0]?.parent)
        expect(inner?.parent._tag === "Some" && inner.parent.value.spanId).toBe(tool?.spanId)
        expect(tool?.kind).toBe("server")
        expect(Object.fromEntries(tool?.attributes ?? [])).toEqual({
          "control.subtype": "mcp_message",
          "control.request_id": "r-1",
          server_name: "srv",
          method: "tools/call",
          "mcp.server": "srv",
          "tool.name": "greet"
        })
        expect(tool?.status._tag === "Ended" && tool.status.exit._tag).toBe("Success")
      })
    ))

  // The channel reads a `tools/call` in plain code and leaves other shapes to the Schemas, which
  // a direct call of the handler goes through: both must answer every message alike.
  it.scoped("any message is answered through the channel as the handler answers it directly", () =>
    Effect.gen(function*() {
      const { bridge, cli } = yield* setUp
      const scalar = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null), fc.boolean())
      const value = fc.oneof(
        scalar,
        fc.array(scalar, { maxLength: 2 }),
        fc.dictionary(fc.constantFrom("name", "x"), scalar)
      )
      const message = fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record({
            jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant("2.0") }, { weight: 1, arbitrary: value }),
            id: fc.oneof(fc.integer({ min: 100 }), fc.string({ maxLength: 4 }), value),
            method: fc.oneof({
              weight: 4,
              arbitrary: fc.constantFrom("tools/call", "tools/call", "ping", "tools/call ")
            }, {
              weight: 1,
              arbitrary: value
            }),
            params: fc.oneof(
              {
                weight: 4,
                arbitrary: fc.record({
                  name: fc.oneof({
                    weight: 4,
                    arbitrary: fc.constantFrom("greet", "greet", "dying", "thrower", "nope")
                  }, {
                    weight: 1,
                    arbitrary: value
                  }),
                  arguments: fc.oneof(fc.record({ name: fc.string({ maxLength: 4 }) }), value),
                  _meta: fc.oneof(fc.record({ "claudecode/toolUseId": fc.string({ maxLength: 4 }) }), value)
                }, { requiredKeys: ["name"] })
              },
              { weight: 1, arbitrary: value }
            )
          }, { requiredKeys: ["jsonrpc", "method", "params"] })
        },
        { weight: 1, arbitrary: value }
      )
      const messages = fc.sample(message, 400).map((m) => JSON.parse(JSON.stringify(m)))
      const fast = messages.filter((m) =>
        m?.jsonrpc === "2.0" && m?.method === "tools/call" && m?.params?.name === "greet"
      )
        .length
      expect(fast).toBeGreaterThan(10)
      let n = 0
      for (const m of messages) {
        const payload = { server_name: "srv", message: m }
        const direct = yield* bridge.handleMessage(payload, `d-${n}`)
        const answer = yield* cli.requestRaw({ subtype: "mcp_message", ...payload }, `p-${n++}`)
        expect({ message: m, answer: answer.response }).toEqual({ message: m, answer: direct })
      }
    }).pipe(Effect.provide(env)))

  it.scoped("with tracing off, a tool call is still answered, and its spans are not recorded", () =>
    traced((spans) =>
      Effect.gen(function*() {
        const { cli } = yield* setUp
        const answer = yield* cli.requestRaw(call(3, "greet", { name: "Bo" }), "r-3")
        expect(answer).toMatchObject({
          response: { mcp_response: { id: 3, result: { content: [{ type: "text", text: "hello, Bo" }] } } }
        })
        expect(spans.filter((s) => s.name === "Tool.greet")).toEqual([])
      })
    ).pipe(Effect.withTracerEnabled(false)))

  it.scoped("a tools/call that names no served tool or has malformed params keeps the request's span", () =>
    traced((spans) =>
      Effect.gen(function*() {
        const { cli } = yield* setUp
        const unknown = yield* cli.requestRaw(call(5, "nope", {}), "r-5")
        expect(unknown).toMatchObject({ response: { mcp_response: { id: 5, error: { code: -32602 } } } })
        const malformed = yield* cli.requestRaw({
          subtype: "mcp_message",
          server_name: "srv",
          message: { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: 1 } }
        }, "r-6")
        expect(malformed).toMatchObject({ response: { mcp_response: { id: 6, error: { code: -32602 } } } })
        const requests = spans.filter((s) => s.name === "ControlChannel.mcp_message")
        expect(requests.map((s) => [s.attributes.get("control.request_id"), s.attributes.get("method")])).toEqual([
          ["r-5", "tools/call"],
          ["r-6", "tools/call"]
        ])
        expect(spans.filter((s) => s.name.startsWith("Tool."))).toEqual([])
      })
    ))

  // A tool's failure as a defect: one that dies in its effect, one whose `call` throws.
  for (const [id, name, message] of [[2, "dying", "kaboom"], [4, "thrower", "thrown"]] as const) {
    it.scoped(`a tool that ${name === "dying" ? "dies" : "throws"} is answered with -32603, its span ended with the defect`, () =>
      traced((spans) =>
        Effect.gen(function*() {
          const { cli } = yield* setUp
          const answer = yield* cli.requestRaw(call(id, name, {}), `r-${id}`)
          expect(answer).toMatchObject({
            subtype: "success",
            response: {
              mcp_response: { id, error: { code: -32603, message: `Internal error in tool ${name}: ${message}` } }
            }
          })
          const tool = spans.find((s) => s.name === `Tool.${name}`)
          expect(tool?.status._tag === "Ended" && tool.status.exit._tag).toBe("Failure")
          expect(tool?.attributes.get("control.request_id")).toBe(`r-${id}`)
          expect(spans.filter((s) => s.name === "ControlChannel.mcp_message")).toEqual([])
        })
      ))
  }

  it.scoped("notifications/cancelled interrupts the tool and its request gets no answer", () =>
    traced((spans) =>
      Effect.gen(function*() {
        const { cli, interrupted, started } = yield* setUp
        const pending = yield* Effect.fork(cli.requestRaw(call(7, "blocking", {}), "r-7"))
        yield* Deferred.await(started)
        // While it runs, the same JSON-RPC id is refused.
        const duplicate = yield* cli.requestRaw(call(7, "greet", { name: "x" }), "r-dup")
        expect(duplicate).toMatchObject({ response: { mcp_response: { id: 7, error: { code: -32600 } } } })
        yield* cli.requestRaw(cancelled(7), "r-cancel")
        yield* Deferred.await(interrupted)
        expect(yield* responsesTo(cli, "r-7")).toEqual([])
        expect(pending.unsafePoll()).toBeNull()
        yield* Fiber.interrupt(pending)
        const tool = spans.find((s) => s.name === "Tool.blocking")
        expect(tool?.status._tag === "Ended" && Exit.isInterrupted(tool.status.exit)).toBe(true)
        expect(tool?.attributes.get("control.request_id")).toBe("r-7")
        // The refused duplicate and the notification are requests of their own, in spans of their own.
        const requests = spans.filter((s) => s.name === "ControlChannel.mcp_message")
        expect(requests.map((s) => s.attributes.get("control.request_id"))).toEqual(["r-dup", "r-cancel"])
        // The id is free again.
        const again = yield* cli.requestRaw(call(7, "greet", { name: "y" }), "r-again")
        expect(again).toMatchObject({
          response: { mcp_response: { id: 7, result: { content: [{ text: "hello, y" }] } } }
        })
      })
    ))

  it.scoped("control_cancel_request interrupts the tool; removing its server does too", () =>
    Effect.gen(function*() {
      const { bridge, cli, interrupted, started } = yield* setUp
      const first = yield* Effect.fork(cli.requestRaw(call(8, "blocking", {}), "r-8"))
      yield* Deferred.await(started)
      yield* cli.cancel("r-8")
      yield* Deferred.await(interrupted)
      expect(yield* responsesTo(cli, "r-8")).toEqual([])
      yield* Fiber.interrupt(first)

      const second = yield* setUp.pipe(Effect.provideService(ControlChannel, yield* ControlChannel))
      const running = yield* Effect.fork(second.cli.requestRaw(call(9, "blocking", {}), "r-9"))
      yield* Deferred.await(second.started)
      yield* second.bridge.setServers([])
      yield* Deferred.await(second.interrupted)
      expect(yield* responsesTo(second.cli, "r-9")).toEqual([])
      yield* Fiber.interrupt(running)
      expect(bridge).toBeDefined()
    }).pipe(Effect.provide(env)))
})
