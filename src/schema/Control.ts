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
import { Predicate, Schema } from "effect"
import { RawObject } from "../internal/schemas.js"


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

// ---- descriptors --------------------------------------------------------------------------------

/**
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
  sdkMcpServers: Schema.optional(Schema.Array(Schema.String)),
  systemPrompt: Schema.optional(Schema.Array(Schema.String)),
  appendSystemPrompt: Schema.optional(Schema.String),
  excludeDynamicSections: Schema.optional(Schema.Boolean),
  systemPromptSnapshot: Schema.optional(Schema.Boolean),
  planModeInstructions: Schema.optional(Schema.String),
  toolAliases: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  agents: Schema.optional(RawObject),
  title: Schema.optional(Schema.String),
  skills: Schema.optional(Schema.Array(Schema.String)),
  promptSuggestions: Schema.optional(Schema.Boolean),
  agentProgressSummaries: Schema.optional(Schema.Boolean),
  forwardSubagentText: Schema.optional(Schema.Boolean),
  perTaskStopAffordance: Schema.optional(Schema.Boolean),
  /** With `--await-initialize`: plugins to load instead of `--plugin-dir` flags. */
  plugins: Schema.optional(Schema.Array(RawObject)),
  /** With `--await-initialize`: stdio/sse/http MCP servers instead of `--mcp-config`. */
  mcpServers: Schema.optional(RawObject),
  jsonSchema: Schema.optional(Schema.Unknown)
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
  payload: Schema.Struct({ cancel_queued: Schema.optional(Schema.Boolean) }),
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
 * `set_max_thinking_tokens`: `null` removes the limit; a negative or fractional budget is refused
 * before it is sent. The reply carries no payload.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const payload: Control.Request.Payload<typeof Control.SetMaxThinkingTokens> = { max_thinking_tokens: 8000 }
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const SetMaxThinkingTokens = request("set_max_thinking_tokens", {
  payload: Schema.Struct({ max_thinking_tokens: Schema.NullOr(Schema.NonNegativeInt) })
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
 * `get_context_usage`.
 *
 * @example
 * ```ts
 * import { Control } from "effect-claude-agent"
 * const subtype = Control.GetContextUsage.subtype // "get_context_usage"
 * ```
 *
 * @since 0.1.0
 * @category host → CLI
 */
export const GetContextUsage = request("get_context_usage", { success: ContextUsageResponse })

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
  payload: Schema.Struct({ user_message_id: Schema.String, dry_run: Schema.optional(Schema.Boolean) }),
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
export const McpToggle = request("mcp_toggle", { payload: Schema.Struct({ serverName: Schema.String, enabled: Schema.Boolean }) })

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
  payload: Schema.Struct({ tool_name: Schema.String, input: RawObject, tool_use_id: Schema.optional(Schema.String) }, RawObject),
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
    tool_use_id: Schema.optional(Schema.String)
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
