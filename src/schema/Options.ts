/**
 * Session options. The field names are the official TypeScript SDK's, so that migrating is
 * mostly renaming imports. They are validated by a Schema before anything starts: a bad option
 * fails with an `OptionsError` naming the field. An unknown key is an error too (a typo must not
 * silently do nothing).
 *
 * How each option reaches the CLI (argv flag, `initialize` field or environment variable) is in
 * the README's options table.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, ParseResult, Schema } from "effect"
import { OptionsError } from "../SdkError.js"
import type * as McpServer from "../McpServer.js"
import type * as Permission from "../Permission.js"
import * as Control from "./Control.js"
import * as Hook from "../Hook.js"

const NonEmptyString = Schema.String.pipe(Schema.minLength(1))
const Strings = Schema.Array(Schema.String)
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

/**
 * An MCP server the CLI runs itself (stdio) or connects to (sse, http). Passed to the CLI as
 * `--mcp-config`.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const servers: Record<string, Options.McpServerConfig> = {
 *   files: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
 *   docs: { type: "http", url: "https://example.com/mcp" }
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
    args: Schema.optional(Strings),
    env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }),
  Schema.Struct({
    type: Schema.Literal("sse", "http"),
    url: NonEmptyString,
    headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
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
  tools: Schema.optional(Strings),
  disallowedTools: Schema.optional(Strings),
  model: Schema.optional(Schema.String),
  maxTurns: Schema.optional(Schema.Int.pipe(Schema.positive()))
}, JsonObject)

/**
 * @since 0.1.0
 * @category models
 */
export type AgentDefinition = Schema.Schema.Type<typeof AgentDefinition>

/**
 * The system prompt: a string replaces Claude Code's; the preset keeps it, optionally with text
 * appended. Omitted, the prompt is empty, as with the official SDKs.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const own: Options.SystemPrompt = "You are a terse assistant."
 * const claudeCode: Options.SystemPrompt = { type: "preset", preset: "claude_code", append: "Answer in French." }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemPrompt = Schema.Union(
  Schema.String,
  Schema.Struct({
    type: Schema.Literal("preset"),
    preset: Schema.Literal("claude_code"),
    append: Schema.optional(Schema.String)
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type SystemPrompt = Schema.Schema.Type<typeof SystemPrompt>

/**
 * Extended thinking: `adaptive` (the model decides), `enabled` with a token budget, or `disabled`.
 *
 * @example
 * ```ts
 * import { Options } from "effect-claude-agent"
 * const thinking: Options.Thinking = { type: "enabled", budgetTokens: 4000 }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Thinking = Schema.Union(
  Schema.Struct({ type: Schema.Literal("adaptive") }),
  Schema.Struct({ type: Schema.Literal("enabled"), budgetTokens: Schema.optional(Schema.Int.pipe(Schema.positive())) }),
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

const SdkServerShape = Schema.Struct({
  type: Schema.Literal("sdk"),
  name: NonEmptyString,
  version: Schema.String,
  tools: Schema.Array(Schema.Unknown)
})

const HookMatcherShape = Schema.Struct({
  matcher: Schema.optional(Schema.String),
  hooks: Schema.Array(AnyFunction),
  timeout: Schema.optional(DurationInput),
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
  model: Schema.optional(NonEmptyString),
  fallbackModel: Schema.optional(NonEmptyString),
  maxTurns: Schema.optional(Schema.Int.pipe(Schema.positive())),
  maxBudgetUsd: Schema.optional(Schema.Number.pipe(Schema.positive())),
  thinking: Schema.optional(Thinking),
  maxThinkingTokens: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  effort: Schema.optional(Schema.Literal("low", "medium", "high", "xhigh", "max")),
  betas: Schema.optional(Strings),
  // prompt and output
  systemPrompt: Schema.optional(SystemPrompt),
  outputFormat: Schema.optional(Schema.Struct({ type: Schema.Literal("json_schema"), schema: JsonObject })),
  includePartialMessages: Schema.optional(Schema.Boolean),
  agents: Schema.optional(Schema.Record({ key: NonEmptyString, value: AgentDefinition })),
  // tools and permissions
  allowedTools: Schema.optional(Strings),
  disallowedTools: Schema.optional(Strings),
  tools: Schema.optional(
    Schema.Union(Strings, Schema.Struct({ type: Schema.Literal("preset"), preset: Schema.Literal("claude_code") }))
  ),
  permissionMode: Schema.optional(Control.PermissionMode),
  permissionPromptToolName: Schema.optional(NonEmptyString),
  mcpServers: Schema.optional(Schema.Record({ key: NonEmptyString, value: Schema.Union(McpServerConfig, SdkServerShape) })),
  canUseTool: Schema.optional(AnyFunction),
  hooks: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(HookMatcherShape) })),
  strictMcpConfig: Schema.optional(Schema.Boolean),
  // sessions
  resume: Schema.optional(NonEmptyString),
  continue: Schema.optional(Schema.Boolean),
  forkSession: Schema.optional(Schema.Boolean),
  sessionId: Schema.optional(Schema.UUID),
  resumeSessionAt: Schema.optional(NonEmptyString),
  persistSession: Schema.optional(Schema.Boolean),
  enableFileCheckpointing: Schema.optional(Schema.Boolean),
  // process and environment
  cwd: Schema.optional(NonEmptyString),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.UndefinedOr(Schema.String) })),
  additionalDirectories: Schema.optional(Schema.Array(NonEmptyString)),
  settingSources: Schema.optional(Schema.Array(Schema.Literal("user", "project", "local"))),
  settings: Schema.optional(Schema.Union(NonEmptyString, JsonObject)),
  sandbox: Schema.optional(JsonObject),
  plugins: Schema.optional(Schema.Array(Schema.Struct({ type: Schema.Literal("local"), path: NonEmptyString }))),
  extraArgs: Schema.optional(Schema.Record({
    key: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9-]*$/, {
      message: () => "an extra argument's name is a flag name without dashes, like \"debug\" or \"max-tokens\""
    })),
    value: Schema.NullOr(Schema.String)
  })),
  pathToClaudeCodeExecutable: Schema.optional(NonEmptyString),
  stderr: Schema.optional(StderrCallback),
  // this SDK's own settings
  maxBufferSize: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1024))),
  messageBufferSize: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(16))),
  controlTimeout: Schema.optional(DurationInput),
  closeGracePeriod: Schema.optional(DurationInput)
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
  extends Omit<Schema.Schema.Type<typeof Options>, "canUseTool" | "hooks" | "mcpServers">
{
  /** Answers the CLI's permission prompts (launches the CLI with `--permission-prompt-tool=stdio`). */
  readonly canUseTool?: Permission.CanUseTool<unknown, R> | undefined
  /** Hook callbacks by event. */
  readonly hooks?: Hook.Hooks<R> | undefined
  /** External MCP servers (`--mcp-config`) and in-process ones made with `McpServer.make`. */
  readonly mcpServers?: { readonly [name: string]: McpServerConfig | McpServer.McpServer<R> } | undefined
}

const decode = Schema.decodeUnknown(Options, { onExcessProperty: "error", errors: "first" })

const crossFieldError = <R>(options: Options<R>): OptionsError | undefined => {
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
  if (options.canUseTool !== undefined && options.permissionPromptToolName !== undefined) {
    return new OptionsError({
      field: "permissionPromptToolName",
      detail: "cannot be combined with `canUseTool`, which answers permission prompts itself (`--permission-prompt-tool=stdio`)"
    })
  }
  const knownEvents: ReadonlyArray<string> = Hook.HookEvent.literals
  for (const event of Object.keys(options.hooks ?? {})) {
    if (!knownEvents.includes(event)) {
      return new OptionsError({ field: `hooks.${event}`, detail: `unknown hook event; known events: ${knownEvents.join(", ")}` })
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

const toOptionsError = (error: ParseResult.ParseError): OptionsError => {
  const [first] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return new OptionsError({
    field: first === undefined || first.path.length === 0 ? "(options)" : first.path.map(String).join("."),
    detail: first?.message ?? ParseResult.TreeFormatter.formatErrorSync(error)
  })
}

/**
 * Checks any value against the options Schema, failing with an `OptionsError` that names the
 * first bad field. For options from configuration files or untyped callers.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Options } from "effect-claude-agent"
 *
 * const bad = Options.check({ maxTurns: -1 })
 * // fails with OptionsError: Invalid option `maxTurns`: Expected a positive number, actual -1
 * ```
 *
 * @since 0.1.0
 * @category validation
 */
export const check = (input: unknown): Effect.Effect<void, OptionsError> =>
  decode(input).pipe(Effect.mapError(toOptionsError), Effect.asVoid)

/**
 * Validates options (Schema and cross-field rules) and returns them unchanged, callbacks included.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
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
