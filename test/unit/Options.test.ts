// Options validation, options → argv / env / initialize, and CLI discovery.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import {
  Chunk,
  Duration,
  Effect,
  Either,
  ExecutionStrategy,
  Exit,
  FastCheck as fc,
  Layer,
  Logger,
  Option,
  Scope,
  Stream,
  type Tracer
} from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Discovery from "../../src/internal/cli/discovery.js"
import { decodePositiveDuration } from "../../src/internal/schema/duration.js"
import * as Launch from "../../src/internal/cli/launch.js"
import * as McpServer from "../../src/McpServer.js"
import * as Permission from "../../src/Permission.js"
import * as SpanTree from "../../src/SpanTree.js"
import * as Control from "../../src/schema/Control.js"
import * as Options from "../../src/schema/Options.js"

const validated = (input: Options.Options) => Effect.runSync(Options.validate(input))

// Schema errors: any value, as an untyped caller could pass it.
const optionsError = (input: unknown) => Effect.runSync(Effect.flip(Options.check(input)))

// Cross-field rules: well-typed but contradictory options.
const ruleError = (input: Options.Options) => Effect.runSync(Effect.flip(Options.validate(input)))

describe("Options.validate", () => {
  it("accepts the documented fields", () => {
    const options = validated({
      model: "claude-sonnet-4-5",
      fallbackModel: "claude-haiku-4-5",
      maxTurns: 3,
      maxBudgetUsd: 1.5,
      systemPrompt: { type: "preset", preset: "claude_code", append: "be brief" },
      allowedTools: ["Read"],
      permissionMode: "plan",
      mcpServers: { fs: { command: "node", args: ["server.js"] }, web: { type: "http", url: "http://x" } },
      sessionId: "123e4567-e89b-12d3-a456-426614174000",
      env: { FOO: "1", BAR: undefined },
      settingSources: [],
      thinking: { type: "enabled", budgetTokens: 2000 },
      controlTimeout: "30 seconds",
      closeGracePeriod: 100,
      stderr: (_line: string) => undefined
    })
    expect(options.maxTurns).toBe(3)
    expect(typeof options.stderr).toBe("function")
  })

  it("names the bad field", () => {
    expect(optionsError({ maxTurns: -1 }).field).toBe("maxTurns")
    expect(optionsError({ permissionMode: "yolo" }).field).toBe("permissionMode")
    expect(optionsError({ systemPrompt: { type: "preset", preset: "other" } }).field).toBe("systemPrompt.preset")
    expect(optionsError({ controlTimeout: "soon" }).field).toBe("controlTimeout")
    expect(optionsError({ sessionId: "not-a-uuid" }).field).toBe("sessionId")
    expect(optionsError({ extraArgs: { "x --evil": "1" } }).field).toContain("extraArgs")
    expect(optionsError({ maxBufferSize: 10 }).field).toBe("maxBufferSize")
  })

  it("rejects unknown keys (a typo must not silently do nothing)", () => {
    const error = optionsError({ maxTurn: 3 })
    expect(error.field).toBe("maxTurn")
    expect(error.message).toContain("maxTurn")
  })

  it("rejects contradictory fields", () => {
    expect(ruleError({ model: "a", fallbackModel: "a" }).field).toBe("fallbackModel")
    expect(ruleError({ continue: true, resume: "abc" }).field).toBe("continue")
    expect(ruleError({ settings: "/tmp/settings.json", sandbox: { enabled: true } }).field).toBe("sandbox")
    expect(
      ruleError({ canUseTool: () => Effect.succeed(Permission.allow()), permissionPromptToolName: "mcp__p__ask" }).field
    )
      .toBe("permissionPromptToolName")
    expect(optionsError({ hooks: { PreToolUse: [{ hooks: ["not a function"] }] } }).field).toBe(
      "hooks.PreToolUse.0.hooks.0"
    )
    expect(ruleError({ hooks: { NoSuchEvent: [] } } as never).field).toBe("hooks.NoSuchEvent")
  })
})

describe("Options.validate messages", () => {
  it("a literal union lists every allowed value, and suggests the nearest", () => {
    const error = optionsError({ permissionMode: "yolo" })
    expect(error.field).toBe("permissionMode")
    for (const mode of Control.PermissionMode.literals) expect(error.detail).toContain(`"${mode}"`)
    expect(error.detail).toContain(`got "yolo"`)
    expect(optionsError({ permissionMode: "accept_edits" }).detail).toContain(`did you mean "acceptEdits"?`)
    expect(optionsError({ settingSources: ["user", "global"] }).detail).toBe(
      `expected one of "user", "project", "local"; got "global"; did you mean "local"?`
    )
  })

  it("a union of objects is reported against the member its `type` selects", () => {
    const stdio = optionsError({ mcpServers: { x: { type: "stdio" } } })
    expect(stdio.field).toBe("mcpServers.x.command")
    expect(stdio.detail).toBe(`is missing (required when \`type\` is "stdio")`)
    const untyped = optionsError({ mcpServers: { x: { args: ["a"] } } })
    expect(untyped.field).toBe("mcpServers.x.command")
    expect(untyped.detail).toContain("omitted")
    expect(optionsError({ mcpServers: { x: { type: "http" } } }).field).toBe("mcpServers.x.url")
    expect(optionsError({ mcpServers: { x: { type: "sdk", name: "x", tools: [] } } }).field).toBe(
      "mcpServers.x.version"
    )
    const unknownType = optionsError({ mcpServers: { x: { type: "ftp", url: "u" } } })
    expect(unknownType.field).toBe("mcpServers.x.type")
    expect(unknownType.detail).toBe(`expected one of "stdio", "sse", "http", "sdk"; got "ftp"`)
    expect(optionsError({ mcpServers: { x: "npx server" } }).detail).toBe(`expected an object; got "npx server"`)
    expect(optionsError({ thinking: { type: "enabled", budgetTokens: -1 } }).field).toBe("thinking.budgetTokens")
    expect(optionsError({ thinking: { type: "on" } }).detail).toBe(
      `expected one of "adaptive", "enabled", "disabled"; got "on"`
    )
    expect(optionsError({ systemPrompt: 5 }).detail).toBe("expected a string, an array or an object; got 5")
  })

  it("an unknown key suggests the nearest known one in a short message", () => {
    const typo = optionsError({ maxTurn: 3 })
    expect(typo.detail).toBe("unknown option; did you mean `maxTurns`?")
    expect(optionsError({ max_turns: 3 }).detail).toBe("unknown option; did you mean `maxTurns`?")
    expect(optionsError({ timeout: 5 }).detail).toBe("unknown option; did you mean `controlTimeout`?")
    const unrelated = optionsError({ banana: 1 })
    expect(unrelated.field).toBe("banana")
    expect(unrelated.message.length).toBeLessThan(100)
    expect(unrelated.detail).not.toContain("fallbackModel")
    const nested = optionsError({ hooks: { PreToolUse: [{ hooks: [], timout: 3 }] } })
    expect(nested.field).toBe("hooks.PreToolUse.0.timout")
    expect(nested.detail).toBe("unknown key; did you mean `timeout`?")
    // A small struct lists its keys when nothing is near.
    expect(optionsError({ mcpServers: { x: { command: "node", url: "u" } } }).detail).toBe(
      "unknown key; expected one of type, command, args, env, timeout, alwaysLoad"
    )
    expect(ruleError({ hooks: { PreTooluse: [] } } as never).detail).toBe(
      "unknown hook event; did you mean `PreToolUse`?"
    )
  })

  it("keeps messages short: no schema dumps", () => {
    for (const input of [5, null, { extraArgs: { "x --evil": "1" } }, { hooks: { PreToolUse: [{ hooks: [1] }] } }]) {
      expect(optionsError(input).message.length).toBeLessThan(160)
    }
    expect(optionsError(5).detail).toBe("expected an object; got 5")
    expect(optionsError({ extraArgs: { "x --evil": "1" } }).detail).toContain("flag name without dashes")
  })
})

describe("durations", () => {
  it("rejects zero and negative durations for every duration option", () => {
    for (
      const [input, field] of [
        [{ controlTimeout: 0 }, "controlTimeout"],
        [{ controlTimeout: -5 }, "controlTimeout"],
        [{ controlTimeout: "0 seconds" }, "controlTimeout"],
        [{ controlTimeout: Duration.zero }, "controlTimeout"],
        [{ closeGracePeriod: -1 }, "closeGracePeriod"],
        [{ closeGracePeriod: 0 }, "closeGracePeriod"],
        [{ hooks: { PreToolUse: [{ hooks: [], timeout: 0 }] } }, "hooks.PreToolUse.0.timeout"],
        [{ hooks: { PreToolUse: [{ hooks: [], timeout: "-5 seconds" }] } }, "hooks.PreToolUse.0.timeout"]
      ] as const
    ) {
      const error = optionsError(input)
      expect(error.field).toBe(field)
      expect(error.detail).toMatch(/^expected a positive duration; got /)
    }
    expect(optionsError({ controlTimeout: -5 }).detail).toBe("expected a positive duration; got -5")
  })

  it("Infinity means no deadline for controlTimeout and hook timeouts; closeGracePeriod must be finite", () => {
    validated({
      controlTimeout: Infinity,
      hooks: { PreToolUse: [{ hooks: [() => Effect.succeed({})], timeout: Duration.infinity }] },
      closeGracePeriod: "2 seconds"
    })
    const error = optionsError({ closeGracePeriod: Duration.infinity })
    expect(error.field).toBe("closeGracePeriod")
    expect(error.detail).toBe("expected a finite duration; got Infinity")
    expect(optionsError({ controlTimeout: "soon" }).detail).toBe(
      `expected a Duration, a number of milliseconds or a string like "30 seconds"; got "soon"`
    )
  })

  it("decodePositiveDuration checks per-call timeouts the same way", () => {
    expect(decodePositiveDuration("timeout", "5 seconds")).toEqual(Either.right(Duration.seconds(5)))
    expect(decodePositiveDuration("timeout", 250)).toEqual(Either.right(Duration.millis(250)))
    expect(decodePositiveDuration("timeout", Infinity)).toEqual(Either.right(Duration.infinity))
    const banana = Either.getLeft(decodePositiveDuration("timeout", "banana"))
    expect(banana._tag === "Some" && banana.value._tag).toBe("OptionsError")
    expect(banana._tag === "Some" && banana.value.field).toBe("timeout")
    expect(banana._tag === "Some" && banana.value.message).toBe(
      "Invalid option `timeout`: expected a Duration, a number of milliseconds or a string like \"30 seconds\"; got \"banana\""
    )
    for (const bad of [0, -5, Number.NaN, "0 millis", Duration.zero, undefined, null, {}]) {
      expect(Either.isLeft(decodePositiveDuration("timeout", bad))).toBe(true)
    }
    const infinite = Either.getLeft(decodePositiveDuration("grace", Infinity, { allowInfinite: false }))
    expect(infinite._tag === "Some" && infinite.value.detail).toBe("expected a finite duration; got Infinity")
  })
})

describe("session and thinking contradictions", () => {
  const uuid = "123e4567-e89b-12d3-a456-426614174000"

  it("sessionId with resume or continue needs forkSession (the CLI refuses it after spawning)", () => {
    const error = ruleError({ sessionId: uuid, resume: "abc" })
    expect(error.field).toBe("sessionId")
    expect(error.detail).toContain("`resume`")
    expect(error.detail).toContain("`forkSession`")
    expect(ruleError({ sessionId: uuid, continue: true }).detail).toContain("`continue`")
    expect(validated({ sessionId: uuid, resume: "abc", forkSession: true }).sessionId).toBe(uuid)
    expect(validated({ sessionId: uuid }).sessionId).toBe(uuid)
  })

  it("resumeSessionAt needs resume; continue is not enough", () => {
    const error = ruleError({ resumeSessionAt: "msg-1" })
    expect(error.field).toBe("resumeSessionAt")
    expect(error.detail).toContain("`resume`")
    expect(ruleError({ continue: true, resumeSessionAt: "msg-1" }).field).toBe("resumeSessionAt")
  })

  it("resumeDropsTurn needs resumeSessionAt (the CLI refuses it alone)", () => {
    const error = ruleError({ resume: "abc", resumeDropsTurn: uuid })
    expect(error.field).toBe("resumeDropsTurn")
    expect(error.detail).toContain("`resumeSessionAt`")
    expect(validated({ resume: "abc", resumeSessionAt: "m", resumeDropsTurn: uuid }).resumeDropsTurn).toBe(uuid)
  })

  it("forkSession needs resume or continue (alone the CLI ignores it)", () => {
    const error = ruleError({ forkSession: true })
    expect(error.field).toBe("forkSession")
    expect(error.detail).toContain("`resume`")
    expect(error.detail).toContain("`continue`")
    expect(validated({ forkSession: true, continue: true }).forkSession).toBe(true)
    expect(validated({ forkSession: false }).forkSession).toBe(false)
  })

  it("thinking with maxThinkingTokens is an error (thinking would silently win)", () => {
    const error = ruleError({ thinking: { type: "adaptive" }, maxThinkingTokens: 1000 })
    expect(error.field).toBe("maxThinkingTokens")
    expect(error.detail).toContain("`thinking`")
    expect(Launch.buildArgs(validated({ maxThinkingTokens: 1000 }))).toContain("--max-thinking-tokens=1000")
  })

  it("thinking enabled without budgetTokens is adaptive thinking, as in the official SDK", () => {
    expect(Launch.buildArgs(validated({ thinking: { type: "enabled" } })).slice(5)).toEqual(["--thinking=adaptive"])
    expect(optionsError({ thinking: { type: "enabled", budgetTokens: 0 } }).field).toBe("thinking.budgetTokens")
  })

  it("maxThinkingTokens: 0 means thinking disabled, as in the official SDK", () => {
    expect(Launch.buildArgs(validated({ maxThinkingTokens: 0 })).slice(5)).toEqual(["--thinking=disabled"])
    expect(Launch.buildArgs(validated({ maxThinkingTokens: 3000 })).slice(5)).toEqual(["--max-thinking-tokens=3000"])
  })

  it("thinking.display goes to --thinking-display, except with thinking disabled", () => {
    expect(Launch.buildArgs(validated({ thinking: { type: "adaptive", display: "summarized" } })).slice(5)).toEqual([
      "--thinking=adaptive",
      "--thinking-display=summarized"
    ])
    expect(
      Launch.buildArgs(validated({ thinking: { type: "enabled", budgetTokens: 2000, display: "omitted" } })).slice(5)
    )
      .toEqual(["--max-thinking-tokens=2000", "--thinking-display=omitted"])
    expect(optionsError({ thinking: { type: "disabled", display: "omitted" } }).field).toBe("thinking.display")
    expect(optionsError({ thinking: { type: "adaptive", display: "full" } }).detail).toBe(
      `expected one of "summarized", "omitted"; got "full"`
    )
  })
})

describe("options → argv", () => {
  it("starts with the stream-json flags and adds nothing for empty options", () => {
    expect(Launch.buildArgs(validated({}))).toEqual([
      "--output-format",
      "stream-json",
      "--verbose",
      "--input-format",
      "stream-json"
    ])
  })

  it("puts every value in one --flag=value item, lists comma-joined", () => {
    const args = Launch.buildArgs(validated({
      model: "m1",
      fallbackModel: "m2",
      maxTurns: 4,
      maxBudgetUsd: 0.5,
      allowedTools: ["Read", "Bash(git:*)"],
      disallowedTools: ["WebFetch"],
      tools: [],
      permissionMode: "acceptEdits",
      permissionPromptToolName: "mcp__perm__ask",
      settingSources: [],
      includePartialMessages: true,
      additionalDirectories: ["/a", "/b"],
      resume: "sess-1",
      forkSession: true,
      resumeSessionAt: "msg-1",
      persistSession: false,
      strictMcpConfig: true,
      betas: ["context-1m-2025-08-07"],
      effort: "high",
      extraArgs: { debug: null, "debug-file": "/tmp/d.txt" },
      plugins: [{ type: "local", path: "/plugins/p" }]
    })).slice(5)
    expect(args).toEqual([
      "--effort=high",
      "--max-turns=4",
      "--max-budget-usd=0.5",
      "--model=m1",
      "--fallback-model=m2",
      "--betas=context-1m-2025-08-07",
      "--permission-prompt-tool=mcp__perm__ask",
      "--allowedTools=Read,Bash(git:*)",
      "--disallowedTools=WebFetch",
      "--tools=",
      "--strict-mcp-config",
      "--setting-sources=",
      "--permission-mode=acceptEdits",
      "--include-partial-messages",
      "--add-dir=/a",
      "--add-dir=/b",
      "--plugin-dir=/plugins/p",
      "--resume=sess-1",
      "--fork-session",
      "--resume-session-at=msg-1",
      "--no-session-persistence",
      "--debug",
      "--debug-file",
      "/tmp/d.txt"
    ])
  })

  it("extraArgs keep the official `--flag value` form, and `--flag=value` when the value starts with a dash", () => {
    const args = Launch.buildArgs(validated({ extraArgs: { verbose: null, "max-tokens": "5", filter: "-hooks" } }))
      .slice(5)
    expect(args).toEqual(["--verbose", "--max-tokens", "5", "--filter=-hooks"])
    // A lone "-" (stdin, by convention) and an empty value stay separate items too.
    const edge = Launch.buildArgs(validated({ extraArgs: { x: "", y: "-" } })).slice(5)
    expect(edge).toEqual(["--x", "", "--y", "-"])
    expect(optionsError({ extraArgs: { "": null } }).field).toContain("extraArgs")
  })

  it("a value that looks like a flag stays a value", () => {
    const args = Launch.buildArgs(validated({ model: "--dangerously-skip-permissions" }))
    expect(args).toContain("--model=--dangerously-skip-permissions")
    expect(args).not.toContain("--dangerously-skip-permissions")
  })

  it("passes MCP servers, settings with sandbox, thinking and the output schema", () => {
    const args = Launch.buildArgs(validated({
      mcpServers: { fs: { command: "node", args: ["s.js"] } },
      settings: { model: "x" },
      sandbox: { enabled: true },
      thinking: { type: "adaptive" },
      outputFormat: { type: "json_schema", schema: { type: "object" } },
      tools: { type: "preset", preset: "claude_code" }
    }))
    expect(args).toContain(
      `--mcp-config=${JSON.stringify({ mcpServers: { fs: { command: "node", args: ["s.js"] } } })}`
    )
    expect(args).toContain(`--settings=${JSON.stringify({ model: "x", sandbox: { enabled: true } })}`)
    expect(args).toContain("--thinking=adaptive")
    expect(args).toContain(`--json-schema=${JSON.stringify({ type: "object" })}`)
    expect(args).toContain("--tools=default")
    expect(Launch.buildArgs(validated({ thinking: { type: "enabled", budgetTokens: 1000 } }))).toContain(
      "--max-thinking-tokens=1000"
    )
    expect(Launch.buildArgs(validated({ thinking: { type: "disabled" } }))).toContain("--thinking=disabled")
  })
})

describe("callbacks → argv and initialize", () => {
  it("canUseTool launches with --permission-prompt-tool=stdio; SDK servers go to initialize, not --mcp-config", () => {
    const calc = McpServer.make({ name: "calc", version: "1.0.0", tools: [] })
    const options = validated({
      canUseTool: () => Effect.succeed(Permission.allow()),
      mcpServers: { calc, fs: { command: "node", args: ["s.js"] } }
    })
    const args = Launch.buildArgs(options)
    expect(args).toContain("--permission-prompt-tool=stdio")
    expect(args).toContain(
      `--mcp-config=${JSON.stringify({ mcpServers: { fs: { command: "node", args: ["s.js"] } } })}`
    )
    // `hooks` and `sdkMcpServers` come from the session's HookRegistry and McpBridge, not the options.
    const init = Launch.buildInitialize(options)
    expect(init).not.toHaveProperty("sdkMcpServers")
    expect(init).not.toHaveProperty("hooks")
    expect(ruleError({ mcpServers: { other: calc } }).field).toBe("mcpServers.other")
  })
})

describe("options → env and initialize", () => {
  it("merges env over the parent's, removes NODE_OPTIONS and CLAUDECODE, sets the SDK variables", () => {
    const env = Launch.buildEnv(
      validated({ env: { FOO: "override", DROP: undefined }, enableFileCheckpointing: true }),
      { PATH: "/bin", FOO: "parent", DROP: "x", NODE_OPTIONS: "--inspect", CLAUDECODE: "1" }
    )
    expect(env.PATH).toBe("/bin")
    expect(env.FOO).toBe("override")
    expect(env).not.toHaveProperty("DROP")
    expect(env).not.toHaveProperty("NODE_OPTIONS")
    expect(env).not.toHaveProperty("CLAUDECODE")
    expect(env.CLAUDE_CODE_ENTRYPOINT).toBe("sdk-ts")
    expect(env.CLAUDE_CODE_SDK_READS_SESSION_STATE).toBe("1")
    expect(env.CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING).toBe("true")
    expect(Launch.buildEnv(validated({ env: { CLAUDE_CODE_ENTRYPOINT: "mine" } }), {}).CLAUDE_CODE_ENTRYPOINT).toBe(
      "mine"
    )
  })

  it.prop(
    "the merge is `{ ...parent, ...options.env }` without the removed and undefined variables, in that order",
    {
      parent: fc.dictionary(fc.constantFrom("PATH", "HOME", "FOO", "BAR", "NODE_OPTIONS", "CLAUDECODE"), fc.string()),
      own: fc.dictionary(
        fc.constantFrom("FOO", "BAR", "BAZ", "CLAUDECODE", "TRACEPARENT"),
        fc.option(fc.string(), { nil: undefined })
      )
    },
    ({ own, parent }) => {
      const merged: Record<string, string | undefined> = { ...parent, ...own }
      for (const key of Launch.removedEnv) delete merged[key]
      const expected = Object.entries(merged).filter(([, value]) => value !== undefined)
      const env = Launch.buildEnv(validated({ env: own }), parent, "00-trace")
      expect(Object.entries(env).slice(0, expected.length)).toEqual(expected)
      expect(env.TRACEPARENT).toBe(own.TRACEPARENT ?? "00-trace")
    }
  )

  it("merges over a parent whose lookups ignore case (`process.env` on Windows) as over a copy of it", () => {
    const keys: Record<string, string> = { Path: "C:\\bin", HOME: "/h" }
    const find = (key: string | symbol) =>
      typeof key === "string" ? Object.keys(keys).find((k) => k.toUpperCase() === key.toUpperCase()) : undefined
    const windowsLike = new Proxy(keys, {
      get: (target, key) => {
        const found = find(key)
        return found === undefined ? undefined : target[found]
      },
      has: (_, key) => find(key) !== undefined,
      getOwnPropertyDescriptor: (target, key) => {
        const found = find(key)
        return found === undefined ? undefined : Reflect.getOwnPropertyDescriptor(target, found)
      }
    })
    const env = Launch.buildEnv(validated({ env: { PATH: "mine" } }), windowsLike)
    expect(env).toEqual(Launch.buildEnv(validated({ env: { PATH: "mine" } }), { ...keys }))
    expect(env.PATH).toBe("mine")
  })

  it("sends the system prompt, agents and output schema in initialize", () => {
    expect(Launch.buildInitialize(validated({}))).toEqual({ systemPrompt: [""] })
    expect(Launch.buildInitialize(validated({ systemPrompt: "be brief" })).systemPrompt).toEqual(["be brief"])
    const preset = Launch.buildInitialize(
      validated({ systemPrompt: { type: "preset", preset: "claude_code", append: "x" } })
    )
    expect(preset).not.toHaveProperty("systemPrompt")
    expect(preset.appendSystemPrompt).toBe("x")
    const rich = Launch.buildInitialize(validated({
      agents: { reviewer: { description: "reviews", prompt: "review" } },
      outputFormat: { type: "json_schema", schema: { type: "object" } }
    }))
    expect(rich.agents).toEqual({ reviewer: { description: "reviews", prompt: "review" } })
    expect(rich.jsonSchema).toEqual({ type: "object" })
  })
})

describe("CLI discovery", () => {
  it.effect("an explicit path wins; a missing explicit path is CLINotFoundError, not a fallback", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-discovery-"))
      const fake = path.join(dir, "claude")
      fs.writeFileSync(fake, "#!/bin/sh\necho 1.0.0\n", { mode: 0o755 })
      expect(yield* Discovery.findCli(fake, {})).toBe(fake)
      expect(yield* Discovery.findCli(undefined, { CLAUDE_CODE_PATH: fake })).toBe(fake)
      const missing = yield* Effect.flip(Discovery.findCli(path.join(dir, "nope"), {}))
      expect(missing._tag).toBe("CLINotFoundError")
      expect(missing.searched).toEqual([path.join(dir, "nope")])
      expect(missing.message).toContain("pathToClaudeCodeExecutable")
      fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("runs in a span ClaudeAgent.findCli, which ends failed when the CLI is missing", () =>
    Effect.gen(function*() {
      const recorder = yield* SpanTree.record
      const missing = path.join(os.tmpdir(), `eca-missing-${Date.now()}`, "claude")
      const error = yield* Effect.flip(Discovery.findCli(missing, {}).pipe(Effect.withTracer(recorder.tracer)))
      expect(error._tag).toBe("CLINotFoundError")
      const spans = recorder.spans.filter((span) => span.name === "ClaudeAgent.findCli")
      expect(spans).toHaveLength(1)
      const status = spans[0]?.status
      expect(status?._tag === "Ended" && Exit.isFailure(status.exit)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("finds the binary of @anthropic-ai/claude-code in node_modules before PATH", () =>
    Effect.gen(function*() {
      const found = yield* Discovery.findCli(undefined, { PATH: "/nonexistent" })
      expect(found).toMatch(/node_modules\/@anthropic-ai\/claude-code(-[a-z0-9-]+)?\/(bin\/claude\.exe|claude)$/)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("remembers what the search found: one stat for the next session, a new search once it is gone", () =>
    Effect.gen(function*() {
      // A counting FileSystem over the real one (a test double): stats are counted, and paths in
      // `gone` are reported missing.
      let stats = 0
      const gone = new Set<string>()
      const counting = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(FileSystem.FileSystem, (real) => ({
          ...real,
          stat: (file: string) => {
            stats++
            return gone.has(file)
              ? Effect.fail(
                new SystemError({ reason: "NotFound", module: "FileSystem", method: "stat", pathOrDescriptor: file })
              )
              : real.stat(file)
          }
        }))
      ).pipe(Layer.provide(NodeContext.layer))
      // A PATH of its own, so no earlier test's search is remembered for it.
      const env = { PATH: `/nonexistent-${Date.now()}` }
      const find = Discovery.findCli(undefined, env).pipe(Effect.provide(Layer.merge(NodeContext.layer, counting)))
      const first = yield* find
      const searchedStats = stats
      stats = 0
      expect(yield* find).toBe(first)
      expect(stats).toBe(1)
      expect(searchedStats).toBeGreaterThanOrEqual(1)
      // The remembered binary is gone: the next session searches again and does not return it.
      gone.add(first)
      stats = 0
      const again = yield* Effect.either(find)
      expect(stats).toBeGreaterThan(1)
      expect(Either.isRight(again) ? again.right : undefined).not.toBe(first)
    }))

  it.effect("reads the version once per path and warns below the minimum", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-version-"))
      const fake = path.join(dir, "claude")
      const counter = path.join(dir, "count")
      fs.writeFileSync(fake, `#!/bin/sh\necho x >> ${counter}\necho "1.0.3 (Claude Code)"\n`, { mode: 0o755 })
      // Sessions fork the check only while it has something to do.
      expect(Discovery.versionCheckDone(fake, {})).toBe(false)
      const first = yield* Discovery.checkVersion(fake, {})
      expect(Discovery.versionCheckDone(fake, {})).toBe(true)
      expect(Discovery.versionCheckDone(fake, { CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK: "1" })).toBe(true)
      const second = yield* Discovery.checkVersion(fake, {})
      expect(first).toEqual(second)
      expect(first._tag === "Some" ? first.value : undefined).toBe("1.0.3")
      expect(fs.readFileSync(counter, "utf8").trim().split("\n")).toHaveLength(1)
      expect(Discovery.versionLessThan("1.0.3", Discovery.minimumVersion)).toBe(true)
      expect(Discovery.versionLessThan("2.1.330", Discovery.minimumVersion)).toBe(false)
      const skipped = yield* Discovery.checkVersion(path.join(dir, "other"), {
        CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK: "1"
      })
      expect(skipped._tag).toBe("None")
      fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("takes the version the CLI reports in its initialize reply, and runs -v only without one", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-reported-"))
      const counter = path.join(dir, "count")
      const script = `#!/bin/sh\necho x >> ${counter}\necho "2.5.0 (Claude Code)"\n`
      const reporting = path.join(dir, "reporting")
      const silent = path.join(dir, "silent")
      fs.writeFileSync(reporting, script, { mode: 0o755 })
      fs.writeFileSync(silent, script, { mode: 0o755 })
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(message))
      })
      const withLogs = Logger.replace(Logger.defaultLogger, logger)

      // The session's transport is the key; its `initialize` reply reports an old version.
      const session = {}
      const reported = yield* Discovery.versionReportOf(session)
      yield* Discovery.reportVersion(session, "1.0.4")
      const version = yield* Discovery.checkVersion(reporting, {}, [], reported).pipe(Effect.provide(withLogs))
      expect(Option.getOrUndefined(version)).toBe("1.0.4")
      expect(fs.existsSync(counter)).toBe(false)
      expect(warnings.join("\n")).toContain("1.0.4")
      expect(Discovery.versionCheckDone(reporting, {})).toBe(true)

      // A reply without a version (or no reply): `-v` is asked.
      const other = {}
      const none = yield* Discovery.versionReportOf(other)
      yield* Discovery.reportVersion(other, undefined)
      const asked = yield* Discovery.checkVersion(silent, {}, [], none).pipe(Effect.provide(withLogs))
      expect(Option.getOrUndefined(asked)).toBe("2.5.0")
      expect(fs.readFileSync(counter, "utf8").trim().split("\n")).toHaveLength(1)
      // A transport nobody waits on: reporting is a no-op.
      yield* Discovery.reportVersion({}, "9.9.9")
      fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("a session's CLI that reports its version in the initialize reply is not run with -v", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-session-version-"))
      const argvLog = path.join(dir, "argv")
      const cli = path.join(dir, "claude")
      const benchCli = new URL("../../scripts/fixtures/bench-cli.mjs", import.meta.url).pathname
      fs.writeFileSync(
        cli,
        `#!/bin/sh\necho "$1" >> ${argvLog}\nexec "${process.execPath}" "${benchCli}" "$@"\n`,
        { mode: 0o755 }
      )
      const messages = yield* ClaudeAgent.query("bench {\"kind\":\"echo\"}", { pathToClaudeCodeExecutable: cli }).pipe(
        Stream.runCollect,
        Effect.provide(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)))
      )
      expect(Chunk.some(messages, (m) => m.type === "result")).toBe(true)
      const runs = fs.readFileSync(argvLog, "utf8").trim().split("\n")
      expect(runs).toHaveLength(1)
      expect(runs).not.toContain("-v")
      fs.rmSync(dir, { recursive: true })
    }))
})

describe("CLI discovery in a session", () => {
  const benchCli = new URL("../../scripts/fixtures/bench-cli.mjs", import.meta.url).pathname
  const layer = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))
  // The session's span is the parent of findCli and of the version check (forked by the transport's
  // constructor; only the first session of a CLI checks).
  const underSession = (spans: ReadonlyArray<Tracer.Span>) => {
    const session = spans.find((span) => span.name === "ClaudeAgent.session")
    const parentOf = (span: Tracer.Span) => Option.isSome(span.parent) ? span.parent.value.spanId : undefined
    const discovery = spans.filter((span) =>
      span.name === "ClaudeAgent.findCli" || span.name === "ClaudeAgent.checkVersion"
    )
    expect(session).toBeDefined()
    expect(discovery.map((span) => span.name)).toContain("ClaudeAgent.findCli")
    expect(discovery.map(parentOf)).toEqual(discovery.map(() => session?.spanId))
  }

  it.live("runs under the session's span, in a scope closed in sequence or in parallel", () =>
    Effect.gen(function*() {
      for (const strategy of [ExecutionStrategy.sequential, ExecutionStrategy.parallel]) {
        const recorder = yield* SpanTree.record
        const scope = yield* Scope.make(strategy)
        const session = yield* Scope.extend(
          ClaudeAgent.session({ pathToClaudeCodeExecutable: benchCli }),
          scope
        ).pipe(Effect.withTracer(recorder.tracer))
        yield* session.send("bench {\"kind\":\"echo\"}")
        const messages = yield* session.messages.pipe(
          Stream.takeUntil((m) => m.type === "result"),
          Stream.runCollect
        )
        expect(Chunk.some(messages, (m) => m.type === "result")).toBe(true)
        yield* Scope.close(scope, Exit.void)
        underSession(recorder.spans)
      }
    }).pipe(Effect.provide(layer)))

  it.live("a missing explicit path fails the session with CLINotFoundError", () =>
    Effect.gen(function*() {
      const missing = path.join(os.tmpdir(), `eca-missing-${Date.now()}`, "claude")
      const error = yield* Effect.flip(Effect.scoped(ClaudeAgent.session({ pathToClaudeCodeExecutable: missing })))
      expect(error._tag).toBe("CLINotFoundError")
      expect(error.message).toContain("pathToClaudeCodeExecutable")
    }).pipe(Effect.provide(layer)))

  // A script runs under a runtime that starts whatever the script's path: a missing one is
  // reported as the path named, before anything is spawned, not as the runtime's exit.
  it.live("a missing script or CLAUDE_CODE_PATH fails the session with CLINotFoundError naming it", () =>
    Effect.gen(function*() {
      const dir = path.join(os.tmpdir(), `eca-missing-${Date.now()}`)
      const script = path.join(dir, "cli.mjs")
      const error = yield* Effect.flip(Effect.scoped(ClaudeAgent.session({ pathToClaudeCodeExecutable: script })))
      expect(error._tag).toBe("CLINotFoundError")
      expect(error._tag === "CLINotFoundError" ? error.searched : []).toEqual([script])
      expect(error.message).toContain("pathToClaudeCodeExecutable")
      const fromEnv = yield* Effect.flip(Effect.scoped(ClaudeAgent.session({
        env: { CLAUDE_CODE_PATH: path.join(dir, "claude") }
      })))
      expect(fromEnv._tag).toBe("CLINotFoundError")
      expect(fromEnv.message).toContain("CLAUDE_CODE_PATH")
    }).pipe(Effect.provide(layer)))
})

describe("the official SDK's options", () => {
  const uuid = "123e4567-e89b-12d3-a456-426614174000"

  it("accepts the shapes the official SDK accepts (README: Options)", () => {
    validated({
      mcpServers: {
        a: { command: "node", timeout: 5000 },
        b: { type: "http", url: "http://x", alwaysLoad: true, timeout: 2000 },
        c: {
          type: "sse",
          url: "http://y",
          tools: [{ name: "t", permission_policy: "always_ask", org_max_permission: "ask" }]
        },
        d: { type: "stdio", command: "n", alwaysLoad: false }
      },
      systemPrompt: ["a", Options.SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "b"],
      thinking: { type: "adaptive", display: "omitted" },
      plugins: [{ type: "local", path: "/p", skipMcpDiscovery: true }],
      title: "T",
      agents: {
        r: {
          description: "d",
          prompt: "p",
          mcpServers: ["calc", { web: { type: "http", url: "http://z" } }],
          skills: ["pdf"],
          initialPrompt: "start",
          background: true,
          memory: "project",
          effort: "high",
          permissionMode: "plan",
          omitClaudeMd: true,
          autoCompactWindow: 100_000
        }
      }
    })
    validated({ systemPrompt: { type: "custom", prompt: ["x", "y"], snapshot: true } })
    validated({
      systemPrompt: { type: "preset", preset: "claude_code", excludeDynamicSections: true, snapshot: false }
    })
    validated({ skills: "all" })
    validated({ thinking: { type: "enabled" } })
    validated({ thinking: { type: "adaptive" }, maxThinkingTokens: undefined })
    validated({ maxThinkingTokens: 0 })
    validated({
      agent: "reviewer",
      allowDangerouslySkipPermissions: true,
      debug: true,
      debugFile: "/tmp/d.log",
      includeHookEvents: true,
      managedSettings: { permissions: { deny: ["WebFetch"] } },
      permissionPrompts: "none",
      projectConfigRoot: "/repo",
      resume: "s",
      resumeSessionAt: "m",
      resumeDropsTurn: uuid,
      taskBudget: { total: 100_000 },
      toolConfig: { askUserQuestion: { previewFormat: "html" } },
      skills: ["pdf", "plugin:skill"],
      promptSuggestions: true,
      agentProgressSummaries: true,
      forwardSubagentText: true,
      planModeInstructions: "Plan in three steps.",
      toolAliases: { Bash: "mcp__box__bash" },
      perTaskStopAffordance: true,
      mcpServersDelivery: "initialize",
      pluginDelivery: "argv",
      executable: "node",
      executableArgs: ["--no-warnings"],
      verbatimPrompts: true,
      includeCommandLifecycle: true,
      includeSessionState: true
    })
  })

  it("rejects bad values of the new fields, naming them", () => {
    expect(optionsError({ mcpServers: { a: { command: "n", timeout: 500 } } })).toMatchObject({
      field: "mcpServers.a.timeout",
      detail: "expected a tool-call timeout in milliseconds, at least 1000 (the CLI ignores smaller values); got 500"
    })
    expect(optionsError({ mcpServers: { a: { command: "n", tools: [] } } }).field).toBe("mcpServers.a.tools")
    expect(
      optionsError({ mcpServers: { a: { type: "http", url: "u", tools: [{ name: "t", permission_policy: "yes" }] } } })
        .field
    )
      .toBe("mcpServers.a.tools.0.permission_policy")
    expect(optionsError({ skills: "some" }).detail).toBe(`expected "all" or an array; got "some"`)
    for (const name of ["", " pdf", "a,b", "Skill(x)", "a\nb"]) {
      expect(optionsError({ skills: [name] }).field).toBe("skills.0")
    }
    expect(optionsError({ executable: "python" }).detail).toBe(`expected one of "bun", "deno", "node"; got "python"`)
    expect(optionsError({ permissionPrompts: "never" }).field).toBe("permissionPrompts")
    expect(optionsError({ taskBudget: { total: 1.5 } }).field).toBe("taskBudget.total")
    expect(optionsError({ toolConfig: { askUserQuestion: { previewFormat: "pdf" } } }).field).toBe(
      "toolConfig.askUserQuestion.previewFormat"
    )
    expect(optionsError({ mcpServersDelivery: "stdin" }).field).toBe("mcpServersDelivery")
    expect(optionsError({ includeCommandLifecycle: "yes" }).field).toBe("includeCommandLifecycle")
    expect(optionsError({ includeSessionState: 1 }).field).toBe("includeSessionState")
    expect(optionsError({ plugins: [{ type: "local", path: "/p", skipMcp: true }] }).detail).toBe(
      "unknown key; did you mean `skipMcpDiscovery`?"
    )
    expect(optionsError({ systemPrompt: { type: "custom" } }).field).toBe("systemPrompt.prompt")
    expect(optionsError({ systemPrompt: ["a", 1] }).field).toBe("systemPrompt.1")
  })

  it("permissionPrompts \"none\" with canUseTool is an error: the callback would never be called", () => {
    const error = ruleError({ canUseTool: () => Effect.succeed(Permission.allow()), permissionPrompts: "none" })
    expect(error.field).toBe("permissionPrompts")
    expect(error.detail).toContain("never be called")
    expect(
      validated({ canUseTool: () => Effect.succeed(Permission.allow()), permissionPrompts: "host" }).permissionPrompts
    )
      .toBe("host")
  })

  it("maps the official argv options to their flags, in the official order", () => {
    const args = Launch.buildArgs(validated({
      agent: "reviewer",
      allowDangerouslySkipPermissions: true,
      permissionMode: "bypassPermissions",
      debug: true,
      includeHookEvents: true,
      managedSettings: { permissions: { deny: ["WebFetch"] } },
      permissionPrompts: "none",
      projectConfigRoot: "/repo",
      resume: "sess",
      resumeSessionAt: "msg",
      resumeDropsTurn: uuid,
      taskBudget: { total: 5000 },
      model: "m",
      additionalDirectories: ["/extra"],
      plugins: [{ type: "local", path: "/p1" }, { type: "local", path: "/p2", skipMcpDiscovery: true }]
    })).slice(5)
    expect(args).toEqual([
      "--task-budget=5000",
      "--model=m",
      "--agent=reviewer",
      "--debug",
      "--permission-prompts=none",
      "--permission-mode=bypassPermissions",
      "--allow-dangerously-skip-permissions",
      "--include-hook-events",
      "--project-config-root=/repo",
      "--add-dir=/extra",
      "--plugin-dir=/p1",
      "--plugin-dir-no-mcp=/p2",
      "--resume=sess",
      "--resume-session-at=msg",
      `--resume-drops-turn=${uuid}`,
      "--managed-settings",
      JSON.stringify({ permissions: { deny: ["WebFetch"] } })
    ])
    // `debugFile` implies debug mode: only the file flag is sent.
    const file = Launch.buildArgs(validated({ debug: true, debugFile: "/tmp/debug.log" })).slice(5)
    expect(file).toEqual(["--debug-file=/tmp/debug.log"])
  })

  it("skills add Skill rules to allowedTools (once each); a list also goes to initialize", () => {
    const list = validated({ allowedTools: ["Read", "Skill(pdf)"], skills: ["pdf", "docx"] })
    expect(Launch.buildArgs(list)).toContain("--allowedTools=Read,Skill(pdf),Skill(docx)")
    expect(Launch.buildInitialize(list).skills).toEqual(["pdf", "docx"])
    const all = validated({ skills: "all" })
    expect(Launch.buildArgs(all)).toContain("--allowedTools=Skill")
    expect(Launch.buildInitialize(all)).not.toHaveProperty("skills")
    expect(Launch.buildArgs(validated({ skills: [] }))).toContain("--allowedTools=")
  })

  it("mcpServersDelivery \"initialize\" moves external servers from --mcp-config to initialize, with --await-initialize", () => {
    const calc = McpServer.make({ name: "calc", version: "1.0.0", tools: [] })
    const fs = { command: "node", args: ["s.js"], env: { TOKEN: "secret" } }
    const options = validated({ mcpServers: { calc, fs }, mcpServersDelivery: "initialize" })
    const args = Launch.buildArgs(options)
    expect(args.some((arg) => arg.includes("secret"))).toBe(false)
    expect(args).toContain("--await-initialize")
    expect(Launch.buildInitialize(options).mcpServers).toEqual({ fs })
    // Nothing external: nothing changes.
    const sdkOnly = validated({ mcpServers: { calc }, mcpServersDelivery: "initialize" })
    expect(Launch.buildArgs(sdkOnly)).not.toContain("--await-initialize")
    expect(Launch.buildInitialize(sdkOnly)).not.toHaveProperty("mcpServers")
    const argv = validated({ mcpServers: { fs }, mcpServersDelivery: "argv" })
    expect(Launch.buildArgs(argv)).toContain(`--mcp-config=${JSON.stringify({ mcpServers: { fs } })}`)
    expect(Launch.buildInitialize(argv)).not.toHaveProperty("mcpServers")
  })

  it("pluginDelivery \"initialize\" sends the plugin list in initialize instead of --plugin-dir flags", () => {
    const plugins = [{ type: "local", path: "/p1" }, { type: "local", path: "/p2", skipMcpDiscovery: true }] as const
    const options = validated({ plugins, pluginDelivery: "initialize" })
    const args = Launch.buildArgs(options).slice(5)
    expect(args).toEqual(["--await-initialize"])
    expect(Launch.buildInitialize(options).plugins).toEqual(plugins)
  })

  it("toolConfig's preview format goes to the environment", () => {
    const env = Launch.buildEnv(validated({ toolConfig: { askUserQuestion: { previewFormat: "html" } } }), {})
    expect(env.CLAUDE_CODE_QUESTION_PREVIEW_FORMAT).toBe("html")
    expect(Launch.buildEnv(validated({ toolConfig: {} }), {})).not.toHaveProperty("CLAUDE_CODE_QUESTION_PREVIEW_FORMAT")
  })

  it("sends the initialize-only options in initialize, and nothing for those not given", () => {
    const init = Launch.buildInitialize(validated({
      title: "Release notes",
      promptSuggestions: true,
      agentProgressSummaries: true,
      forwardSubagentText: false,
      planModeInstructions: "Plan in three steps.",
      toolAliases: { Bash: "mcp__box__bash" },
      perTaskStopAffordance: true
    }))
    expect(init).toEqual({
      systemPrompt: [""],
      title: "Release notes",
      promptSuggestions: true,
      agentProgressSummaries: true,
      forwardSubagentText: false,
      planModeInstructions: "Plan in three steps.",
      toolAliases: { Bash: "mcp__box__bash" },
      perTaskStopAffordance: true
    })
    // None of them is on argv.
    expect(Launch.buildArgs(validated({ title: "x", promptSuggestions: true, toolAliases: { A: "B" } })).slice(5))
      .toEqual([])
  })

  it("maps every system prompt form to the initialize fields the official SDK sends", () => {
    const init = (systemPrompt: Options.SystemPrompt) => Launch.buildInitialize(validated({ systemPrompt }))
    expect(init(["a", Options.SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "b"])).toEqual({
      systemPrompt: ["a", "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__", "b"]
    })
    expect(init({ type: "custom", prompt: "own" })).toEqual({ systemPrompt: ["own"] })
    expect(init({ type: "custom", prompt: ["x", "y"], snapshot: false })).toEqual({
      systemPrompt: ["x", "y"],
      systemPromptSnapshot: false
    })
    expect(init({ type: "preset", preset: "claude_code" })).toEqual({})
    expect(
      init({ type: "preset", preset: "claude_code", append: "more", excludeDynamicSections: true, snapshot: true })
    )
      .toEqual({ appendSystemPrompt: "more", excludeDynamicSections: true, systemPromptSnapshot: true })
  })
})

describe("executable and executableArgs", () => {
  it("a JavaScript CLI runs under the runtime (node by default), with executableArgs before it", () => {
    expect(Discovery.invocation("/x/cli.js", undefined)).toEqual({ command: "node", args: ["/x/cli.js"] })
    expect(Discovery.invocation("/x/cli.mjs", "bun", ["--smol"])).toEqual({
      command: "bun",
      args: ["--smol", "/x/cli.mjs"]
    })
    for (const file of ["a.ts", "a.tsx", "a.jsx"]) expect(Discovery.isScript(file)).toBe(true)
  })

  it("a native CLI runs itself; executableArgs still come first, as in the official SDK", () => {
    expect(Discovery.invocation("/bin/claude", "node", ["--flag"])).toEqual({
      command: "/bin/claude",
      args: ["--flag"]
    })
    expect(Discovery.invocation("/bin/claude.exe", undefined)).toEqual({ command: "/bin/claude.exe", args: [] })
  })

  it.effect("the version check runs the same way (runtime, script, -v)", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-runtime-"))
      // Not executable and without a shebang: it only runs under a runtime.
      const script = path.join(dir, "cli.mjs")
      fs.writeFileSync(script, `console.log("2.9.1 (Claude Code) " + process.execArgv.join(" "))\n`, { mode: 0o644 })
      const { args, command } = Discovery.invocation(script, "node", ["--no-warnings"])
      const version = yield* Discovery.checkVersion(command, {}, args)
      expect(version._tag === "Some" ? version.value : undefined).toBe("2.9.1")
      fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(NodeContext.layer)))
})
