/**
 * Session options. The field names are the official TypeScript SDK's, so that migrating is
 * mostly renaming imports. They are validated by a Schema before anything starts: a bad option
 * fails with an `OptionsError` naming the field and what it allows. An unknown key is an error
 * too (a typo must not silently do nothing), and so are contradictory options the CLI would
 * refuse or silently ignore.
 *
 * How each option reaches the CLI (argv flag, `initialize` field or environment variable) is in
 * the README's options table.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Either, Option, ParseResult, Predicate, Schema, SchemaAST } from "effect"
import { positiveDurationProblem } from "../internal/schema/duration.js"
import * as Guard from "../internal/schema/guard.js"
import { objectJsonSchema } from "../internal/schema/jsonSchema.js"
import { OptionsError } from "../SdkError.js"
import type * as McpServer from "../McpServer.js"
import type * as Permission from "../Permission.js"
import type { ApprovalStoreShape } from "../services/ApprovalStore.js"
import type { SessionStoreShape } from "../services/SessionStore.js"
import * as Control from "./Control.js"
import * as Hook from "../Hook.js"
import {
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionalUnknown,
  optionalStrings,
  NullOrString,
  Strings
} from "../internal/schema/schemas.js"

const NonEmptyString = Schema.String.pipe(Schema.minLength(1))
const optionalNonEmptyString = Schema.optional(NonEmptyString)
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * A `Duration.DurationInput`: a `Duration`, a number of milliseconds, or a string such as `"30 seconds"`.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const timeout: Options.DurationInput = "30 seconds"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const DurationInput = Schema.declare(
  (u: unknown): u is Duration.DurationInput => Option.isSome(Duration.decodeUnknown(u)),
  { identifier: "DurationInput", description: "a Duration, a number of milliseconds or a string like \"30 seconds\"" }
)

/**
 * @since 0.1.0
 * @category models
 */
export type DurationInput = Duration.DurationInput

// Zero or negative durations are mistakes (`Duration.decode` turns -5 into zero, and a zero
// deadline fails at once). Infinity is "no deadline" for control requests and hooks; the close
// grace period must end, so it is finite.
const positiveDuration = (allowInfinite: boolean) =>
  Schema.declare(
    (u: unknown): u is Duration.DurationInput => positiveDurationProblem(u, { allowInfinite }) === undefined,
    {
      identifier: allowInfinite ? "PositiveDuration" : "FinitePositiveDuration",
      description: allowInfinite ? "a positive duration (Infinity: no deadline)" : "a positive, finite duration",
      message: (issue) => positiveDurationProblem(issue.actual, { allowInfinite }) ?? "expected a positive duration"
    }
  )

const Deadline = positiveDuration(true)
const FiniteDuration = positiveDuration(false)

// The CLI ignores a per-server tool-call timeout below one second (MCP_TOOL_TIMEOUT or its
// default applies instead), so a smaller one is refused rather than silently dropped.
const McpToolTimeout = Schema.Number.pipe(Schema.filter((n) => Number.isFinite(n) && n >= 1000, {
  description: "a tool-call timeout in milliseconds, at least 1000 (the CLI ignores smaller values)"
}))

/**
 * The permission policy a host declares for one tool of a remote (sse, http) MCP server.
 * `always_ask` asks `canUseTool` before each call even where a rule allows it, `always_deny`
 * refuses every call; `org_max_permission` is an organisation's ceiling.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const policy: Options.McpServerToolPolicy = { name: "delete_file", permission_policy: "always_ask" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const McpServerToolPolicy = Schema.Struct({
  name: NonEmptyString,
  permission_policy: Schema.optional(Schema.Literal("always_allow", "always_ask", "always_deny")),
  org_max_permission: Schema.optional(Schema.Literal("allow", "ask", "blocked"))
})

/**
 * @since 0.1.0
 * @category models
 */
export type McpServerToolPolicy = Schema.Schema.Type<typeof McpServerToolPolicy>

/**
 * An MCP server the CLI runs itself (stdio) or connects to (sse, http). Passed to the CLI as
 * `--mcp-config` (or in `initialize` with `mcpServersDelivery: "initialize"`). `timeout` is the
 * per-call limit in milliseconds (at least 1000); `alwaysLoad: true` keeps the server's tools in
 * every prompt instead of behind tool search (and makes start-up wait for the server, up to 5 s);
 * a remote server's `tools` declares per-tool permission policies.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const servers: Record<string, Options.McpServerConfig> = {
 *   files: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], timeout: 30_000 },
 *   docs: { type: "http", url: "https://example.com/mcp", alwaysLoad: true, tools: [{ name: "purge", permission_policy: "always_deny" }] }
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const McpServerConfig = Schema.Union(
  Schema.Struct({
    type: Schema.optional(Schema.Literal("stdio")),
    command: NonEmptyString,
    args: optionalStrings,
    env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
    timeout: Schema.optional(McpToolTimeout),
    alwaysLoad: optionalBoolean
  }),
  Schema.Struct({
    type: Schema.Literal("sse", "http"),
    url: NonEmptyString,
    headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
    tools: Schema.optional(Schema.Array(McpServerToolPolicy)),
    timeout: Schema.optional(McpToolTimeout),
    alwaysLoad: optionalBoolean
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type McpServerConfig = Schema.Schema.Type<typeof McpServerConfig>

/**
 * A subagent the main agent can delegate to (sent in `initialize`).
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const reviewer: Options.AgentDefinition = {
 *   description: "Reviews a diff",
 *   prompt: "You review code changes for bugs.",
 *   tools: ["Read", "Grep"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentDefinition = Schema.Struct({
  description: NonEmptyString,
  prompt: Schema.String,
  tools: optionalStrings,
  disallowedTools: optionalStrings,
  model: optionalString,
  maxTurns: Schema.optional(Schema.Int.pipe(Schema.positive())),
  /** Server names, or `{ name: config }` records of servers only this agent uses. */
  mcpServers: Schema.optional(Schema.Array(Schema.Union(Schema.String, JsonObject))),
  skills: optionalStrings,
  initialPrompt: optionalString,
  autoCompactWindow: optionalNumber,
  background: optionalBoolean,
  omitClaudeMd: optionalBoolean,
  memory: Schema.optional(Schema.Literal("user", "project", "local")),
  effort: Schema.optional(Schema.Union(Schema.Literal("low", "medium", "high", "xhigh", "max"), Schema.Number)),
  permissionMode: Schema.optional(Control.PermissionMode),
  criticalSystemReminder_EXPERIMENTAL: optionalString,
  observer: optionalString,
  observerMessage: optionalString
}, JsonObject)

/**
 * @since 0.1.0
 * @category models
 */
export type AgentDefinition = Schema.Schema.Type<typeof AgentDefinition>

/**
 * The marker that splits an array system prompt into a static prefix, cacheable across sessions,
 * and a session-specific suffix. Put it in the array as an element of its own.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const prompt: Options.SystemPrompt = ["You review pull requests.", Options.SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "Repository: acme/api"]
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const SYSTEM_PROMPT_DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"

/**
 * The system prompt, sent in `initialize`:
 * - a string, an array of strings (blocks, optionally split by `SYSTEM_PROMPT_DYNAMIC_BOUNDARY`)
 *   or `{ type: "custom", prompt }`: your prompt replaces Claude Code's;
 * - `{ type: "preset", preset: "claude_code" }`: Claude Code's prompt, with `append`ed text;
 *   `excludeDynamicSections: true` moves the per-user parts (working directory, memory, git
 *   status) into the first user message, so the prompt itself is identical across users and caches.
 *
 * `snapshot` (custom and preset) says whether the CLI records the rendered prompt once per
 * conversation and reuses it, also on resume (`true`, the CLI's default), or renders it afresh
 * for every request (`false`). Omitted, the prompt is empty, as with the official SDKs.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const own: Options.SystemPrompt = "You are a terse assistant."
 * const blocks: Options.SystemPrompt = ["You are a terse assistant.", "Answer in French."]
 * const custom: Options.SystemPrompt = { type: "custom", prompt: "You are a release bot.", snapshot: false }
 * const claudeCode: Options.SystemPrompt = {
 *   type: "preset",
 *   preset: "claude_code",
 *   append: "Answer in French.",
 *   excludeDynamicSections: true
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemPrompt = Schema.Union(
  Schema.String,
  Strings,
  Schema.Struct({
    type: Schema.Literal("custom"),
    prompt: Schema.Union(Schema.String, Strings),
    snapshot: optionalBoolean
  }),
  Schema.Struct({
    type: Schema.Literal("preset"),
    preset: Schema.Literal("claude_code"),
    append: optionalString,
    excludeDynamicSections: optionalBoolean,
    snapshot: optionalBoolean
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type SystemPrompt = Schema.Schema.Type<typeof SystemPrompt>

const ThinkingDisplay = Schema.Literal("summarized", "omitted")

/**
 * Extended thinking: `adaptive` (the model decides), `enabled` with a token budget, or
 * `disabled`. As in the official SDK, `enabled` without `budgetTokens` runs as `adaptive`.
 * `display` says how thinking blocks are returned: `summarized` or `omitted` (`--thinking-display`).
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const thinking: Options.Thinking = { type: "enabled", budgetTokens: 4000, display: "summarized" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Thinking = Schema.Union(
  Schema.Struct({ type: Schema.Literal("adaptive"), display: Schema.optional(ThinkingDisplay) }),
  Schema.Struct({
    type: Schema.Literal("enabled"),
    budgetTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
    display: Schema.optional(ThinkingDisplay)
  }),
  Schema.Struct({ type: Schema.Literal("disabled") })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Thinking = Schema.Schema.Type<typeof Thinking>

const StderrCallback = Schema.declare(
  (u: unknown): u is (line: string) => void => typeof u === "function",
  { identifier: "StderrCallback", description: "a function (line: string) => void" }
)

// Callbacks are checked for being functions here; their types come from `Options<R>`.
const AnyFunction = Schema.declare(
  (u: unknown): u is Function => typeof u === "function",
  { identifier: "Function", description: "a function returning an Effect" }
)

// A `SessionStore` service's shape: its operations are checked for being functions.
const StoreShape = Schema.declare(
  (u: unknown): u is SessionStoreShape =>
    Predicate.isRecord(u) &&
    ["acquire", "appendAll", "append", "load", "listSessions", "listSummaries", "listSubkeys", "delete"]
      .every((name) => typeof u[name] === "function"),
  { identifier: "SessionStore", description: "a SessionStore (the service's shape)" }
)

// An `ApprovalStore` service's shape: its operations are checked for being functions.
const ApprovalStoreShapeSchema = Schema.declare(
  (u: unknown): u is ApprovalStoreShape =>
    Predicate.isRecord(u) &&
    ["create", "get", "listPending", "decide"].every((name) => typeof u[name] === "function") &&
    Effect.isEffect(u.expireDue),
  { identifier: "ApprovalStore", description: "an ApprovalStore (the service's shape)" }
)

// Any Schema without requirements: its JSON Schema goes to the CLI, its `Type` is what
// `Structured.decode` returns. Whether it has an object JSON Schema is checked by `validate`.
const OutputSchema = Schema.declare(
  (u: unknown): u is Schema.Schema.AnyNoContext => Schema.isSchema(u),
  { identifier: "Schema", description: "an Effect Schema" }
)

// What `McpServer.make` returns (`timeout` is checked by the session's `McpBridge`); further keys
// it may carry are its own, not typos of the caller.
const SdkServerShape = Schema.Struct({
  type: Schema.Literal("sdk"),
  name: NonEmptyString,
  version: Schema.String,
  tools: Schema.Array(Schema.Unknown),
  instructions: optionalString,
  alwaysLoad: optionalBoolean,
  timeout: optionalUnknown
}, JsonObject)

// The names the Skill tool can match: `Skill(name)` rules are comma-joined on argv and the tool
// trims names, so parentheses, commas, control characters and outer whitespace cannot work.
const SkillName = Schema.String.pipe(Schema.filter(
  (name) => name.length > 0 && name === name.trim() && !/[(),\p{Cc}]/u.test(name),
  { description: "a skill name (no parentheses, commas, control characters or surrounding spaces)" }
))

/**
 * Per-tool settings for built-in tools. `askUserQuestion.previewFormat`: what the
 * `AskUserQuestion` tool's option previews contain, `markdown` (the default) or `html` (for web
 * hosts). Sent as the environment variable `CLAUDE_CODE_QUESTION_PREVIEW_FORMAT`.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const toolConfig: Options.ToolConfig = { askUserQuestion: { previewFormat: "html" } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolConfig = Schema.Struct({
  askUserQuestion: Schema.optional(
    Schema.Struct({ previewFormat: Schema.optional(Schema.Literal("markdown", "html")) })
  )
})

/**
 * @since 0.1.0
 * @category models
 */
export type ToolConfig = Schema.Schema.Type<typeof ToolConfig>

/**
 * A local plugin directory. `skipMcpDiscovery: true` loads its skills, hooks, agents and
 * commands but not its MCP servers (`--plugin-dir-no-mcp`), for hosts that run those themselves.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const plugin: Options.PluginConfig = { type: "local", path: "./plugins/review", skipMcpDiscovery: true }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PluginConfig = Schema.Struct({
  type: Schema.Literal("local"),
  path: NonEmptyString,
  skipMcpDiscovery: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export type PluginConfig = Schema.Schema.Type<typeof PluginConfig>

const Delivery = Schema.Literal("argv", "initialize")

const HookMatcherShape = Schema.Struct({
  matcher: optionalString,
  hooks: Schema.Array(AnyFunction),
  timeout: Schema.optional(Deadline),
  onFailure: Schema.optional(Schema.Literal("continue", "block"))
})

/**
 * The options Schema. `validate` checks a value against it; the `Options` type derives from it.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Options } from "effect-claude-agent"
 * Schema.is(Options.Options)({ maxTurns: 3 }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Options = Schema.Struct({
  // model and budget
  model: optionalNonEmptyString,
  fallbackModel: optionalNonEmptyString,
  maxTurns: Schema.optional(Schema.Int.pipe(Schema.positive())),
  maxBudgetUsd: Schema.optional(Schema.Number.pipe(Schema.positive())),
  /** API-side token budget the model paces itself against (`--task-budget`). */
  taskBudget: Schema.optional(Schema.Struct({ total: Schema.Int.pipe(Schema.positive()) })),
  thinking: Schema.optional(Thinking),
  /** Deprecated: use `thinking`. `0` disables thinking, another value is a budget. */
  maxThinkingTokens: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  effort: Schema.optional(Schema.Literal("low", "medium", "high", "xhigh", "max")),
  betas: optionalStrings,
  // prompt and output
  systemPrompt: Schema.optional(SystemPrompt),
  /** Replaces the workflow part of the plan-mode instructions (`initialize`). */
  planModeInstructions: optionalString,
  outputFormat: Schema.optional(Schema.Struct({ type: Schema.Literal("json_schema"), schema: JsonObject })),
  /** Structured output from an Effect Schema: its JSON Schema is sent as `outputFormat`'s is. */
  outputSchema: Schema.optional(OutputSchema),
  includePartialMessages: optionalBoolean,
  /**
   * `command_lifecycle` messages (`queued`, `started`, `completed`, `cancelled`) for each prompt.
   * The CLI reports them because every prompt carries a uuid (the one `send` returns for
   * `rewindFiles`); by default they are not delivered, as the official SDK delivers none.
   *
   * @example
   * ```ts
   * import { Stream } from "effect"
   * import { ClaudeAgent } from "effect-claude-agent"
   * const states = ClaudeAgent.query("hi", { includeCommandLifecycle: true }).pipe(
   *   Stream.filter((m) => m.type === "command_lifecycle")
   * )
   * ```
   */
  includeCommandLifecycle: optionalBoolean,
  /**
   * `system/session_state_changed` messages (`running`, `requires_action`, `idle`) the CLI marks
   * `sdk_host_only`: by default they are not delivered, as the official SDK delivers none
   * (`session.control.runState` has the state either way).
   *
   * @example
   * ```ts
   * import { Stream } from "effect"
   * import { ClaudeAgent } from "effect-claude-agent"
   * const waiting = ClaudeAgent.query("Delete build/", { includeSessionState: true }).pipe(
   *   Stream.filter((m) => m.type === "system" && m.subtype === "session_state_changed" && m.state === "requires_action")
   * )
   * ```
   */
  includeSessionState: optionalBoolean,
  /** A `prompt_suggestion` message after each turn's `result`, from the second turn on (`initialize`). */
  promptSuggestions: optionalBoolean,
  /** Subagents' text and thinking as messages with `parent_tool_use_id`, not only their tool calls (`initialize`). */
  forwardSubagentText: optionalBoolean,
  /** Every user message is sent with `client_composed: true`: no `@file` expansion, no slash commands. */
  verbatimPrompts: optionalBoolean,
  /** The session's title instead of one generated from the first prompt (`initialize`; not on resume). */
  title: optionalNonEmptyString,
  agents: Schema.optional(Schema.Record({ key: NonEmptyString, value: AgentDefinition })),
  /** The agent (from `agents` or settings) that runs the main thread (`--agent`). */
  agent: optionalNonEmptyString,
  /** Periodic model-written summaries of running subagents, in `task_progress.summary` (`initialize`). */
  agentProgressSummaries: optionalBoolean,
  // tools and permissions
  allowedTools: optionalStrings,
  disallowedTools: optionalStrings,
  tools: Schema.optional(
    Schema.Union(Strings, Schema.Struct({ type: Schema.Literal("preset"), preset: Schema.Literal("claude_code") }))
  ),
  /** `"all"` or the skills to enable: added to `allowedTools` as `Skill` / `Skill(name)`, a list also in `initialize`. */
  skills: Schema.optional(Schema.Union(Schema.Literal("all"), Schema.Array(SkillName))),
  /** Tool names the model emits, redirected to other tools, one hop (`initialize`). */
  toolAliases: Schema.optional(Schema.Record({ key: NonEmptyString, value: NonEmptyString })),
  toolConfig: Schema.optional(ToolConfig),
  permissionMode: Schema.optional(Control.PermissionMode),
  /** Allows `permissionMode: "bypassPermissions"` now or later (`--allow-dangerously-skip-permissions`). */
  allowDangerouslySkipPermissions: optionalBoolean,
  permissionPromptToolName: optionalNonEmptyString,
  /** `"none"`: nobody answers permission prompts; what would prompt is denied (`--permission-prompts`). */
  permissionPrompts: Schema.optional(Schema.Literal("host", "none")),
  mcpServers: Schema.optional(
    Schema.Record({ key: NonEmptyString, value: Schema.Union(McpServerConfig, SdkServerShape) })
  ),
  /** How stdio/sse/http servers reach the CLI: `--mcp-config` (default) or `initialize`, off the command line. */
  mcpServersDelivery: Schema.optional(Delivery),
  canUseTool: Schema.optional(AnyFunction),
  onElicitation: Schema.optional(AnyFunction),
  hooks: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(HookMatcherShape) })),
  /** `hook_started` / `hook_progress` / `hook_response` messages for every hook (`--include-hook-events`). */
  includeHookEvents: optionalBoolean,
  strictMcpConfig: optionalBoolean,
  /** Declares a per-task stop control (`stopTask`): an interrupt then spares background tasks (`initialize`). */
  perTaskStopAffordance: optionalBoolean,
  // sessions
  resume: optionalNonEmptyString,
  continue: optionalBoolean,
  forkSession: optionalBoolean,
  sessionId: Schema.optional(Schema.UUID),
  resumeSessionAt: optionalNonEmptyString,
  /** With `resumeSessionAt`: the prompt uuid of the turn the truncation drops, checked by the CLI (`--resume-drops-turn`). */
  resumeDropsTurn: optionalNonEmptyString,
  persistSession: optionalBoolean,
  enableFileCheckpointing: optionalBoolean,
  /**
   * Keeps the conversation in this store (`--session-mirror`): the transcript is appended as the
   * CLI writes it, and `resume` / `continue` load it from the store into a temporary config
   * directory (removed when the session closes) before the CLI starts.
   */
  sessionStore: Schema.optional(StoreShape),
  /** `batched` (default): a turn's entries are appended together, before its `result`; `eager`: each frame at once. */
  sessionStoreFlush: Schema.optional(Schema.Literal("batched", "eager")),
  /**
   * A failed append to the store: `message` (default), a `system/mirror_error` message and the turn
   * goes on; `fail`, the turn's message stream fails with the `SessionStoreError`. The session
   * stays open either way, and the failed entries are not stored.
   */
  sessionStoreFailure: Schema.optional(Schema.Literal("message", "fail")),
  /** A `resume` target the store does not have: `fail` (default, `SessionNotFoundError`) or `new` (a new conversation). */
  resumeMissing: Schema.optional(Schema.Literal("fail", "new")),
  /** How long loading a session from the store may take (default 60 seconds). */
  sessionStoreLoadTimeout: Schema.optional(FiniteDuration),
  /**
   * Records a turn that ends at a deferred tool call (`Hook.defer()`: `terminal_reason`
   * `tool_deferred`) as a pending approval in this store, and delivers a `system/awaiting_approval`
   * message before the turn's `result`; `Approvals.approve` / `deny` / `edit` continue it later,
   * from any process. Needs `sessionStore`.
   */
  approvalStore: Schema.optional(ApprovalStoreShapeSchema),
  /** How long a recorded approval waits before it expires (default 24 hours). */
  approvalTimeout: Schema.optional(FiniteDuration),
  // process and environment
  cwd: optionalNonEmptyString,
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.UndefinedOr(Schema.String) })),
  additionalDirectories: Schema.optional(Schema.Array(NonEmptyString)),
  /** The checkout that project settings, `.mcp.json` and `.claude/` come from when `cwd` is a worktree of it. */
  projectConfigRoot: optionalNonEmptyString,
  settingSources: Schema.optional(Schema.Array(Schema.Literal("user", "project", "local"))),
  settings: Schema.optional(Schema.Union(NonEmptyString, JsonObject)),
  /** Policy-tier settings, restrictive only (`--managed-settings`). */
  managedSettings: Schema.optional(JsonObject),
  sandbox: Schema.optional(JsonObject),
  plugins: Schema.optional(Schema.Array(PluginConfig)),
  /** How `plugins` reach the CLI: `--plugin-dir` flags (default) or `initialize`. */
  pluginDelivery: Schema.optional(Delivery),
  extraArgs: Schema.optional(Schema.Record({
    key: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9-]*$/, {
      message: () => "an extra argument's name is a flag name without dashes, like \"debug\" or \"max-tokens\""
    })),
    value: NullOrString
  })),
  pathToClaudeCodeExecutable: optionalNonEmptyString,
  /** The runtime for a CLI given as a JavaScript file (default `node`, `bun` under Bun). */
  executable: Schema.optional(Schema.Literal("bun", "deno", "node")),
  /** Arguments placed before the CLI's own: the runtime's, for a JavaScript CLI. */
  executableArgs: optionalStrings,
  /** CLI debug logging (`--debug`). */
  debug: optionalBoolean,
  /** CLI debug log file; implies `debug` (`--debug-file`). */
  debugFile: optionalNonEmptyString,
  stderr: Schema.optional(StderrCallback),
  // this SDK's own settings
  maxBufferSize: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1024))),
  messageBufferBytes: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(64 * 1024))),
  controlTimeout: Schema.optional(Deadline),
  closeGracePeriod: Schema.optional(FiniteDuration)
})

/**
 * Options for `ClaudeAgent.query` and `ClaudeAgent.session`. Every field is optional. `R` is
 * what the callbacks (`canUseTool`, `hooks`, SDK MCP tools) need from the environment; the
 * session requires it.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const options: Options.Options = {
 *   model: "claude-sonnet-4-5",
 *   maxTurns: 5,
 *   allowedTools: ["Read", "Grep"],
 *   env: { ANTHROPIC_API_KEY: "sk-…" },
 *   controlTimeout: "30 seconds"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R = never>
  extends Omit<Schema.Schema.Type<typeof Options>, "canUseTool" | "onElicitation" | "hooks" | "mcpServers">
{
  /** Answers the CLI's permission prompts (launches the CLI with `--permission-prompt-tool=stdio`). */
  readonly canUseTool?: Permission.CanUseTool<unknown, R> | undefined
  /**
   * Answers an MCP server's request for user input (`accept` with content, `decline`, `cancel`).
   * Without it, such requests are declined, as the official SDK does.
   */
  readonly onElicitation?: Control.OnElicitation<unknown, R> | undefined
  /** Hook callbacks by event. */
  readonly hooks?: Hook.Hooks<R> | undefined
  /** External MCP servers (`--mcp-config`) and in-process ones made with `McpServer.make`. */
  readonly mcpServers?: { readonly [name: string]: McpServerConfig | McpServer.McpServer<R> } | undefined
}

const parseOptions: SchemaAST.ParseOptions = { onExcessProperty: "error", errors: "first" }
// Compiled on first call: options of plain fields never reach it (`acceptedAtOnce`).
const decode = Guard.lazily(() => Schema.decodeUnknown(Options, parseOptions))

const storeError = <R>(options: Options<R>): OptionsError | undefined => {
  if (options.approvalTimeout !== undefined && options.approvalStore === undefined) {
    return new OptionsError({ field: "approvalTimeout", detail: "needs `approvalStore`" })
  }
  if (options.sessionStore === undefined) {
    if (options.approvalStore !== undefined) {
      return new OptionsError({
        field: "approvalStore",
        detail: "needs `sessionStore`: the deferred turn is resumed from it, by another process"
      })
    }
    const needsStore: ReadonlyArray<
      "sessionStoreFlush" | "sessionStoreFailure" | "resumeMissing" | "sessionStoreLoadTimeout"
    > = [
      "sessionStoreFlush",
      "sessionStoreFailure",
      "resumeMissing",
      "sessionStoreLoadTimeout"
    ]
    const orphan = needsStore.find((field) => options[field] !== undefined)
    return orphan === undefined ? undefined : new OptionsError({ field: orphan, detail: "needs `sessionStore`" })
  }
  if (options.persistSession === false) {
    return new OptionsError({
      field: "sessionStore",
      detail: "cannot be combined with `persistSession: false`: the CLI mirrors only what it writes locally"
    })
  }
  if (options.enableFileCheckpointing === true) {
    return new OptionsError({
      field: "sessionStore",
      detail: "cannot be combined with `enableFileCheckpointing`: file backups are not mirrored to the store"
    })
  }
  return undefined
}

const crossFieldError = <R>(options: Options<R>): OptionsError | undefined => {
  const store = storeError(options)
  if (store !== undefined) return store
  if (options.fallbackModel !== undefined && options.fallbackModel === options.model) {
    return new OptionsError({ field: "fallbackModel", detail: "must differ from `model`" })
  }
  if (options.sandbox !== undefined && typeof options.settings === "string") {
    return new OptionsError({
      field: "sandbox",
      detail: "cannot be merged into `settings` given as a string (a path or JSON text): pass `settings` as an object"
    })
  }
  if (options.continue === true && options.resume !== undefined) {
    return new OptionsError({ field: "continue", detail: "cannot be combined with `resume`: choose one" })
  }
  // The CLI checks the next three itself, but only after spawning, or (forkSession) not at all.
  const resuming = options.resume !== undefined ? "resume" : options.continue === true ? "continue" : undefined
  if (options.sessionId !== undefined && resuming !== undefined && options.forkSession !== true) {
    return new OptionsError({
      field: "sessionId",
      detail: `cannot be combined with \`${resuming}\` unless \`forkSession\` is true: ` +
        "a resumed session keeps its id, a fork gets this one"
    })
  }
  if (options.resumeSessionAt !== undefined && options.resume === undefined) {
    return new OptionsError({
      field: "resumeSessionAt",
      detail: "needs `resume`: it names a message of the session being resumed (`continue` is not enough)"
    })
  }
  if (options.resumeDropsTurn !== undefined && options.resumeSessionAt === undefined) {
    return new OptionsError({
      field: "resumeDropsTurn",
      detail: "needs `resumeSessionAt`: it names the turn that truncation drops (the CLI refuses it alone)"
    })
  }
  if (options.forkSession === true && resuming === undefined) {
    return new OptionsError({
      field: "forkSession",
      detail: "needs `resume` or `continue`: it forks the session being resumed (alone, the CLI ignores it)"
    })
  }
  if (options.thinking !== undefined && options.maxThinkingTokens !== undefined) {
    return new OptionsError({
      field: "maxThinkingTokens",
      detail: "cannot be combined with `thinking`, which would override it: use `thinking` alone " +
        "(`maxThinkingTokens` is deprecated)"
    })
  }
  if (options.outputSchema !== undefined) {
    if (options.outputFormat !== undefined) {
      return new OptionsError({
        field: "outputSchema",
        detail: "cannot be combined with `outputFormat`: both set the structured-output schema, give one"
      })
    }
    const jsonSchema = objectJsonSchema(options.outputSchema.ast)
    if (Either.isLeft(jsonSchema)) return new OptionsError({ field: "outputSchema", detail: jsonSchema.left })
  }
  if (options.canUseTool !== undefined && options.permissionPrompts === "none") {
    return new OptionsError({
      field: "permissionPrompts",
      detail: "\"none\" cannot be combined with `canUseTool`, which would never be called: " +
        "nothing is asked, and what would prompt is denied"
    })
  }
  if (options.canUseTool !== undefined && options.permissionPromptToolName !== undefined) {
    return new OptionsError({
      field: "permissionPromptToolName",
      detail:
        "cannot be combined with `canUseTool`, which answers permission prompts itself (`--permission-prompt-tool=stdio`)"
    })
  }
  const knownEvents: ReadonlyArray<string> = Hook.HookEvent.literals
  for (const event of Object.keys(options.hooks ?? {})) {
    if (!knownEvents.includes(event)) {
      const near = nearest(event, knownEvents)
      return new OptionsError({
        field: `hooks.${event}`,
        detail: near !== undefined
          ? `unknown hook event; did you mean \`${near}\`?`
          : `unknown hook event; known events: ${knownEvents.join(", ")}`
      })
    }
  }
  for (const [key, server] of Object.entries(options.mcpServers ?? {})) {
    if (server.type === "sdk" && server.name !== key) {
      return new OptionsError({
        field: `mcpServers.${key}`,
        detail: `the SDK server is named "${server.name}": list it under that name`
      })
    }
  }
  return undefined
}

// Turning a parse issue into one short message. Effect's formatters describe a union failure
// member by member (a literal union names only its first member, a struct union reports whichever
// member failed first) and list every allowed key for an unknown one; these messages name the
// allowed values, follow the union member the input selects, and suggest the nearest key.

type Path = ReadonlyArray<PropertyKey>

interface Problem {
  readonly path: Path
  readonly detail: string
  /** The default "is missing" of a required key (no custom message), which a union can explain. */
  readonly missing?: boolean
}

const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

// Case, `_` and `-` are ignored, so `max_turns` and `MaxTurns` find `maxTurns`; a containing or
// contained name of four letters or more counts too (`timeout` → `controlTimeout`).
const nearest = (name: string, candidates: ReadonlyArray<string>): string | undefined => {
  const normal = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "")
  const wanted = normal(name)
  const threshold = Math.max(1, Math.floor(wanted.length / 3))
  let best: { readonly candidate: string; readonly distance: number } | undefined
  for (const candidate of candidates) {
    const other = normal(candidate)
    const distance = levenshtein(wanted, other)
    const contains = Math.min(wanted.length, other.length) >= 4 && (other.includes(wanted) || wanted.includes(other))
    if ((distance <= threshold || contains) && (best === undefined || distance < best.distance)) {
      best = { candidate, distance }
    }
  }
  return best?.candidate
}

const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "bigint") return `${u}n`
  if (typeof u === "number" || typeof u === "boolean" || u === null || u === undefined) return String(u)
  if (Predicate.isFunction(u)) return "a function"
  return Array.isArray(u) ? "an array" : "an object"
}

const fieldOf = (path: Path): string => path.length === 0 ? "(options)" : path.map(String).join(".")

const keysOfPath = (path: ParseResult.Path): Path => typeof path === "object" ? path : [path]

// A union's members, nested unions flattened; `undefined` (what `optional` adds) is left out, as
// an undefined value never fails.
const membersOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  SchemaAST.isUnion(ast)
    ? ast.types.flatMap(membersOf)
    : SchemaAST.isUndefinedKeyword(ast)
    ? []
    : [ast]

const literalsOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.LiteralValue> | undefined => {
  const members = membersOf(ast)
  const literals = members.flatMap((member) => SchemaAST.isLiteral(member) ? [member.literal] : [])
  return literals.length > 0 && literals.length === members.length ? literals : undefined
}

// Whether a value is of the member's kind (string, object, …), not whether it is valid.
const admits = (ast: SchemaAST.AST, u: unknown): boolean => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === u
    case "StringKeyword":
    case "TemplateLiteral":
      return typeof u === "string"
    case "NumberKeyword":
      return typeof u === "number"
    case "BooleanKeyword":
      return typeof u === "boolean"
    case "BigIntKeyword":
      return typeof u === "bigint"
    case "TypeLiteral":
      return Predicate.isRecord(u)
    case "TupleType":
      return Array.isArray(u)
    case "Refinement":
    case "Transformation":
      return admits(ast.from, u)
    case "Suspend":
      return admits(ast.f(), u)
    case "Union":
      return membersOf(ast).some((member) => admits(member, u))
    default:
      return true
  }
}

const kindOf = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Literal":
      return show(ast.literal)
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean"
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Refinement":
    case "Transformation":
      return kindOf(ast.from)
    default:
      return Option.getOrElse(SchemaAST.getDescriptionAnnotation(ast), () => String(ast))
  }
}

const listOr = (items: ReadonlyArray<string>): string => {
  const unique = [...new Set(items)]
  return unique.length <= 1 ? unique.join("") : `${unique.slice(0, -1).join(", ")} or ${unique[unique.length - 1]}`
}

const oneOf = (values: ReadonlyArray<SchemaAST.LiteralValue>, actual: unknown): string => {
  const near = typeof actual === "string"
    ? nearest(actual, values.flatMap((value) => typeof value === "string" ? [value] : []))
    : undefined
  const hint = near === undefined ? "" : `; did you mean ${show(near)}?`
  return `expected one of ${values.map(show).join(", ")}; got ${show(actual)}${hint}`
}

// The name of a property every member has with literal values only (`type`), if any.
const discriminantOf = (members: ReadonlyArray<SchemaAST.TypeLiteral>): string | undefined => {
  const [first, ...rest] = members
  for (const signature of first?.propertySignatures ?? []) {
    const name = signature.name
    if (typeof name !== "string" || literalsOf(signature.type) === undefined) continue
    const shared = rest.every((member) =>
      member.propertySignatures.some((other) => other.name === name && literalsOf(other.type) !== undefined)
    )
    if (shared) return name
  }
  return undefined
}

const literalsAt = (member: SchemaAST.TypeLiteral, key: string): ReadonlyArray<SchemaAST.LiteralValue> =>
  member.propertySignatures.flatMap((signature) => signature.name === key ? (literalsOf(signature.type) ?? []) : [])

const selects = (member: SchemaAST.TypeLiteral, key: string, value: unknown): boolean =>
  member.propertySignatures.some((signature) =>
    signature.name === key &&
    ((value === undefined && signature.isOptional) ||
      (literalsOf(signature.type) ?? []).some((literal) => literal === value))
  )

const describeUnion = (ast: SchemaAST.Union, actual: unknown, path: Path): Problem => {
  const members = membersOf(ast)
  const literals = literalsOf(ast)
  if (literals !== undefined) return { path, detail: oneOf(literals, actual) }
  const mismatch: Problem = { path, detail: `expected ${listOr(members.map(kindOf))}; got ${show(actual)}` }
  let chosen = members.filter((member) => admits(member, actual))
  let when: string | undefined
  const objects = chosen.flatMap((member) => SchemaAST.isTypeLiteral(member) ? [member] : [])
  if (objects.length > 1 && objects.length === chosen.length && Predicate.isRecord(actual)) {
    const key = discriminantOf(objects)
    if (key !== undefined) {
      const value = actual[key]
      const selected = objects.filter((member) => selects(member, key, value))
      if (selected.length === 0) {
        return { path: [...path, key], detail: oneOf(objects.flatMap((member) => literalsAt(member, key)), value) }
      }
      chosen = selected
      // An omitted optional `type` selects its member too (a stdio server may leave it out).
      const implied = selected.flatMap((member) => literalsAt(member, key)).map(show)
      when = `\`${key}\` is ${value === undefined ? listOr([...implied, "omitted"]) : show(value)}`
    }
  }
  const [member] = chosen
  if (member === undefined) return mismatch
  const result = ParseResult.decodeUnknownEither(Schema.make(member), parseOptions)(actual)
  if (Either.isRight(result)) return mismatch
  const problem = describeIssue(result.left, path, undefined)
  return problem.missing === true && when !== undefined && problem.path.length === path.length + 1
    ? { path: problem.path, detail: `${problem.detail} (required when ${when})` }
    : problem
}

const keyProblem = (path: Path, parent: SchemaAST.TypeLiteral | undefined): Problem => {
  const name = String(path[path.length - 1])
  // A record's key that fails its key schema (`extraArgs`' flag-name pattern).
  const [index] = parent?.indexSignatures ?? []
  if (index !== undefined) {
    return { path, detail: `invalid key: ${expectedMessage(new ParseResult.Type(index.parameter, name))}` }
  }
  const keys = (parent?.propertySignatures ?? []).flatMap((signature) =>
    typeof signature.name === "string" ? [signature.name] : []
  )
  const what = path.length === 1 ? "unknown option" : "unknown key"
  const near = nearest(name, keys)
  if (near !== undefined) return { path, detail: `${what}; did you mean \`${near}\`?` }
  if (keys.length > 0 && keys.length <= 8) return { path, detail: `${what}; expected one of ${keys.join(", ")}` }
  return { path, detail: path.length === 1 ? `${what} (the README's Options table lists them)` : what }
}

const leafMessage = (issue: ParseResult.ParseIssue): string =>
  ParseResult.ArrayFormatter.formatIssueSync(issue)[0]?.message ?? ParseResult.TreeFormatter.formatIssueSync(issue)

// Effect prints a whole struct's type for "expected"; a description ("a positive number") or a
// kind ("an object") is enough. Schemas with their own message (durations, flag names) keep it.
const expectedMessage = (issue: ParseResult.Type | ParseResult.Refinement): string =>
  Option.isSome(SchemaAST.getMessageAnnotation(issue.ast))
    ? leafMessage(issue)
    : `expected ${Option.getOrElse(SchemaAST.getDescriptionAnnotation(issue.ast), () => kindOf(issue.ast))}; ` +
      `got ${show(issue.actual)}`

const describeIssue = (
  issue: ParseResult.ParseIssue,
  path: Path,
  parent: SchemaAST.TypeLiteral | undefined
): Problem => {
  switch (issue._tag) {
    case "Pointer":
      return describeIssue(issue.issue, [...path, ...keysOfPath(issue.path)], parent)
    case "Composite": {
      if (SchemaAST.isUnion(issue.ast)) return describeUnion(issue.ast, issue.actual, path)
      const first: ParseResult.ParseIssue | undefined = Array.isArray(issue.issues) ? issue.issues[0] : issue.issues
      return first === undefined
        ? { path, detail: leafMessage(issue) }
        : describeIssue(first, path, SchemaAST.isTypeLiteral(issue.ast) ? issue.ast : undefined)
    }
    case "Refinement":
      return issue.kind === "From"
        ? describeIssue(issue.issue, path, undefined)
        : { path, detail: expectedMessage(issue) }
    case "Transformation":
      return describeIssue(issue.issue, path, undefined)
    case "Unexpected":
      return keyProblem(path, parent)
    case "Missing":
      return Option.isSome(SchemaAST.getMissingMessageAnnotation(issue.ast))
        ? { path, detail: leafMessage(issue) }
        : { path, detail: "is missing", missing: true }
    case "Type":
      return { path, detail: expectedMessage(issue) }
    case "Forbidden":
      return { path, detail: leafMessage(issue) }
  }
}

const toOptionsError = (error: ParseResult.ParseError): OptionsError => {
  const problem = describeIssue(error.issue, [], undefined)
  return new OptionsError({ field: fieldOf(problem.path), detail: problem.detail })
}

/**
 * Checks any value against the options Schema, failing with an `OptionsError` that names the
 * first bad field. For options from configuration files or untyped callers.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 *
 * const bad = Options.check({ maxTurns: -1 })
 * // fails with OptionsError: Invalid option `maxTurns`: expected a positive number; got -1
 * const typo = Options.check({ maxTurn: 3 })
 * // fails with OptionsError: Invalid option `maxTurn`: unknown option; did you mean `maxTurns`?
 * ```
 *
 * @since 0.1.0
 * @category validation
 */
export const check = (input: unknown): Effect.Effect<void, OptionsError> =>
  acceptedAtOnce(input) ? Effect.void : decode(input).pipe(Effect.mapError(toOptionsError), Effect.asVoid)

// Options of plain fields only (strings, numbers, literals: most sessions' options) pass without
// running the parser, whose first run in a process is the costly part of a first session's
// validation; anything else, and anything wrong, is parsed.
const acceptedAtOnce = Guard.lazily(() => Guard.flatStructAccepts(Options.ast))

/**
 * Validates options (Schema and cross-field rules) and returns them unchanged, callbacks included.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 *
 * const ok = Options.validate({ maxTurns: 3, permissionMode: "plan" })
 * const bad = Options.validate({ model: "a", fallbackModel: "a" }) // OptionsError on `fallbackModel`
 * ```
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = <R = never>(input: Options<R>): Effect.Effect<Options<R>, OptionsError> =>
  check(input).pipe(
    Effect.flatMap(() => {
      const error = crossFieldError(input)
      return error === undefined ? Effect.succeed(input) : Effect.fail(error)
    })
  )

// ---- claims -------------------------------------------------------------------------------------

/**
 * The settings keys that govern hooks. CLI 2.1.330 cannot apply them to a session that is already
 * running its folder's hooks, so a claim refuses them: they belong in the spare's own `settings`.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const isHookKey = (key: string) => Options.hookSettingKeys.includes(key)
 * ```
 *
 * @since 0.1.0
 * @category claims
 */
export const hookSettingKeys: ReadonlyArray<string> = [
  "hooks",
  "disableAllHooks",
  "allowManagedHooksOnly",
  "allowedHttpHookUrls",
  "httpHookAllowedEnvVars"
]

const ClaimSettings = JsonObject.pipe(Schema.filter((settings) => {
  const hookKeys = hookSettingKeys.filter((key) => settings[key] !== undefined)
  return hookKeys.length === 0 ||
    `hook settings (${
      hookKeys.join(", ")
    }) cannot be applied by a claim; give them to the spare's options (\`settings\`)`
}))

/**
 * The environment variables a claim may set: the CLI reads every other one during start-up, so
 * those belong in the spare's own `env`.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const env: Options.ClaimEnv = { CLAUDE_CODE_HOST_SESSION_ID: "host-42" }
 * ```
 *
 * @since 0.1.0
 * @category claims
 */
export const ClaimEnv = Schema.Struct({
  CLAUDE_CODE_OAUTH_TOKEN: optionalString,
  CLAUDE_CODE_SESSION_ACCESS_TOKEN: optionalString,
  CLAUDE_CODE_HOST_SESSION_ID: optionalString
})

/**
 * @since 0.1.0
 * @category claims
 */
export type ClaimEnv = Schema.Schema.Type<typeof ClaimEnv>

/**
 * The per-session half of the options: what a claim sets on a parked spare (`ClaudeAgent.park`).
 * `cwd` is required; `additionalDirectories`, `model`, `permissionMode`, `maxThinkingTokens`,
 * `title` and `agents` are `Options`' own fields; `appendSystemPrompt` is appended to the spare's
 * system prompt; `settings` is a flag-settings overlay (as `AgentSession.applyFlagSettings`, but
 * no hook settings); `env` holds the three variables of `ClaimEnv`. Everything else is fixed when
 * the spare is parked.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const claim: Options.ClaimOptions = {
 *   cwd: "/srv/users/ada/project",
 *   model: "claude-sonnet-4-5",
 *   permissionMode: "acceptEdits",
 *   settings: { effortLevel: "high" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category claims
 */
export const ClaimOptions = Schema.Struct({
  cwd: Options.fields.cwd.from,
  additionalDirectories: Options.fields.additionalDirectories,
  model: Options.fields.model,
  permissionMode: Options.fields.permissionMode,
  maxThinkingTokens: Options.fields.maxThinkingTokens,
  appendSystemPrompt: optionalString,
  title: Options.fields.title,
  agents: Options.fields.agents,
  settings: Schema.optional(ClaimSettings),
  env: Schema.optional(ClaimEnv)
})

/**
 * @since 0.1.0
 * @category claims
 */
export interface ClaimOptions extends Schema.Schema.Type<typeof ClaimOptions> {}

/**
 * The `Options` fields a claim sets (the rest of `ClaimOptions` has no `Options` field of the same
 * name): a request whose other options equal a spare's can be served by claiming it.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const perSession = (key: string) => Options.claimOptionKeys.includes(key)
 * ```
 *
 * @since 0.1.0
 * @category claims
 */
export const claimOptionKeys: ReadonlyArray<string> = [
  "cwd",
  "additionalDirectories",
  "model",
  "permissionMode",
  "maxThinkingTokens",
  "title",
  "agents"
]

const decodeClaim = Guard.lazily(() => Schema.decodeUnknown(ClaimOptions, parseOptions))

/**
 * Validates claim options like `validate` does options: an `OptionsError` names the first bad
 * field (an environment variable outside `ClaimEnv`, a hook key in `settings`, …).
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 *
 * const ok = Options.validateClaim({ cwd: "/work/a", model: "claude-haiku-4-5" })
 * const bad = Options.validateClaim({ cwd: "/work/a", settings: { hooks: {} } }) // OptionsError on `settings`
 * ```
 *
 * @since 0.1.0
 * @category claims
 */
export const validateClaim = (input: ClaimOptions): Effect.Effect<ClaimOptions, OptionsError> =>
  decodeClaim(input).pipe(Effect.mapError(toOptionsError), Effect.as(input))
