// Each of a session's services is a Layer a user can replace. These tests replace one at a time,
// over the in-memory fake CLI (a mock transport, no process), and check that the session really
// goes through the replacement: the services are load-bearing, not decorative.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Option, Predicate, Ref, Stream, Tracer } from "effect"
import * as AgentSession from "../../src/AgentSession.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Control from "../../src/schema/Control.js"
import { ControlChannel } from "../../src/services/ControlChannel.js"
import { HookRegistry } from "../../src/services/HookRegistry.js"
import { McpBridge } from "../../src/services/McpBridge.js"
import { PermissionHandler } from "../../src/services/PermissionHandler.js"
import { Transport } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"

const requestOf = (frame: FakeCli.JsonObject): FakeCli.JsonObject =>
  Predicate.isRecord(frame.request) ? frame.request : {}

const isControlRequest = (subtype: string) => (frame: FakeCli.JsonObject) =>
  frame.type === "control_request" && requestOf(frame).subtype === subtype

// A ClaudeAgent over the fake CLI that hands the test each session's CLI handle and launch.
const agentWithHandles = (behaviour: FakeCli.Behaviour = {}) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<FakeCli.FakeCliHandle>()
    const launched = yield* Deferred.make<ReadonlyArray<string>>()
    const agent = ClaudeAgent.make((launch) =>
      Effect.gen(function*() {
        const { cli, transport } = yield* FakeCli.make(behaviour)
        yield* Deferred.succeed(handle, cli)
        yield* Deferred.succeed(launched, launch.args)
        return transport
      })
    )
    return { agent, cli: Deferred.await(handle), args: Deferred.await(launched) }
  })

describe("Transport is a layer swap", () => {
  it.scoped("AgentSession.make writes and reads through the Transport in context, and reports its pid", () =>
    Effect.gen(function*() {
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      // A transport that wraps the fake and records what the session writes.
      const recording = Layer.effect(
        Transport,
        Effect.map(Transport, (inner) => ({
          ...inner,
          send: (frame: unknown) =>
            Ref.update(written, (all) => [...all, Predicate.isRecord(frame) ? String(frame.type) : "?"]).pipe(
              Effect.zipRight(inner.send(frame))
            )
        }))
      ).pipe(Layer.provide(FakeCli.layer({ pid: 4242 })))
      const services = Layer.mergeAll(HookRegistry.layerEmpty, McpBridge.layerEmpty).pipe(
        Layer.provideMerge(ControlChannel.layer()),
        Layer.provideMerge(recording)
      )
      const context = yield* Layer.build(services)
      const session = yield* AgentSession.make().pipe(Effect.provide(context))
      expect(session.pid).toEqual(Option.some(4242))
      yield* session.send("hi")
      const messages = yield* session.receiveResponse.pipe(Stream.runCollect)
      expect(messages.length).toBeGreaterThan(0)
      expect(yield* Ref.get(written)).toEqual(["control_request", "user"])
    }))

  it.effect("ClaudeAgent sessions expose the transport's pid", () =>
    Effect.gen(function*() {
      const pid = yield* Effect.scoped(Effect.map(ClaudeAgent.session(), (s) => s.pid))
      expect(pid).toEqual(Option.some(777))
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent({ pid: 777 }))))
})

describe("ControlChannel is a layer swap", () => {
  it.scoped("ClaudeAgent.make's controlChannel replaces every session's channel", () =>
    Effect.gen(function*() {
      const subtypes = yield* Ref.make<ReadonlyArray<string>>([])
      const agent = ClaudeAgent.make(
        () => Effect.map(FakeCli.make(), ({ transport }) => transport),
        {
          controlChannel: (config) =>
            Layer.scoped(
              ControlChannel,
              Effect.map(ControlChannel.make(config), (channel) => ({
                ...channel,
                // Every outbound request, the session's own included, goes through here.
                start: (request, ...args) =>
                  Ref.update(subtypes, (all) => [...all, request.subtype]).pipe(
                    Effect.zipRight(channel.start(request, ...args))
                  ),
                request: (request, ...args) =>
                  Ref.update(subtypes, (all) => [...all, request.subtype]).pipe(
                    Effect.zipRight(channel.request(request, ...args))
                  )
              }))
            )
        }
      )
      const session = yield* agent.session()
      yield* session.initializationResult
      const reply = yield* session.setModel("claude-haiku-4-5")
      expect(reply.model).toBe("claude-haiku-4-5")
      yield* session.mcpServerStatus()
      expect(yield* Ref.get(subtypes)).toEqual(["initialize", "set_model", "mcp_status"])
    }))
})

describe("HookRegistry is a layer swap", () => {
  // A registry that keeps an audit trail of every hook call (a stand-in for a database) and allows all.
  const auditingRegistry = (audit: Ref.Ref<ReadonlyArray<string>>) =>
    Layer.succeed(HookRegistry, {
      initializeHooks: { PreToolUse: [{ hookCallbackIds: ["audit_0"] }] },
      handleCallback: (request) =>
        Ref.update(audit, (all) => [...all, `${request.callback_id}:${request.tool_use_id ?? "-"}`]).pipe(
          Effect.as({ continue: true })
        )
    })

  it.scoped("a HookRegistry in context is announced in initialize and answers hook_callback", () =>
    Effect.gen(function*() {
      const audit = yield* Ref.make<ReadonlyArray<string>>([])
      const { agent, cli } = yield* agentWithHandles()
      yield* agent.session().pipe(Effect.provide(auditingRegistry(audit)))
      const fake = yield* cli
      const init = yield* fake.awaitSent(isControlRequest("initialize"))
      expect(requestOf(init).hooks).toEqual({ PreToolUse: [{ hookCallbackIds: ["audit_0"] }] })
      const answer = yield* fake.request(Control.HookCallback, {
        callback_id: "audit_0",
        tool_use_id: "toolu_1",
        input: { hook_event_name: "PreToolUse" }
      })
      expect(answer).toMatchObject({ continue: true })
      expect(yield* Ref.get(audit)).toEqual(["audit_0:toolu_1"])
    }))

  it.scoped("hooks given both in options and as a HookRegistry fail with OptionsError naming hooks", () =>
    Effect.gen(function*() {
      const audit = yield* Ref.make<ReadonlyArray<string>>([])
      const { agent } = yield* agentWithHandles()
      const error = yield* agent.session({ hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] } }).pipe(
        Effect.provide(auditingRegistry(audit)),
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "OptionsError", field: "hooks" })
    }))
})

describe("McpBridge is a layer swap", () => {
  it.scoped("an McpBridge in context is announced as sdkMcpServers and answers mcp_message", () =>
    Effect.gen(function*() {
      // A bridge that serves a tool list from elsewhere (e.g. an @effect/ai toolkit).
      const bridge = Layer.succeed(McpBridge, {
        serverNames: Effect.succeed(["toolkit"]),
        setServers: McpBridge.empty.setServers,
        handleMessage: ({ message, server_name }) =>
          Effect.succeed({
            mcp_response: {
              jsonrpc: "2.0",
              id: Predicate.isRecord(message) ? message.id : null,
              result: { tools: [{ name: `${server_name}-echo`, inputSchema: { type: "object" } }] }
            }
          })
      })
      const { agent, cli } = yield* agentWithHandles()
      yield* agent.session().pipe(Effect.provide(bridge))
      const fake = yield* cli
      const init = yield* fake.awaitSent(isControlRequest("initialize"))
      expect(requestOf(init).sdkMcpServers).toEqual(["toolkit"])
      const answer = yield* fake.request(Control.McpMessage, {
        server_name: "toolkit",
        message: { jsonrpc: "2.0", id: 7, method: "tools/list" }
      })
      expect(answer).toMatchObject({ mcp_response: { id: 7, result: { tools: [{ name: "toolkit-echo" }] } } })
    }))
})

describe("PermissionHandler is a layer swap", () => {
  it.scoped("a PermissionHandler in context turns on --permission-prompt-tool=stdio and answers can_use_tool", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      const handler = Layer.succeed(PermissionHandler, {
        canUseTool: (request) =>
          Ref.update(asked, (all) => [...all, request.tool_name]).pipe(
            Effect.as({ behavior: "deny", message: `${request.tool_name} is audited` })
          )
      })
      const { agent, cli, args } = yield* agentWithHandles()
      yield* agent.session().pipe(Effect.provide(handler))
      expect(yield* args).toContain("--permission-prompt-tool=stdio")
      const answer = yield* (yield* cli).request(Control.CanUseTool, { tool_name: "Bash", input: { command: "ls" } })
      expect(answer).toMatchObject({ behavior: "deny", message: "Bash is audited" })
      expect(yield* Ref.get(asked)).toEqual(["Bash"])
    }))

  it.scoped("without a permission callback, can_use_tool is answered as unsupported and the flag is absent", () =>
    Effect.gen(function*() {
      const { agent, cli, args } = yield* agentWithHandles()
      yield* agent.session()
      expect((yield* args).some((arg) => arg.startsWith("--permission-prompt-tool"))).toBe(false)
      const refused = yield* Effect.flip((yield* cli).request(Control.CanUseTool, { tool_name: "Bash", input: {} }))
      expect(refused).toMatchObject({ _tag: "ErrorAnswer", subtype: "can_use_tool" })
      expect(refused.error).toContain("can_use_tool")
    }))
})

describe("inbound control requests are traced", () => {
  it.scoped("each CLI→SDK request runs in a span named after its subtype, with the request id and what it is about", () =>
    Effect.gen(function*() {
      const { spans, tracer: recording } = yield* SpanRecorder.make
      yield* Effect.gen(function*() {
        const { agent, cli } = yield* agentWithHandles()
        yield* agent.session({ hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] } })
        const answer = yield* (yield* cli).request(Control.HookCallback, {
          callback_id: "hook_0",
          input: { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }
        }, { requestId: "req-hook-1" })
        expect(answer).toEqual({})
      }).pipe(Effect.withTracer(recording))
      const span = spans.find((s) => s.name === "ControlChannel.hook_callback")
      expect(span?.attributes.get("control.request_id")).toBe("req-hook-1")
      expect(span?.attributes.get("callback_id")).toBe("hook_0")
      expect(span?.kind).toBe("server")
    }))
})
