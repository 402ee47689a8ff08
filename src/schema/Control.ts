/**
 * The control protocol, typed once: the envelopes, and every request as a descriptor (subtype,
 * payload Schema, success Schema) in the manner of `@effect/rpc`'s `Rpc.make`. The session's
 * methods, the `ControlChannel`, the fake CLI and the tests all derive from these descriptors.
 *
 * Field names are the CLI's. Replies are decoded keeping every field the CLI sent; the Schemas
 * name the fields this SDK relies on.
 *
 * @since 0.1.0
 */
import { type Effect, Predicate, Schema } from "effect"
import {
  RawObject,
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionalUnknown,
  optionalStrings,
  NullOrString,
  optionalRawObject,
  Strings
} from "../internal/schema/schemas.js"

/**
 * `{"type":"control_request","request_id":…,"request":{"subtype":…,…}}`, in either direction.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const frame: Control.ControlRequest = { type: "control_request", request_id: "req_1", request: { subtype: "mcp_status" } }
 * ```
 *
 * @since 0.1.0
 * @category envelopes
 */
export const ControlRequest = Schema.Struct({
  type: Schema.Literal("control_request"),
  request_id: Schema.String,
  request: Schema.Struct({ subtype: Schema.String }, RawObject)
})

/**
 * @since 0.1.0
 * @category envelopes
 */
export interface ControlRequest extends Schema.Schema.Type<typeof ControlRequest> {}

/**
 * A success reply. `response` is absent when the request has no payload to return.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const ok: Control.ControlSuccess = { subtype: "success", request_id: "req_1", response: { mode: "plan" } }
 * ```
 *
 * @since 0.1.0
 * @category envelopes
 */
export const ControlSuccess = Schema.Struct({
  subtype: Schema.Literal("success"),
  request_id: Schema.String,
  response: optionalUnknown
})

/**
 * @since 0.1.0
 * @category envelopes
 */
export interface ControlSuccess extends Schema.Schema.Type<typeof ControlSuccess> {}

/**
 * An error reply; `error_code` is present on some CLI errors (`invalid_mode`, `unsupported_request`).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const failed: Control.ControlFailure = { subtype: "error", request_id: "req_1", error: "nope" }
 * ```
 *
 * @since 0.1.0
 * @category envelopes
 */
export const ControlFailure = Schema.Struct({
  subtype: Schema.Literal("error"),
  request_id: Schema.String,
  error: Schema.String,
  error_code: optionalString
})

/**
 * @since 0.1.0
 * @category envelopes
 */
export interface ControlFailure extends Schema.Schema.Type<typeof ControlFailure> {}

/**
 * `{"type":"control_response","response":…}`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const frame: Control.ControlResponse = { type: "control_response", response: { subtype: "success", request_id: "req_1" } }
 * ```
 *
 * @since 0.1.0
 * @category envelopes
 */
export const ControlResponse = Schema.Struct({
  type: Schema.Literal("control_response"),
  response: Schema.Union(ControlSuccess, ControlFailure)
})

/**
 * @since 0.1.0
 * @category envelopes
 */
export interface ControlResponse extends Schema.Schema.Type<typeof ControlResponse> {}

/**
 * Withdraws a request that has not been answered; the receiver must not answer it.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const frame: Control.ControlCancelRequest = { type: "control_cancel_request", request_id: "req_1" }
 * ```
 *
 * @since 0.1.0
 * @category envelopes
 */
export const ControlCancelRequest = Schema.Struct({
  type: Schema.Literal("control_cancel_request"),
  request_id: Schema.String
})

/**
 * @since 0.1.0
 * @category envelopes
 */
export interface ControlCancelRequest extends Schema.Schema.Type<typeof ControlCancelRequest> {}

/**
 * The permission modes the CLI accepts.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const mode: Control.PermissionMode = "acceptEdits"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const PermissionMode = Schema.Literal("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto")

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionMode = Schema.Schema.Type<typeof PermissionMode>

/**
 * A slash command or skill the CLI offers (from the `initialize` reply, `system/commands_changed`
 * and `reload_plugins`). The CLI 2.1.330 sends `argumentHint` (often `""`) and `builtin` on every
 * command, `aliases` on some.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const label = (c: Control.SlashCommand) => `/${[c.name, ...(c.aliases ?? [])].join(", /")} ${c.argumentHint ?? ""}`
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const SlashCommand = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  argumentHint: optionalString,
  /** Other names the command answers to (`/review` for `/code-review`). */
  aliases: optionalStrings,
  /** Whether it ships with Claude Code (rather than coming from a plugin or the user's files). */
  builtin: optionalBoolean
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface SlashCommand extends Schema.Schema.Type<typeof SlashCommand> {}

/**
 * A model the CLI offers (from the `initialize` reply). `value` is what `setModel` takes;
 * `resolvedModel` the model id it stands for (`"default"` → `"claude-opus-5-5"` on 2.1.330). The
 * `supports*` fields say what `effort`, `thinking` and the fast and auto modes can do with it.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const label = (m: Control.ModelInfo) => `${m.displayName} (${m.resolvedModel ?? m.value})`
 * const canThinkAdaptively = (m: Control.ModelInfo) => m.supportsAdaptiveThinking === true
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ModelInfo = Schema.Struct({
  value: Schema.String,
  displayName: Schema.String,
  description: Schema.String,
  resolvedModel: optionalString,
  supportsEffort: optionalBoolean,
  /** `low`, `medium`, `high`, `xhigh`, `max` on 2.1.330; strings, so a new level does not break decoding. */
  supportedEffortLevels: optionalStrings,
  supportsAdaptiveThinking: optionalBoolean,
  supportsFastMode: optionalBoolean,
  supportsAutoMode: optionalBoolean,
  /** Whether thinking can be turned off for this model. */
  supportsThinkingOff: optionalBoolean
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface ModelInfo extends Schema.Schema.Type<typeof ModelInfo> {}

/**
 * A subagent the CLI offers (from the `initialize` reply and `reload_plugins`).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const label = (a: Control.AgentInfo) => `${a.name}${a.model === undefined ? "" : ` (${a.model})`}`
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const AgentInfo = Schema.Struct({
  name: Schema.String,
  description: optionalString,
  /** An alias or model id, or `"inherit"`; absent: the default subagent model. */
  model: optionalString
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface AgentInfo extends Schema.Schema.Type<typeof AgentInfo> {}

/**
 * The account the CLI runs as (the `initialize` reply's `account`). With an API key, the CLI
 * 2.1.330 sends `{ tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY", apiProvider:
 * "firstParty" }`; `email`, `organization` and `subscriptionType` come with a claude.ai login.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const who = (a: Control.AccountInfo) => a.email ?? a.apiKeySource ?? "unknown"
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const AccountInfo = Schema.Struct({
  email: optionalString,
  organization: optionalString,
  subscriptionType: optionalString,
  tokenSource: optionalString,
  apiKeySource: optionalString,
  /**
   * The API backend: `firstParty`, `bedrock`, `vertex`, `foundry`, `anthropicAws`,
   * `anthropicGoogleCloud`, `mantle` or `gateway` (a string: the set grows).
   */
  apiProvider: optionalString
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface AccountInfo extends Schema.Schema.Type<typeof AccountInfo> {}

/**
 * The `initialize` reply: commands, agents, models, account, output styles, and the CLI's `pid`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const models = Effect.gen(function* () {
 *   const session = yield* ClaudeAgent.session()
 *   const init = yield* session.initializationResult
 *   return init.models.map((m) => m.value)
 * })
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const InitializeResponse = Schema.Struct({
  commands: Schema.Array(SlashCommand),
  agents: Schema.optional(Schema.Array(AgentInfo)),
  output_style: optionalString,
  available_output_styles: optionalStrings,
  models: Schema.Array(ModelInfo),
  account: Schema.optional(AccountInfo),
  /** The CLI's process id, as the CLI reports it. */
  pid: optionalNumber,
  claude_code_version: optionalString,
  current_permission_mode: optionalString,
  /**
   * Whether the CLI loaded the MCP servers sent in `initialize` (`mcpServersDelivery:
   * "initialize"`). A CLI too old to read them leaves it out: the session then fails.
   */
  mcp_servers_applied: optionalBoolean,
  /** Whether the CLI registered the hooks sent in `initialize`. */
  hooks_applied: optionalBoolean,
  /** Whether the CLI honours `onFailure` on hook matchers (needed by `onFailure: "block"`). */
  hook_on_failure_supported: optionalBoolean,
  /** Whether the CLI loaded the plugins sent in `initialize` (`pluginDelivery: "initialize"`). */
  plugins_applied: optionalBoolean
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface InitializeResponse extends Schema.Schema.Type<typeof InitializeResponse> {}

/**
 * The `interrupt` reply: user messages still queued, and those cancelled with `cancelQueued`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const pending = (r: Control.InterruptResponse) => r.still_queued?.length ?? 0
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const InterruptResponse = Schema.Struct({
  still_queued: optionalStrings,
  cancelled: optionalStrings
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface InterruptResponse extends Schema.Schema.Type<typeof InterruptResponse> {}

/**
 * The `set_model` reply: the model now in use (`"default"` resolved to a model id).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const reply: Control.SetModelResponse = { model: "claude-haiku-4-5" }
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const SetModelResponse = Schema.Struct({ model: optionalString })

/**
 * @since 0.1.0
 * @category replies
 */
export interface SetModelResponse extends Schema.Schema.Type<typeof SetModelResponse> {}

/**
 * The `set_permission_mode` reply.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const reply: Control.SetPermissionModeResponse = { mode: "plan" }
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const SetPermissionModeResponse = Schema.Struct({ mode: optionalString })

/**
 * @since 0.1.0
 * @category replies
 */
export interface SetPermissionModeResponse extends Schema.Schema.Type<typeof SetPermissionModeResponse> {}

/**
 * One MCP server's status.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const up = (s: Control.McpServerStatus) => s.status === "connected"
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const McpServerStatus = Schema.Struct({
  name: Schema.String,
  status: Schema.String,
  serverInfo: optionalUnknown,
  error: optionalString,
  tools: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String })))
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface McpServerStatus extends Schema.Schema.Type<typeof McpServerStatus> {}

/**
 * The `mcp_status` reply.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const names = (r: Control.McpStatusResponse) => r.mcpServers.map((s) => s.name)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const McpStatusResponse = Schema.Struct({ mcpServers: Schema.Array(McpServerStatus) })

/**
 * @since 0.1.0
 * @category replies
 */
export interface McpStatusResponse extends Schema.Schema.Type<typeof McpStatusResponse> {}

/**
 * One row of the `get_context_usage` reply. Match a row on `id` (stable: `system_prompt`,
 * `system_tools`, `mcp_tools`, `memory_files`, `skills`, `messages`, `autocompact_buffer`,
 * `free_space`, …) and classify it on `kind` (`used`, `free`, `buffer`, `deferred`), never on the
 * English `name`. Strings, so values a later CLI adds do not break decoding.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const used = (rows: ReadonlyArray<Control.ContextUsageCategory>) =>
 *   rows.filter((row) => row.kind === "used").reduce((sum, row) => sum + row.tokens, 0)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ContextUsageCategory = Schema.Struct({
  id: optionalString,
  name: Schema.String,
  tokens: Schema.Number,
  color: optionalString,
  kind: optionalString,
  isDeferred: optionalBoolean
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface ContextUsageCategory extends Schema.Schema.Type<typeof ContextUsageCategory> {}

/**
 * The `get_context_usage` reply: tokens by category, the window size and the model. The CLI
 * 2.1.330 also sends `gridRows` (the `/context` picture), `memoryFiles`, `mcpTools`, `agents`,
 * `skills`, `slashCommands`, `messageBreakdown`, `apiUsage`, …: every field is kept on the decoded
 * value; the Schema names the ones below.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const percent = (r: Control.ContextUsageResponse) => r.percentage ?? (100 * r.totalTokens) / r.maxTokens
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ContextUsageResponse = Schema.Struct({
  categories: Schema.Array(ContextUsageCategory),
  totalTokens: Schema.Number,
  maxTokens: Schema.Number,
  rawMaxTokens: optionalNumber,
  percentage: optionalNumber,
  model: optionalString,
  autoCompactThreshold: optionalNumber,
  isAutoCompactEnabled: optionalBoolean,
  memoryFiles: Schema.optional(
    Schema.Array(Schema.Struct({ path: Schema.String, type: Schema.String, tokens: Schema.Number }))
  ),
  mcpTools: Schema.optional(
    Schema.Array(Schema.Struct({ name: Schema.String, serverName: Schema.String, tokens: Schema.Number }))
  )
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface ContextUsageResponse extends Schema.Schema.Type<typeof ContextUsageResponse> {}

/**
 * The `rewind_files` reply. "Cannot rewind" is a success reply with `canRewind: false` and `error`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const explain = (r: Control.RewindFilesResponse) => (r.canRewind ? r.filesChanged ?? [] : r.error)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const RewindFilesResponse = Schema.Struct({
  canRewind: Schema.Boolean,
  error: optionalString,
  filesChanged: optionalStrings,
  insertions: optionalNumber,
  deletions: optionalNumber
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface RewindFilesResponse extends Schema.Schema.Type<typeof RewindFilesResponse> {}

/**
 * The `mcp_set_servers` reply: the servers the CLI added and removed, and those that failed to
 * connect (name → error).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const failed = (r: Control.McpSetServersResponse) => Object.keys(r.errors)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const McpSetServersResponse = Schema.Struct({
  added: Strings,
  removed: Strings,
  errors: Schema.Record({ key: Schema.String, value: Schema.String })
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface McpSetServersResponse extends Schema.Schema.Type<typeof McpSetServersResponse> {}

/**
 * One item of an MCP `resources/read` result: `text`, or `blob` (base64) for binary content.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const html = (c: Control.McpResourceContents) => (c.mimeType?.startsWith("text/html") ? c.text : undefined)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const McpResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: optionalString,
  text: optionalString,
  blob: optionalString,
  _meta: optionalRawObject
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface McpResourceContents extends Schema.Schema.Type<typeof McpResourceContents> {}

/**
 * The `mcp_read_resource` reply: the server's `resources/read` result. The content is the server's
 * (untrusted HTML, for MCP Apps widgets): render it sandboxed.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const texts = (r: Control.McpReadResourceResponse) => r.contents.flatMap((c) => (c.text === undefined ? [] : [c.text]))
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const McpReadResourceResponse = Schema.Struct({ contents: Schema.Array(McpResourceContents) })

/**
 * @since 0.1.0
 * @category replies
 */
export interface McpReadResourceResponse extends Schema.Schema.Type<typeof McpReadResourceResponse> {}

/**
 * A plugin as `plugins` and `reload_plugins` take it: a local directory. With `skipMcpDiscovery`
 * its skills, hooks, agents and commands load but not its MCP servers.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const plugin: Control.PluginConfig = { type: "local", path: "/opt/plugins/review" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const PluginConfig = Schema.Struct({
  type: Schema.Literal("local"),
  path: Schema.String,
  skipMcpDiscovery: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PluginConfig extends Schema.Schema.Type<typeof PluginConfig> {}

/**
 * The `reload_plugins` reply: the session's commands, agents, plugins and MCP servers after the
 * reload, and how many plugins failed to load. With `hold_on_cache_impact`, `held: true` and
 * `cache_impact` when nothing was applied.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const names = (r: Control.ReloadPluginsResponse) => r.plugins.map((p) => p.name)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ReloadPluginsResponse = Schema.Struct({
  commands: Schema.Array(SlashCommand),
  agents: Schema.Array(AgentInfo),
  plugins: Schema.Array(Schema.Struct({
    name: Schema.String,
    path: Schema.String,
    source: optionalString,
    version: optionalString
  })),
  mcpServers: Schema.Array(McpServerStatus),
  error_count: Schema.Number,
  held: optionalBoolean,
  cache_impact: Schema.optional(Schema.Struct({
    mcp_servers_added: Strings,
    mcp_servers_removed: Strings,
    lsp_tool_change: NullOrString
  }))
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface ReloadPluginsResponse extends Schema.Schema.Type<typeof ReloadPluginsResponse> {}

/**
 * The `background_tasks` reply. The CLI 2.1.330 sends `backgrounded: false` when a `tool_use_id`
 * matched no foreground task, and an empty reply otherwise.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const reply: Control.BackgroundTasksResponse = { backgrounded: false }
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const BackgroundTasksResponse = Schema.Struct({ backgrounded: optionalBoolean })

/**
 * @since 0.1.0
 * @category replies
 */
export interface BackgroundTasksResponse extends Schema.Schema.Type<typeof BackgroundTasksResponse> {}

/**
 * The `set_mcp_permission_mode_override` reply: a `warning` when no MCP server of that name is
 * known (the override is stored anyway, and applies once such a server connects).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const typo = (r: Control.SetMcpPermissionModeOverrideResponse) => r.warning !== undefined
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const SetMcpPermissionModeOverrideResponse = Schema.Struct({ warning: optionalString })

/**
 * @since 0.1.0
 * @category replies
 */
export interface SetMcpPermissionModeOverrideResponse
  extends Schema.Schema.Type<typeof SetMcpPermissionModeOverrideResponse>
{}

/**
 * How thinking is shown for the rest of the session (`setMaxThinkingTokens`' `display`):
 * `summarized`, `omitted`, or `highlights` (one-line titles; honoured by the API only for
 * Anthropic-hosted remote sessions).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const display: Control.ThinkingDisplay = "omitted"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const ThinkingDisplay = Schema.Literal("summarized", "omitted", "highlights")

/**
 * @since 0.1.0
 * @category models
 */
export type ThinkingDisplay = Schema.Schema.Type<typeof ThinkingDisplay>

/**
 * What an MCP server asks the user for (the `elicitation` request the CLI forwards): a form
 * (`mode: "form"`, the fields described by `requested_schema`, listed in `property_order`) or a
 * URL to open (`mode: "url"`, with `elicitation_id` to correlate the later
 * `system/elicitation_complete`). Wire names; the official SDK's `serverName`, `requestedSchema`,
 * `elicitationId`, `displayName` are `mcp_server_name`, `requested_schema`, `elicitation_id`,
 * `display_name` here. Fields this version does not name are kept.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const request: Control.ElicitationRequest = {
 *   mcp_server_name: "github",
 *   message: "Which repository?",
 *   mode: "form",
 *   requested_schema: { type: "object", properties: { repo: { type: "string" } } }
 * }
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export const ElicitationRequest = Schema.Struct({
  mcp_server_name: Schema.String,
  message: Schema.String,
  mode: Schema.optional(Schema.Literal("form", "url")),
  url: optionalString,
  elicitation_id: optionalString,
  requested_schema: optionalRawObject,
  property_order: optionalStrings,
  title: optionalString,
  display_name: optionalString,
  description: optionalString
}, RawObject)

/**
 * @since 0.1.0
 * @category CLI → host
 */
export interface ElicitationRequest extends Schema.Schema.Type<typeof ElicitationRequest> {}

/**
 * The answer to an elicitation (MCP's `ElicitResult`): `accept` with the form's `content`,
 * `decline`, or `cancel`. The CLI passes it to the MCP server.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const answer: Control.ElicitationResult = { action: "accept", content: { repo: "effect-ts/effect" } }
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export const ElicitationResult = Schema.Struct({
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Strings)
  })),
  _meta: optionalRawObject
})

/**
 * @since 0.1.0
 * @category CLI → host
 */
export interface ElicitationResult extends Schema.Schema.Type<typeof ElicitationResult> {}

// ---- descriptors --------------------------------------------------------------------------------

/**
 * Marks a control request descriptor (what `Control.request` makes).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 *
 * const isDescriptor = (u: object) => Control.RequestTypeId in u
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const RequestTypeId: unique symbol = Symbol.for("effect-claude-agent/Control/Request")

/**
 * @since 0.1.0
 * @category type ids
 */
export type RequestTypeId = typeof RequestTypeId

/**
 * A typed control request: its `subtype`, the Schema of the fields sent beside `subtype`, and the
 * Schema of the reply's `response` payload. One descriptor serves both directions: the side that
 * sends it encodes the payload and decodes the success; the side that answers it decodes the
 * payload and encodes the success.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 *
 * const subtype: "set_model" = Control.SetModel.subtype
 * type Payload = Control.Request.Payload<typeof Control.SetModel> // { readonly model?: string }
 * ```
 *
 * @since 0.1.0
 * @category descriptors
 */
export interface Request<
  Subtype extends string,
  Payload extends Schema.Schema.Any,
  Success extends Schema.Schema.Any
> {
  readonly [RequestTypeId]: RequestTypeId
  readonly subtype: Subtype
  /** The fields beside `subtype`, as a Struct Schema. */
  readonly payload: Payload
  /** The reply's `response` payload (`Schema.Void` when the reply carries none). */
  readonly success: Success
}

/**
 * @since 0.1.0
 * @category descriptors
 */
export declare namespace Request {
  /**
   * Any descriptor.
   *
   * @since 0.1.0
   */
  export interface Any {
    readonly [RequestTypeId]: RequestTypeId
    readonly subtype: string
    readonly payload: Schema.Schema.AnyNoContext
    readonly success: Schema.Schema.AnyNoContext
  }
  /**
   * What a caller passes: the fields beside `subtype`.
   *
   * @since 0.1.0
   */
  export type Payload<R extends Any> = Schema.Schema.Type<R["payload"]>
  /**
   * What the reply decodes to.
   *
   * @since 0.1.0
   */
  export type Success<R extends Any> = Schema.Schema.Type<R["success"]>
}

/**
 * Declares a control request. `payload` is the Schema of the fields sent beside `subtype` (wire names);
 * `success` the Schema of the reply's `response` (default `Schema.Void`: the reply's payload, if
 * any, is ignored). Use it for subtypes this library has no method for.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Control } from "effect-claude-agent"
 *
 * const GetPlan = Control.request("get_plan", { success: Schema.Struct({ exists: Schema.Boolean }) })
 * const Rename = Control.request("rename_session", { payload: Schema.Struct({ title: Schema.String }) })
 * // const plan = yield* session.control.request(GetPlan)
 * ```
 *
 * @since 0.1.0
 * @category descriptors
 */
export function request<const Subtype extends string>(
  subtype: Subtype
): Request<Subtype, typeof NoPayload, typeof Schema.Void>
export function request<const Subtype extends string, Payload extends Schema.Schema.AnyNoContext>(
  subtype: Subtype,
  options: { readonly payload: Payload }
): Request<Subtype, Payload, typeof Schema.Void>
export function request<const Subtype extends string, Success extends Schema.Schema.AnyNoContext>(
  subtype: Subtype,
  options: { readonly success: Success }
): Request<Subtype, typeof NoPayload, Success>
export function request<
  const Subtype extends string,
  Payload extends Schema.Schema.AnyNoContext,
  Success extends Schema.Schema.AnyNoContext
>(
  subtype: Subtype,
  options: { readonly payload: Payload; readonly success: Success }
): Request<Subtype, Payload, Success>
export function request(
  subtype: string,
  options?: { readonly payload?: Schema.Schema.AnyNoContext; readonly success?: Schema.Schema.AnyNoContext }
): Request<string, Schema.Schema.AnyNoContext, Schema.Schema.AnyNoContext> {
  return {
    [RequestTypeId]: RequestTypeId,
    subtype,
    payload: options?.payload ?? NoPayload,
    success: options?.success ?? Schema.Void
  }
}

/**
 * The payload of a request that sends nothing beside its `subtype`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const none: Control.NoPayload = {}
 * ```
 *
 * @since 0.1.0
 * @category descriptors
 */
export const NoPayload = Schema.Struct({})

/**
 * @since 0.1.0
 * @category descriptors
 */
export type NoPayload = typeof NoPayload.Type

/**
 * Whether a value is a control request descriptor.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const ok = Control.isRequest(Control.Interrupt) // true
 * ```
 *
 * @since 0.1.0
 * @category refinements
 */
export const isRequest = (u: unknown): u is Request.Any => Predicate.hasProperty(u, RequestTypeId)

// ---- host → CLI ---------------------------------------------------------------------------------

/**
 * The fields of `initialize` this library sends (`hooks` and `sdkMcpServers` come from the
 * session's `HookRegistry` and `McpBridge`); other fields are passed through as given.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.InitializePayload = { systemPrompt: [""], hooks: {} }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const InitializePayload = Schema.Struct({
  hooks: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown) })),
  sdkMcpServers: optionalStrings,
  systemPrompt: optionalStrings,
  appendSystemPrompt: optionalString,
  excludeDynamicSections: optionalBoolean,
  systemPromptSnapshot: optionalBoolean,
  planModeInstructions: optionalString,
  toolAliases: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  agents: optionalRawObject,
  title: optionalString,
  skills: optionalStrings,
  promptSuggestions: optionalBoolean,
  agentProgressSummaries: optionalBoolean,
  forwardSubagentText: optionalBoolean,
  perTaskStopAffordance: optionalBoolean,
  /** With `--await-initialize`: plugins to load instead of `--plugin-dir` flags. */
  plugins: Schema.optional(Schema.Array(RawObject)),
  /** With `--await-initialize`: stdio/sse/http MCP servers instead of `--mcp-config`. */
  mcpServers: optionalRawObject,
  jsonSchema: optionalUnknown
}, RawObject)

/**
 * @since 0.1.0
 * @category host → CLI
 */
export interface InitializePayload extends Schema.Schema.Type<typeof InitializePayload> {}

/**
 * `initialize`: the first request of every session. Its reply lists commands, models, account, …
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const subtype = Control.Initialize.subtype // "initialize"
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const Initialize = request("initialize", { payload: InitializePayload, success: InitializeResponse })

/**
 * `interrupt`: ends the running turn (`cancel_queued` also drops queued user messages).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ControlChannel, Control } from "effect-claude-agent"
 *
 * const stop = Effect.flatMap(ControlChannel.ControlChannel, (c) => c.request(Control.Interrupt, { cancel_queued: true }))
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const Interrupt = request("interrupt", {
  payload: Schema.Struct({ cancel_queued: optionalBoolean }),
  success: InterruptResponse
})

/**
 * `set_permission_mode`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.SetPermissionMode> = { mode: "plan" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const SetPermissionMode = request("set_permission_mode", {
  payload: Schema.Struct({ mode: PermissionMode }),
  success: SetPermissionModeResponse
})

/**
 * `set_model`: without `model`, the default model. An empty model name is refused before it is sent.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.SetModel> = { model: "claude-haiku-4-5" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const SetModel = request("set_model", {
  payload: Schema.Struct({ model: Schema.optional(Schema.NonEmptyTrimmedString) }),
  success: SetModelResponse
})

/**
 * `set_max_thinking_tokens`: `null` resets the budget to the session's default; a negative or
 * fractional budget is refused before it is sent. `thinking_display` replaces how thinking is
 * shown for the rest of the session (`null` clears that override; absent: unchanged). The reply
 * carries no payload.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.SetMaxThinkingTokens> = {
 *   max_thinking_tokens: 8000,
 *   thinking_display: "omitted"
 * }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const SetMaxThinkingTokens = request("set_max_thinking_tokens", {
  payload: Schema.Struct({
    max_thinking_tokens: Schema.NullOr(Schema.NonNegativeInt),
    thinking_display: Schema.optional(Schema.NullOr(ThinkingDisplay))
  })
})

/**
 * `mcp_status`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const subtype = Control.McpStatus.subtype // "mcp_status"
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const McpStatus = request("mcp_status", { success: McpStatusResponse })

/**
 * `get_context_usage`. `detail: "full"` (the CLI's default) counts each category with the API's
 * token-count endpoint (about 28 `count_tokens` calls on 2.1.330); `"summary"` answers from the
 * last response's usage and local estimates, with no API call.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.GetContextUsage> = { detail: "summary" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const GetContextUsage = request("get_context_usage", {
  payload: Schema.Struct({ detail: Schema.optional(Schema.Literal("summary", "full")) }),
  success: ContextUsageResponse
})

/**
 * `rewind_files`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.RewindFiles> = { user_message_id: "4f1c…", dry_run: true }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const RewindFiles = request("rewind_files", {
  payload: Schema.Struct({ user_message_id: Schema.String, dry_run: optionalBoolean }),
  success: RewindFilesResponse
})

/**
 * `stop_task`: stops a background task (an unknown id is not an error for the CLI).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.StopTask> = { task_id: "task_1" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const StopTask = request("stop_task", { payload: Schema.Struct({ task_id: Schema.String }) })

/**
 * `mcp_reconnect`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.McpReconnect> = { serverName: "github" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const McpReconnect = request("mcp_reconnect", { payload: Schema.Struct({ serverName: Schema.String }) })

/**
 * `mcp_toggle`: enables or disables an MCP server. The reply carries no payload.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.McpToggle> = { serverName: "github", enabled: false }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const McpToggle = request("mcp_toggle", {
  payload: Schema.Struct({ serverName: Schema.String, enabled: Schema.Boolean })
})

/**
 * `mcp_set_servers`: replaces the session's dynamic MCP servers with `servers` (name → config).
 * Process servers (stdio, sse, http) are sent as configured; an in-process server as
 * `{ type: "sdk", name }`, which the CLI then reaches over `mcp_message`. The set replaces the
 * servers added by earlier calls and every in-process server, those of `initialize` included;
 * servers from `--mcp-config`, settings files and plugins stay unless a call named them.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.McpSetServers> = {
 *   servers: { docs: { type: "http", url: "https://example.com/mcp" }, calc: { type: "sdk", name: "calc" } }
 * }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const McpSetServers = request("mcp_set_servers", {
  payload: Schema.Struct({ servers: Schema.Record({ key: Schema.String, value: RawObject }) }),
  success: McpSetServersResponse
})

/**
 * `mcp_message` from the host: delivers a JSON-RPC message of an in-process server to the CLI
 * (e.g. `notifications/tools/list_changed`, after which the CLI lists the server's tools again).
 * The CLI acknowledges it with an empty reply. The CLI's own `mcp_message` requests are
 * `McpMessage`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.McpServerMessage> = {
 *   server_name: "calc",
 *   message: { jsonrpc: "2.0", method: "notifications/tools/list_changed" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const McpServerMessage = request("mcp_message", {
  payload: Schema.Struct({ server_name: Schema.String, message: RawObject })
})

/**
 * `mcp_read_resource`: reads a `ui://` resource (an MCP Apps widget) from an MCP server the CLI
 * itself connected to. In-process servers are refused (read them directly), and so are other URI
 * schemes.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.McpReadResource> = { serverName: "charts", uri: "ui://chart/bar" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const McpReadResource = request("mcp_read_resource", {
  payload: Schema.Struct({ serverName: Schema.String, uri: Schema.String }),
  success: McpReadResourceResponse
})

/**
 * `set_mcp_permission_mode_override`: pins a per-server permission mode, `"default"` (ask for every
 * action) or `"auto"` (the auto-mode classifier decides); `null` clears it. It only tightens: it
 * applies when the session's mode would allow without asking.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.SetMcpPermissionModeOverride> = { serverName: "github", mode: "default" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const SetMcpPermissionModeOverride = request("set_mcp_permission_mode_override", {
  payload: Schema.Struct({ serverName: Schema.String, mode: Schema.NullOr(Schema.Literal("default", "auto")) }),
  success: SetMcpPermissionModeOverrideResponse
})

/**
 * `apply_flag_settings`: merges settings into the session's flag layer (the `settings` option,
 * mid-session). Top-level keys replace earlier ones; `null` clears a key. An invalid value makes
 * the CLI refuse the whole request. The reply carries no payload.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.ApplyFlagSettings> = { settings: { effortLevel: "low" } }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const ApplyFlagSettings = request("apply_flag_settings", { payload: Schema.Struct({ settings: RawObject }) })

/**
 * Which settings file `update_settings` writes.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const source: Control.SettingsFileSource = "localSettings"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const SettingsFileSource = Schema.Literal("localSettings", "userSettings")

/**
 * @since 0.1.0
 * @category models
 */
export type SettingsFileSource = Schema.Schema.Type<typeof SettingsFileSource>

/**
 * `update_settings`: writes keys into a settings file through the CLI's own writer and applies
 * them. The CLI allows `outputStyle` in `localSettings` and `effortLevel` in `userSettings`,
 * string values only, and refuses a source the session's `settingSources` exclude. The reply
 * carries no payload.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.UpdateSettings> = {
 *   source: "localSettings",
 *   settings: { outputStyle: "Explanatory" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const UpdateSettings = request("update_settings", {
  payload: Schema.Struct({
    source: SettingsFileSource,
    settings: Schema.Record({ key: Schema.String, value: Schema.String })
  })
})

/**
 * The `reload_skills` reply: the skills the session offers after re-reading them from disk.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const names = (r: Control.ReloadSkillsResponse) => r.skills.map((s) => s.name)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ReloadSkillsResponse = Schema.Struct({ skills: Schema.Array(SlashCommand) })

/**
 * @since 0.1.0
 * @category replies
 */
export interface ReloadSkillsResponse extends Schema.Schema.Type<typeof ReloadSkillsResponse> {}

/**
 * `reload_skills`: re-reads skills from disk (a skill written while the session runs is otherwise
 * unseen until the next session); the CLI also sends `system/commands_changed`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.ReloadSkills> = {}
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const ReloadSkills = request("reload_skills", {
  payload: Schema.Struct({}),
  success: ReloadSkillsResponse
})

/**
 * The `reload_output_styles` reply: the output style names, built-in and custom, in the order the
 * `initialize` reply lists them.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const has = (r: Control.ReloadOutputStylesResponse, name: string) => r.available_output_styles.includes(name)
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ReloadOutputStylesResponse = Schema.Struct({ available_output_styles: Strings })

/**
 * @since 0.1.0
 * @category replies
 */
export interface ReloadOutputStylesResponse extends Schema.Schema.Type<typeof ReloadOutputStylesResponse> {}

/**
 * `reload_output_styles`: re-reads the output-style directories from disk (and drops the CLI's
 * cache of agent, skill and routine files, so they are re-read on next use).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.ReloadOutputStyles> = {}
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const ReloadOutputStyles = request("reload_output_styles", {
  payload: Schema.Struct({}),
  success: ReloadOutputStylesResponse
})

/**
 * `reload_plugins`: reloads plugins from disk (and loads `add_plugins`). With
 * `hold_on_cache_impact`, nothing is applied if it would change the tool list under the prompt
 * cache (`held: true`); with `refuse_if_busy`, a busy session gets an error with `error_code`
 * `reload_plugins_busy`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.ReloadPlugins> = { refuse_if_busy: true }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const ReloadPlugins = request("reload_plugins", {
  payload: Schema.Struct({
    hold_on_cache_impact: optionalBoolean,
    add_plugins: Schema.optional(Schema.Array(PluginConfig)),
    refuse_if_busy: optionalBoolean
  }),
  success: ReloadPluginsResponse
})

/**
 * `background_tasks`: moves running foreground tasks (Bash commands, subagents) to the
 * background, like Ctrl+B in the terminal; with `tool_use_id`, only the task that tool use started.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.BackgroundTasks> = { tool_use_id: "toolu_01" }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const BackgroundTasks = request("background_tasks", {
  payload: Schema.Struct({ tool_use_id: optionalString }),
  success: BackgroundTasksResponse
})

/**
 * The fields of `claim_session`: the per-session half of a session's options, sent to a CLI parked
 * with `--await-claim`. `sdk_mcp_servers` names the parked session's in-process servers;
 * `include_initialize` asks for the claimed session's `initialize` reply (commands, agents, models
 * of the folder) in the answer. Fields this version does not name are passed through.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.ClaimSessionPayload = { cwd: "/work/project", permission_mode: "plan", include_initialize: true }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const ClaimSessionPayload = Schema.Struct({
  cwd: Schema.String,
  permission_mode: Schema.optional(PermissionMode),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  additional_directories: optionalStrings,
  append_system_prompt: optionalString,
  title: optionalString,
  agents: optionalRawObject,
  sdk_mcp_servers: optionalStrings,
  include_initialize: optionalBoolean
}, RawObject)

/**
 * @since 0.1.0
 * @category host → CLI
 */
export interface ClaimSessionPayload extends Schema.Schema.Type<typeof ClaimSessionPayload> {}

/**
 * The `claim_session` reply: the canonical working directory, the session's id, how long the
 * process was parked, and (with `include_initialize`) the claimed session's `initialize` reply.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const parkedFor = (r: Control.ClaimSessionResponse) => r.parked_ms ?? 0
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ClaimSessionResponse = Schema.Struct({
  status: optionalString,
  cwd: Schema.String,
  session_id: Schema.String,
  parked_ms: optionalNumber,
  /** Whether the in-process MCP servers named in the claim had answered by the time of the reply. */
  sdk_mcp_settled: optionalBoolean,
  initialize: Schema.optional(InitializeResponse)
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface ClaimSessionResponse extends Schema.Schema.Type<typeof ClaimSessionResponse> {}

/**
 * `claim_session`: binds a CLI started with `--await-claim` (initialized, no session yet) to a
 * folder and the per-session options. A refusal is an error reply whose text starts with a code:
 * `not_a_spare`, `cwd_not_found`, `env_key_not_claimable`, `permission_mode_not_claimable`,
 * `project_settings_not_claimable`, `claim_failed`, … (CLI 2.1.330; see `docs/protocol-claim.md`).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const subtype = Control.ClaimSession.subtype // "claim_session"
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const ClaimSession = request("claim_session", { payload: ClaimSessionPayload, success: ClaimSessionResponse })

// ---- CLI → host ---------------------------------------------------------------------------------

/**
 * `can_use_tool`: the CLI asks whether a tool may run (only with `--permission-prompt-tool=stdio`).
 * Fields this version does not name are kept on the decoded payload.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.CanUseTool> = { tool_name: "Write", input: { file_path: "/tmp/a" } }
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export const CanUseTool = request("can_use_tool", {
  payload: Schema.Struct(
    { tool_name: Schema.String, input: RawObject, tool_use_id: optionalString },
    RawObject
  ),
  success: RawObject
})

/**
 * `hook_callback`: the CLI runs one of the hook callbacks registered in `initialize`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.HookCallback> = { callback_id: "hook_0", input: {} }
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export const HookCallback = request("hook_callback", {
  payload: Schema.Struct({
    callback_id: Schema.String,
    input: Schema.Unknown,
    tool_use_id: optionalString
  }, RawObject),
  success: RawObject
})

/**
 * `mcp_message`: one JSON-RPC message for an in-process (SDK) MCP server; the answer carries the
 * JSON-RPC response as `mcp_response`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.McpMessage> = {
 *   server_name: "calc", message: { jsonrpc: "2.0", id: 1, method: "tools/list" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export const McpMessage = request("mcp_message", {
  payload: Schema.Struct({ server_name: Schema.String, message: Schema.Unknown }, RawObject),
  success: Schema.Struct({ mcp_response: Schema.Unknown })
})

/**
 * `elicitation`: an MCP server asks the user for input (a form, or a URL to open). Answered by the
 * `onElicitation` option; without it, declined (`{ action: "decline" }`), as the official SDK
 * does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control, ControlChannel } from "effect-claude-agent"
 *
 * const declineAll: ControlChannel.InboundHandler<typeof Control.Elicitation> = () =>
 *   Effect.succeed({ action: "decline" })
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export const Elicitation = request("elicitation", { payload: ElicitationRequest, success: ElicitationResult })

/**
 * An `onElicitation` callback: answers an MCP server's request for user input with an
 * `ElicitationResult`. It gets the request (wire names) and the control request's id. A failure
 * or defect answers the CLI with an error; if the CLI withdraws the request, the fiber is
 * interrupted and nothing is answered.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Control } from "effect-claude-agent"
 *
 * const onElicitation: Control.OnElicitation = (request) =>
 *   Effect.succeed(
 *     request.mode === "url" ? { action: "decline" } : { action: "accept", content: { name: "Ada" } }
 *   )
 * ```
 *
 * @since 0.1.0
 * @category CLI → host
 */
export type OnElicitation<E = unknown, R = never> = (
  request: ElicitationRequest,
  requestId: string
) => Effect.Effect<ElicitationResult, E, R>
