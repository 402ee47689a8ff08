// Options → the CLI's argv, environment and `initialize` request.
//
// Values go on argv as one `--flag=value` item each, so a value can never be read as another
// flag. The exceptions are the official SDK's two-item flags (`--managed-settings` and
// `extraArgs`), which keep `--flag value` unless the value starts with `-`. Large or structured
// configuration (system prompt, agents, output schema) travels in `initialize`, as the official
// SDKs do, keeping argv short and free of quoting issues.
import { Either } from "effect"
import type * as Control from "../../schema/Control.js"
import type { Options, Thinking } from "../../schema/Options.js"
import { objectJsonSchema } from "../schema/jsonSchema.js"

/** What a transport needs to start the CLI for one session. */
export interface Launch {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string | undefined
  /** The `initialize` fields that come from the options (`hooks` and `sdkMcpServers` come from the session's services). */
  readonly initialize: Control.InitializePayload
}

/** The argv every session starts with. */
export const baseArgs: ReadonlyArray<string> = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json"
]

/**
 * The flag that parks the CLI: it starts and answers `initialize`, then waits for `claim_session`
 * to bind it to a folder and a session.
 */
export const awaitClaimFlag = "await-claim"

/** The options with `--await-claim` added (through `extraArgs`, which keeps the caller's own flags). */
export const withAwaitClaim = <R>(options: Options<R>): Options<R> => ({
  ...options,
  extraArgs: { ...options.extraArgs, [awaitClaimFlag]: null }
})

/** Removed from the child's environment whatever the parent has. */
export const removedEnv: ReadonlyArray<string> = ["NODE_OPTIONS", "CLAUDECODE"]

/** The value of `CLAUDE_AGENT_SDK_CLIENT_APP` (the User-Agent's app id). */
export const clientApp = "effect-claude-agent/0.1.0"

const flag = (name: string, value: string | number): string => `--${name}=${value}`

// The official SDK's form for free-form flags: `--flag value`, but `--flag=value` when the value
// starts with `-`, so that it cannot be read as a flag of its own.
const flagPair = (name: string, value: string): ReadonlyArray<string> =>
  value.length > 1 && value.startsWith("-") ? [flag(name, value)] : [`--${name}`, value]

// `allowedTools` with the `skills` option's `Skill` rules added (once each), as the official SDK
// does: the skills are then usable without a permission prompt.
const allowedToolsOf = <R>(options: Options<R>): ReadonlyArray<string> | undefined => {
  const skills = options.skills
  if (skills === undefined) return options.allowedTools
  const rules = skills === "all" ? ["Skill"] : skills.map((name) => `Skill(${name})`)
  const allowed = options.allowedTools ?? []
  return [...allowed, ...rules.filter((rule) => !allowed.includes(rule))]
}

/** The external (stdio, sse, http) MCP servers; in-process ones are announced in `initialize`. */
const externalServers = <R>(options: Options<R>) =>
  Object.fromEntries(Object.entries(options.mcpServers ?? {}).filter(([, server]) => server.type !== "sdk"))

const mcpServersInInitialize = <R>(options: Options<R>): boolean =>
  options.mcpServersDelivery === "initialize" && Object.keys(externalServers(options)).length > 0

const pluginsInInitialize = <R>(options: Options<R>): boolean =>
  options.pluginDelivery === "initialize" && (options.plugins ?? []).length > 0

// The deprecated `maxThinkingTokens` as a `thinking` setting: `0` means disabled, as in the
// official SDK (CLI 2.1.330 reads `--max-thinking-tokens=0` the same way).
const thinkingOf = <R>(options: Options<R>): Thinking | undefined => {
  if (options.thinking !== undefined || options.maxThinkingTokens === undefined) return options.thinking
  return options.maxThinkingTokens === 0
    ? { type: "disabled" }
    : { type: "enabled", budgetTokens: options.maxThinkingTokens }
}

/**
 * `stdioPermissions`: the session answers `can_use_tool` (a `canUseTool` option, or a
 * `PermissionHandler` provided by the caller).
 */
export const buildArgs = <R>(
  options: Options<R>,
  stdioPermissions = options.canUseTool !== undefined
): Array<string> => {
  const args = [...baseArgs]
  const push = (name: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(flag(name, value))
  }
  const pushSwitch = (name: string, on: boolean | undefined) => {
    if (on === true) args.push(`--${name}`)
  }
  const pushList = (name: string, values: ReadonlyArray<string> | undefined) => {
    if (values !== undefined) args.push(flag(name, values.join(",")))
  }
  const pushPair = (name: string, value: string) => {
    for (const arg of flagPair(name, value)) args.push(arg)
  }

  // As in the official SDK, `enabled` without a budget is adaptive.
  const thinking = thinkingOf(options)
  if (thinking !== undefined) {
    if (thinking.type === "enabled" && thinking.budgetTokens !== undefined) {
      push("max-thinking-tokens", thinking.budgetTokens)
    } else {
      push("thinking", thinking.type === "disabled" ? "disabled" : "adaptive")
    }
    if (thinking.type !== "disabled") push("thinking-display", thinking.display)
  }
  push("effort", options.effort)
  push("max-turns", options.maxTurns)
  push("max-budget-usd", options.maxBudgetUsd)
  push("task-budget", options.taskBudget?.total)
  push("model", options.model)
  push("agent", options.agent)
  push("fallback-model", options.fallbackModel)
  pushList("betas", options.betas)
  const jsonSchema = outputJsonSchema(options)
  if (jsonSchema !== undefined) push("json-schema", JSON.stringify(jsonSchema))
  // `--debug-file` implies debug mode.
  if (options.debugFile !== undefined) push("debug-file", options.debugFile)
  else pushSwitch("debug", options.debug)
  push("permission-prompt-tool", stdioPermissions ? "stdio" : options.permissionPromptToolName)
  push("permission-prompts", options.permissionPrompts)
  pushList("allowedTools", allowedToolsOf(options))
  pushList("disallowedTools", options.disallowedTools)
  if (options.tools !== undefined) {
    push("tools", "type" in options.tools ? "default" : options.tools.join(","))
  }
  // In-process (sdk) servers are announced in `initialize` only; the CLI reaches them over
  // `mcp_message`. Only external servers go to `--mcp-config`, unless they go in `initialize`.
  const external = externalServers(options)
  if (Object.keys(external).length > 0 && !mcpServersInInitialize(options)) {
    push("mcp-config", JSON.stringify({ mcpServers: external }))
  }
  pushSwitch("strict-mcp-config", options.strictMcpConfig)
  pushList("setting-sources", options.settingSources)
  push("permission-mode", options.permissionMode)
  pushSwitch("allow-dangerously-skip-permissions", options.allowDangerouslySkipPermissions)
  pushSwitch("include-hook-events", options.includeHookEvents)
  pushSwitch("include-partial-messages", options.includePartialMessages)
  push("project-config-root", options.projectConfigRoot)
  for (const dir of options.additionalDirectories ?? []) push("add-dir", dir)
  // The CLI then reads `initialize` before it starts, so what it carries applies from the start.
  if (mcpServersInInitialize(options) || pluginsInInitialize(options)) args.push("--await-initialize")
  if (!pluginsInInitialize(options)) {
    for (const plugin of options.plugins ?? []) {
      push(plugin.skipMcpDiscovery === true ? "plugin-dir-no-mcp" : "plugin-dir", plugin.path)
    }
  }
  push("resume", options.resume)
  pushSwitch("continue", options.continue)
  pushSwitch("fork-session", options.forkSession)
  push("session-id", options.sessionId)
  push("resume-session-at", options.resumeSessionAt)
  push("resume-drops-turn", options.resumeDropsTurn)
  if (options.persistSession === false) args.push("--no-session-persistence")
  if (options.managedSettings !== undefined) pushPair("managed-settings", JSON.stringify(options.managedSettings))
  const settings = settingsArg(options)
  if (settings !== undefined) push("settings", settings)
  for (const [name, value] of Object.entries(options.extraArgs ?? {})) {
    if (value === null) args.push(`--${name}`)
    else pushPair(name, value)
  }
  return args
}

const settingsArg = <R>(options: Options<R>): string | undefined => {
  const { sandbox, settings } = options
  if (sandbox === undefined) return typeof settings === "string" ? settings : settings && JSON.stringify(settings)
  // A string `settings` with `sandbox` is rejected by validation.
  const base = typeof settings === "object" ? settings : {}
  return JSON.stringify({ ...base, sandbox })
}

export const buildEnv = <R>(
  options: Options<R>,
  parentEnv: Readonly<Record<string, string | undefined>>,
  traceparent?: string | undefined
): Record<string, string> => {
  // Merged over the parent's environment like the Python SDK (the official TS SDK replaces it):
  // PATH, HOME and credentials keep working unless the caller overrides them. One pass, in the
  // order `{ ...parentEnv, ...options.env }` has: the environment has a hundred variables or more,
  // and this runs per session.
  const own = options.env ?? {}
  const env: Record<string, string> = {}
  const put = (key: string, value: string | undefined) => {
    if (value !== undefined && !removedEnv.includes(key)) env[key] = value
  }
  // `parentEnv` may be `process.env` itself: its keys as listed, since on Windows its lookups
  // ignore case. Each variable is read once.
  const parentKeys = Object.keys(parentEnv)
  for (const key of parentKeys) put(key, Object.hasOwn(own, key) ? own[key] : parentEnv[key])
  for (const key of Object.keys(own)) {
    if (!parentKeys.includes(key)) put(key, own[key])
  }
  env.CLAUDE_CODE_ENTRYPOINT = own.CLAUDE_CODE_ENTRYPOINT ?? "sdk-ts"
  env.CLAUDE_AGENT_SDK_CLIENT_APP ??= clientApp
  // The CLI then reports `session_state_changed`, which tells when a run is really idle.
  env.CLAUDE_CODE_SDK_READS_SESSION_STATE = "1"
  if (options.enableFileCheckpointing === true) env.CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING = "true"
  const previewFormat = options.toolConfig?.askUserQuestion?.previewFormat
  if (previewFormat !== undefined) env.CLAUDE_CODE_QUESTION_PREVIEW_FORMAT = previewFormat
  // The session's trace, unless the environment names one already.
  if (traceparent !== undefined) env.TRACEPARENT ??= traceparent
  return env
}

const isBlocks = (prompt: NonNullable<Options["systemPrompt"]>): prompt is ReadonlyArray<string> =>
  Array.isArray(prompt)

const promptBlocks = (prompt: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof prompt === "string" ? [prompt] : prompt

const systemPromptFields = <R>(options: Options<R>): Control.InitializePayload => {
  const systemPrompt = options.systemPrompt
  // Omitted: an empty prompt, not Claude Code's (as the official SDKs send it).
  if (systemPrompt === undefined) return { systemPrompt: [""] }
  if (typeof systemPrompt === "string" || isBlocks(systemPrompt)) return { systemPrompt: promptBlocks(systemPrompt) }
  if (systemPrompt.type === "custom") {
    return { systemPrompt: promptBlocks(systemPrompt.prompt), systemPromptSnapshot: systemPrompt.snapshot }
  }
  // The preset is the CLI's own prompt: no `systemPrompt` field at all.
  return {
    appendSystemPrompt: systemPrompt.append,
    excludeDynamicSections: systemPrompt.excludeDynamicSections,
    systemPromptSnapshot: systemPrompt.snapshot
  }
}

// The fields that are set, in this order (the order they have on the wire). Assigned one by one:
// spreading the system prompt's fields into a literal of fourteen more, then dropping the
// undefined ones through `Object.entries`, cost ~13 µs per session (V8's slow path for literals).
export const buildInitialize = <R>(options: Options<R>): Control.InitializePayload => {
  const out: Record<string, unknown> = {}
  const put = (key: string, value: unknown) => {
    if (value !== undefined) out[key] = value
  }
  const prompt = systemPromptFields(options)
  put("systemPrompt", prompt.systemPrompt)
  put("appendSystemPrompt", prompt.appendSystemPrompt)
  put("excludeDynamicSections", prompt.excludeDynamicSections)
  put("systemPromptSnapshot", prompt.systemPromptSnapshot)
  put("planModeInstructions", options.planModeInstructions)
  put("toolAliases", options.toolAliases)
  put("agents", options.agents)
  put("title", options.title)
  // `"all"` is only the `Skill` rule in `--allowedTools`.
  put("skills", options.skills === "all" ? undefined : options.skills)
  put("promptSuggestions", options.promptSuggestions)
  put("agentProgressSummaries", options.agentProgressSummaries)
  put("forwardSubagentText", options.forwardSubagentText)
  put("perTaskStopAffordance", options.perTaskStopAffordance)
  put("plugins", pluginsInInitialize(options) ? options.plugins : undefined)
  put("mcpServers", mcpServersInInitialize(options) ? externalServers(options) : undefined)
  put("jsonSchema", outputJsonSchema(options))
  return out
}

// Structured output: the raw `outputFormat` schema, or the JSON Schema of `outputSchema` (the
// same derivation as a tool's `inputSchema`; validation has already refused a non-object one).
// It goes both on argv and in `initialize`, as the official SDK sends it.
const outputJsonSchema = <R>(options: Options<R>): unknown =>
  options.outputFormat !== undefined
    ? options.outputFormat.schema
    : options.outputSchema !== undefined
    ? Either.getOrUndefined(objectJsonSchema(options.outputSchema.ast))
    : undefined

/**
 * Everything a transport needs to start the CLI for these (validated) options. `traceparent` is
 * the session's trace context, set as `TRACEPARENT` unless the environment has one.
 */
export const prepareLaunch = <R>(
  options: Options<R>,
  parentEnv: Readonly<Record<string, string | undefined>>,
  stdioPermissions = options.canUseTool !== undefined,
  traceparent?: string | undefined
): Launch => ({
  args: buildArgs(options, stdioPermissions),
  env: buildEnv(options, parentEnv, traceparent),
  cwd: options.cwd,
  initialize: buildInitialize(options)
})
