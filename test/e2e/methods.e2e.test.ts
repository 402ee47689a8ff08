// The session methods added for parity with the official SDK's `Query`, and `onElicitation`, on
// the real `claude` binary against ScriptedModel (isolated HOME): what the CLI 2.1.330 answers.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Predicate, Ref, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionServices from "../../src/layers/SessionServices.js"
import * as McpServer from "../../src/McpServer.js"
import * as ControlChannel from "../../src/services/ControlChannel.js"
import type * as Control from "../../src/schema/Control.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const fixtureServer = fileURLToPath(new URL("../fixtures/mcp-stdio-server.mjs", import.meta.url))
const fixtureStdio = { type: "stdio" as const, command: process.execPath, args: [fixtureServer] }

const countTokensCalls = (model: ScriptedModel.ScriptedModelShape) =>
  Effect.map(model.requests, (all) => all.filter((r) => r.kind === "count_tokens").length)

const toolResultText = (request: ScriptedModel.RecordedRequest | undefined): string =>
  request === undefined ? "" : ScriptedModel.toolResults(request).map((r) => JSON.stringify(r.content)).join("\n")

class Factor extends Context.Tag("e2e/Factor")<Factor, number>() {}

const arithmetic = (name: string, op: (a: number, b: number) => number) =>
  Tool.make(name, {
    description: `${name} two numbers, scaled by the factor in context`,
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    handler: ({ a, b }) => Effect.map(Factor, (factor) => Tool.text(`${name}=${op(a, b) * factor}`))
  })

describe("e2e: session methods on the real CLI", () => {
  it.scopedLive("initialize-derived methods, reinitialize, settings, plugins, tasks, overrides, context usage", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("ok"), times: Infinity }])
      const options = yield* model.options()
      const session = yield* ClaudeAgent.session({ ...options, settingSources: ["user", "project", "local"] })

      // Read from the initialize reply: the CLI sends commands with `builtin` and some `aliases`,
      // models with their capabilities, agents, and the account of an API key.
      const commands = yield* session.supportedCommands
      expect(commands.length).toBeGreaterThan(5)
      expect(commands.every((c) => typeof c.builtin === "boolean")).toBe(true)
      expect(commands.find((c) => c.name === "code-review")?.aliases).toEqual(["review"])
      const [first] = yield* session.supportedModels
      expect(first).toMatchObject({ value: "default", resolvedModel: expect.any(String), supportsEffort: true })
      expect(first?.supportedEffortLevels).toContain("high")
      expect((yield* session.supportedAgents).map((a) => a.name)).toContain("general-purpose")
      expect(yield* session.accountInfo).toEqual({
        tokenSource: "none",
        apiKeySource: "ANTHROPIC_API_KEY",
        apiProvider: "firstParty"
      })

      // A second initialize on the same process: a fresh, full reply.
      const init = yield* session.initializationResult
      const again = yield* session.reinitialize()
      expect(again.pid).toBe(init.pid)
      expect(again.commands.length).toBe(init.commands.length)

      // Flag settings apply to the next turn; an invalid value applies nothing.
      yield* session.applyFlagSettings({ model: "claude-haiku-4-5" })
      const invalid = yield* Effect.flip(session.applyFlagSettings({ permissions: "bogus" }))
      expect(invalid).toMatchObject({ _tag: "ControlError", subtype: "apply_flag_settings" })
      expect(invalid.message).toContain("permissions")
      yield* session.send("hello")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      expect((yield* model.mainRequests).map((r) => r.model)).toEqual(["claude-haiku-4-5"])

      // Settings files, through the CLI's writer: its allowlist, string values only.
      yield* session.updateSettings("localSettings", { outputStyle: "Explanatory" })
      const local = JSON.parse(fs.readFileSync(path.join(options.cwd, ".claude", "settings.local.json"), "utf8"))
      expect(local.outputStyle).toBe("Explanatory")
      yield* session.updateSettings("userSettings", { effortLevel: "low" })
      const notAllowed = yield* Effect.flip(session.updateSettings("userSettings", { theme: "dark" }))
      expect(notAllowed).toMatchObject({ _tag: "ControlError", error: "update_settings keys not allowed: theme" })

      const reloaded = yield* session.reloadPlugins()
      expect(reloaded.error_count).toBe(0)
      expect(reloaded.commands.length).toBeGreaterThan(0)
      expect(reloaded.plugins.every((p) => typeof p.name === "string" && typeof p.path === "string")).toBe(true)

      // A skill and an output style written while the session runs are seen after a reload.
      const skillDir = path.join(options.cwd, ".claude", "skills", "haiku-writer")
      fs.mkdirSync(skillDir, { recursive: true })
      fs.writeFileSync(
        path.join(skillDir, "SKILL.md"),
        "---\nname: haiku-writer\ndescription: Writes a haiku about the code\n---\nWrite a haiku.\n"
      )
      const skills = yield* session.reloadSkills()
      expect(commands.some((c) => c.name === "haiku-writer")).toBe(false)
      // The CLI marks where the skill came from: "Writes a haiku about the code (project)".
      expect(skills.skills.find((s) => s.name === "haiku-writer")?.description).toContain(
        "Writes a haiku about the code"
      )
      const stylesDir = path.join(options.cwd, ".claude", "output-styles")
      fs.mkdirSync(stylesDir, { recursive: true })
      fs.writeFileSync(
        path.join(stylesDir, "terse.md"),
        "---\nname: Terse\ndescription: One line answers\n---\nAnswer in one line.\n"
      )
      const styles = yield* session.reloadOutputStyles()
      expect(styles.available_output_styles).toContain("default")
      expect(styles.available_output_styles).toContain("Terse")

      // No foreground task: the CLI answers `{}` (true, as the official SDK reads it), and
      // `backgrounded: false` for a tool use that started none.
      expect(yield* session.backgroundTasks()).toBe(true)
      expect(yield* session.backgroundTasks("toolu_nothing")).toBe(false)

      const stored = yield* session.setMcpPermissionModeOverride("nowhere", "default")
      expect(stored.warning).toContain("not yet known")
      const cleared = yield* session.setMcpPermissionModeOverride("nowhere", null)
      expect(cleared.warning).toContain("cleared")

      // `summary` makes no count_tokens call; `full` (the default) counts every category.
      const before = yield* countTokensCalls(model)
      const summary = yield* session.getContextUsage({ detail: "summary" })
      expect(yield* countTokensCalls(model)).toBe(before)
      expect(summary.categories.some((c) => c.id === "free_space" && c.kind === "free")).toBe(true)
      expect(summary.percentage).toBeTypeOf("number")
      const full = yield* session.getContextUsage()
      expect(yield* countTokensCalls(model)).toBeGreaterThan(before)
      expect(full.model).toBe("claude-haiku-4-5")

      yield* session.setMaxThinkingTokens(2048, "omitted")
      yield* session.setMaxThinkingTokens(null, null)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("setMcpServers: in-process and stdio servers added mid-session, one swapped, then all removed", () =>
    Effect.gen(function*() {
      const asked = (word: string) => (r: ScriptedModel.RecordedRequest) =>
        ScriptedModel.toolResults(r).length === 0 && ScriptedModel.lastUserText(r).includes(word)
      const model = yield* ScriptedModel.make([
        { match: asked("multiply"), reply: ScriptedModel.toolUse("mcp__calc__mul", { a: 6, b: 7 }) },
        { match: asked("subtract"), reply: ScriptedModel.toolUse("mcp__calc__sub", { a: 6, b: 7 }) },
        { match: (r) => ScriptedModel.toolResults(r).length > 0, reply: ScriptedModel.text("done"), times: Infinity }
      ])
      const options = yield* model.options()
      // A stdio server started with no `args` (the CLI refuses a set one without them: the SDK adds `[]`).
      const launcher = path.join(options.cwd, "fixture-server.sh")
      fs.writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${fixtureServer}"\n`, { mode: 0o755 })
      const fixture = { command: launcher }
      const session = yield* ClaudeAgent.session({
        ...options,
        mcpServers: {
          start: McpServer.make({ name: "start", tools: [arithmetic("add", (a, b) => a + b)] }),
          kept: fixtureStdio
        },
        allowedTools: ["mcp__calc__mul", "mcp__calc__sub"]
      }).pipe(Effect.provideService(Factor, 1))

      // The set replaces the in-process server of the options (not its external one); the new
      // one is served with the services of this call.
      const calc = McpServer.make({ name: "calc", tools: [arithmetic("mul", (a, b) => a * b)] })
      const added = yield* session.setMcpServers({ calc, fixture }).pipe(Effect.provideService(Factor, 10))
      expect(added).toEqual({ added: ["calc", "fixture"], removed: ["start"], errors: {} })
      yield* session.send("multiply 6 by 7")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      expect(toolResultText((yield* model.mainRequests)[1])).toContain("mul=420")

      // MCP Apps resources of a server the CLI connected to itself.
      const widget = yield* session.readMcpResource("fixture", "ui://widget/hello")
      expect(widget.contents).toEqual([
        { uri: "ui://widget/hello", mimeType: "text/html;profile=mcp-app", text: "<p>hello widget</p>" }
      ])
      const wrongScheme = yield* Effect.flip(session.readMcpResource("fixture", "file:///etc/hosts"))
      expect(wrongScheme).toMatchObject({
        _tag: "ControlError",
        error: "mcp_read_resource: uri must use the ui:// scheme"
      })

      // The same name with a new definition: the CLI lists the tools again (in the background,
      // like the connection of an added server) and the next turn calls the new tool.
      const swapped = McpServer.make({ name: "calc", tools: [arithmetic("sub", (a, b) => a - b)] })
      const same = yield* session.setMcpServers({ calc: swapped, fixture }).pipe(Effect.provideService(Factor, 100))
      expect(same).toEqual({ added: [], removed: [], errors: {} })
      yield* session.send("now subtract 7 from 6")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      expect(toolResultText((yield* model.mainRequests)[3])).toContain("sub=-100")
      const status = yield* session.mcpServerStatus()
      expect(status.mcpServers.find((s) => s.name === "calc")?.tools?.map((t) => t.name)).toEqual(["sub"])
      // In-process servers are read directly, not through the CLI.
      const inProcess = yield* Effect.flip(session.readMcpResource("calc", "ui://widget/x"))
      expect(inProcess._tag).toBe("ControlError")

      const removed = yield* session.setMcpServers({})
      expect(removed).toEqual({ added: [], removed: ["calc", "fixture"], errors: {} })
      expect((yield* session.mcpServerStatus()).mcpServers.map((s) => s.name)).toEqual(["kept"])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("setMcpServers: external servers are connected before the reply, in-process ones after it (awaitConnection waits)", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("ok"), times: Infinity }])
      const options = yield* model.options()
      // A stdio server that takes a second to start, and one that exits at once.
      const script = (name: string, body: string) => {
        const file = path.join(options.cwd, name)
        fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
        return { command: file }
      }
      const slow = script("slow.sh", `sleep 1\nexec "${process.execPath}" "${fixtureServer}"`)
      const broken = script("broken.sh", "exit 3")
      // The in-process servers answer the CLI's MCP messages a second late, so that their
      // connection visibly outlasts the reply.
      const agent = ClaudeAgent.make({
        transport: SessionServices.subprocessTransport.pipe(Layer.provide(NodeContext.layer)),
        controlChannel: Layer.effect(
          ControlChannel.ControlChannel,
          Effect.map(ControlChannel.ControlChannel, (channel) => ({
            ...channel,
            handle: (descriptor, handler) =>
              channel.handle(
                descriptor,
                descriptor.subtype === "mcp_message" ? (p, id) => Effect.delay(handler(p, id), "1 second") : handler
              )
          }))
        ).pipe(Layer.provide(SessionServices.controlChannel))
      })
      const session = yield* agent.session(options)
      const statusOf = (name: string) =>
        Effect.map(session.mcpServerStatus(), (s) => s.mcpServers.find((server) => server.name === name)?.status)
      const calc = (name: string) => McpServer.make({ name, tools: [arithmetic("add", (a, b) => a + b)] })

      // External servers: the CLI answers once it has tried to connect them.
      const external = yield* session.setMcpServers({ slow, broken })
      expect(external.added).toEqual(["slow", "broken"])
      expect(external.errors.broken).toBeDefined()
      expect(yield* statusOf("slow")).toBe("connected")
      expect(yield* statusOf("broken")).toBe("failed")

      // In-process servers connect after the reply: pending, unless the call waits for them.
      yield* session.setMcpServers({ slow, one: calc("one") })
      expect(yield* statusOf("one")).toBe("pending")
      yield* session.setMcpServers({ slow, one: calc("one"), two: calc("two") }, { awaitConnection: true })
      expect(yield* statusOf("two")).toBe("connected")

      // The wait is bounded by the call's deadline: a server still pending then is named in a McpServersPendingError.
      const late = yield* Effect.flip(
        session.setMcpServers({ slow, three: calc("three") }, { awaitConnection: true, timeout: "300 millis" })
      )
      expect(late).toMatchObject({ _tag: "McpServersPendingError", servers: ["three"], timeoutMillis: 300 })
      expect(late.message).toContain("three")
    }).pipe(Effect.provideService(Factor, 1), Effect.provide(NodeContext.layer)))

  it.scopedLive("an MCP server's elicitation reaches onElicitation; without a callback it is declined", () =>
    Effect.gen(function*() {
      const rules: ReadonlyArray<ScriptedModel.Rule> = [
        {
          match: (r) => ScriptedModel.toolResults(r).length === 0,
          reply: ScriptedModel.toolUse("mcp__fixture__ask", {})
        },
        { match: (r) => ScriptedModel.toolResults(r).length > 0, reply: ScriptedModel.text("done") }
      ]
      const run = (onElicitation: Control.OnElicitation | undefined) =>
        Effect.gen(function*() {
          const model = yield* ScriptedModel.make(rules)
          const options = yield* model.options()
          yield* ClaudeAgent.query("ask me", {
            ...options,
            mcpServers: { fixture: fixtureStdio },
            allowedTools: ["mcp__fixture__ask"],
            ...(onElicitation === undefined ? {} : { onElicitation })
          }).pipe(Stream.runDrain)
          return toolResultText((yield* model.mainRequests)[1])
        })

      const seen = yield* Ref.make<ReadonlyArray<Control.ElicitationRequest>>([])
      const accepted = yield* run((request) =>
        Ref.update(seen, (all) => [...all, request]).pipe(
          Effect.as({ action: "accept" as const, content: { name: "Ada" } })
        )
      )
      expect(accepted).toContain(`elicitation answer: {\\"action\\":\\"accept\\",\\"content\\":{\\"name\\":\\"Ada\\"}}`)
      const [request] = yield* Ref.get(seen)
      expect(request).toMatchObject({
        mcp_server_name: "fixture",
        message: "What is your name?",
        mode: "form",
        requested_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        property_order: ["name"]
      })
      expect(Predicate.isRecord(request) && "url" in request).toBe(false)

      const declined = yield* run(undefined)
      expect(declined).toContain(`elicitation answer: {\\"action\\":\\"decline\\"}`)
    }).pipe(Effect.provide(AgentLive)))
})
