// Hook callbacks: id assignment and the `initialize.hooks` shape, decoding every event's input
// (the recorded CLI inputs from the c-hooks transcripts plus one hand-made sample per other
// event), output encoding, and how failures, defects, unknown ids and cancellation reach the
// `hook_callback` handler. The handler is called directly with control-request-shaped objects.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Either, Exit, Fiber, Logger } from "effect"
import * as Hook from "../../src/Hook.js"
import * as HookRegistry from "../../src/services/HookRegistry.js"

// ---- recorded inputs (CLI 2.1.330, c-hooks.allow) -------------------------------------------

const recordedBase = {
  session_id: "a455d362-9fc0-4cbf-9c0c-0fcf7069bcf6",
  transcript_path: "<home>/.claude/projects/<cwd-slug>/a455d362-9fc0-4cbf-9c0c-0fcf7069bcf6.jsonl",
  cwd: "<cwd>",
  prompt_id: "a678bfb9-fa3a-49b4-bd0d-b489b6df2a16",
  permission_mode: "default"
}

const recordedUserPromptSubmit = {
  ...recordedBase,
  hook_event_name: "UserPromptSubmit" as const,
  prompt: "run the bash tool"
}

const recordedPreToolUse = {
  ...recordedBase,
  effort: { level: "medium" },
  hook_event_name: "PreToolUse" as const,
  tool_name: "Bash",
  tool_input: { command: "touch hook_marker && echo touched", description: "create marker" },
  tool_use_id: "toolu_bash_1"
}

const recordedPostToolUse = {
  ...recordedBase,
  effort: { level: "medium" },
  hook_event_name: "PostToolUse" as const,
  tool_name: "Bash",
  tool_input: { command: "touch hook_marker && echo touched", description: "create marker" },
  tool_response: { stdout: "touched", stderr: "", interrupted: false, isImage: false, noOutputExpected: false },
  tool_use_id: "toolu_bash_1",
  duration_ms: 35
}

const recordedStop = {
  ...recordedBase,
  effort: { level: "medium" },
  hook_event_name: "Stop" as const,
  stop_hook_active: false,
  last_assistant_message: "finished",
  background_tasks: [],
  session_crons: []
}

// ---- hand-made samples for the events the recordings lack (fields from the official SDK) ----

const base = { session_id: "s-1", transcript_path: "/tmp/t.jsonl", cwd: "/work" }
const tool = { tool_name: "Write", tool_input: { file_path: "a.txt", content: "x" }, tool_use_id: "toolu_1" }
const modelSwitch = {
  from_model: "claude-sonnet",
  to_model: "claude-opus",
  requested_model: "opus",
  source: "sdk",
  context_tokens: 1200,
  prompt_cache_warm: true,
  cache_ttl: "5m",
  estimated_cache_write_usd: 0.01,
  pricing: { input: 15 }
}

const samples: { readonly [K in Hook.HookEvent]: { readonly hook_event_name: K } & Record<string, unknown> } = {
  PreToolUse: recordedPreToolUse,
  PostToolUse: recordedPostToolUse,
  PostToolUseFailure: { ...base, hook_event_name: "PostToolUseFailure", ...tool, error: "ENOSPC", is_interrupt: false },
  PostToolBatch: { ...base, hook_event_name: "PostToolBatch", tool_calls: [{ ...tool, tool_response: "ok" }] },
  Notification: { ...base, hook_event_name: "Notification", message: "needs input", notification_type: "idle_prompt" },
  UserPromptSubmit: recordedUserPromptSubmit,
  UserPromptExpansion: {
    ...base,
    hook_event_name: "UserPromptExpansion",
    expansion_type: "slash_command",
    command_name: "review",
    command_args: "src/",
    prompt: "Review src/"
  },
  SessionStart: { ...base, hook_event_name: "SessionStart", source: "startup", model: "claude-opus" },
  SessionEnd: { ...base, hook_event_name: "SessionEnd", reason: "prompt_input_exit" },
  Stop: recordedStop,
  StopFailure: { ...base, hook_event_name: "StopFailure", error: "rate_limit" },
  SubagentStart: { ...base, hook_event_name: "SubagentStart", agent_id: "a-1", agent_type: "general-purpose" },
  SubagentStop: {
    ...base,
    hook_event_name: "SubagentStop",
    stop_hook_active: false,
    agent_id: "a-1",
    agent_transcript_path: "/tmp/a-1.jsonl",
    agent_type: "general-purpose"
  },
  PreCompact: { ...base, hook_event_name: "PreCompact", trigger: "manual", custom_instructions: null },
  PostCompact: { ...base, hook_event_name: "PostCompact", trigger: "auto", compact_summary: "summary" },
  PreModelSwitch: { ...base, hook_event_name: "PreModelSwitch", ...modelSwitch },
  // `requested_model` is null when the default model was asked for.
  PostModelSwitch: {
    ...base,
    hook_event_name: "PostModelSwitch",
    ...modelSwitch,
    source: "resume",
    requested_model: null
  },
  PermissionRequest: {
    ...base,
    hook_event_name: "PermissionRequest",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }]
  },
  PermissionDenied: { ...base, hook_event_name: "PermissionDenied", ...tool, reason: "denied by rule" },
  Setup: { ...base, hook_event_name: "Setup", trigger: "init" },
  TeammateIdle: { ...base, hook_event_name: "TeammateIdle", teammate_name: "ann", team_name: "core" },
  TaskCreated: { ...base, hook_event_name: "TaskCreated", task_id: "t1", task_subject: "write tests" },
  TaskCompleted: { ...base, hook_event_name: "TaskCompleted", task_id: "t1", task_subject: "write tests" },
  Elicitation: { ...base, hook_event_name: "Elicitation", mcp_server_name: "calc", message: "Which base?" },
  ElicitationResult: { ...base, hook_event_name: "ElicitationResult", mcp_server_name: "calc", action: "accept" },
  ConfigChange: {
    ...base,
    hook_event_name: "ConfigChange",
    source: "project_settings",
    file_path: "/w/.claude/s.json"
  },
  WorktreeCreate: { ...base, hook_event_name: "WorktreeCreate", name: "feature-x" },
  WorktreeRemove: { ...base, hook_event_name: "WorktreeRemove", worktree_path: "/w/.worktrees/feature-x" },
  InstructionsLoaded: {
    ...base,
    hook_event_name: "InstructionsLoaded",
    file_path: "/w/CLAUDE.md",
    memory_type: "Project",
    load_reason: "session_start"
  },
  CwdChanged: { ...base, hook_event_name: "CwdChanged", old_cwd: "/w", new_cwd: "/w/sub" },
  FileChanged: { ...base, hook_event_name: "FileChanged", file_path: "/w/a.ts", event: "change" },
  DirectoryAdded: { ...base, hook_event_name: "DirectoryAdded", directory: "/other", source: "slash_command" },
  MessageDisplay: {
    ...base,
    hook_event_name: "MessageDisplay",
    turn_id: "t",
    message_id: "m",
    index: 0,
    final: false,
    delta: "Hel"
  }
}

const hookCallback = (callbackId: string, input: unknown, toolUseId?: string) => ({
  subtype: "hook_callback",
  callback_id: callbackId,
  input,
  ...(toolUseId === undefined ? {} : { tool_use_id: toolUseId })
})

// A test logger that records warnings, so the tests can see what the user sees.
const captureWarnings = Effect.gen(function*() {
  const lines: Array<string> = []
  const mockLogger = Logger.make(({ logLevel, message }) => {
    if (logLevel._tag === "Warning") lines.push([message].flat().map(String).join(" "))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, mockLogger) }
})

const succeedWith = (output: Hook.HookOutput): Hook.HookCallback => () => Effect.succeed(output)

describe("HookRegistry.make", () => {
  it.effect("assigns hook_0, hook_1, … in event, matcher, callback order and builds initialize.hooks", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({
        PreToolUse: [
          { matcher: "Bash", hooks: [succeedWith({}), succeedWith({})], timeout: "30 seconds" },
          { matcher: "Write|Edit", hooks: [succeedWith({})], timeout: 1500, onFailure: "block" }
        ],
        PostToolUse: [{ matcher: "Bash", hooks: [succeedWith({})] }],
        UserPromptSubmit: [{ hooks: [succeedWith({})] }],
        Stop: []
      })
      expect(registry.initializeHooks).toEqual({
        PreToolUse: [
          { matcher: "Bash", hookCallbackIds: ["hook_0", "hook_1"], timeout: 30 },
          { matcher: "Write|Edit", hookCallbackIds: ["hook_2"], timeout: 1.5, onFailure: "block" }
        ],
        PostToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_3"] }],
        UserPromptSubmit: [{ hookCallbackIds: ["hook_4"] }]
      })
      // Undefined fields are absent, not `undefined`, on the wire.
      expect(JSON.stringify(registry.initializeHooks.UserPromptSubmit)).toBe("[{\"hookCallbackIds\":[\"hook_4\"]}]")
    }))

  it.effect("matches the recorded c-hooks.allow initialize.hooks", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({
        PreToolUse: [{ matcher: "Bash", hooks: [succeedWith(Hook.allow("allowed by test hook"))] }],
        PostToolUse: [{ matcher: "Bash", hooks: [succeedWith({ continue: true })] }],
        UserPromptSubmit: [{ hooks: [succeedWith({ continue: true })] }],
        Stop: [{ hooks: [succeedWith({ continue: true })] }]
      })
      expect(JSON.stringify(registry.initializeHooks)).toBe(
        "{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hookCallbackIds\":[\"hook_0\"]}],\"PostToolUse\":[{\"matcher\":\"Bash\",\"hookCallbackIds\":[\"hook_1\"]}],\"UserPromptSubmit\":[{\"hookCallbackIds\":[\"hook_2\"]}],\"Stop\":[{\"hookCallbackIds\":[\"hook_3\"]}]}"
      )
    }))

  it.effect("answers the recorded c-hooks.allow callbacks with the recorded answers", () =>
    Effect.gen(function*() {
      const seen: Array<readonly [string, string | undefined]> = []
      const record = (output: Hook.HookOutput): Hook.HookCallback => (input, toolUseId) =>
        Effect.sync(() => {
          seen.push([input.hook_event_name, toolUseId])
          return output
        })
      const registry = yield* HookRegistry.make({
        PreToolUse: [{ matcher: "Bash", hooks: [record(Hook.allow("allowed by test hook"))] }],
        PostToolUse: [{ matcher: "Bash", hooks: [record({ continue: true })] }],
        UserPromptSubmit: [{ hooks: [record({ continue: true })] }],
        Stop: [{ hooks: [record({ continue: true })] }]
      })
      const answer = (id: string, input: unknown, toolUseId: string) =>
        registry.handleCallback(hookCallback(id, input, toolUseId), "req-1")
      expect(yield* answer("hook_2", recordedUserPromptSubmit, "8605b8ad-dfb7-4e80-a064-041d8d3d21f9")).toEqual({
        continue: true
      })
      expect(yield* answer("hook_0", recordedPreToolUse, "toolu_bash_1")).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          permissionDecisionReason: "allowed by test hook"
        }
      })
      expect(yield* answer("hook_1", recordedPostToolUse, "toolu_bash_1")).toEqual({ continue: true })
      expect(yield* answer("hook_3", recordedStop, "c11c15b8-4dd1-4b75-9260-f0739fc528e8")).toEqual({ continue: true })
      expect(seen).toEqual([
        ["UserPromptSubmit", "8605b8ad-dfb7-4e80-a064-041d8d3d21f9"],
        ["PreToolUse", "toolu_bash_1"],
        ["PostToolUse", "toolu_bash_1"],
        ["Stop", "c11c15b8-4dd1-4b75-9260-f0739fc528e8"]
      ])
    }))

  it.effect("provides the services captured at make time to the callbacks", () => {
    class MockPolicy extends Context.Tag("test/MockPolicy")<MockPolicy, { readonly blocked: string }>() {}
    return Effect.gen(function*() {
      const registry = yield* HookRegistry.make({
        PreToolUse: [{
          hooks: [
            Hook.on(
              "PreToolUse",
              (input) =>
                Effect.map(
                  MockPolicy,
                  (policy) =>
                    input.tool_name === policy.blocked ? Hook.deny(`${policy.blocked} is blocked`) : Hook.allow()
                )
            )
          ]
        }]
      })
      // The handler's own type needs no services: they were captured above.
      const answer = yield* registry.handleCallback(hookCallback("hook_0", recordedPreToolUse, "toolu_bash_1"), "r")
      expect(answer).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "Bash is blocked"
        }
      })
    }).pipe(Effect.provideService(MockPolicy, { blocked: "Bash" }))
  })
})

describe("Hook.decodeInput", () => {
  it("decodes one input per event to that event, returning the CLI's object", () => {
    expect(Object.keys(samples).sort()).toEqual([...Hook.HookEvent.literals].sort())
    expect(Hook.HookEvent.literals).toHaveLength(33)
    for (const [event, raw] of Object.entries(samples)) {
      const decoded = Hook.decodeInput(raw)
      if (Either.isLeft(decoded)) throw new Error(`${event}: ${decoded.left.message}`)
      expect(decoded.right.hook_event_name).toBe(event)
      expect(decoded.right).toBe(raw)
    }
  })

  it("types the recorded inputs' fields", () => {
    const decoded = Hook.decodeInput(recordedPostToolUse)
    if (Either.isLeft(decoded) || decoded.right.hook_event_name !== "PostToolUse") throw new Error("not PostToolUse")
    expect(decoded.right.tool_name).toBe("Bash")
    expect(decoded.right.duration_ms).toBe(35)
    expect(decoded.right.effort?.level).toBe("medium")
  })

  it("requested_model of a model switch is a name or null (the default model)", () => {
    for (const requested of ["opus", null]) {
      for (const event of ["PreModelSwitch", "PostModelSwitch"] as const) {
        const decoded = Hook.decodeInput({
          ...base,
          hook_event_name: event,
          ...modelSwitch,
          requested_model: requested
        })
        if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
        expect("requested_model" in decoded.right ? decoded.right.requested_model : "absent").toBe(requested)
      }
    }
    expect(
      Either.isLeft(
        Hook.decodeInput({ ...base, hook_event_name: "PreModelSwitch", ...modelSwitch, requested_model: 1 })
      )
    )
      .toBe(true)
  })

  it("delivers an unknown event raw", () => {
    const raw = { ...base, hook_event_name: "BrandNewEvent", payload: [1, 2] }
    expect(Hook.decodeInput(raw)).toEqual(Either.right({ hook_event_name: "Unknown", raw }))
  })

  it("fails with a MessageParseError for a known event that breaks its schema, or a non-object", () => {
    const broken = { ...recordedPreToolUse, tool_name: 42 }
    const decoded = Hook.decodeInput(broken)
    if (Either.isRight(decoded)) throw new Error("expected a failure")
    expect(decoded.left._tag).toBe("MessageParseError")
    expect(decoded.left.detail).toContain("invalid PreToolUse hook input")
    expect(decoded.left.detail).toContain("tool_name")
    expect(decoded.left.raw).toBe(broken)
    expect(Either.isLeft(Hook.decodeInput("PreToolUse"))).toBe(true)
    expect(Either.isLeft(Hook.decodeInput({ ...base }))).toBe(true)
  })
})

describe("Hook.encodeOutput", () => {
  const encoded = (output: Hook.HookOutput): unknown => Either.getOrThrow(Hook.encodeOutput(output))

  it("sends an answer with no undefined field as it is, and copies one that has some", () => {
    const plain: Hook.HookOutput = {
      continue: true,
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" }
    }
    expect(Either.getOrThrow(Hook.encodeOutput(plain))).toBe(plain)
    const nested = {
      systemMessage: "m",
      hookSpecificOutput: {
        hookEventName: "PreToolUse" as const,
        permissionDecision: "allow" as const,
        permissionDecisionReason: undefined
      }
    }
    const answer: Hook.HookOutput = nested
    const wire = Either.getOrThrow(Hook.encodeOutput(answer))
    expect(wire).not.toBe(nested)
    expect(wire).toEqual({
      systemMessage: "m",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" }
    })
    expect(Object.keys(Object(Object(wire).hookSpecificOutput))).not.toContain("permissionDecisionReason")
    // The caller's object is left as it was.
    expect(Object.keys(nested.hookSpecificOutput)).toContain("permissionDecisionReason")
  })

  it("PreToolUse allow with updatedInput, without undefined fields", () => {
    const wire = encoded(Hook.allow(undefined, { command: "ls -la" }))
    expect(wire).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        updatedInput: { command: "ls -la" }
      }
    })
    expect(JSON.stringify(wire)).not.toContain("permissionDecisionReason")
    expect(Object.keys(Object(Object(wire).hookSpecificOutput))).not.toContain("permissionDecisionReason")
  })

  it("the PreToolUse answers leave out what they are not given, and go on the wire without a copy", () => {
    const answers = [
      Hook.allow(),
      Hook.allow("reason"),
      Hook.allow(undefined, { command: "ls" }),
      Hook.ask(),
      Hook.ask("reason"),
      Hook.defer(),
      Hook.defer("reason")
    ]
    for (const answer of answers) {
      const specific = Object(answer.hookSpecificOutput)
      for (const key of Object.keys(specific)) expect(specific[key], key).not.toBeUndefined()
      expect(Either.getOrThrow(Hook.encodeOutput(answer))).toBe(answer)
    }
    expect(Hook.allow("r", { a: 1 }).hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
      permissionDecisionReason: "r",
      updatedInput: { a: 1 }
    })
  })

  it("PreToolUse deny with a reason, as recorded in c-hooks.deny", () => {
    expect(JSON.stringify(encoded(Hook.deny("blocked by test hook")))).toBe(
      "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"blocked by test hook\"}}"
    )
  })

  it("PostToolUse additionalContext, continue:false with stopReason, async", () => {
    expect(encoded(Hook.addContext("PostToolUse", "the output was truncated"))).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "the output was truncated" }
    })
    expect(encoded(Hook.stop("budget reached"))).toEqual({ continue: false, stopReason: "budget reached" })
    expect(encoded({ async: true, asyncTimeout: 5000 })).toEqual({ async: true, asyncTimeout: 5000 })
    expect(encoded({})).toEqual({})
  })

  it("rejects an answer that breaks the schema (from untyped code)", () => {
    const untyped: unknown = JSON.parse(
      "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"maybe\"}}"
    )
    const result = Hook.encodeOutput(Object.assign({}, untyped))
    expect(Either.isLeft(result)).toBe(true)
  })
})

describe("HookRegistry.handleCallback failures", () => {
  class MockPolicyViolation extends Error {}

  it.effect("a callback's typed failure fails the handler with HookCallbackError naming the event and id, logged once by the channel", () =>
    Effect.gen(function*() {
      const { layer, lines } = yield* captureWarnings
      const registry = yield* HookRegistry.make({
        PreToolUse: [{ hooks: [() => Effect.fail(new MockPolicyViolation("hook handler exploded"))] }]
      })
      const error = yield* registry.handleCallback(hookCallback("hook_0", recordedPreToolUse), "r").pipe(
        Effect.provide(layer),
        Effect.flip
      )
      expect(error).toBeInstanceOf(HookRegistry.HookCallbackError)
      expect(error).toMatchObject({ event: "PreToolUse", callbackId: "hook_0" })
      expect(error instanceof Error ? error.message : "").toBe(
        "PreToolUse hook callback hook_0: failed: hook handler exploded"
      )
      // The control channel logs the failed request; the registry adds no second line.
      expect(lines).toHaveLength(0)
    }))

  it.effect("a defect fails the handler, named as a defect", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({ Stop: [{ hooks: [() => Effect.dieMessage("boom")] }] })
      const error = yield* registry.handleCallback(hookCallback("hook_0", recordedStop), "r").pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "HookCallbackError", event: "Stop", callbackId: "hook_0" })
      expect(error instanceof Error ? error.message : "").toContain("died: boom")
    }))

  it.effect("an input that breaks its schema fails naming the field, in one short line", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({ PreToolUse: [{ hooks: [succeedWith({})] }] })
      const error = yield* registry.handleCallback(
        hookCallback("hook_0", { ...recordedPreToolUse, tool_use_id: 1 }),
        "r"
      )
        .pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "HookCallbackError" })
      const message = error instanceof Error ? error.message : ""
      expect(message).toContain("invalid input")
      expect(message).toContain("tool_use_id")
      expect(message.length).toBeLessThanOrEqual(500)
    }))

  it.effect("an invalid answer fails the handler", () =>
    Effect.gen(function*() {
      const untyped: unknown = JSON.parse("{\"decision\":\"perhaps\"}")
      const registry = yield* HookRegistry.make({
        PreToolUse: [{ hooks: [() => Effect.succeed(Object.assign({}, untyped))] }]
      })
      const exit = yield* Effect.exit(registry.handleCallback(hookCallback("hook_0", recordedPreToolUse), "r"))
      expect(Exit.isFailure(exit)).toBe(true)
    }))

  it.effect("an unknown callback id fails naming it", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({ PreToolUse: [{ hooks: [succeedWith({})] }] })
      const error = yield* registry.handleCallback(hookCallback("hook_7", recordedPreToolUse), "r").pipe(Effect.flip)
      expect(error).toBeInstanceOf(HookRegistry.HookCallbackError)
      expect(error).toMatchObject({ _tag: "HookCallbackError", callbackId: "hook_7" })
      expect(String(error)).toContain("unknown hook callback hook_7")
      expect(String(error)).toContain("hook_7")
      const empty = yield* HookRegistry.HookRegistry.empty.handleCallback(hookCallback("hook_0", {}), "r").pipe(
        Effect.flip
      )
      expect(empty).toMatchObject({ _tag: "HookCallbackError", callbackId: "hook_0" })
      expect(String(empty)).toContain("hook_0")
    }))

  it.effect("Hook.on registered under the wrong event dies naming both events", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({
        PostToolUse: [{ hooks: [Hook.on("PreToolUse", () => Effect.succeed(Hook.allow()))] }]
      })
      const exit = yield* Effect.exit(registry.handleCallback(hookCallback("hook_0", recordedPostToolUse), "r"))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("PreToolUse")).toBe(true)
    }))

  it.effect("interrupting the handler interrupts the callback and produces no success", () =>
    Effect.gen(function*() {
      const { layer, lines } = yield* captureWarnings
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const registry = yield* HookRegistry.make({
        PreToolUse: [{
          hooks: [() =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )]
        }]
      })
      const fiber = yield* registry.handleCallback(hookCallback("hook_0", recordedPreToolUse), "r").pipe(
        Effect.provide(layer),
        Effect.fork
      )
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      yield* Deferred.await(interrupted)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(lines).toEqual([])
    }))
})

describe("hook callbacks from untyped JavaScript", () => {
  const untypedEffect = (value: unknown): Effect.Effect<Hook.HookOutput> => value as Effect.Effect<Hook.HookOutput>

  it.effect("an async callback (a Promise) fails the handler saying an Effect is expected; a rejection is not left unhandled", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.make({
        Stop: [{ hooks: [() => untypedEffect(Promise.resolve({}))] }],
        // Vitest fails the run on an unhandled rejection: this one is answered, so it must be handled.
        PreToolUse: [{ hooks: [() => untypedEffect(Promise.reject(new Error("rejected")))] }]
      })
      const error = yield* registry.handleCallback(hookCallback("hook_0", recordedStop), "r").pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "HookCallbackError", event: "Stop", callbackId: "hook_0" })
      expect(error instanceof Error ? error.message : "").toContain(
        "`hooks.Stop`: returned a Promise, where an Effect is expected"
      )
      const other = yield* registry.handleCallback(hookCallback("hook_1", recordedPreToolUse), "r").pipe(Effect.flip)
      expect(other instanceof Error ? other.message : "").toContain("`hooks.PreToolUse`: returned a Promise")
    }))
})
