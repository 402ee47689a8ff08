// Options → the CLI's argv, environment and `initialize` request.
//
// Values go on argv as one `--flag=value` item each, so a value can never be read as another
// flag. Large or structured configuration (system prompt, agents, output schema) travels in
// `initialize`, as the official SDKs do, keeping argv short and free of quoting issues.
import { Either } from "effect"
import type * as Control from "../schema/Control.js"
import type { Options } from "../schema/Options.js"
import { objectJsonSchema } from "./jsonSchema.js"

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

/** Removed from the child's environment whatever the parent has. */
export const removedEnv: ReadonlyArray<string> = ["NODE_OPTIONS", "CLAUDECODE"]

/** The value of `CLAUDE_AGENT_SDK_CLIENT_APP` (the User-Agent's app id). */
export const clientApp = "effect-claude-agent/0.1.0"

const flag = (name: string, value: string | number): string => `--${name}=${value}`

/**
 * `stdioPermissions`: the session answers `can_use_tool` (a `canUseTool` option, or a
 * `PermissionHandler` provided by the caller).
 */
export const buildArgs = <R>(options: Options<R>, stdioPermissions = options.canUseTool !== undefined): Array<string> => {
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

  const thinking = options.thinking
  if (thinking !== undefined) {
    if (thinking.type === "enabled") {
      push("max-thinking-tokens", thinking.budgetTokens)
    } else {
      push("thinking", thinking.type === "disabled" ? "disabled" : "adaptive")
    }
  } else {
    push("max-thinking-tokens", options.maxThinkingTokens)
  }
  push("effort", options.effort)
  push("max-turns", options.maxTurns)
  push("max-budget-usd", options.maxBudgetUsd)
  push("model", options.model)
  push("fallback-model", options.fallbackModel)
  pushList("betas", options.betas)
  const jsonSchema = outputJsonSchema(options)
  if (jsonSchema !== undefined) push("json-schema", JSON.stringify(jsonSchema))
  push("permission-prompt-tool", stdioPermissions ? "stdio" : options.permissionPromptToolName)
  pushList("allowedTools", options.allowedTools)
  pushList("disallowedTools", options.disallowedTools)
  if (options.tools !== undefined) {
    push("tools", "type" in options.tools ? "default" : options.tools.join(","))
  }
  // In-process (sdk) servers are announced in `initialize` only; the CLI reaches them over
  // `mcp_message`. Only external servers go to `--mcp-config`.
  const external = Object.entries(options.mcpServers ?? {}).filter(([, server]) => server.type !== "sdk")
  if (external.length > 0) push("mcp-config", JSON.stringify({ mcpServers: Object.fromEntries(external) }))
  pushSwitch("strict-mcp-config", options.strictMcpConfig)
  pushList("setting-sources", options.settingSources)
  push("permission-mode", options.permissionMode)
  pushSwitch("include-partial-messages", options.includePartialMessages)
  for (const dir of options.additionalDirectories ?? []) push("add-dir", dir)
  for (const plugin of options.plugins ?? []) push("plugin-dir", plugin.path)
  push("resume", options.resume)
  pushSwitch("continue", options.continue)
  pushSwitch("fork-session", options.forkSession)
  push("session-id", options.sessionId)
  push("resume-session-at", options.resumeSessionAt)
  if (options.persistSession === false) args.push("--no-session-persistence")
  const settings = settingsArg(options)
  if (settings !== undefined) push("settings", settings)
  for (const [name, value] of Object.entries(options.extraArgs ?? {})) {
    args.push(value === null ? `--${name}` : flag(name, value))
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
  parentEnv: Readonly<Record<string, string | undefined>>
): Record<string, string> => {
  // Merged over the parent's environment like the Python SDK (the official TS SDK replaces it):
  // PATH, HOME and credentials keep working unless the caller overrides them.
  const merged: Record<string, string | undefined> = { ...parentEnv, ...options.env }
  for (const key of removedEnv) delete merged[key]
  merged.CLAUDE_CODE_ENTRYPOINT = options.env?.CLAUDE_CODE_ENTRYPOINT ?? "sdk-ts"
  merged.CLAUDE_AGENT_SDK_CLIENT_APP ??= clientApp
  // The CLI then reports `session_state_changed`, which tells when a run is really idle.
  merged.CLAUDE_CODE_SDK_READS_SESSION_STATE = "1"
  if (options.enableFileCheckpointing === true) merged.CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING = "true"
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(merged)) {
    if (value !== undefined) env[key] = value
  }
  return env
}

export const buildInitialize = <R>(options: Options<R>): Control.InitializePayload => {
  const systemPrompt = options.systemPrompt
  const prompt = systemPrompt === undefined
    ? { systemPrompt: [""] }
    : typeof systemPrompt === "string"
    ? { systemPrompt: [systemPrompt] }
    : systemPrompt.append !== undefined
    ? { appendSystemPrompt: systemPrompt.append }
    : {}
  return {
    ...prompt,
    ...(options.agents === undefined ? {} : { agents: options.agents }),
    ...withJsonSchema(outputJsonSchema(options))
  }
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

const withJsonSchema = (jsonSchema: unknown): { readonly jsonSchema?: unknown } =>
  jsonSchema === undefined ? {} : { jsonSchema }

/** Everything a transport needs to start the CLI for these (validated) options. */
export const prepareLaunch = <R>(
  options: Options<R>,
  parentEnv: Readonly<Record<string, string | undefined>>,
  stdioPermissions = options.canUseTool !== undefined
): Launch => ({
  args: buildArgs(options, stdioPermissions),
  env: buildEnv(options, parentEnv),
  cwd: options.cwd,
  initialize: buildInitialize(options)
})
