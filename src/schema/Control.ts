/**
 * The control protocol's envelopes and the replies of the host → CLI requests, as Schemas with
 * the CLI's field names. Replies are decoded keeping every field the CLI sent; the Schemas name
 * the fields this SDK relies on.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

const RawObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

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
  response: Schema.optional(Schema.Unknown)
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
  error_code: Schema.optional(Schema.String)
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
 * A slash command the CLI offers (from the `initialize` reply).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const label = (c: Control.SlashCommand) => `/${c.name} ${c.argumentHint ?? ""}`
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const SlashCommand = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  argumentHint: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface SlashCommand extends Schema.Schema.Type<typeof SlashCommand> {}

/**
 * A model the CLI offers (from the `initialize` reply).
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const label = (m: Control.ModelInfo) => `${m.displayName} (${m.value})`
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ModelInfo = Schema.Struct({
  value: Schema.String,
  displayName: Schema.String,
  description: Schema.String,
  resolvedModel: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface ModelInfo extends Schema.Schema.Type<typeof ModelInfo> {}

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
  agents: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, description: Schema.optional(Schema.String) }))),
  output_style: Schema.optional(Schema.String),
  available_output_styles: Schema.optional(Schema.Array(Schema.String)),
  models: Schema.Array(ModelInfo),
  account: Schema.optional(RawObject),
  /** The CLI's process id, as the CLI reports it. */
  pid: Schema.optional(Schema.Number),
  claude_code_version: Schema.optional(Schema.String),
  current_permission_mode: Schema.optional(Schema.String)
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
  still_queued: Schema.optional(Schema.Array(Schema.String)),
  cancelled: Schema.optional(Schema.Array(Schema.String))
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
export const SetModelResponse = Schema.Struct({ model: Schema.optional(Schema.String) })

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
export const SetPermissionModeResponse = Schema.Struct({ mode: Schema.optional(Schema.String) })

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
  serverInfo: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.String),
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
 * The `get_context_usage` reply: tokens by category and the window size.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const percent = (r: Control.ContextUsageResponse) => (100 * r.totalTokens) / r.maxTokens
 * ```
 *
 * @since 0.1.0
 * @category replies
 */
export const ContextUsageResponse = Schema.Struct({
  categories: Schema.Array(Schema.Struct({ name: Schema.String, tokens: Schema.Number })),
  totalTokens: Schema.Number,
  maxTokens: Schema.Number
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
  error: Schema.optional(Schema.String),
  filesChanged: Schema.optional(Schema.Array(Schema.String)),
  insertions: Schema.optional(Schema.Number),
  deletions: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category replies
 */
export interface RewindFilesResponse extends Schema.Schema.Type<typeof RewindFilesResponse> {}
