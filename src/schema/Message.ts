/**
 * The messages the Claude Code CLI writes on stdout (everything but the control protocol), as
 * Schemas with the CLI's own wire field names: `type`, `subtype`, `message.content`,
 * `session_id`, `is_error`, `result`, …
 *
 * Decoding discriminates on `type` (and `subtype` for `system` and `result`) first, validates
 * against that one member, and returns the CLI's object itself: fields this version does not
 * model are kept, and nothing is copied on the hot path. A `type` or `subtype` this version does
 * not know becomes `UnknownMessage` carrying the raw object; a known one that breaks its schema is
 * a `MessageParseError` with the raw value.
 *
 * @since 0.1.0
 */
import { Either, Predicate, Schema } from "effect"
import * as Guard from "../internal/guard.js"
import { RawObject } from "../internal/schemas.js"
import { MessageParseError } from "../SdkError.js"
import * as ContentBlock from "./ContentBlock.js"

const OptionalString = Schema.optional(Schema.String)
const OptionalNullableString = Schema.optional(Schema.NullOr(Schema.String))
const OptionalNumber = Schema.optional(Schema.Number)

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
  cache_creation_input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: Schema.optional(Schema.NullOr(Schema.Number))
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
  error: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface AssistantMessage extends Schema.Schema.Type<typeof AssistantMessage> {}

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
  isReplay: Schema.optional(Schema.Boolean),
  isSynthetic: Schema.optional(Schema.Boolean),
  tool_use_result: Schema.optional(Schema.Unknown)
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
  parent_tool_use_id: Schema.NullOr(Schema.String),
  session_id: Schema.String,
  /** With a `uuid` the CLI reports `command_lifecycle` messages for this message. */
  uuid: OptionalString,
  /**
   * `true`: the text is delivered as written, without `@file` expansion or slash-command
   * dispatch (for text the end user did not type). The `verbatimPrompts` option sets it on every
   * message.
   */
  client_composed: Schema.optional(Schema.Boolean)
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
    ...(options.clientComposed === undefined ? {} : { client_composed: options.clientComposed })
  }
}

// ---------------------------------------------------------------------------------------------
// result
// ---------------------------------------------------------------------------------------------

const resultFields = {
  type: Schema.Literal("result"),
  is_error: Schema.Boolean,
  num_turns: Schema.Number,
  duration_ms: Schema.Number,
  duration_api_ms: OptionalNumber,
  total_cost_usd: OptionalNumber,
  usage: Schema.optional(Usage),
  modelUsage: Schema.optional(RawObject),
  permission_denials: Schema.optional(Schema.Array(Schema.Unknown)),
  stop_reason: OptionalNullableString,
  /** Why the run ended: `completed`, `api_error`, `aborted_streaming`, `aborted_tools`, `max_turns`, … */
  terminal_reason: OptionalNullableString,
  /** The HTTP status of the API error that ended the turn, if one did. */
  api_error_status: Schema.optional(Schema.NullOr(Schema.Number)),
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
  structured_output: Schema.optional(Schema.Unknown)
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
  errors: Schema.optional(Schema.Array(Schema.String))
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
  tools: Schema.Array(Schema.String),
  mcp_servers: Schema.Array(Schema.Struct({ name: Schema.String, status: Schema.String })),
  model: Schema.String,
  permissionMode: Schema.String,
  slash_commands: Schema.optional(Schema.Array(Schema.String)),
  apiKeySource: OptionalString,
  claude_code_version: OptionalString,
  output_style: OptionalString,
  agents: Schema.optional(Schema.Array(Schema.Unknown)),
  skills: Schema.optional(Schema.Array(Schema.Unknown)),
  plugins: Schema.optional(Schema.Array(Schema.Unknown)),
  capabilities: Schema.optional(Schema.Array(Schema.String))
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
  status: Schema.NullOr(Schema.String),
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
  error: Schema.optional(Schema.Unknown)
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
 * `running`, `requires_action` (waiting for a permission answer) or `idle`.
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
  state: Schema.String
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

/**
 * System messages this version knows by name but does not model field by field (hook and task
 * progress, notifications, title changes, …). Their fields are on the object as the CLI sent them.
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
export const SystemEvent = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal(
    "informational",
    "commands_changed",
    "session_title_changed",
    "hook_started",
    "hook_progress",
    "hook_response",
    "task_started",
    "task_progress",
    "task_notification",
    "task_updated",
    "files_persisted",
    "local_command_output",
    "elicitation_complete",
    "notification",
    "memory_recall",
    "plugin_install",
    "mirror_error"
  ),
  session_id: OptionalString,
  uuid: OptionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemEvent extends Schema.Schema.Type<typeof SystemEvent> {}

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
  SystemEvent
)

/**
 * @since 0.1.0
 * @category models
 */
export type SystemMessage = Schema.Schema.Type<typeof SystemMessage>

// ---------------------------------------------------------------------------------------------
// other types
// ---------------------------------------------------------------------------------------------

/**
 * A raw Messages API streaming event (`includePartialMessages`): `message_start`,
 * `content_block_delta` (`text_delta`, `thinking_delta`, `input_json_delta`, …), `message_stop`, …
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const isDelta = (m: Message.StreamEvent) => m.event.type === "content_block_delta"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamEvent = Schema.Struct({
  type: Schema.Literal("stream_event"),
  event: Schema.Struct({ type: Schema.String }),
  parent_tool_use_id: OptionalNullableString,
  session_id: Schema.String,
  uuid: OptionalString
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
export const textDelta = (m: StreamEvent): string | undefined => {
  if (m.event.type !== "content_block_delta" || !("delta" in m.event)) return undefined
  const delta = m.event.delta
  return Predicate.isRecord(delta) && delta.type === "text_delta" && typeof delta.text === "string" ? delta.text : undefined
}

/**
 * `rate_limit_event`: the account's rate-limit state changed.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 * const info = (m: Message.RateLimitEvent) => m.rate_limit_info
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RateLimitEvent = Schema.Struct({
  type: Schema.Literal("rate_limit_event"),
  rate_limit_info: Schema.Unknown,
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
  preceding_tool_use_ids: Schema.optional(Schema.Array(Schema.String)),
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
  output: Schema.optional(Schema.Array(Schema.String)),
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
  AuthStatus
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

// Unknown blocks are wrapped so `ContentBlock` stays a discriminated union; the message is
// copied only when that happens.
const normalizeContent = (raw: { readonly [key: string]: unknown }): unknown => {
  const message = raw.message
  if (!Predicate.isRecord(message)) return raw
  const content = message.content
  if (!Array.isArray(content)) return raw
  let copy: Array<unknown> | undefined
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (Predicate.isRecord(block) && !ContentBlock.isKnownType(block.type)) {
      copy ??= content.slice()
      copy[i] = { type: "unknown", raw: block }
    }
  }
  return copy === undefined ? raw : { ...raw, message: { ...message, content: copy } }
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
  const candidate = type === "assistant" || type === "user" ? normalizeContent(raw) : raw
  if (m.is(candidate)) return Either.right(candidate)
  const label = typeof subtype === "string" ? `${type}/${subtype}` : String(type)
  return Either.left(new MessageParseError({ detail: `invalid ${label} message: ${m.explain(candidate)}`, raw }))
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
