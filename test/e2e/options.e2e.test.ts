// End-to-end: options carried over from the official SDK reach the real `claude` CLI (argv flags,
// `initialize` fields, environment) and have their effect, seen in what the CLI asks
// ScriptedModel for or in the messages it writes; and the message variants the CLI emits for
// them decode to their typed schemas.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as Options from "../../src/schema/Options.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))

// Runs one prompt and returns the messages and the main requests the model received.
const run = (options: Options.Options, prompt = "hi", rules?: ReadonlyArray<ScriptedModel.Rule>) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(rules ?? [{ reply: ScriptedModel.text("done"), times: Infinity }])
    const base = yield* model.options()
    const messages = yield* ClaudeAgent.query(prompt, { ...base, ...options }).pipe(Stream.runCollect)
    return { messages: Chunk.toArray(messages), requests: yield* model.mainRequests, home: base.env.HOME ?? "" }
  })

const bodyField = (request: ScriptedModel.RecordedRequest | undefined, key: string): unknown =>
  typeof request?.body === "object" && request.body !== null ? Reflect.get(request.body, key) : undefined

const subtypes = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((m) => (m.type === "system" ? [m.subtype] : []))

describe("e2e: the official SDK's options on the real claude CLI", () => {
  it.scopedLive("systemPrompt as an array of blocks and as { type: \"custom\" } replace the prompt", () =>
    Effect.gen(function*() {
      const blocks = yield* run({ systemPrompt: ["BLOCK ONE", Options.SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "BLOCK TWO"] })
      const system = blocks.requests[0]?.system ?? ""
      expect(system).toContain("BLOCK ONE")
      expect(system).toContain("BLOCK TWO")
      // The marker splits the prompt for caching; it is not sent to the model.
      expect(system).not.toContain(Options.SYSTEM_PROMPT_DYNAMIC_BOUNDARY)
      const custom = yield* run({ systemPrompt: { type: "custom", prompt: "CUSTOM PROMPT 7", snapshot: false } })
      expect(custom.requests[0]?.system).toContain("CUSTOM PROMPT 7")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("the preset with excludeDynamicSections moves the per-user sections into the first user message", () =>
    Effect.gen(function*() {
      // The memory section names a directory under this user's HOME.
      const marker = "persistent file-based memory"
      const plain = yield* run({ systemPrompt: { type: "preset", preset: "claude_code" } })
      expect(plain.requests[0]?.system).toContain(marker)
      expect(plain.requests[0]?.system).toContain(plain.home)
      const excluded = yield* run({
        systemPrompt: { type: "preset", preset: "claude_code", excludeDynamicSections: true }
      })
      expect(excluded.requests[0]?.system).not.toContain(marker)
      expect(excluded.requests[0]?.system).not.toContain(excluded.home)
      expect(JSON.stringify(excluded.requests[0]?.messages)).toContain(marker)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("thinking.display, maxThinkingTokens: 0 and taskBudget reach the API request", () =>
    Effect.gen(function*() {
      const display = yield* run({
        thinking: { type: "adaptive", display: "summarized" },
        taskBudget: { total: 50_000 }
      })
      expect(bodyField(display.requests[0], "thinking")).toEqual({ type: "adaptive", display: "summarized" })
      expect(bodyField(display.requests[0], "output_config")).toMatchObject({
        task_budget: { type: "tokens", total: 50_000 }
      })
      expect(display.requests[0]?.headers["anthropic-beta"]).toContain("task-budgets-")
      // A model with budgeted thinking: 0 turns it off, another number is the budget.
      const off = yield* run({ model: "claude-sonnet-4-5", maxThinkingTokens: 0 })
      expect(bodyField(off.requests[0], "thinking")).toEqual({ type: "disabled" })
      const budget = yield* run({ model: "claude-sonnet-4-5", maxThinkingTokens: 3000 })
      expect(bodyField(budget.requests[0], "thinking")).toMatchObject({ type: "enabled", budget_tokens: 3000 })
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("agent runs the main thread as that agent; planModeInstructions reach plan mode; title names the session", () =>
    Effect.gen(function*() {
      const agent = yield* run({
        agent: "reviewer",
        agents: { reviewer: { description: "Reviews code", prompt: "REVIEWER PROMPT 42" } }
      })
      expect(agent.requests[0]?.system).toContain("REVIEWER PROMPT 42")
      const plan = yield* run({ permissionMode: "plan", planModeInstructions: "PLAN STEPS XYZ" })
      expect(JSON.stringify(plan.requests[0]?.messages)).toContain("PLAN STEPS XYZ")
      const titled = yield* run({ title: "Release notes" })
      const changed = titled.messages.find((m) => m.type === "system" && m.subtype === "session_title_changed")
      expect(changed !== undefined && "title" in changed ? changed.title : undefined).toBe("Release notes")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("managedSettings (--managed-settings <json>) applies its deny rule: Bash is not offered", () =>
    Effect.gen(function*() {
      const open = yield* run({})
      expect(open.requests[0]?.tools).toContain("Bash")
      const locked = yield* run({ managedSettings: { permissions: { deny: ["Bash"] } } })
      expect(locked.requests[0]?.tools).not.toContain("Bash")
      expect(locked.requests[0]?.tools).toContain("Read")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("toolAliases redirect a tool name the model emits", () =>
    Effect.gen(function*() {
      const rules: ReadonlyArray<ScriptedModel.Rule> = [
        {
          match: (req) => ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.toolUse("Shell", { command: "echo aliased-ok" }, { id: "toolu_alias" })
        },
        { reply: ScriptedModel.text("done"), times: Infinity }
      ]
      const options: Options.Options = { toolAliases: { Shell: "Bash" }, allowedTools: ["Bash"] }
      const aliased = yield* run(options, "run it", rules)
      const [result] = ScriptedModel.toolResults(aliased.requests[1]!)
      expect(result?.is_error).not.toBe(true)
      expect(JSON.stringify(result?.content)).toContain("aliased-ok")
      // The control: without the alias the name is unknown.
      const plain = yield* run({ allowedTools: ["Bash"] }, "run it", rules)
      const [failed] = ScriptedModel.toolResults(plain.requests[1]!)
      expect(failed?.is_error).toBe(true)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("verbatimPrompts sends the text as written: no @file expansion", () =>
    Effect.gen(function*() {
      const expanded = (options: Options.Options) =>
        Effect.gen(function*() {
          const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done"), times: Infinity }])
          const base = yield* model.options()
          fs.writeFileSync(path.join(base.cwd, "note.txt"), "NOTE CONTENT 314\n")
          yield* ClaudeAgent.query("summarise @note.txt", { ...base, ...options }).pipe(Stream.runDrain)
          const [request] = yield* model.mainRequests
          return JSON.stringify(request?.messages).includes("NOTE CONTENT 314")
        })
      expect(yield* expanded({})).toBe(true)
      expect(yield* expanded({ verbatimPrompts: true })).toBe(false)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("includeHookEvents reports settings hooks as typed hook_started / hook_response messages", () =>
    Effect.gen(function*() {
      const settings = { hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo hooked" }] }] } }
      const quiet = yield* run({ settings })
      expect(subtypes(quiet.messages).filter((s) => s.startsWith("hook_"))).toEqual([])
      const reported = yield* run({ settings, includeHookEvents: true })
      const hookMessages = reported.messages.filter((m) => m.type === "system" && m.subtype.startsWith("hook_"))
      expect(hookMessages.map((m) => (m.type === "system" ? m.subtype : ""))).toEqual(["hook_started", "hook_response"])
      const response = hookMessages[1]
      if (response?.type !== "system" || response.subtype !== "hook_response") throw new Error("no hook_response")
      expect(response.hook_event).toBe("UserPromptSubmit")
      expect(response.stdout).toBe("hooked\n")
      expect(response.exit_code).toBe(0)
      expect(response.outcome).toBe("success")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("mcpServersDelivery \"initialize\": a stdio server with timeout and alwaysLoad, off the command line", () =>
    Effect.gen(function*() {
      const rules: ReadonlyArray<ScriptedModel.Rule> = [
        {
          match: (req) => ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.toolUse("mcp__shout__shout", { text: "quiet words" }, { id: "toolu_shout" })
        },
        { reply: ScriptedModel.text("done"), times: Infinity }
      ]
      const model = yield* ScriptedModel.make(rules)
      const base = yield* model.options()
      const session = yield* ClaudeAgent.session({
        ...base,
        mcpServers: {
          shout: {
            command: process.execPath,
            args: [fixture("mcp-shout-server.mjs")],
            timeout: 10_000,
            alwaysLoad: true
          }
        },
        mcpServersDelivery: "initialize",
        allowedTools: ["mcp__shout__shout"]
      })
      const init = yield* session.initializationResult
      expect("mcp_servers_applied" in init ? init.mcp_servers_applied : undefined).toBe(true)
      yield* session.send("shout it")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      const requests = yield* model.mainRequests
      // alwaysLoad: the tool is in the first request, not deferred behind tool search.
      expect(requests[0]?.tools).toContain("mcp__shout__shout")
      const [result] = ScriptedModel.toolResults(requests[1]!)
      expect(JSON.stringify(result?.content)).toContain("QUIET WORDS")
      const status = yield* session.mcpServerStatus()
      expect(status.mcpServers.map((s) => [s.name, s.status])).toEqual([["shout", "connected"]])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("plugins: skipMcpDiscovery leaves out the plugin's MCP servers; pluginDelivery \"initialize\" loads it from initialize", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done"), times: Infinity }])
      const base = yield* model.options()
      // A plugin that ships an MCP server in its .mcp.json.
      const dir = path.join(base.cwd, "plugin-demo")
      fs.mkdirSync(path.join(dir, ".claude-plugin"), { recursive: true })
      fs.writeFileSync(
        path.join(dir, ".claude-plugin", "plugin.json"),
        JSON.stringify({ name: "demo", version: "1.0.0" })
      )
      fs.writeFileSync(
        path.join(dir, ".mcp.json"),
        JSON.stringify({
          mcpServers: { shout: { command: process.execPath, args: [fixture("mcp-shout-server.mjs")] } }
        })
      )
      const servers = (options: Options.Options) =>
        Effect.scoped(Effect.gen(function*() {
          const session = yield* ClaudeAgent.session({ ...base, ...options })
          yield* session.send("hi")
          const messages = Chunk.toArray(yield* session.receiveResponse.pipe(Stream.runCollect))
          const init = messages.find(Message.isSystemInit)
          const reply = yield* session.initializationResult
          return {
            servers: (init?.mcp_servers ?? []).map((s) => `${s.name}:${s.status}`),
            applied: "plugins_applied" in reply ? reply.plugins_applied : undefined
          }
        }))
      expect((yield* servers({ plugins: [{ type: "local", path: dir }] })).servers).toEqual([
        "plugin:demo:shout:connected"
      ])
      expect((yield* servers({ plugins: [{ type: "local", path: dir, skipMcpDiscovery: true }] })).servers).toEqual([])
      const viaInitialize = yield* servers({ plugins: [{ type: "local", path: dir }], pluginDelivery: "initialize" })
      expect(viaInitialize).toEqual({ servers: ["plugin:demo:shout:connected"], applied: true })
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("debugFile writes the CLI's debug log there", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done") }])
      const base = yield* model.options()
      const file = path.join(base.cwd, "debug.log")
      yield* ClaudeAgent.query("hi", { ...base, debugFile: file }).pipe(Stream.runDrain)
      expect(fs.statSync(file).size).toBeGreaterThan(0)
    }).pipe(Effect.provide(AgentLive)))
})

describe("e2e: promptSuggestions, permissionPrompts and forwardSubagentText on the real CLI", () => {
  const suggestionMode = (req: ScriptedModel.RecordedRequest) =>
    ScriptedModel.lastUserText(req).includes("[SUGGESTION MODE")

  it.scopedLive("promptSuggestions: from the second turn, the CLI asks the model for a suggestion and sends it after the result", () =>
    Effect.gen(function*() {
      const twoTurns = (promptSuggestions: boolean) =>
        Effect.gen(function*() {
          const model = yield* ScriptedModel.make([
            { match: suggestionMode, reply: ScriptedModel.text("run the unit tests"), times: Infinity },
            { reply: ScriptedModel.text("I changed src/a.ts; the tests are next."), times: Infinity }
          ])
          const session = yield* ClaudeAgent.session({ ...(yield* model.options()), promptSuggestions })
          yield* session.send("one")
          const first = Chunk.toArray(yield* Stream.runCollect(session.receiveResponse))
          yield* session.send("two")
          yield* session.receiveResponse.pipe(Stream.runDrain)
          // The suggestion follows the result; then the CLI ends at the end of its input.
          yield* session.endInput
          const after = Chunk.toArray(yield* Stream.runCollect(session.messages))
          return { first, after, asked: (yield* model.requests).filter(suggestionMode).length }
        })
      const on = yield* twoTurns(true)
      expect(on.first.some((m) => m.type === "prompt_suggestion")).toBe(false)
      expect(on.asked).toBe(1)
      const suggestion = on.after.find((m): m is Message.PromptSuggestion => m.type === "prompt_suggestion")
      expect(suggestion?.suggestion).toBe("run the unit tests")
      const off = yield* twoTurns(false)
      expect(off.asked).toBe(0)
      expect(off.after.some((m) => m.type === "prompt_suggestion")).toBe(false)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("permissionPrompts \"none\": what would prompt is denied as having no approval surface", () =>
    Effect.gen(function*() {
      const touch = (options: Options.Options) =>
        run(options, "make a file", [
          {
            match: (req) => ScriptedModel.toolResultCount(req) === 0,
            reply: ScriptedModel.toolUse("Bash", { command: "touch made.txt", description: "make a file" }, {
              id: "toolu_touch"
            })
          },
          { reply: ScriptedModel.text("done"), times: Infinity }
        ])
      const denied = (messages: ReadonlyArray<Message.Message>) =>
        messages.find((m): m is Message.SystemPermissionDenied =>
          m.type === "system" && m.subtype === "permission_denied"
        )
      const none = yield* touch({ permissionPrompts: "none" })
      expect(denied(none.messages)).toMatchObject({
        tool_name: "Bash",
        tool_use_id: "toolu_touch",
        decision_reason_type: "asyncAgent"
      })
      expect(JSON.stringify(ScriptedModel.toolResults(none.requests[1]!))).toContain("no approval surface")
      // Without it (and without canUseTool) the same call is denied as needing approval.
      const host = yield* touch({ permissionPrompts: "host" })
      expect(denied(host.messages)?.decision_reason_type).toBeUndefined()
      expect(JSON.stringify(ScriptedModel.toolResults(host.requests[1]!))).toContain("needs approval")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("forwardSubagentText: 2.1.330 forwards a subagent's thinking and text with or without it", () =>
    Effect.gen(function*() {
      // The subagent's requests start with its own prompt.
      const inSubagent = (req: ScriptedModel.RecordedRequest) =>
        JSON.stringify(req.messages[0]).includes("SUBTASK: look")
      const rules: ReadonlyArray<ScriptedModel.Rule> = [
        {
          match: (req) => inSubagent(req) && ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.thinking(
            "SUB THINKING",
            ScriptedModel.sequence(
              ScriptedModel.text("SUB TEXT"),
              ScriptedModel.toolUse("Read", { file_path: "/dev/null" })
            )
          )
        },
        { match: inSubagent, reply: ScriptedModel.text("SUB ANSWER"), times: Infinity },
        {
          match: (req) => ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.toolUse(
            "Agent",
            { description: "Look around", prompt: "SUBTASK: look", subagent_type: "general-purpose" },
            { id: "toolu_agent" }
          )
        },
        { reply: ScriptedModel.text("all done"), times: Infinity }
      ]
      const forwarded = (forwardSubagentText: boolean) =>
        Effect.gen(function*() {
          const model = yield* ScriptedModel.make(rules)
          const session = yield* ClaudeAgent.session({ ...(yield* model.options()), forwardSubagentText })
          yield* session.send("delegate")
          // Up to the subagent's end, which may come after the turn's result.
          const messages = yield* session.messages.pipe(
            Stream.takeUntil((m) => m.type === "system" && m.subtype === "task_notification"),
            Stream.runCollect
          )
          return Chunk.toArray(messages).flatMap((m) =>
            Message.isAssistant(m) && m.parent_tool_use_id === "toolu_agent"
              ? m.message.content.flatMap((b) =>
                b.type === "thinking" ? [`thinking: ${b.thinking}`] : b.type === "text" ? [`text: ${b.text}`] : []
              )
              : []
          )
        }).pipe(Effect.scoped)
      const expected = ["thinking: SUB THINKING", "text: SUB TEXT", "text: SUB ANSWER"]
      // The option reaches the CLI (initialize, unit-tested) but changes nothing here: the
      // subagent's whole conversation is forwarded either way.
      expect(yield* forwarded(true)).toEqual(expected)
      expect(yield* forwarded(false)).toEqual(expected)
    }).pipe(Effect.provide(AgentLive)))
})

describe("e2e: message variants the real CLI emits decode to their typed schemas", () => {
  it.scopedLive("a subagent's life: background_tasks_changed, task_started, task_updated, task_notification", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: (req) => ScriptedModel.lastUserText(req).includes("SUBTASK"),
          reply: ScriptedModel.text("sub result")
        },
        {
          match: (req) => ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.toolUse(
            "Agent",
            { description: "Check things", prompt: "SUBTASK: check", subagent_type: "general-purpose" },
            { id: "toolu_agent" }
          )
        },
        { reply: ScriptedModel.text("all done"), times: Infinity }
      ])
      const session = yield* ClaudeAgent.session(yield* model.options())
      yield* session.send("delegate")
      // Up to the subagent's end, which may come after the turn's result.
      const messages = Chunk.toArray(
        yield* session.messages.pipe(
          Stream.takeUntil((m) => m.type === "system" && m.subtype === "task_notification"),
          Stream.runCollect
        )
      )
      expect(messages.filter(Message.isUnknown)).toEqual([])
      const started = messages.find((m): m is Message.SystemTaskStarted =>
        m.type === "system" && m.subtype === "task_started"
      )
      expect(started).toMatchObject({
        tool_use_id: "toolu_agent",
        description: "Check things",
        task_type: "local_agent"
      })
      const updated = messages.find((m): m is Message.SystemTaskUpdated =>
        m.type === "system" && m.subtype === "task_updated"
      )
      expect(updated?.task_id).toBe(started?.task_id)
      expect(updated?.patch.status).toBe("completed")
      const done = messages.find((m): m is Message.SystemTaskNotification =>
        m.type === "system" && m.subtype === "task_notification"
      )
      expect(done).toMatchObject({ task_id: started?.task_id, status: "completed", summary: "sub result" })
      expect(done?.output_file).toMatch(/\.output$/)
      const live = messages.filter((m): m is Message.SystemBackgroundTasksChanged =>
        m.type === "system" && m.subtype === "background_tasks_changed"
      )
      expect(live[0]?.tasks.map((t) => [t.task_id, t.task_type])).toEqual([[started?.task_id, "local_agent"]])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("/clear arrives as typed conversation_reset and background_tasks_changed messages", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done"), times: Infinity }])
      const session = yield* ClaudeAgent.session(yield* model.options())
      yield* session.send("hi")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      const clearId = yield* session.send("/clear")
      const messages = Chunk.toArray(yield* session.receiveResponse.pipe(Stream.runCollect))
      expect(messages.filter(Message.isUnknown)).toEqual([])
      const reset = messages.find((m): m is Message.ConversationReset => m.type === "conversation_reset")
      expect(reset?.trigger).toBe("clear")
      expect(reset?.user_message_uuid).toBe(clearId)
      expect(reset?.new_conversation_id).toMatch(/^[0-9a-f-]{36}$/)
      const tasks = messages.find((m) => m.type === "system" && m.subtype === "background_tasks_changed")
      expect(tasks !== undefined && "tasks" in tasks ? tasks.tasks : undefined).toEqual([])
    }).pipe(Effect.provide(AgentLive)))
})

describe("e2e: executable and executableArgs", () => {
  const quiet = { env: { CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK: "1" } }

  it.scopedLive("a JavaScript CLI runs as `executable executableArgs… cli args…`", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session({
        ...quiet,
        pathToClaudeCodeExecutable: fixture("argv-cli.mjs"),
        executable: "node",
        executableArgs: ["--no-warnings", "--max-old-space-size=128"],
        model: "m1"
      })
      const init = yield* session.initializationResult
      expect("execArgv" in init ? init.execArgv : undefined).toEqual(["--no-warnings", "--max-old-space-size=128"])
      const argv = "argv" in init && Array.isArray(init.argv) ? init.argv : []
      expect(argv.slice(0, 5)).toEqual(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"])
      expect(argv).toContain("--model=m1")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("without executable a JavaScript CLI (no shebang, not executable) runs under node", () =>
    Effect.gen(function*() {
      const result = yield* ClaudeAgent.query("hi", { ...quiet, pathToClaudeCodeExecutable: fixture("argv-cli.mjs") })
        .pipe(
          ClaudeAgent.lastResult
        )
      expect(result.subtype).toBe("success")
    }).pipe(Effect.provide(AgentLive)))
})
