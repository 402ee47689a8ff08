/**
 * The messages the Claude Code CLI writes on stdout (everything but the control protocol), as
 * Schemas with the CLI's own wire field names: `type`, `subtype`, `message.content`,
 * `session_id`, `is_error`, `result`, …
 *
 * Decoding discriminates on `type` (and `subtype` for `system` and `result`) first, validates
 * against that one member, and returns the CLI's object itself: fields this version does not
 * model are kept, and nothing is copied on the hot path. A `type` or `subtype` this version does
 * not know becomes `UnknownMessage` carrying the raw object, and a content block, stream event or
 * delta of an unknown type inside a known message is wrapped the same way (`{ type: "unknown",
 * raw }`, the message copied only then); `encode` undoes that. A known one that breaks its schema
 * is a `MessageParseError` with the raw value.
 *
 * Open-ended enumerations (`status`, `level`, `outcome`, `trigger`, …) are typed as strings, with
 * the known values in the docs: a value added by a newer CLI must not end the stream.
 *
 * @since 0.1.0
 */
import { Either, Predicate, Schema } from "effect"
import * as Guard from "../internal/schema/guard.js"
import {
  RawObject,
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionalUnknown,
  optionalStrings,
  optionalUnknowns,
  optionalNullOrNumber,
  NullOrString,
  optionalRawObject,
  Strings
} from "../internal/schema/schemas.js"
import { Approval } from "../services/ApprovalStore.js"
import { MessageParseError } from "../SdkError.js"
import * as ContentBlock from "./ContentBlock.js"
import * as Control from "./Control.js"

const OptionalString = optionalString
const OptionalNullableString = Schema.optional(NullOrString)
const OptionalNumber = optionalNumber

/**
 * Token usage as the API reports it.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const usage: Message.Usage = { input_tokens: 12, output_tokens: 30 }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_creation_input_tokens: optionalNullOrNumber,
  cache_read_input_tokens: optionalNullOrNumber
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Usage extends Schema.Schema.Type<typeof Usage> {}

// ---------------------------------------------------------------------------------------------
// assistant / user
// ---------------------------------------------------------------------------------------------

/**
 * One assistant message. The CLI writes one per content block, all with the same `message.id`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const text = (m: Message.AssistantMessage) => m.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({
    id: OptionalString,
    role: Schema.optional(Schema.Literal("assistant")),
    model: OptionalString,
    content: Schema.Array(ContentBlock.ContentBlock),
    stop_reason: OptionalNullableString,
    stop_sequence: OptionalNullableString,
    usage: Schema.optional(Usage)
  }),
  parent_tool_use_id: OptionalNullableString,
  session_id: Schema.String,
  uuid: OptionalString,
  /** Set when the message stands for an API error (`"unknown"`, `"rate_limit"`, …). */
  error: optionalUnknown
})

/**
 * @since 0.1.0
 * @category models
 */
export interface AssistantMessage extends Schema.Schema.Type<typeof AssistantMessage> {}

/**
 * When the CLI takes a user message sent while a turn runs: `"now"` as soon as it can, into the
 * running turn (steering it without an interrupt); `"next"` (what the CLI assumes without one)
 * queued, to be merged into the running turn or run after it; `"later"` behind what is already
 * queued, in order (a running turn does not reorder it).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const steer = Message.userMessage("Use tabs, not spaces", { priority: "now" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Priority = Schema.Literal("now", "next", "later")

/**
 * @since 0.1.0
 * @category models
 */
export type Priority = Schema.Schema.Type<typeof Priority>

/**
 * Who a user message comes from, as the official SDK's `SDKMessageOrigin` has it: `human`
 * (keyboard input: a host relaying what a person typed says so, since a message without an
 * origin counts as unattributed), `channel` (an MCP channel server), `peer` (another session),
 * `task-notification`, `coordinator`, `observer`, `auto-continuation`, … `kind` names it; the
 * other fields depend on the kind and are kept as written.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const typed: Message.MessageOrigin = { kind: "human" }
 * const relayed: Message.MessageOrigin = { kind: "peer", from: "reviewer", name: "Reviewer" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageOrigin = Schema.Struct(
  {
    kind: Schema.String,
    /** `channel`: the MCP server the message came through. */
    server: OptionalString,
    /** `peer` / `observer`: the sender's address. */
    from: OptionalString,
    /** `peer`: the sender's display name. */
    name: OptionalString
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/**
 * @since 0.1.0
 * @category models
 */
export interface MessageOrigin extends Schema.Schema.Type<typeof MessageOrigin> {}

/**
 * A user message as the CLI reports it: tool results, interruption markers, replays
 * (`isReplay`) and synthetic summaries (`isSynthetic`).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const isToolResult = (m: Message.UserMessage) =>
 *   typeof m.message.content !== "string" && m.message.content.some((b) => b.type === "tool_result")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({
    role: Schema.Literal("user"),
    content: Schema.Union(Schema.String, Schema.Array(ContentBlock.ContentBlock))
  }),
  parent_tool_use_id: OptionalNullableString,
  session_id: Schema.String,
  uuid: OptionalString,
  timestamp: OptionalString,
  isReplay: optionalBoolean,
  isSynthetic: optionalBoolean,
  tool_use_result: optionalUnknown,
  /** The priority it was sent with (`now`, `next`, `later`). */
  priority: OptionalString,
  origin: Schema.optional(MessageOrigin)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UserMessage extends Schema.Schema.Type<typeof UserMessage> {}

/**
 * A user message as the host writes it on the CLI's stdin.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const frame: Message.UserMessageInput = Message.userMessage("hello")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserMessageInput = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({
    role: Schema.Literal("user"),
    content: Schema.Union(Schema.String, Schema.Array(ContentBlock.ContentBlockParam))
  }),
  parent_tool_use_id: NullOrString,
  session_id: Schema.String,
  /** With a `uuid` the CLI reports `command_lifecycle` messages for this message. */
  uuid: OptionalString,
  /**
   * `true`: the text is delivered as written, without `@file` expansion or slash-command
   * dispatch (for text the end user did not type). The `verbatimPrompts` option sets it on every
   * message.
   */
  client_composed: optionalBoolean,
  /** Sent while a turn runs: steer it (`now`), or queue the message (`next`, `later`). */
  priority: Schema.optional(Priority),
  /** Who the message comes from (`{ kind: "human" }` for what a person typed). */
  origin: Schema.optional(MessageOrigin)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UserMessageInput extends Schema.Schema.Type<typeof UserMessageInput> {}

/**
 * Builds the user message frame the official SDKs write: content blocks, no parent tool use.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * Message.userMessage("What is 2 + 2?")
 * // { type: "user", message: { role: "user", content: [{ type: "text", text: "What is 2 + 2?" }] }, parent_tool_use_id: null, session_id: "" }
 * Message.userMessage([{ type: "text", text: "hi" }], { uuid: "7b0c…" })
 * Message.userMessage("/compact is just text here", { clientComposed: true })
 * Message.userMessage("Stop editing tests", { priority: "now", origin: { kind: "human" } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const userMessage = (
  content: string | ReadonlyArray<ContentBlock.ContentBlockParam>,
  options: {
    readonly uuid?: string | undefined
    readonly parentToolUseId?: string | undefined
    readonly clientComposed?: boolean | undefined
    readonly priority?: Priority | undefined
    readonly origin?: MessageOrigin | undefined
  } = {}
): UserMessageInput => {
  const base: UserMessageInput = {
    type: "user",
    message: {
      role: "user",
      content: typeof content === "string" ? [{ type: "text", text: content }] : content
    },
    parent_tool_use_id: options.parentToolUseId ?? null,
    session_id: ""
  }
  return {
    ...base,
    ...(options.uuid === undefined ? {} : { uuid: options.uuid }),
    ...(options.clientComposed === undefined ? {} : { client_composed: options.clientComposed }),
    ...(options.priority === undefined ? {} : { priority: options.priority }),
    ...(options.origin === undefined ? {} : { origin: options.origin })
  }
}

// ---------------------------------------------------------------------------------------------
// result
// ---------------------------------------------------------------------------------------------

/**
 * The tool call a turn stopped at instead of running it: a `PreToolUse` hook answered
 * `permissionDecision: "defer"` (the result's `terminal_reason` is `tool_deferred`).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const pending = (m: Message.ResultSuccess) => m.deferred_tool_use?.name
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeferredToolUse = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  input: RawObject
})

/**
 * @since 0.1.0
 * @category models
 */
export interface DeferredToolUse extends Schema.Schema.Type<typeof DeferredToolUse> {}

const resultFields = {
  type: Schema.Literal("result"),
  is_error: Schema.Boolean,
  num_turns: Schema.Number,
  duration_ms: Schema.Number,
  duration_api_ms: OptionalNumber,
  total_cost_usd: OptionalNumber,
  usage: Schema.optional(Usage),
  modelUsage: optionalRawObject,
  permission_denials: optionalUnknowns,
  stop_reason: OptionalNullableString,
  /** Why the run ended: `completed`, `api_error`, `aborted_streaming`, `aborted_tools`, `max_turns`, … */
  terminal_reason: OptionalNullableString,
  /** The HTTP status of the API error that ended the turn, if one did. */
  api_error_status: optionalNullOrNumber,
  session_id: Schema.String,
  uuid: OptionalString
}

/**
 * The end of a turn that produced an answer. `is_error` is still `true` when the answer is an
 * API error text ("API Error: 500 …"): check `is_error`, not just `subtype`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const answer = (m: Message.ResultSuccess) => (m.is_error ? undefined : m.result)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResultSuccess = Schema.Struct({
  ...resultFields,
  subtype: Schema.Literal("success"),
  result: Schema.String,
  /** With `outputFormat`: the validated structured output. */
  structured_output: optionalUnknown,
  /** The tool call the turn stopped at, when a hook deferred it. */
  deferred_tool_use: Schema.optional(DeferredToolUse)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ResultSuccess extends Schema.Schema.Type<typeof ResultSuccess> {}

/**
 * The end of a turn without an answer: interrupted, too many turns, over budget, or no valid
 * structured output.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const why = (m: Message.ResultFailure) => `${m.subtype}: ${(m.errors ?? []).join("; ")}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResultFailure = Schema.Struct({
  ...resultFields,
  subtype: Schema.Literal(
    "error_during_execution",
    "error_max_turns",
    "error_max_budget_usd",
    "error_max_structured_output_retries"
  ),
  errors: optionalStrings
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ResultFailure extends Schema.Schema.Type<typeof ResultFailure> {}

/**
 * Either kind of `result`: the last message of every turn.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const cost = (m: Message.ResultMessage) => m.total_cost_usd ?? 0
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResultMessage = Schema.Union(ResultSuccess, ResultFailure)

/**
 * @since 0.1.0
 * @category models
 */
export type ResultMessage = Schema.Schema.Type<typeof ResultMessage>

// ---------------------------------------------------------------------------------------------
// system
// ---------------------------------------------------------------------------------------------

const systemFields = {
  type: Schema.Literal("system"),
  session_id: Schema.String,
  uuid: OptionalString
}

/**
 * `system/init`: the session's tools, MCP servers, model and permission mode. The CLI sends it
 * once per user turn, never before the first user message.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const tools = (m: Message.SystemInit) => m.tools.join(", ")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemInit = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("init"),
  cwd: Schema.String,
  tools: Strings,
  mcp_servers: Schema.Array(Schema.Struct({ name: Schema.String, status: Schema.String })),
  model: Schema.String,
  permissionMode: Schema.String,
  slash_commands: optionalStrings,
  apiKeySource: OptionalString,
  claude_code_version: OptionalString,
  output_style: OptionalString,
  agents: optionalUnknowns,
  skills: optionalUnknowns,
  plugins: optionalUnknowns,
  capabilities: optionalStrings
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemInit extends Schema.Schema.Type<typeof SystemInit> {}

/**
 * `system/status`: `requesting` before an API call, `compacting` during compaction, `null` with
 * the new `permissionMode` after `setPermissionMode`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const busy = (m: Message.SystemStatus) => m.status !== null
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemStatus = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("status"),
  status: NullOrString,
  permissionMode: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemStatus extends Schema.Schema.Type<typeof SystemStatus> {}

/**
 * `system/api_retry`: one per retried API call.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemApiRetry) => `retry ${m.attempt}/${m.max_retries} in ${m.retry_delay_ms} ms`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemApiRetry = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("api_retry"),
  attempt: Schema.Number,
  max_retries: Schema.Number,
  retry_delay_ms: Schema.Number,
  error_status: Schema.NullOr(Schema.Number),
  error: optionalUnknown
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemApiRetry extends Schema.Schema.Type<typeof SystemApiRetry> {}

/**
 * `system/compact_boundary`: the conversation was compacted.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const saved = (m: Message.SystemCompactBoundary) => m.compact_metadata.pre_tokens
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemCompactBoundary = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("compact_boundary"),
  compact_metadata: Schema.Struct({ trigger: Schema.String, pre_tokens: Schema.Number })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemCompactBoundary extends Schema.Schema.Type<typeof SystemCompactBoundary> {}

/**
 * `system/session_state_changed` (the SDK sets `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`):
 * `running`, `requires_action` (waiting for a permission answer) or `idle`. The CLI marks those it
 * writes for the SDK alone `sdk_host_only: true`; like the official SDK, a session delivers those
 * only with the `includeSessionState` option (`session.control.runState` has the state).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const idle = (m: Message.SystemSessionStateChanged) => m.state === "idle"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemSessionStateChanged = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("session_state_changed"),
  state: Schema.String,
  sdk_host_only: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemSessionStateChanged extends Schema.Schema.Type<typeof SystemSessionStateChanged> {}

/**
 * `system/permission_denied`: a tool needed a permission nobody granted.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemPermissionDenied) => `${m.tool_name}: ${m.message}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemPermissionDenied = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("permission_denied"),
  tool_name: Schema.String,
  tool_use_id: Schema.String,
  /** The subagent whose tool call was denied. */
  agent_id: optionalString,
  /** What decided: `"classifier"`, `"asyncAgent"` (no approval surface), `"mode"`, `"rule"`, … */
  decision_reason_type: optionalString,
  decision_reason: optionalString,
  /** What the model was told in the tool result. */
  message: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemPermissionDenied extends Schema.Schema.Type<typeof SystemPermissionDenied> {}

/**
 * `system/thinking_tokens`: progress while the model thinks.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const n = (m: Message.SystemThinkingTokens) => m.estimated_tokens
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemThinkingTokens = Schema.Struct({
  ...systemFields,
  subtype: Schema.Literal("thinking_tokens"),
  estimated_tokens: Schema.Number
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemThinkingTokens extends Schema.Schema.Type<typeof SystemThinkingTokens> {}

// Events carry `session_id` like every system message, but it is not required of them: an event
// that came without one must not end the stream.
const eventFields = {
  type: Schema.Literal("system"),
  session_id: OptionalString,
  uuid: OptionalString
}

/**
 * `system/informational`: a line for the transcript, such as a hook failure. `level` is `info`,
 * `notice`, `suggestion` or `warning`; `prevent_continuation: true` means the run stops after it.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const isWarning = (m: Message.SystemInformational) => m.level === "warning"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemInformational = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("informational"),
  content: Schema.String,
  level: Schema.String,
  tool_use_id: OptionalString,
  prevent_continuation: optionalBoolean,
  /** A feature tag (`hook_callback_failed`, …); unknown tags are to be ignored. */
  tag: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemInformational extends Schema.Schema.Type<typeof SystemInformational> {}

/**
 * `system/commands_changed`: the slash commands available now (replaces the previous list).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const names = (m: Message.SystemCommandsChanged) => m.commands.map((c) => `/${c.name}`)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemCommandsChanged = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("commands_changed"),
  commands: Schema.Array(Control.SlashCommand)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemCommandsChanged extends Schema.Schema.Type<typeof SystemCommandsChanged> {}

/**
 * `system/session_title_changed`: the session got a title (generated, or set by `title` or a
 * rename).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const title = (m: Message.SystemSessionTitleChanged) => m.title
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemSessionTitleChanged = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("session_title_changed"),
  title: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemSessionTitleChanged extends Schema.Schema.Type<typeof SystemSessionTitleChanged> {}

const hookFields = {
  ...eventFields,
  hook_id: Schema.String,
  hook_name: Schema.String,
  /** The hook event: `PreToolUse`, `SessionStart`, … */
  hook_event: Schema.String
}

/**
 * `system/hook_started`: a hook (a settings command hook or a callback) began. Sent for every
 * event with `includeHookEvents`, and always for `SessionStart` and `Setup`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemHookStarted) => `${m.hook_event}: ${m.hook_name}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemHookStarted = Schema.Struct({
  ...hookFields,
  subtype: Schema.Literal("hook_started")
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemHookStarted extends Schema.Schema.Type<typeof SystemHookStarted> {}

/**
 * `system/hook_progress`: output a running hook produced so far.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const out = (m: Message.SystemHookProgress) => m.stdout
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemHookProgress = Schema.Struct({
  ...hookFields,
  subtype: Schema.Literal("hook_progress"),
  stdout: Schema.String,
  stderr: Schema.String,
  output: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemHookProgress extends Schema.Schema.Type<typeof SystemHookProgress> {}

/**
 * `system/hook_response`: a hook finished. `outcome` is `success`, `error` or `cancelled`;
 * `exit_code` is a command hook's.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const failed = (m: Message.SystemHookResponse) => m.outcome !== "success"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemHookResponse = Schema.Struct({
  ...hookFields,
  subtype: Schema.Literal("hook_response"),
  output: Schema.String,
  stdout: Schema.String,
  stderr: Schema.String,
  exit_code: OptionalNumber,
  outcome: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemHookResponse extends Schema.Schema.Type<typeof SystemHookResponse> {}

/**
 * A task's token, tool-call and time counts.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const usage: Message.TaskUsage = { total_tokens: 1200, tool_uses: 3, duration_ms: 4500 }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const TaskUsage = Schema.Struct({
  total_tokens: Schema.Number,
  tool_uses: Schema.Number,
  duration_ms: Schema.Number
})

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskUsage extends Schema.Schema.Type<typeof TaskUsage> {}

// Fields every `task_*` event has. `run_id` names one run of the task (a resumed task keeps its
// `task_id` and gets a new `run_id`).
const taskFields = {
  ...eventFields,
  task_id: Schema.String,
  run_id: OptionalString
}

/**
 * `system/task_started`: a subagent, background shell, workflow or other task began.
 * `task_type` is `local_agent`, `local_bash`, `local_workflow`, `mcp_task`, …; `skip_transcript`
 * and `ambient` tasks are housekeeping, not activity.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemTaskStarted) => `${m.subagent_type ?? m.task_type ?? "task"}: ${m.description}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemTaskStarted = Schema.Struct({
  ...taskFields,
  subtype: Schema.Literal("task_started"),
  tool_use_id: OptionalString,
  description: Schema.String,
  subagent_type: OptionalString,
  is_backgrounded: optionalBoolean,
  spawn_depth: OptionalNumber,
  parent_task_id: OptionalString,
  task_type: OptionalString,
  workflow_name: OptionalString,
  prompt: OptionalString,
  skip_transcript: optionalBoolean,
  ambient: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemTaskStarted extends Schema.Schema.Type<typeof SystemTaskStarted> {}

/**
 * `system/task_progress`: a running task's counts so far. `summary` is a one-line status (a
 * subagent's needs the `agentProgressSummaries` option).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemTaskProgress) => `${m.description}: ${m.usage.tool_uses} tool calls`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemTaskProgress = Schema.Struct({
  ...taskFields,
  subtype: Schema.Literal("task_progress"),
  tool_use_id: OptionalString,
  description: Schema.String,
  subagent_type: OptionalString,
  usage: TaskUsage,
  last_tool_name: OptionalString,
  summary: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemTaskProgress extends Schema.Schema.Type<typeof SystemTaskProgress> {}

/**
 * `system/task_updated`: the fields of a task that changed, to merge into your copy. `status`
 * is `pending`, `running`, `completed`, `failed`, `killed` or `paused`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const status = (m: Message.SystemTaskUpdated) => m.patch.status
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemTaskUpdated = Schema.Struct({
  ...taskFields,
  subtype: Schema.Literal("task_updated"),
  patch: Schema.Struct({
    status: OptionalString,
    description: OptionalString,
    end_time: OptionalNumber,
    total_paused_ms: OptionalNumber,
    error: OptionalString,
    is_backgrounded: optionalBoolean
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemTaskUpdated extends Schema.Schema.Type<typeof SystemTaskUpdated> {}

/**
 * A file an MCP tool returned by reference (an MCP `resource_link`).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const link: Message.ResourceLink = { uri: "file:///tmp/report.pdf", name: "report.pdf", mimeType: "application/pdf" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceLink = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  title: OptionalString,
  description: OptionalString,
  mimeType: OptionalString,
  size: OptionalNumber,
  annotations: optionalRawObject
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ResourceLink extends Schema.Schema.Type<typeof ResourceLink> {}

/**
 * `system/task_notification`: a task ended. `status` is `completed`, `failed` or `stopped`
 * (`reason: "worker_restart"` when a restart orphaned it); `output_file` holds its output.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemTaskNotification) => `${m.status}: ${m.summary}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemTaskNotification = Schema.Struct({
  ...taskFields,
  subtype: Schema.Literal("task_notification"),
  tool_use_id: OptionalString,
  status: Schema.String,
  reason: OptionalString,
  output_file: Schema.String,
  summary: Schema.String,
  usage: Schema.optional(TaskUsage),
  /** A backgrounded MCP task's `resource_link` results. */
  resource_links: Schema.optional(Schema.Array(ResourceLink)),
  skip_transcript: optionalBoolean,
  ambient: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemTaskNotification extends Schema.Schema.Type<typeof SystemTaskNotification> {}

/**
 * `system/background_tasks_changed`: every live background task after a change. Replace your
 * set with `tasks`; do not merge.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const running = (m: Message.SystemBackgroundTasksChanged) => m.tasks.filter((t) => t.ambient !== true).length
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemBackgroundTasksChanged = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("background_tasks_changed"),
  tasks: Schema.Array(Schema.Struct({
    task_id: Schema.String,
    run_id: OptionalString,
    task_type: Schema.String,
    subagent_type: OptionalString,
    description: Schema.String,
    parent_task_id: OptionalString,
    ambient: optionalBoolean
  }))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemBackgroundTasksChanged extends Schema.Schema.Type<typeof SystemBackgroundTasksChanged> {}

/**
 * `system/files_persisted`: files uploaded for the session (`file_id`s), and those that failed.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const ids = (m: Message.SystemFilesPersisted) => m.files.map((f) => f.file_id)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemFilesPersisted = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("files_persisted"),
  files: Schema.Array(Schema.Struct({ filename: Schema.String, file_id: Schema.String })),
  failed: Schema.Array(Schema.Struct({ filename: Schema.String, error: Schema.String })),
  processed_at: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemFilesPersisted extends Schema.Schema.Type<typeof SystemFilesPersisted> {}

/**
 * `system/local_command_output`: the output of a local slash command (`/cost`, `/context`, …).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const text = (m: Message.SystemLocalCommandOutput) => m.content
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemLocalCommandOutput = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("local_command_output"),
  content: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemLocalCommandOutput extends Schema.Schema.Type<typeof SystemLocalCommandOutput> {}

/**
 * `system/elicitation_complete`: an MCP server's URL elicitation finished.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const id = (m: Message.SystemElicitationComplete) => `${m.mcp_server_name}/${m.elicitation_id}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemElicitationComplete = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("elicitation_complete"),
  mcp_server_name: Schema.String,
  elicitation_id: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemElicitationComplete extends Schema.Schema.Type<typeof SystemElicitationComplete> {}

/**
 * `system/notification`: a notice for the user. `priority` is `low`, `medium`, `high` or
 * `immediate`; `key` identifies it (a newer one with the same key replaces it).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const text = (m: Message.SystemNotification) => m.text
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemNotification = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("notification"),
  key: Schema.String,
  text: Schema.String,
  priority: Schema.String,
  color: OptionalString,
  timeout_ms: OptionalNumber
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemNotification extends Schema.Schema.Type<typeof SystemNotification> {}

/**
 * `system/memory_recall`: memories brought into the conversation. `mode` is `select` (whole
 * files) or `synthesize` (a written summary); each memory's `scope` is `personal`, `team` or
 * `organization`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const paths = (m: Message.SystemMemoryRecall) => m.memories.map((memory) => memory.path)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemMemoryRecall = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("memory_recall"),
  mode: Schema.String,
  memories: Schema.Array(Schema.Struct({ path: Schema.String, scope: Schema.String, content: OptionalString }))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemMemoryRecall extends Schema.Schema.Type<typeof SystemMemoryRecall> {}

/**
 * `system/plugin_install`: progress of a plugin installation (`started`, `installed`, `failed`,
 * `completed`). `error` is untrusted text.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const failed = (m: Message.SystemPluginInstall) => m.status === "failed"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemPluginInstall = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("plugin_install"),
  status: Schema.String,
  name: OptionalString,
  error: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemPluginInstall extends Schema.Schema.Type<typeof SystemPluginInstall> {}

/**
 * `system/mirror_error`: writing the transcript to a session store failed (the official SDK
 * generates it for its `sessionStore`; typed here so that recorded streams decode).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemMirrorError) => `${m.key.sessionId}: ${m.error}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemMirrorError = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("mirror_error"),
  error: Schema.String,
  key: Schema.Struct({ projectKey: Schema.String, sessionId: Schema.String, subpath: OptionalString })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemMirrorError extends Schema.Schema.Type<typeof SystemMirrorError> {}

/**
 * `system/awaiting_approval`: the turn stopped at a deferred tool call and the session (with the
 * `approvalStore` option) recorded it as a pending approval; delivered just before the turn's
 * `result` (`terminal_reason: "tool_deferred"`). Continue it with `Approvals.approve(approval.id)`,
 * `deny` or `edit`, from any process. `error` is set when the store refused the record (the call
 * is then not pending anywhere).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.SystemAwaitingApproval) => `${m.approval.toolName} waits as ${m.approval.id}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemAwaitingApproval = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("awaiting_approval"),
  approval: Approval,
  error: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemAwaitingApproval extends Schema.Schema.Type<typeof SystemAwaitingApproval> {}

/**
 * `system/control_request_progress`: progress of a control request the host sent that calls the
 * model (`status`: `started`, then `api_retry` with the retry counters, like `api_retry`).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const retrying = (m: Message.SystemControlRequestProgress) => m.status === "api_retry"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemControlRequestProgress = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("control_request_progress"),
  /** The `request_id` of the control request in flight. */
  request_id: Schema.String,
  status: Schema.String,
  attempt: OptionalNumber,
  max_retries: OptionalNumber,
  retry_delay_ms: OptionalNumber,
  error_status: optionalNullOrNumber
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemControlRequestProgress extends Schema.Schema.Type<typeof SystemControlRequestProgress> {}

const refusalFields = {
  original_model: Schema.String,
  /** The API request that was refused, when known. */
  request_id: NullOrString,
  /** The refusal category (`cyber`, `bio`, …, an open set), or `null` when none was given. */
  api_refusal_category: OptionalNullableString,
  /** The API's explanation: prose for display, not for parsing. */
  api_refusal_explanation: OptionalNullableString,
  /**
   * The user message the refused request answered (the rewind target for an edit-and-retry), or
   * `null` when the turn was not written by a person.
   */
  refused_user_message_uuid: OptionalNullableString,
  /** A human-readable banner. */
  content: Schema.String
}

/**
 * `system/model_refusal_fallback`: the model refused, and the CLI switched to `fallback_model`.
 *
 * **It retracts messages you have already received.** `retracted_message_uuids` lists the
 * `uuid`s of the refused partial answer (assistant messages, one per content block) and of any
 * tool results discarded with it. Remove those messages from whatever you keep or show (a
 * transcript, a UI, a log of the answer) as soon as this arrives; uuids you do not have are to be
 * ignored, so removal can be repeated safely. The answer then continues from `fallback_model`
 * (`direction: "retry"`). With `scope: "session"` (or no `scope`) the session's model is now the
 * fallback; with `scope: "local"` only a subagent or side request fell back.
 *
 * @example
 * ```ts
 * import { Effect, Ref, Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 *
 * // Keep a transcript that honours retractions.
 * const transcript = Effect.gen(function* () {
 *   const kept = yield* Ref.make<ReadonlyArray<Message.Message>>([])
 *   yield* ClaudeAgent.query("hi").pipe(
 *     Stream.runForEach((m) => {
 *       if (m.type === "system" && m.subtype === "model_refusal_fallback") {
 *         const gone = new Set(m.retracted_message_uuids ?? [])
 *         return Ref.update(kept, (all) => all.filter((k) => !("uuid" in k && k.uuid !== undefined && gone.has(k.uuid))))
 *       }
 *       return Ref.update(kept, (all) => [...all, m])
 *     })
 *   )
 *   return yield* Ref.get(kept)
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemModelRefusalFallback = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("model_refusal_fallback"),
  /** `refusal`. */
  trigger: Schema.String,
  /** `retry` (`revert` and `sticky` are deprecated). */
  direction: Schema.String,
  /** `session`: the session's model is now `fallback_model`; `local`: only one side request fell back. */
  scope: OptionalString,
  fallback_model: Schema.String,
  /** The messages this fallback withdrew: remove them from what you keep or show. */
  retracted_message_uuids: optionalStrings,
  ...refusalFields
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemModelRefusalFallback extends Schema.Schema.Type<typeof SystemModelRefusalFallback> {}

/**
 * `system/model_refusal_no_fallback`: the model refused and there was no fallback model; the turn
 * ends with the refusal.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const why = (m: Message.SystemModelRefusalNoFallback) => m.api_refusal_category ?? "unspecified"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemModelRefusalNoFallback = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("model_refusal_no_fallback"),
  ...refusalFields
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemModelRefusalNoFallback extends Schema.Schema.Type<typeof SystemModelRefusalNoFallback> {}

/**
 * `system/worker_shutting_down`: the CLI process is about to exit (`reason`: `host_exit`, …).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const why = (m: Message.SystemWorkerShuttingDown) => m.reason
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemWorkerShuttingDown = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("worker_shutting_down"),
  reason: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemWorkerShuttingDown extends Schema.Schema.Type<typeof SystemWorkerShuttingDown> {}

/**
 * `system/session_writes_lost`: the disk was full (`error_code`: `ENOSPC`, `EDQUOT`, …) and
 * writes were lost: `transcript` lines (resuming the sessions in `transcript_session_ids` may
 * miss part of the conversation) and/or `global_config`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const unsafeToResume = (m: Message.SystemSessionWritesLost) => m.transcript_session_ids ?? []
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemSessionWritesLost = Schema.Struct({
  ...eventFields,
  subtype: Schema.Literal("session_writes_lost"),
  error_code: Schema.String,
  lost: Strings,
  transcript_session_ids: optionalStrings
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemSessionWritesLost extends Schema.Schema.Type<typeof SystemSessionWritesLost> {}

/**
 * The `system` messages that report events (hooks, tasks, notifications, refusals, …), as
 * opposed to the session's state (`init`, `status`, …). Each has its own schema.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const isHook = (m: Message.SystemEvent) => m.subtype.startsWith("hook_")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemEvent = Schema.Union(
  SystemInformational,
  SystemCommandsChanged,
  SystemSessionTitleChanged,
  SystemHookStarted,
  SystemHookProgress,
  SystemHookResponse,
  SystemTaskStarted,
  SystemTaskProgress,
  SystemTaskUpdated,
  SystemTaskNotification,
  SystemBackgroundTasksChanged,
  SystemFilesPersisted,
  SystemLocalCommandOutput,
  SystemElicitationComplete,
  SystemNotification,
  SystemMemoryRecall,
  SystemPluginInstall,
  SystemMirrorError,
  SystemAwaitingApproval,
  SystemControlRequestProgress,
  SystemModelRefusalFallback,
  SystemModelRefusalNoFallback,
  SystemWorkerShuttingDown,
  SystemSessionWritesLost
)

/**
 * @since 0.1.0
 * @category models
 */
export type SystemEvent = Schema.Schema.Type<typeof SystemEvent>

/**
 * Every modelled `system` message.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const label = (m: Message.SystemMessage) => `system/${m.subtype}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemMessage = Schema.Union(
  SystemInit,
  SystemStatus,
  SystemApiRetry,
  SystemCompactBoundary,
  SystemSessionStateChanged,
  SystemPermissionDenied,
  SystemThinkingTokens,
  ...SystemEvent.members
)

/**
 * @since 0.1.0
 * @category models
 */
export type SystemMessage = Schema.Schema.Type<typeof SystemMessage>

// ---------------------------------------------------------------------------------------------
// other types
// ---------------------------------------------------------------------------------------------

// Raw Messages API stream events. Decoding wraps an event, delta or content block of a type this
// version does not know as `{ type: "unknown", raw }` (copying the message only then), so each
// union stays discriminated by `type` and a newer API never ends the stream.

/**
 * `content_block_delta` of a text block: the next piece of its text.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const delta: Message.TextDelta = { type: "text_delta", text: "Hel" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextDelta = Schema.Struct({
  type: Schema.Literal("text_delta"),
  text: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface TextDelta extends Schema.Schema.Type<typeof TextDelta> {}

/**
 * `content_block_delta` of a `tool_use` block: the next piece of its input, as JSON text (the
 * input parses only once the block stops).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const delta: Message.InputJsonDelta = { type: "input_json_delta", partial_json: "{\"path\": \"READ" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const InputJsonDelta = Schema.Struct({
  type: Schema.Literal("input_json_delta"),
  partial_json: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface InputJsonDelta extends Schema.Schema.Type<typeof InputJsonDelta> {}

/**
 * `content_block_delta` of a thinking block: the next piece of its thinking.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const delta: Message.ThinkingDelta = { type: "thinking_delta", thinking: "First, " }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ThinkingDelta = Schema.Struct({
  type: Schema.Literal("thinking_delta"),
  thinking: Schema.String,
  estimated_tokens: optionalNullOrNumber
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ThinkingDelta extends Schema.Schema.Type<typeof ThinkingDelta> {}

/**
 * `content_block_delta` of a thinking block: its signature, sent last.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const delta: Message.SignatureDelta = { type: "signature_delta", signature: "EqQB…" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SignatureDelta = Schema.Struct({
  type: Schema.Literal("signature_delta"),
  signature: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SignatureDelta extends Schema.Schema.Type<typeof SignatureDelta> {}

/**
 * `content_block_delta` of a text block: a citation added to it (its shape depends on the cited
 * source: `char_location`, `page_location`, `web_search_result_location`, …).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const delta: Message.CitationsDelta = { type: "citations_delta", citation: { type: "char_location", cited_text: "…" } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CitationsDelta = Schema.Struct({
  type: Schema.Literal("citations_delta"),
  citation: RawObject
})

/**
 * @since 0.1.0
 * @category models
 */
export interface CitationsDelta extends Schema.Schema.Type<typeof CitationsDelta> {}

/**
 * `content_block_delta` of a compaction block: the summary that replaces earlier context.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const delta: Message.CompactionDelta = { type: "compaction_delta", content: "Summary: …", encrypted_content: null }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CompactionDelta = Schema.Struct({
  type: Schema.Literal("compaction_delta"),
  content: OptionalNullableString,
  encrypted_content: OptionalNullableString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface CompactionDelta extends Schema.Schema.Type<typeof CompactionDelta> {}

/**
 * A delta whose `type` this version does not know, with the API's object unchanged in `raw`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const original = (d: Message.UnknownDelta) => d.raw.type
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UnknownDelta = Schema.Struct({
  type: Schema.Literal("unknown"),
  raw: RawObject
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UnknownDelta extends Schema.Schema.Type<typeof UnknownDelta> {}

const knownDeltas = [TextDelta, InputJsonDelta, ThinkingDelta, SignatureDelta, CitationsDelta, CompactionDelta] as const

/**
 * The `delta` of a `content_block_delta` event, discriminated by `type`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const text = (d: Message.ContentBlockDelta) => (d.type === "text_delta" ? d.text : "")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockDelta = Schema.Union(...knownDeltas, UnknownDelta)

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlockDelta = Schema.Schema.Type<typeof ContentBlockDelta>

/**
 * `message_start`: a new assistant message, its content still empty.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const model = (e: Message.MessageStartEvent) => e.message.model
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageStartEvent = Schema.Struct({
  type: Schema.Literal("message_start"),
  message: Schema.Struct({
    id: OptionalString,
    role: Schema.optional(Schema.Literal("assistant")),
    model: OptionalString,
    content: Schema.optional(Schema.Array(ContentBlock.ContentBlock)),
    stop_reason: OptionalNullableString,
    stop_sequence: OptionalNullableString,
    usage: Schema.optional(Usage)
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface MessageStartEvent extends Schema.Schema.Type<typeof MessageStartEvent> {}

/**
 * `content_block_start`: block `index` begins (text and thinking empty, a tool call's `input`
 * `{}`).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const isToolCall = (e: Message.ContentBlockStartEvent) => e.content_block.type === "tool_use"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockStartEvent = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Schema.Number,
  content_block: ContentBlock.ContentBlock
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ContentBlockStartEvent extends Schema.Schema.Type<typeof ContentBlockStartEvent> {}

/**
 * `content_block_delta`: the next piece of block `index`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const json = (e: Message.ContentBlockDeltaEvent) => (e.delta.type === "input_json_delta" ? e.delta.partial_json : "")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockDeltaEvent = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Schema.Number,
  delta: ContentBlockDelta
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ContentBlockDeltaEvent extends Schema.Schema.Type<typeof ContentBlockDeltaEvent> {}

/**
 * `content_block_stop`: block `index` is complete.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const done = (e: Message.ContentBlockStopEvent) => e.index
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockStopEvent = Schema.Struct({
  type: Schema.Literal("content_block_stop"),
  index: Schema.Number
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ContentBlockStopEvent extends Schema.Schema.Type<typeof ContentBlockStopEvent> {}

/**
 * Token counts of a `message_delta`: cumulative for the message, each present when the API
 * sends it.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const usage: Message.DeltaUsage = { output_tokens: 30 }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeltaUsage = Schema.Struct({
  input_tokens: optionalNullOrNumber,
  output_tokens: optionalNullOrNumber,
  cache_creation_input_tokens: optionalNullOrNumber,
  cache_read_input_tokens: optionalNullOrNumber
})

/**
 * @since 0.1.0
 * @category models
 */
export interface DeltaUsage extends Schema.Schema.Type<typeof DeltaUsage> {}

/**
 * `message_delta`: the message's stop reason and its final token counts.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const why = (e: Message.MessageDeltaEvent) => e.delta.stop_reason
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageDeltaEvent = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({
    stop_reason: OptionalNullableString,
    stop_sequence: OptionalNullableString
  }),
  usage: Schema.optional(DeltaUsage)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface MessageDeltaEvent extends Schema.Schema.Type<typeof MessageDeltaEvent> {}

/**
 * `message_stop`: the message is complete.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const stop: Message.MessageStopEvent = { type: "message_stop" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageStopEvent = Schema.Struct({
  type: Schema.Literal("message_stop")
})

/**
 * @since 0.1.0
 * @category models
 */
export interface MessageStopEvent extends Schema.Schema.Type<typeof MessageStopEvent> {}

/**
 * A stream event whose `type` this version does not know, with the API's object unchanged in
 * `raw`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const original = (e: Message.UnknownRawStreamEvent) => e.raw.type
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UnknownRawStreamEvent = Schema.Struct({
  type: Schema.Literal("unknown"),
  raw: RawObject
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UnknownRawStreamEvent extends Schema.Schema.Type<typeof UnknownRawStreamEvent> {}

const knownRawEvents = [
  MessageStartEvent,
  ContentBlockStartEvent,
  ContentBlockDeltaEvent,
  ContentBlockStopEvent,
  MessageDeltaEvent,
  MessageStopEvent
] as const

/**
 * One Messages API streaming event, as the official SDK types `stream_event.event`
 * (`BetaRawMessageStreamEvent`), discriminated by `type`; an event type this version does not
 * know is an `UnknownRawStreamEvent`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const describe = (e: Message.RawStreamEvent): string => {
 *   switch (e.type) {
 *     case "content_block_delta":
 *       return `block ${e.index}: ${e.delta.type}`
 *     case "message_delta":
 *       return `stop: ${e.delta.stop_reason ?? "-"}`
 *     default:
 *       return e.type
 *   }
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RawStreamEvent = Schema.Union(...knownRawEvents, UnknownRawStreamEvent)

/**
 * @since 0.1.0
 * @category models
 */
export type RawStreamEvent = Schema.Schema.Type<typeof RawStreamEvent>

/**
 * A raw Messages API streaming event (`includePartialMessages`): `message_start`,
 * `content_block_start`, `content_block_delta` (`text_delta`, `thinking_delta`,
 * `input_json_delta`, …), `content_block_stop`, `message_delta`, `message_stop`. The complete
 * assistant message still follows as its own message.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const toolInput = (m: Message.StreamEvent) =>
 *   m.event.type === "content_block_delta" && m.event.delta.type === "input_json_delta" ? m.event.delta.partial_json : ""
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamEvent = Schema.Struct({
  type: Schema.Literal("stream_event"),
  event: RawStreamEvent,
  parent_tool_use_id: OptionalNullableString,
  session_id: Schema.String,
  uuid: OptionalString,
  /** On the turn's first event: milliseconds until the API's first byte. */
  ttft_ms: OptionalNumber,
  /** On the turn's first event: the uuid of the user message this turn answers. */
  user_message_uuid: OptionalString,
  /** With `user_message_uuid`: every user message this turn has taken so far. */
  user_message_uuids: optionalStrings
})

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamEvent extends Schema.Schema.Type<typeof StreamEvent> {}

/**
 * The text of a `content_block_delta` stream event's `text_delta`, if it is one.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 *
 * ClaudeAgent.query("hi", { includePartialMessages: true }).pipe(
 *   Stream.runForEach((m) => {
 *     const delta = m.type === "stream_event" ? Message.textDelta(m) : undefined
 *     return delta === undefined ? Effect.void : Effect.sync(() => process.stdout.write(delta))
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const textDelta = (m: StreamEvent): string | undefined =>
  m.event.type === "content_block_delta" && m.event.delta.type === "text_delta" ? m.event.delta.text : undefined

/**
 * The rate-limit state of a claude.ai subscription, as the official SDK's `SDKRateLimitInfo`.
 * `status`: `allowed`, `allowed_warning` or `rejected`; `rateLimitType`: `five_hour`,
 * `seven_day`, `seven_day_opus`, `seven_day_sonnet`, `overage`, …; times are Unix seconds.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const warn = (info: Message.RateLimitInfo) =>
 *   info.status === "allowed" ? undefined : `${info.rateLimitType ?? "limit"} at ${Math.round((info.utilization ?? 0) * 100)}%`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RateLimitInfo = Schema.Struct({
  status: Schema.String,
  /** When the limit resets (Unix seconds). */
  resetsAt: OptionalNumber,
  rateLimitType: OptionalString,
  /** The share of the limit used, from 0 to 1. */
  utilization: OptionalNumber,
  overageStatus: OptionalString,
  overageResetsAt: OptionalNumber,
  overageDisabledReason: OptionalString,
  isUsingOverage: optionalBoolean,
  overageInUse: optionalBoolean,
  overageEnabled: optionalBoolean,
  surpassedThreshold: OptionalNumber,
  /** Whose spend limit blocked the request when it is not the member's own: `service`, `channel`, `group_pool`. */
  limitScope: OptionalString,
  errorCode: OptionalString,
  canUserPurchaseCredits: optionalBoolean,
  hasChargeableSavedPaymentMethod: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface RateLimitInfo extends Schema.Schema.Type<typeof RateLimitInfo> {}

/**
 * `rate_limit_event`: the account's rate-limit state changed.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const rejected = (m: Message.RateLimitEvent) => m.rate_limit_info.status === "rejected"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RateLimitEvent = Schema.Struct({
  type: Schema.Literal("rate_limit_event"),
  rate_limit_info: RateLimitInfo,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface RateLimitEvent extends Schema.Schema.Type<typeof RateLimitEvent> {}

/**
 * `tool_progress`: a long-running tool is still running.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const line = (m: Message.ToolProgress) => `${m.tool_name}: ${m.elapsed_time_seconds ?? 0}s`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolProgress = Schema.Struct({
  type: Schema.Literal("tool_progress"),
  tool_use_id: Schema.String,
  tool_name: Schema.String,
  elapsed_time_seconds: OptionalNumber,
  parent_tool_use_id: OptionalNullableString,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolProgress extends Schema.Schema.Type<typeof ToolProgress> {}

/**
 * `tool_use_summary`: a summary of preceding tool calls.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const text = (m: Message.ToolUseSummary) => m.summary
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolUseSummary = Schema.Struct({
  type: Schema.Literal("tool_use_summary"),
  summary: Schema.String,
  preceding_tool_use_ids: optionalStrings,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolUseSummary extends Schema.Schema.Type<typeof ToolUseSummary> {}

/**
 * `prompt_suggestion`: a follow-up prompt the CLI suggests.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const text = (m: Message.PromptSuggestion) => m.suggestion
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PromptSuggestion = Schema.Struct({
  type: Schema.Literal("prompt_suggestion"),
  suggestion: Schema.String,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PromptSuggestion extends Schema.Schema.Type<typeof PromptSuggestion> {}

/**
 * `command_lifecycle`: the state of a user message sent with a `uuid` (`queued`, `started`,
 * `completed`, `cancelled`).
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const done = (m: Message.CommandLifecycle) => m.state === "completed"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommandLifecycle = Schema.Struct({
  type: Schema.Literal("command_lifecycle"),
  command_uuid: Schema.String,
  state: Schema.String,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface CommandLifecycle extends Schema.Schema.Type<typeof CommandLifecycle> {}

/**
 * `auth_status`: progress of an authentication flow.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const busy = (m: Message.AuthStatus) => m.isAuthenticating
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuthStatus = Schema.Struct({
  type: Schema.Literal("auth_status"),
  isAuthenticating: Schema.Boolean,
  output: optionalStrings,
  error: OptionalString,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface AuthStatus extends Schema.Schema.Type<typeof AuthStatus> {}

/**
 * `conversation_reset`: the conversation was discarded and a new one began (`/clear`, leaving
 * plan mode with a cleared context, …). Clear what you show of the conversation on every one,
 * whatever `trigger` says (`clear`, `plan_mode_exit`, `fresh_session`, `onboarding`, or absent).
 * With `trigger: "clear"`, `user_message_uuid` is the `/clear` message's uuid.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const next = (m: Message.ConversationReset) => m.new_conversation_id
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConversationReset = Schema.Struct({
  type: Schema.Literal("conversation_reset"),
  new_conversation_id: Schema.String,
  trigger: OptionalString,
  user_message_uuid: OptionalString,
  /** When it happened (ISO 8601, UTC), for display. */
  timestamp: OptionalString,
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ConversationReset extends Schema.Schema.Type<typeof ConversationReset> {}

/**
 * `active_goal`: the goal the session works towards (set with `/goal` or the goal tool), or
 * `value: null` once there is none. `iterations` counts the turns spent on it.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const goal = (m: Message.ActiveGoal) => m.value?.condition ?? "(no goal)"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ActiveGoal = Schema.Struct({
  type: Schema.Literal("active_goal"),
  value: Schema.NullOr(Schema.Struct({
    condition: Schema.String,
    iterations: Schema.Number,
    set_at: Schema.Number,
    tokens_at_start: Schema.Number,
    last_reason: OptionalString
  })),
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ActiveGoal extends Schema.Schema.Type<typeof ActiveGoal> {}

/**
 * A message whose `type` (or, for `system` and `result`, `subtype`) this version does not know,
 * delivered with the CLI's object unchanged in `raw`.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const original = (m: Message.UnknownMessage) => m.raw.type
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UnknownMessage = Schema.Struct({
  type: Schema.Literal("unknown"),
  raw: RawObject
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UnknownMessage extends Schema.Schema.Type<typeof UnknownMessage> {}

// Every modelled message, in one place: the union and the decoder's dispatch tables use it.
const knownMessages = [
  AssistantMessage,
  UserMessage,
  ...ResultMessage.members,
  ...SystemMessage.members,
  StreamEvent,
  RateLimitEvent,
  ToolProgress,
  ToolUseSummary,
  PromptSuggestion,
  CommandLifecycle,
  AuthStatus,
  ConversationReset,
  ActiveGoal
] as const

/**
 * Every message the CLI writes on stdout outside the control protocol.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const label = (m: Message.Message): string => ("subtype" in m ? `${m.type}/${m.subtype}` : m.type)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union(...knownMessages, UnknownMessage)

/**
 * @since 0.1.0
 * @category models
 */
export type Message = Schema.Schema.Type<typeof Message>

// ---------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------

type Member = Guard.Member<Message>

// Derived from `knownMessages`, one lookup by `type`: a member with a `subtype` field (`system`,
// `result`) is then found by `subtype`, any other is the route itself.
const routes = new Map<string, Member | Map<string, Member>>()
for (const schema of knownMessages) {
  const member: Member = Guard.member(schema)
  for (const type of schema.fields.type.literals) {
    if ("subtype" in schema.fields) {
      const route = routes.get(type)
      const bySubtype = route instanceof Map ? route : new Map<string, Member>()
      routes.set(type, bySubtype)
      for (const subtype of schema.fields.subtype.literals) bySubtype.set(subtype, member)
    } else {
      routes.set(type, member)
    }
  }
}

const memberFor = (type: unknown, subtype: unknown): Member | undefined => {
  if (typeof type !== "string") return undefined
  const route = routes.get(type)
  if (!(route instanceof Map)) return route
  return typeof subtype === "string" ? route.get(subtype) : undefined
}

// Unknown blocks, events and deltas are wrapped so their unions stay discriminated by `type`;
// the message is copied only when that happens.
const wrapUnknown = (raw: { readonly [key: string]: unknown }) => ({ type: "unknown", raw })

// `content` with its unknown blocks wrapped, or `undefined` when there are none.
const wrapUnknownBlocks = (content: unknown): Array<unknown> | undefined => {
  if (!Array.isArray(content)) return undefined
  let copy: Array<unknown> | undefined
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (Predicate.isRecord(block) && !ContentBlock.isKnownType(block.type)) {
      copy ??= content.slice()
      copy[i] = wrapUnknown(block)
    }
  }
  return copy
}

const normalizeContent = (raw: { readonly [key: string]: unknown }): unknown => {
  const message = raw.message
  if (!Predicate.isRecord(message)) return raw
  const content = wrapUnknownBlocks(message.content)
  return content === undefined ? raw : { ...raw, message: { ...message, content } }
}

const knownTypes = (
  schemas: ReadonlyArray<{ readonly fields: { readonly type: { readonly literals: ReadonlyArray<string> } } }>
) => new Set(schemas.flatMap((schema) => schema.fields.type.literals))
const rawEventTypes: ReadonlySet<unknown> = knownTypes(knownRawEvents)
const deltaTypes: ReadonlySet<unknown> = knownTypes(knownDeltas)

// The event of a `stream_event` with what this version does not know wrapped.
const normalizeEvent = (raw: { readonly [key: string]: unknown }): unknown => {
  const event = raw.event
  if (!Predicate.isRecord(event)) return raw
  switch (event.type) {
    case "content_block_delta": {
      const delta = event.delta
      return Predicate.isRecord(delta) && !deltaTypes.has(delta.type)
        ? { ...raw, event: { ...event, delta: wrapUnknown(delta) } }
        : raw
    }
    case "content_block_start": {
      const block = event.content_block
      return Predicate.isRecord(block) && !ContentBlock.isKnownType(block.type)
        ? { ...raw, event: { ...event, content_block: wrapUnknown(block) } }
        : raw
    }
    case "message_start": {
      const message = normalizeContent(event)
      return message === event ? raw : { ...raw, event: message }
    }
    default:
      return rawEventTypes.has(event.type) ? raw : { ...raw, event: wrapUnknown(event) }
  }
}

const normalize = (type: unknown, raw: { readonly [key: string]: unknown }): unknown => {
  switch (type) {
    case "assistant":
    case "user":
      return normalizeContent(raw)
    case "stream_event":
      return normalizeEvent(raw)
    default:
      return raw
  }
}

/**
 * Decodes one stdout frame (already parsed JSON, not a control frame). Returns the CLI's object
 * itself when valid, an `UnknownMessage` for an unknown `type`/`subtype`, and a
 * `MessageParseError` (with the raw value) for a known one that breaks its schema.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Message } from "effect-claude-agent"
 *
 * const decoded = Message.decode({ type: "hologram", depth: 3 })
 * // Either.right({ type: "unknown", raw: { type: "hologram", depth: 3 } })
 * Either.isRight(decoded) // true
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (raw: unknown): Either.Either<Message, MessageParseError> => {
  if (!Predicate.isRecord(raw)) {
    return Either.left(new MessageParseError({ detail: "a message must be a JSON object", raw }))
  }
  const type = raw.type
  const subtype = raw.subtype
  const m = memberFor(type, subtype)
  if (m === undefined) {
    if (typeof type !== "string") {
      return Either.left(new MessageParseError({ detail: "a message must have a string \"type\"", raw }))
    }
    return Either.right({ type: "unknown", raw })
  }
  // Most frames hold nothing this version does not know: they pass as they are. Otherwise what is
  // unknown is wrapped, and the copy checked.
  if (m.is(raw)) return Either.right(raw)
  const candidate = normalize(type, raw)
  if (candidate !== raw && m.is(candidate)) return Either.right(candidate)
  const label = typeof subtype === "string" ? `${type}/${subtype}` : String(type)
  return Either.left(new MessageParseError({ detail: `invalid ${label} message: ${m.explain(candidate)}`, raw }))
}

// The wrapped value's original, for `encode`.
const unwrap = (value: { readonly type: string; readonly raw?: unknown }): unknown =>
  value.type === "unknown" && value.raw !== undefined ? value.raw : value

// `content` with its wrapped blocks unwrapped, or `undefined` when there are none.
const unwrapBlocks = (content: ReadonlyArray<ContentBlock.ContentBlock>): Array<unknown> | undefined =>
  content.some((block) => block.type === "unknown") ? content.map(unwrap) : undefined

const encodeEvent = (m: StreamEvent): object => {
  const event = m.event
  switch (event.type) {
    case "unknown":
      return { ...m, event: event.raw }
    case "content_block_delta":
      return event.delta.type === "unknown" ? { ...m, event: { ...event, delta: event.delta.raw } } : m
    case "content_block_start":
      return event.content_block.type === "unknown"
        ? { ...m, event: { ...event, content_block: event.content_block.raw } }
        : m
    case "message_start": {
      const content = event.message.content === undefined ? undefined : unwrapBlocks(event.message.content)
      return content === undefined ? m : { ...m, event: { ...event, message: { ...event.message, content } } }
    }
    default:
      return m
  }
}

/**
 * The frame the CLI wrote for a decoded message: `decode`'s inverse. What `decode` wrapped as
 * unknown (a message, content block, stream event or delta) is unwrapped; anything else is
 * the message itself, which `decode` returned unchanged (unknown fields included). Use it to
 * store or forward messages as the CLI's JSON.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Message } from "effect-claude-agent"
 *
 * const frame = { type: "stream_event", event: { type: "hologram_delta", depth: 3 }, session_id: "s" }
 * const decoded = Either.getOrThrow(Message.decode(frame))
 * // decoded.event: { type: "unknown", raw: { type: "hologram_delta", depth: 3 } }
 * Message.encode(decoded) // deep-equals `frame`
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const encode = (m: Message): object => {
  switch (m.type) {
    case "unknown":
      return m.raw
    case "assistant":
    case "user": {
      const content = typeof m.message.content === "string" ? undefined : unwrapBlocks(m.message.content)
      return content === undefined ? m : { ...m, message: { ...m.message, content } }
    }
    case "stream_event":
      return encodeEvent(m)
    default:
      return m
  }
}

// ---------------------------------------------------------------------------------------------
// guards and getters
// ---------------------------------------------------------------------------------------------

/**
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 * const results = ClaudeAgent.query("hi").pipe(Stream.filter(Message.isResult))
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isResult = (m: Message): m is ResultMessage => m.type === "result"

/**
 * A `result` with `is_error: true` (API error, interrupt, max turns, budget, …).
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 * const failures = ClaudeAgent.query("hi").pipe(Stream.filter(Message.isErrorResult))
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isErrorResult = (m: Message): m is ResultMessage => m.type === "result" && m.is_error

/**
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 * const replies = ClaudeAgent.query("hi").pipe(Stream.filter(Message.isAssistant), Stream.map(Message.assistantText))
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isAssistant = (m: Message): m is AssistantMessage => m.type === "assistant"

/**
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const replays = (all: ReadonlyArray<Message.Message>) => all.filter(Message.isUser).filter((m) => m.isReplay === true)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isUser = (m: Message): m is UserMessage => m.type === "user"

/**
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const systems = (all: ReadonlyArray<Message.Message>) => all.filter(Message.isSystem).map((m) => m.subtype)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isSystem = (m: Message): m is SystemMessage => m.type === "system"

/**
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const models = (all: ReadonlyArray<Message.Message>) => all.filter(Message.isSystemInit).map((m) => m.model)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isSystemInit = (m: Message): m is SystemInit => m.type === "system" && m.subtype === "init"

/**
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const deltas = (all: ReadonlyArray<Message.Message>) => all.filter(Message.isStreamEvent).map(Message.textDelta)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isStreamEvent = (m: Message): m is StreamEvent => m.type === "stream_event"

/**
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const unknown = (all: ReadonlyArray<Message.Message>) => all.filter(Message.isUnknown).map((m) => m.raw)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isUnknown = (m: Message): m is UnknownMessage => m.type === "unknown"

/**
 * The concatenated text blocks of an assistant message.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 * const text = ClaudeAgent.query("hi").pipe(Stream.filter(Message.isAssistant), Stream.map(Message.assistantText), Stream.mkString)
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const assistantText = (m: AssistantMessage): string => {
  let out = ""
  for (const block of m.message.content) {
    if (block.type === "text") out += block.text
  }
  return out
}

/**
 * The session id a message carries, if any.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const ids = (all: ReadonlyArray<Message.Message>) => new Set(all.map(Message.sessionIdOf))
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const sessionIdOf = (m: Message): string | undefined => {
  if (m.type === "unknown") return typeof m.raw.session_id === "string" ? m.raw.session_id : undefined
  return m.session_id
}
