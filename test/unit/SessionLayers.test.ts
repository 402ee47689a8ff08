// Each of a session's five services is a Layer, and each is replaced the same way: a layer in the
// `SessionServices.Layers` given to `ClaudeAgent.make`. These tests replace one at a time, over the
// in-memory fake CLI (a mock transport, no process), and check that the session really goes
// through the replacement: the services are load-bearing, not decorative.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, ExecutionStrategy, Exit, Layer, Option, Predicate, Ref, Schema, Scope, Stream } from "effect"
import * as AgentSession from "../../src/AgentSession.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionServices from "../../src/layers/SessionServices.js"
import * as McpServer from "../../src/McpServer.js"
import * as Control from "../../src/schema/Control.js"
import { ControlChannel } from "../../src/services/ControlChannel.js"
import { HookRegistry } from "../../src/services/HookRegistry.js"
import { McpBridge } from "../../src/services/McpBridge.js"
import { PermissionHandler } from "../../src/services/PermissionHandler.js"
import { Transport } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"
import * as Tool from "../../src/Tool.js"

const requestOf = (frame: FakeCli.JsonObject): FakeCli.JsonObject =>
  Predicate.isRecord(frame.request) ? frame.request : {}

const isControlRequest = (subtype: string) => (frame: FakeCli.JsonObject) =>
  frame.type === "control_request" && requestOf(frame).subtype === subtype

// A fake-CLI transport layer that hands the test each session's CLI handle and launch args.
const fakeTransport = (behaviour: FakeCli.Behaviour = {}) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<FakeCli.FakeCliHandle>()
    const launched = yield* Deferred.make<ReadonlyArray<string>>()
    const transport = Layer.scoped(
      Transport,
      Effect.gen(function*() {
        const { launch } = yield* SessionServices.SessionLaunch
        const { cli, transport } = yield* FakeCli.make(behaviour)
        yield* Deferred.succeed(handle, cli)
        yield* Deferred.succeed(launched, launch.args)
        return transport
      })
    )
    return { transport, cli: Deferred.await(handle), args: Deferred.await(launched) }
  })

// A ClaudeAgent over the fake CLI with the other layers given, and the handles of its one session.
const agentWith = (layers: Omit<SessionServices.Layers, "transport"> = {}) =>
  Effect.map(fakeTransport(), ({ args, cli, transport }) => ({
    agent: ClaudeAgent.make({ ...layers, transport }),
    cli,
    args
  }))

describe("Transport is a layer swap", () => {
  it.scoped("every session is built on the transport layer, which reads the session's launch from context", () =>
    Effect.gen(function*() {
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      const seen = yield* Ref.make<ReadonlyArray<string | undefined>>([])
      // A transport that wraps the fake and records what the session writes and the model it launched with.
      const transport = Layer.effect(
        Transport,
        Effect.gen(function*() {
          const { options } = yield* SessionServices.SessionLaunch
          yield* Ref.update(seen, (all) => [...all, options.model])
          const inner = yield* Transport
          return {
            ...inner,
            send: (frame: unknown) =>
              Ref.update(written, (all) => [...all, Predicate.isRecord(frame) ? String(frame.type) : "?"]).pipe(
                Effect.zipRight(inner.send(frame))
              )
          }
        })
      ).pipe(Layer.provide(FakeCli.layer({ pid: 4242 })))
      const agent = ClaudeAgent.make({ transport })
      const session = yield* agent.session({ model: "claude-haiku-4-5" })
      expect(session.pid).toEqual(Option.some(4242))
      yield* session.send("hi")
      const messages = yield* session.receiveResponse.pipe(Stream.runCollect)
      expect(messages.length).toBeGreaterThan(0)
      expect(yield* Ref.get(written)).toEqual(["control_request", "user"])
      // Built again for the next session, with that session's options.
      yield* Effect.scoped(agent.session({ model: "claude-opus-4-1" }))
      expect(yield* Ref.get(seen)).toEqual(["claude-haiku-4-5", "claude-opus-4-1"])
    }))

  it.scoped("AgentSession.make over a graph built by hand reads the Transport in context", () =>
    Effect.gen(function*() {
      const services = Layer.mergeAll(HookRegistry.layerEmpty, McpBridge.layerEmpty).pipe(
        Layer.provideMerge(ControlChannel.layer()),
        Layer.provideMerge(FakeCli.layer({ pid: 4243 }))
      )
      const session = yield* AgentSession.make().pipe(Effect.provide(yield* Layer.build(services)))
      expect(session.pid).toEqual(Option.some(4243))
      yield* session.send("hi")
      expect((yield* session.receiveResponse.pipe(Stream.runCollect)).length).toBeGreaterThan(0)
    }))

  it.effect("ClaudeAgent sessions expose the transport's pid", () =>
    Effect.gen(function*() {
      const pid = yield* Effect.scoped(Effect.map(ClaudeAgent.session(), (s) => s.pid))
      expect(pid).toEqual(Option.some(777))
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent({ pid: 777 }))))
})

describe("the services' lifetime", () => {
  // Each service's layer logs its stop; the registry's logs its start and its end with yields in
  // between, so stops run side by side would log the transport's in between.
  const stops = (log: Ref.Ref<ReadonlyArray<string>>) => {
    const stopped = (name: string) => Ref.update(log, (all) => [...all, name])
    return {
      transport: Layer.merge(FakeCli.layer(), Layer.scopedDiscard(Effect.addFinalizer(() => stopped("transport")))),
      hookRegistry: Layer.scoped(
        HookRegistry,
        Effect.as(
          Effect.addFinalizer(() =>
            stopped("hooks").pipe(
              Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 10)),
              Effect.zipRight(stopped("hooks"))
            )
          ),
          HookRegistry.empty
        )
      )
    }
  }

  it.effect("stop one after the other, the last built first, in a sequential scope and in a parallel one", () =>
    Effect.gen(function*() {
      for (const strategy of [ExecutionStrategy.sequential, ExecutionStrategy.parallel]) {
        const log = yield* Ref.make<ReadonlyArray<string>>([])
        const agent = ClaudeAgent.make(stops(log))
        const scope = yield* Scope.make(strategy)
        yield* Scope.extend(agent.session(), scope)
        yield* Scope.close(scope, Exit.void)
        expect(yield* Ref.get(log)).toEqual(["hooks", "hooks", "transport"])
      }
    }))
})

describe("ControlChannel is a layer swap", () => {
  it.scoped("a controlChannel layer replaces every session's channel", () =>
    Effect.gen(function*() {
      const subtypes = yield* Ref.make<ReadonlyArray<string>>([])
      const controlChannel = Layer.effect(
        ControlChannel,
        Effect.map(ControlChannel, (channel) => ({
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
      ).pipe(Layer.provide(SessionServices.controlChannel))
      const { agent } = yield* agentWith({ controlChannel })
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

  it.scoped("a hookRegistry layer is announced in initialize and answers hook_callback", () =>
    Effect.gen(function*() {
      const audit = yield* Ref.make<ReadonlyArray<string>>([])
      const { agent, cli } = yield* agentWith({ hookRegistry: auditingRegistry(audit) })
      yield* agent.session()
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

  it.scoped("hooks given both in options and as a hookRegistry layer fail with OptionsError naming hooks", () =>
    Effect.gen(function*() {
      const audit = yield* Ref.make<ReadonlyArray<string>>([])
      const { agent } = yield* agentWith({ hookRegistry: auditingRegistry(audit) })
      const error = yield* agent.session({ hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] } }).pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "OptionsError", field: "hooks" })
    }))
})

describe("McpBridge is a layer swap", () => {
  it.scoped("an mcpBridge layer is announced as sdkMcpServers and answers mcp_message", () =>
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
      const { agent, cli } = yield* agentWith({ mcpBridge: bridge })
      yield* agent.session()
      const fake = yield* cli
      const init = yield* fake.awaitSent(isControlRequest("initialize"))
      expect(requestOf(init).sdkMcpServers).toEqual(["toolkit"])
      const answer = yield* fake.request(Control.McpMessage, {
        server_name: "toolkit",
        message: { jsonrpc: "2.0", id: 7, method: "tools/list" }
      })
      expect(answer).toMatchObject({ mcp_response: { id: 7, result: { tools: [{ name: "toolkit-echo" }] } } })
    }))

  it.scoped("in-process servers given both in options and as an mcpBridge layer fail with OptionsError naming mcpServers", () =>
    Effect.gen(function*() {
      const { agent } = yield* agentWith({ mcpBridge: McpBridge.layerEmpty })
      const calc = McpServer.make({ name: "calc", tools: [] })
      const error = yield* agent.session({ mcpServers: { calc } }).pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "OptionsError", field: "mcpServers" })
      // External servers are not the bridge's: they go with any bridge.
      yield* agent.session({ mcpServers: { docs: { type: "http", url: "https://example.com/mcp" } } })
    }))
})

describe("PermissionHandler is a layer swap", () => {
  it.scoped("a callback layer is built over the session's channel and launch, and a canUseTool option too is an OptionsError", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      // Reads what is below it: the session's options, and its channel (it asks the CLI for the MCP status).
      const handler = Layer.effect(
        PermissionHandler,
        Effect.gen(function*() {
          const { options } = yield* SessionServices.SessionLaunch
          const channel = yield* ControlChannel
          return {
            canUseTool: (request) =>
              Effect.gen(function*() {
                const status = yield* channel.request(Control.McpStatus, {}).pipe(Effect.orDie)
                yield* Ref.update(
                  asked,
                  (all) => [...all, `${options.model}:${request.tool_name}:${status.mcpServers.length}`]
                )
                return { behavior: "allow", updatedInput: request.input }
              })
          }
        })
      )
      const { agent, cli } = yield* agentWith({ permissionHandler: handler })
      yield* agent.session({ model: "claude-haiku-4-5" })
      const answer = yield* (yield* cli).requestRaw({
        subtype: "can_use_tool",
        tool_name: "Read",
        input: { path: "a" }
      })
      expect(answer).toMatchObject({ subtype: "success", response: { behavior: "allow" } })
      expect(yield* Ref.get(asked)).toEqual(["claude-haiku-4-5:Read:0"])
      const error = yield* agent.session({ canUseTool: () => Effect.succeed({ behavior: "allow", updatedInput: {} }) })
        .pipe(
          Effect.flip
        )
      expect(error).toMatchObject({ _tag: "OptionsError", field: "canUseTool" })
    }))

  it.scoped("a permissionHandler layer turns on --permission-prompt-tool=stdio and answers can_use_tool", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      const handler = Layer.succeed(PermissionHandler, {
        canUseTool: (request) =>
          Ref.update(asked, (all) => [...all, request.tool_name]).pipe(
            Effect.as({ behavior: "deny", message: `${request.tool_name} is audited` })
          )
      })
      const { agent, args, cli } = yield* agentWith({ permissionHandler: handler })
      yield* agent.session()
      expect(yield* args).toContain("--permission-prompt-tool=stdio")
      const answer = yield* (yield* cli).request(Control.CanUseTool, { tool_name: "Bash", input: { command: "ls" } })
      expect(answer).toMatchObject({ behavior: "deny", message: "Bash is audited" })
      expect(yield* Ref.get(asked)).toEqual(["Bash"])
    }))

  it.scoped("without a permission callback, can_use_tool is answered as unsupported and the flag is absent", () =>
    Effect.gen(function*() {
      const { agent, cli, args } = yield* agentWith()
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
        const { agent, cli } = yield* agentWith()
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

  it.scoped("an in-process tool's call runs in one span, the tool's, with the request's attributes; tools/list in the request's", () =>
    Effect.gen(function*() {
      const { spans, tracer: recording } = yield* SpanRecorder.make
      const add = Tool.make("add", {
        description: "Adds",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        handler: ({ a, b }) => Effect.withSpan(Effect.succeed(`${a + b}`), "user.add")
      })
      yield* Effect.gen(function*() {
        const { agent, cli } = yield* agentWith()
        yield* agent.session({ mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) } })
        const fake = yield* cli
        yield* fake.request(Control.McpMessage, {
          server_name: "calc",
          message: { jsonrpc: "2.0", id: 1, method: "tools/list" }
        }, { requestId: "req-list" })
        const answer = yield* fake.request(Control.McpMessage, {
          server_name: "calc",
          message: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add", arguments: { a: 2, b: 3 } } }
        }, { requestId: "req-call" })
        expect(answer).toMatchObject({ mcp_response: { id: 2, result: { content: [{ text: "5" }] } } })
      }).pipe(Effect.withTracer(recording))
      const byRequest = (id: string) => spans.filter((s) => s.attributes.get("control.request_id") === id)
      expect(byRequest("req-list").map((s) => s.name)).toEqual(["ControlChannel.mcp_message"])
      const [call, ...others] = byRequest("req-call")
      expect(others).toEqual([])
      expect(call?.name).toBe("Tool.add")
      expect(call?.kind).toBe("server")
      expect(Object.fromEntries(call?.attributes ?? [])).toMatchObject({
        server_name: "calc",
        method: "tools/call",
        "mcp.server": "calc",
        "tool.name": "add"
      })
      expect(call?.parent).toEqual(byRequest("req-list")[0]?.parent)
      const user = spans.find((s) => s.name === "user.add")
      expect(user?.parent._tag === "Some" && user.parent.value.spanId).toBe(call?.spanId)
    }))
})

describe("the CLI's environment", () => {
  it.effect("each session reads process.env as it is then, merged under the options' env", () =>
    Effect.gen(function*() {
      const envs: Array<Readonly<Record<string, string>>> = []
      const agent = ClaudeAgent.make({
        transport: Layer.scoped(
          Transport,
          Effect.flatMap(SessionServices.SessionLaunch, ({ launch }) => {
            envs.push(launch.env)
            return Effect.map(FakeCli.make(), ({ transport }) => transport)
          })
        )
      })
      const key = "EFFECT_CLAUDE_AGENT_TEST_PARENT"
      const withValue = (value: string | undefined) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            if (value === undefined) delete process.env[key]
            else process.env[key] = value
          }),
          () => agent.query("hi", { env: { OWN: "1" } }).pipe(Stream.runDrain),
          () => Effect.sync(() => void delete process.env[key])
        )
      yield* withValue("first")
      yield* withValue("second")
      yield* withValue(undefined)
      expect(envs.map((env) => env[key])).toEqual(["first", "second", undefined])
      expect(envs.every((env) => env.OWN === "1" && env.PATH === process.env.PATH)).toBe(true)
    }))
})
