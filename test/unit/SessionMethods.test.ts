// The session methods added for parity with the official SDK's `Query` (setMcpServers,
// supportedCommands, reinitialize, readMcpResource, …) and the `elicitation` callback, over the
// in-memory fake CLI: what each writes on the wire, and what it makes of the reply.
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Context,
  Deferred,
  Effect,
  Fiber,
  Layer,
  Logger,
  Option,
  Predicate,
  Ref,
  Schema,
  Stream,
  TestClock
} from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import { Transport } from "../../src/services/Transport.js"
import * as McpServer from "../../src/McpServer.js"
import * as Control from "../../src/schema/Control.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as Tool from "../../src/Tool.js"

const requestOf = (frame: FakeCli.JsonObject): FakeCli.JsonObject =>
  Predicate.isRecord(frame.request) ? frame.request : {}

const isControlRequest = (subtype: string) => (frame: FakeCli.JsonObject) =>
  frame.type === "control_request" && requestOf(frame).subtype === subtype

// Every control request the SDK wrote, without its `subtype` envelope noise.
const sentRequests = (cli: FakeCli.FakeCliHandle) =>
  Effect.map(cli.sent, (frames) => frames.filter((f) => f.type === "control_request").map(requestOf))

// A ClaudeAgent over the fake CLI that hands the test each session's CLI handle.
const agentWithCli = (behaviour: FakeCli.Behaviour = {}) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<FakeCli.FakeCliHandle>()
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport,
        Effect.suspend(() =>
          Effect.gen(function*() {
            const { cli, transport } = yield* FakeCli.make(behaviour)
            yield* Deferred.succeed(handle, cli)
            return transport
          })
        )
      )
    })
    return { agent, cli: Deferred.await(handle) }
  })

// The CLI's JSON-RPC message to an in-process server, and the server's JSON-RPC answer.
const mcpRequest = (cli: FakeCli.FakeCliHandle, server: string, message: unknown) =>
  Effect.map(cli.request(Control.McpMessage, { server_name: server, message }), (answer) => answer.mcp_response)

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

const greet = Tool.make("greet", {
  description: "Greets",
  parameters: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.map(Greeting, (greeting) => Tool.text(`${greeting}, ${name}`))
})

const echo = Tool.make("echo", {
  description: "Echoes",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(Tool.text(text))
})

describe("control methods (fake CLI)", () => {
  it.scoped("each method sends its subtype with the CLI's field names and decodes the reply", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      const session = yield* agent.session()
      const fake = yield* cli

      yield* session.setMaxThinkingTokens(1000, "omitted")
      yield* session.setMaxThinkingTokens(null)
      yield* session.setMaxThinkingTokens(0, null)
      const usage = yield* session.getContextUsage({ detail: "summary" })
      expect(usage.categories[0]).toMatchObject({ id: "free_space", kind: "free" })
      expect(usage.model).toBe("claude-fake-1")
      yield* session.getContextUsage()
      yield* session.applyFlagSettings({ effortLevel: "low", model: null })
      yield* session.updateSettings("localSettings", { outputStyle: "Explanatory" })
      const refusedKey = yield* Effect.flip(session.updateSettings("userSettings", { outputStyle: "x" }))
      expect(refusedKey).toMatchObject({ _tag: "ControlError", subtype: "update_settings" })
      expect(refusedKey.message).toContain("outputStyle")
      const reloaded = yield* session.reloadPlugins({
        refuseIfBusy: true,
        addPlugins: [{ type: "local", path: "/plugins/review" }]
      })
      expect(reloaded.error_count).toBe(0)
      yield* session.reloadPlugins()
      expect(yield* session.reloadSkills()).toEqual({ skills: [] })
      expect((yield* session.reloadOutputStyles()).available_output_styles).toContain("Explanatory")
      expect(yield* session.backgroundTasks()).toBe(true)
      expect(yield* session.backgroundTasks("toolu_1")).toBe(false)
      const override = yield* session.setMcpPermissionModeOverride("github", "default")
      expect(override.warning).toContain("github")
      yield* session.setMcpPermissionModeOverride("github", null)
      const notFound = yield* Effect.flip(session.readMcpResource("charts", "ui://chart/bar"))
      expect(notFound).toMatchObject({
        _tag: "ControlError",
        subtype: "mcp_read_resource",
        error: "Server not found: charts"
      })

      const requests = (yield* sentRequests(fake)).slice(1)
      expect(requests).toEqual([
        { subtype: "set_max_thinking_tokens", max_thinking_tokens: 1000, thinking_display: "omitted" },
        { subtype: "set_max_thinking_tokens", max_thinking_tokens: null },
        { subtype: "set_max_thinking_tokens", max_thinking_tokens: 0, thinking_display: null },
        { subtype: "get_context_usage", detail: "summary" },
        { subtype: "get_context_usage" },
        { subtype: "apply_flag_settings", settings: { effortLevel: "low", model: null } },
        { subtype: "update_settings", source: "localSettings", settings: { outputStyle: "Explanatory" } },
        { subtype: "update_settings", source: "userSettings", settings: { outputStyle: "x" } },
        {
          subtype: "reload_plugins",
          add_plugins: [{ type: "local", path: "/plugins/review" }],
          refuse_if_busy: true
        },
        { subtype: "reload_plugins" },
        { subtype: "reload_skills" },
        { subtype: "reload_output_styles" },
        { subtype: "background_tasks" },
        { subtype: "background_tasks", tool_use_id: "toolu_1" },
        { subtype: "set_mcp_permission_mode_override", serverName: "github", mode: "default" },
        { subtype: "set_mcp_permission_mode_override", serverName: "github", mode: null },
        { subtype: "mcp_read_resource", serverName: "charts", uri: "ui://chart/bar" }
      ])
    }))

  it.scoped("a thinking display or context detail the CLI does not know is refused before it is sent", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      const session = yield* agent.session()
      const display: unknown = "verbose"
      const detail: unknown = "everything"
      const errors = yield* Effect.all([
        Effect.flip(Reflect.apply(session.setMaxThinkingTokens, undefined, [100, display])),
        Effect.flip(Reflect.apply(session.getContextUsage, undefined, [{ detail }]))
      ])
      for (const error of errors) expect(error).toMatchObject({ _tag: "OptionsError" })
      expect((yield* sentRequests(yield* cli)).map((r) => r.subtype)).toEqual(["initialize"])
    }))

  it.scoped("supportedCommands, supportedModels, supportedAgents and accountInfo read the initialize reply", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli({
        onUserMessage: (message, cli) =>
          cli.emit({
            type: "system",
            subtype: "commands_changed",
            commands: [{
              name: "review",
              description: "Reviews",
              argumentHint: "[pr]",
              aliases: ["r"],
              builtin: false
            }],
            session_id: cli.sessionId,
            uuid: "00000000-0000-4000-8000-0000000000aa"
          }).pipe(Effect.zipRight(FakeCli.echoTurn(message, cli)))
      })
      const session = yield* agent.session()
      expect((yield* session.supportedCommands).map((c) => c.name)).toEqual(["compact"])
      const [model] = yield* session.supportedModels
      expect(model).toMatchObject({
        value: "default",
        supportsEffort: true,
        supportedEffortLevels: ["low", "medium", "high"]
      })
      expect((yield* session.supportedAgents).map((a) => a.name)).toEqual(["general-purpose"])
      expect(yield* session.accountInfo).toEqual({
        tokenSource: "none",
        apiKeySource: "ANTHROPIC_API_KEY",
        apiProvider: "firstParty"
      })
      // None of them asks the CLI anything.
      expect((yield* sentRequests(yield* cli)).map((r) => r.subtype)).toEqual(["initialize"])

      // The commands of a `commands_changed` replace those of the reply once the message is read.
      yield* session.send("hi")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      expect(yield* session.supportedCommands).toEqual([
        { name: "review", description: "Reviews", argumentHint: "[pr]", aliases: ["r"], builtin: false }
      ])
    }))

  it.scoped("reinitialize sends initialize again with the same fields; initializationResult keeps the first reply", () =>
    Effect.gen(function*() {
      let initializations = 0
      const { agent, cli } = yield* agentWithCli({
        answers: [
          FakeCli.answer(Control.Initialize, () =>
            Effect.sync(() => {
              initializations++
              return { commands: [], models: [], pid: 1000 + initializations }
            }))
        ]
      })
      const session = yield* agent.session({
        systemPrompt: "be brief",
        hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] }
      })
      expect((yield* session.initializationResult).pid).toBe(1001)
      expect((yield* session.reinitialize()).pid).toBe(1002)
      expect((yield* session.initializationResult).pid).toBe(1001)
      const [first, second] = (yield* sentRequests(yield* cli)).filter((r) => r.subtype === "initialize")
      expect(first).toMatchObject({ systemPrompt: ["be brief"], hooks: { Stop: [{ hookCallbackIds: ["hook_0"] }] } })
      expect(second).toEqual(first)
    }))
})

describe("permission prompts listed in an initialize reply (fake CLI)", () => {
  const prompt = (id: string, command: string) => ({
    type: "control_request",
    request_id: id,
    request: {
      subtype: "can_use_tool",
      tool_name: "Bash",
      input: { command },
      tool_use_id: `toolu_${id}`,
      server_policy_ask_only: true
    }
  })
  const answerTo = (id: string) => (frame: FakeCli.JsonObject) =>
    frame.type === "control_response" && Predicate.isRecord(frame.response) && frame.response.request_id === id

  it.scoped("reinitialize hands the pending ones to canUseTool, once each: one already running is not asked again", () =>
    Effect.gen(function*() {
      let initializations = 0
      const { agent, cli } = yield* agentWithCli({
        answers: [FakeCli.answer(Control.Initialize, (_payload, fake, byDefault) =>
          Effect.gen(function*() {
            initializations++
            if (initializations === 1) return yield* byDefault
            // The envelope carries the list beside `response`; the fake's answers have no room for
            // it, so this reply is written by hand (the fake's own answer follows, for an id
            // already answered, and is ignored).
            const sent = yield* fake.sent
            const init = sent.filter(isControlRequest("initialize")).at(-1)
            yield* fake.emit({
              type: "control_response",
              response: {
                subtype: "success",
                request_id: init?.request_id,
                response: { commands: [], models: [], pid: 2 },
                pending_permission_requests: [prompt("perm-live", "ls"), prompt("perm-missed", "pwd")],
                pending_user_dialog_requests: []
              }
            })
            return { commands: [], models: [] }
          }))]
      })
      const asked: Array<string> = []
      const release = yield* Deferred.make<void>()
      const session = yield* agent.session({
        canUseTool: (_tool, input) =>
          Effect.gen(function*() {
            const command = String(input.command)
            asked.push(command)
            if (command === "ls") yield* Deferred.await(release)
            return { behavior: "allow" as const, updatedInput: input }
          })
      })
      yield* session.initializationResult
      const fake = yield* cli
      // A prompt the host is still answering when the CLI lists it again.
      yield* fake.emit(prompt("perm-live", "ls"))
      yield* Effect.yieldNow().pipe(Effect.repeat({ until: () => asked.length === 1 }))

      const reply = yield* session.reinitialize()
      expect(reply.pid).toBe(2)
      const missed = yield* fake.awaitSent(answerTo("perm-missed"))
      expect(missed.response).toMatchObject({
        subtype: "success",
        response: { behavior: "allow", updatedInput: { command: "pwd" } }
      })
      yield* Deferred.succeed(release, undefined)
      const answered = yield* fake.awaitSent(answerTo("perm-live"))
      expect(answered.response).toMatchObject({ subtype: "success", response: { behavior: "allow" } })
      expect(asked).toEqual(["ls", "pwd"])
      // Each was answered once.
      const answers = (yield* fake.sent).filter((f) => answerTo("perm-live")(f) || answerTo("perm-missed")(f))
      expect(answers.length).toBe(2)
    }))
})

describe("the initialize reply's confirmations (fake CLI)", () => {
  // A CLI that answers initialize like one from before `mcp_servers_applied` / `onFailure`.
  const oldCli = (): FakeCli.Behaviour => ({
    answers: [
      FakeCli.answer(
        Control.Initialize,
        () => Effect.succeed({ commands: [], models: [], pid: 7, claude_code_version: "2.0.9" })
      )
    ]
  })
  const stdio = { files: { command: "mcp-files", args: ["--root", "/"] } }

  it.scoped("MCP servers sent in initialize but not confirmed end the session with a typed error", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli(oldCli())
      const session = yield* agent.session({ mcpServers: stdio, mcpServersDelivery: "initialize" })
      const fake = yield* cli
      const error = yield* Effect.flip(session.initializationResult)
      expect(error).toMatchObject({ _tag: "OptionsError", field: "mcpServers" })
      expect(error.message).toContain("version 2.0.9")
      // The streams end with it, and the CLI is stopped: nothing runs without the servers.
      const streamError = yield* Effect.flip(Stream.runDrain(session.messages))
      expect(streamError).toMatchObject({ _tag: "OptionsError", field: "mcpServers" })
      yield* fake.inputEnded
      const closed = yield* Effect.flip(session.control.closed)
      expect(closed).toMatchObject({ _tag: "ProcessError", signal: "SIGTERM" })
    }))

  it.scoped("confirmed (or sent on the command line) MCP servers start normally", () =>
    Effect.gen(function*() {
      // The default fake answers like 2.1.330: `mcp_servers_applied: true` when they were sent.
      const confirmed = yield* agentWithCli()
      const a = yield* confirmed.agent.session({ mcpServers: stdio, mcpServersDelivery: "initialize" })
      expect((yield* a.initializationResult).mcp_servers_applied).toBe(true)
      // On argv nothing is sent in initialize, so nothing is to be confirmed.
      const argv = yield* agentWithCli(oldCli())
      const b = yield* argv.agent.session({ mcpServers: stdio })
      expect((yield* b.initializationResult).mcp_servers_applied).toBeUndefined()
      yield* b.send("hi")
      expect(Chunk.size(yield* Stream.runCollect(b.receiveResponse))).toBe(3)
    }))

  it.scoped("a blocking hook needs a CLI that honours onFailure; reinitialize checks the same", () =>
    Effect.gen(function*() {
      const blocking = { PreToolUse: [{ hooks: [() => Effect.succeed({})], onFailure: "block" as const }] }
      const { agent } = yield* agentWithCli(oldCli())
      const session = yield* agent.session({ hooks: blocking })
      const refused = yield* Effect.flip(session.initializationResult)
      expect(refused).toMatchObject({ _tag: "OptionsError", field: "hooks" })
      expect(refused.message).toContain("onFailure")
      // Without onFailure: "block" the old CLI is fine.
      const plain = yield* agentWithCli(oldCli())
      const ok = yield* plain.agent.session({ hooks: { PreToolUse: [{ hooks: [() => Effect.succeed({})] }] } })
      expect((yield* ok.initializationResult).pid).toBe(7)
      // A CLI that confirms initially but not on reinitialize.
      let answers = 0
      const flaky = yield* agentWithCli({
        answers: [
          FakeCli.answer(Control.Initialize, () =>
            Effect.sync(() => {
              answers++
              return { commands: [], models: [], ...(answers === 1 ? { hook_on_failure_supported: true } : {}) }
            }))
        ]
      })
      const again = yield* flaky.agent.session({ hooks: blocking })
      yield* again.initializationResult
      expect(yield* Effect.flip(again.reinitialize())).toMatchObject({ _tag: "OptionsError", field: "hooks" })
    }))
})

describe("setMcpServers (fake CLI)", () => {
  it.scoped("an in-process server added mid-session is served, with services given at the call", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      const session = yield* agent.session()
      const fake = yield* cli
      const greeter = McpServer.make({ name: "greeter", tools: [greet] })
      const reply = yield* session.setMcpServers({
        greeter,
        docs: { type: "http", url: "https://example.com/mcp" },
        files: { command: "mcp-files" }
      }).pipe(Effect.provideService(Greeting, "Hello"))
      expect(reply).toEqual({ added: ["greeter", "docs", "files"], removed: [], errors: {} })
      const [set] = (yield* sentRequests(fake)).filter((r) => r.subtype === "mcp_set_servers")
      // External configs go as given, except that a stdio server gets the `args` the CLI needs.
      expect(set?.servers).toEqual({
        greeter: { type: "sdk", name: "greeter" },
        docs: { type: "http", url: "https://example.com/mcp" },
        files: { command: "mcp-files", args: [] }
      })
      const listed = yield* mcpRequest(fake, "greeter", { jsonrpc: "2.0", id: 1, method: "tools/list" })
      expect(listed).toMatchObject({ result: { tools: [{ name: "greet" }] } })
      const called = yield* mcpRequest(fake, "greeter", {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "greet", arguments: { name: "Ada" } }
      })
      expect(called).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "Hello, Ada" }] } })
      // `reinitialize` announces the servers served now.
      yield* session.reinitialize()
      const inits = (yield* sentRequests(fake)).filter((r) => r.subtype === "initialize")
      expect(inits.map((r) => r.sdkMcpServers)).toEqual([undefined, ["greeter"]])
    }))

  it.scoped("the set replaces the servers of the options; a removed server's running call is interrupted", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const slow = Tool.make("slow", {
        description: "Never finishes",
        parameters: Schema.Struct({}),
        handler: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
      })
      const { agent, cli } = yield* agentWithCli()
      const session = yield* agent.session({ mcpServers: { calc: McpServer.make({ name: "calc", tools: [slow] }) } })
      const fake = yield* cli
      const call = yield* mcpRequest(fake, "calc", {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "slow", arguments: {} }
      }).pipe(Effect.fork)
      yield* Deferred.await(started)
      const reply = yield* session.setMcpServers({ echoer: McpServer.make({ name: "echoer", tools: [echo] }) })
      expect(reply).toEqual({ added: ["echoer"], removed: ["calc"], errors: {} })
      yield* Deferred.await(interrupted)
      const gone = yield* mcpRequest(fake, "calc", { jsonrpc: "2.0", id: 6, method: "tools/list" })
      expect(gone).toMatchObject({ id: 6, error: { code: -32601, message: "SDK MCP server not found: calc" } })
      // The CLI cancels the call it no longer waits for; the interrupted call writes no answer.
      yield* Fiber.interrupt(call)
      const answered = yield* mcpRequest(fake, "echoer", { jsonrpc: "2.0", id: 7, method: "tools/list" })
      expect(answered).toMatchObject({ result: { tools: [{ name: "echo" }] } })
    }))

  it.scoped("a new definition under a served name is swapped in and the CLI is told to list its tools again", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      const first = McpServer.make({ name: "kit", tools: [echo] })
      const session = yield* agent.session({ mcpServers: { kit: first } })
      const fake = yield* cli
      // The same value again changes nothing.
      expect(yield* session.setMcpServers({ kit: first })).toEqual({ added: [], removed: [], errors: {} })
      const notifications = (frames: ReadonlyArray<FakeCli.JsonObject>) =>
        frames.filter((r) => r.subtype === "mcp_message")
      expect(notifications(yield* sentRequests(fake))).toEqual([])

      yield* session.setMcpServers({ kit: McpServer.make({ name: "kit", tools: [greet] }) }).pipe(
        Effect.provideService(Greeting, "Hi")
      )
      expect(notifications(yield* sentRequests(fake))).toEqual([{
        subtype: "mcp_message",
        server_name: "kit",
        message: { jsonrpc: "2.0", method: "notifications/tools/list_changed" }
      }])
      const listed = yield* mcpRequest(fake, "kit", { jsonrpc: "2.0", id: 1, method: "tools/list" })
      expect(listed).toMatchObject({ result: { tools: [{ name: "greet" }] } })
    }))

  it.scoped("concurrent calls are applied one at a time, in the same order in the bridge and the CLI", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      let sets = 0
      const { agent, cli } = yield* agentWithCli({
        // The CLI holds its answer to the first set until the test releases it.
        answers: [
          FakeCli.answer(
            Control.McpSetServers,
            (_payload, _cli, byDefault) =>
              ++sets === 1 ? Effect.zipRight(Deferred.await(release), byDefault) : byDefault
          )
        ]
      })
      const session = yield* agent.session()
      const fake = yield* cli
      const first = yield* Effect.fork(session.setMcpServers({ a: McpServer.make({ name: "a", tools: [echo] }) }))
      yield* fake.awaitSent(isControlRequest("mcp_set_servers"))
      const second = yield* Effect.fork(session.setMcpServers({ b: McpServer.make({ name: "b", tools: [echo] }) }))
      // The scheduler is cooperative: these yields let the second call run as far as it can.
      yield* Effect.repeatN(Effect.yieldNow(), 50)
      const setsSent = Effect.map(sentRequests(fake), (rs) => rs.filter((r) => r.subtype === "mcp_set_servers"))
      expect((yield* setsSent).map((r) => r.servers)).toEqual([{ a: { type: "sdk", name: "a" } }])
      const stillA = yield* mcpRequest(fake, "a", { jsonrpc: "2.0", id: 1, method: "tools/list" })
      expect(stillA).toMatchObject({ result: { tools: [{ name: "echo" }] } })
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(first)).toEqual({ added: ["a"], removed: [], errors: {} })
      expect(yield* Fiber.join(second)).toEqual({ added: ["b"], removed: ["a"], errors: {} })
      expect((yield* setsSent).map((r) => r.servers)).toEqual([
        { a: { type: "sdk", name: "a" } },
        { b: { type: "sdk", name: "b" } }
      ])
    }))

  it.scoped("a bad server is refused before anything is sent or changed", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      const kit = McpServer.make({ name: "kit", tools: [echo] })
      const session = yield* agent.session({ mcpServers: { kit } })
      const fake = yield* cli
      const noCommand: unknown = { type: "stdio" }
      const errors = yield* Effect.all([
        Effect.flip(Reflect.apply(session.setMcpServers, undefined, [{ files: noCommand }])),
        Effect.flip(session.setMcpServers({ other: kit })),
        Effect.flip(session.setMcpServers({ twice: McpServer.make({ name: "twice", tools: [echo, echo] }) }))
      ])
      for (const error of errors) {
        expect(error).toMatchObject({ _tag: "OptionsError" })
      }
      expect(errors.map((e) => e.message)).toEqual([
        expect.stringContaining("mcpServers.files.command"),
        expect.stringContaining("mcpServers.other"),
        expect.stringContaining("mcpServers.twice.tools.echo")
      ])
      expect((yield* sentRequests(fake)).map((r) => r.subtype)).toEqual(["initialize"])
      const listed = yield* mcpRequest(fake, "kit", { jsonrpc: "2.0", id: 1, method: "tools/list" })
      expect(listed).toMatchObject({ result: { tools: [{ name: "echo" }] } })
    }))
})

describe("onElicitation (fake CLI)", () => {
  const elicitation: Control.ElicitationRequest = {
    mcp_server_name: "fixture",
    message: "What is your name?",
    mode: "form",
    requested_schema: { type: "object", properties: { name: { type: "string" } } },
    property_order: ["name"]
  }

  it.scoped("without a callback an elicitation is declined, as the official SDK does", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      yield* agent.session()
      expect(yield* (yield* cli).request(Control.Elicitation, elicitation)).toEqual({ action: "decline" })
    }))

  it.scoped("the callback gets the request and answers it, with the services of the session", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<Control.ElicitationRequest>>([])
      const { agent, cli } = yield* agentWithCli()
      yield* agent.session({
        onElicitation: (request) =>
          Effect.gen(function*() {
            yield* Ref.update(seen, (all) => [...all, request])
            return { action: "accept" as const, content: { name: yield* Greeting } }
          })
      }).pipe(Effect.provideService(Greeting, "Ada"))
      const answer = yield* (yield* cli).request(Control.Elicitation, elicitation)
      expect(answer).toEqual({ action: "accept", content: { name: "Ada" } })
      expect(yield* Ref.get(seen)).toEqual([{
        subtype: "elicitation",
        mcp_server_name: "fixture",
        message: "What is your name?",
        mode: "form",
        requested_schema: { type: "object", properties: { name: { type: "string" } } },
        property_order: ["name"]
      }])
    }))

  it.scoped("a failing callback answers with an error, not a decline", () =>
    Effect.gen(function*() {
      const { agent, cli } = yield* agentWithCli()
      yield* agent.session({ onElicitation: () => Effect.fail("no user at the keyboard") })
      const refused = yield* Effect.flip((yield* cli).request(Control.Elicitation, elicitation))
      expect(refused.error).toContain("no user at the keyboard")
    }))
})

describe("setMcpServers that gives up while the CLI is still connecting (fake CLI)", () => {
  const warningsOf = () => {
    const lines: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") lines.push([message].flat().map(String).join(" "))
    })
    return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
  }
  // Moves the test clock on until the call has finished.
  const finish = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
    Effect.gen(function*() {
      for (let i = 0; i < 100 && Option.isNone(yield* Fiber.poll(fiber)); i++) yield* TestClock.adjust("100 millis")
      return yield* Fiber.join(fiber)
    })

  it.scoped("a timed-out awaitConnection warns that later requests may wait for the CLI's connection timeout", () =>
    Effect.gen(function*() {
      const { lines, layer } = warningsOf()
      // The fake CLI's mcp_status never lists the server: it stays pending.
      const { agent } = yield* agentWithCli()
      const session = yield* agent.session()
      const call = session.setMcpServers({ a: McpServer.make({ name: "a", tools: [echo] }) }, {
        awaitConnection: true,
        timeout: "1 second"
      })
      const error = yield* finish(yield* Effect.fork(Effect.flip(Effect.provide(call, layer))))
      expect(error).toMatchObject({ _tag: "McpServersPendingError", servers: ["a"], timeoutMillis: 1000 })
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("still connecting a;")
      expect(lines[0]).toContain("later control requests")
      expect(lines[0]).toContain("30 s")
    }))

  it.scoped("so does a set request that times out; a set that succeeds warns nothing", () =>
    Effect.gen(function*() {
      const { lines, layer } = warningsOf()
      let sets = 0
      const { agent } = yield* agentWithCli({
        answers: [
          FakeCli.answer(Control.McpSetServers, (_payload, _cli, byDefault) => ++sets === 1 ? byDefault : Effect.never)
        ]
      })
      const session = yield* agent.session()
      yield* Effect.provide(session.setMcpServers({ files: { command: "mcp-files" } }), layer)
      expect(lines).toEqual([])
      const call = session.setMcpServers({ files: { command: "mcp-files" }, web: { type: "http", url: "https://x" } }, {
        timeout: "1 second"
      })
      const error = yield* finish(yield* Effect.fork(Effect.flip(Effect.provide(call, layer))))
      expect(error._tag).toBe("TimeoutException")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("still connecting files, web;")
    }))
})
