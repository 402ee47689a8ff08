/**
 * The schemas of hook callbacks: the events, the input the CLI sends for each and the answers it
 * accepts. The callback API built on them (`Hook.on`, `Hook.deny`, `Hook.Hooks`, …) is in
 * `src/Hook.ts`; both are the public `Hook` namespace.
 *
 * Inputs and outputs are Schemas with the CLI's own wire field names (`hook_event_name`,
 * `tool_input`, `hookSpecificOutput`, `permissionDecision`, `continue`, …). Decoding an input
 * dispatches on `hook_event_name`, validates against that one event and returns the CLI's object
 * itself (fields this version does not model are kept). An event this version does not know
 * becomes `UnknownHookInput` carrying the raw object; a known one that breaks its schema is a
 * `MessageParseError`.
 *
 * Open-ended enumerations (`source`, `trigger`, `reason`, …) are typed as strings, with the known
 * values in the docs: a value added by a newer CLI must not make a hook fail.
 *
 * @since 0.1.0
 */
import { Array as Arr, Either, type ParseResult, Predicate, Schema } from "effect"
import * as Guard from "../internal/schema/guard.js"
import {
  RawObject,
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionalUnknown,
  optionalStrings,
  optionalUnknowns,
  NullOrString,
  optionalRawObject
} from "../internal/schema/schemas.js"
import { MessageParseError } from "../SdkError.js"

// ---------------------------------------------------------------------------------------------
// inputs
// ---------------------------------------------------------------------------------------------

// Fields every event carries. `permission_mode` and the rest are absent on some events.
const BaseInput = {
  session_id: Schema.String,
  transcript_path: Schema.String,
  cwd: Schema.String,
  prompt_id: optionalString,
  permission_mode: optionalString,
  agent_id: optionalString,
  agent_type: optionalString,
  effort: Schema.optional(Schema.Struct({ level: Schema.String }))
}

const ToolCall = Schema.Struct({
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_use_id: Schema.String,
  tool_response: optionalUnknown
})

/**
 * `PreToolUse` hook input: before a tool runs; the answer can allow, deny or rewrite the call.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PreToolUseInput) => input.tool_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PreToolUseInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PreToolUse"),
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_use_id: Schema.String,
  mcp_server: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PreToolUseInput extends Schema.Schema.Type<typeof PreToolUseInput> {}

/**
 * `PostToolUse` hook input: after a tool succeeded.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PostToolUseInput) => input.tool_response
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PostToolUseInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PostToolUse"),
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_response: Schema.Unknown,
  tool_use_id: Schema.String,
  duration_ms: optionalNumber,
  mcp_server: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PostToolUseInput extends Schema.Schema.Type<typeof PostToolUseInput> {}

/**
 * `PostToolUseFailure` hook input: after a tool failed.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PostToolUseFailureInput) => input.error
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PostToolUseFailureInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PostToolUseFailure"),
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_use_id: Schema.String,
  error: Schema.String,
  is_interrupt: optionalBoolean,
  duration_ms: optionalNumber,
  mcp_server: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PostToolUseFailureInput extends Schema.Schema.Type<typeof PostToolUseFailureInput> {}

/**
 * `PostToolBatch` hook input: after a batch of parallel tool calls.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PostToolBatchInput) => input.tool_calls.length
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PostToolBatchInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PostToolBatch"),
  tool_calls: Schema.Array(ToolCall)
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PostToolBatchInput extends Schema.Schema.Type<typeof PostToolBatchInput> {}

/**
 * `Notification` hook input: the CLI shows a notification.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.NotificationInput) => input.message
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const NotificationInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("Notification"),
  message: Schema.String,
  title: optionalString,
  notification_type: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface NotificationInput extends Schema.Schema.Type<typeof NotificationInput> {}

/**
 * `UserPromptSubmit` hook input: a prompt is submitted (`source`: `user`, `sdk`, `system`, `loop_wakeup`, …).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.UserPromptSubmitInput) => input.prompt
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const UserPromptSubmitInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("UserPromptSubmit"),
  prompt: Schema.String,
  source: optionalString,
  session_title: optionalString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface UserPromptSubmitInput extends Schema.Schema.Type<typeof UserPromptSubmitInput> {}

/**
 * `UserPromptExpansion` hook input: a slash command or MCP prompt is expanded (`expansion_type`: `slash_command` or `mcp_prompt`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.UserPromptExpansionInput) => input.command_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const UserPromptExpansionInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("UserPromptExpansion"),
  expansion_type: Schema.String,
  command_name: Schema.String,
  command_args: Schema.String,
  command_source: optionalString,
  prompt: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface UserPromptExpansionInput extends Schema.Schema.Type<typeof UserPromptExpansionInput> {}

/**
 * `SessionStart` hook input: a session starts (`source`: `startup`, `resume`, `clear`, `compact`, `fork`).
 *
 * In stream-json mode (claude 2.1.330) an SDK callback for this event is not called when the CLI
 * starts a session, new or resumed: `startup` and `resume` never reach the SDK. It is called when
 * the conversation restarts inside a running session: after `/clear` (`source: "clear"`) and
 * `/compact` (`source: "compact"`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.SessionStartInput) => input.source
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const SessionStartInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("SessionStart"),
  source: Schema.String,
  model: optionalString,
  session_title: optionalString,
  seconds_since_last_response: optionalNumber,
  context_tokens: optionalNumber,
  prompt_cache_likely_expired: optionalBoolean,
  estimated_cache_write_usd: optionalNumber
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface SessionStartInput extends Schema.Schema.Type<typeof SessionStartInput> {}

/**
 * `SessionEnd` hook input: a session ends.
 *
 * In stream-json mode (claude 2.1.330) an SDK callback for this event is not called when the
 * session closes: the CLI sends no `hook_callback` after stdin ends. It is called for `/clear`
 * (`reason: "clear"`), which ends the conversation and starts a new one in the same process.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.SessionEndInput) => input.reason
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const SessionEndInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("SessionEnd"),
  reason: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface SessionEndInput extends Schema.Schema.Type<typeof SessionEndInput> {}

/**
 * `Stop` hook input: the agent is about to stop.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.StopInput) => input.stop_hook_active
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const StopInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("Stop"),
  stop_hook_active: Schema.Boolean,
  last_assistant_message: optionalString,
  background_tasks: optionalUnknowns,
  session_crons: optionalUnknowns
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface StopInput extends Schema.Schema.Type<typeof StopInput> {}

/**
 * `StopFailure` hook input: the turn ended on an API error.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.StopFailureInput) => input.error
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const StopFailureInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("StopFailure"),
  error: Schema.Unknown,
  error_details: optionalUnknown,
  last_assistant_message: optionalString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface StopFailureInput extends Schema.Schema.Type<typeof StopFailureInput> {}

/**
 * `SubagentStart` hook input: a subagent starts.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.SubagentStartInput) => input.agent_type
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const SubagentStartInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("SubagentStart"),
  agent_id: Schema.String,
  agent_type: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface SubagentStartInput extends Schema.Schema.Type<typeof SubagentStartInput> {}

/**
 * `SubagentStop` hook input: a subagent is about to stop.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.SubagentStopInput) => input.agent_transcript_path
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const SubagentStopInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("SubagentStop"),
  stop_hook_active: Schema.Boolean,
  agent_id: Schema.String,
  agent_transcript_path: Schema.String,
  agent_type: Schema.String,
  last_assistant_message: optionalString,
  background_tasks: optionalUnknowns,
  session_crons: optionalUnknowns
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface SubagentStopInput extends Schema.Schema.Type<typeof SubagentStopInput> {}

/**
 * `PreCompact` hook input: before the conversation is compacted (`trigger`: `manual` or `auto`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PreCompactInput) => input.trigger
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PreCompactInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PreCompact"),
  trigger: Schema.String,
  custom_instructions: NullOrString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PreCompactInput extends Schema.Schema.Type<typeof PreCompactInput> {}

/**
 * `PostCompact` hook input: after the conversation was compacted.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PostCompactInput) => input.compact_summary
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PostCompactInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PostCompact"),
  trigger: Schema.String,
  compact_summary: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PostCompactInput extends Schema.Schema.Type<typeof PostCompactInput> {}

/**
 * `PreModelSwitch` hook input: before the model changes (`source`: `command`, `picker`, `sdk`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PreModelSwitchInput) => input.to_model
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PreModelSwitchInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PreModelSwitch"),
  from_model: Schema.String,
  to_model: Schema.String,
  /** What was asked for: an alias such as `"opus"`, a full model id, or `null` for the default model. */
  requested_model: NullOrString,
  source: Schema.String,
  context_tokens: Schema.Number,
  prompt_cache_warm: Schema.Boolean,
  cache_ttl: Schema.Unknown,
  estimated_cache_write_usd: Schema.Number,
  pricing: Schema.Unknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PreModelSwitchInput extends Schema.Schema.Type<typeof PreModelSwitchInput> {}

/**
 * `PostModelSwitch` hook input: after the model changed (`source` adds `auto` and `resume`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PostModelSwitchInput) => input.from_model
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PostModelSwitchInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PostModelSwitch"),
  from_model: Schema.String,
  to_model: Schema.String,
  /** What was asked for: an alias such as `"opus"`, a full model id, or `null` for the default model. */
  requested_model: NullOrString,
  source: Schema.String,
  context_tokens: Schema.Number,
  prompt_cache_warm: Schema.Boolean,
  cache_ttl: Schema.Unknown,
  estimated_cache_write_usd: Schema.Number,
  pricing: Schema.Unknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PostModelSwitchInput extends Schema.Schema.Type<typeof PostModelSwitchInput> {}

/**
 * `PermissionRequest` hook input: the CLI is about to ask for a permission; the answer can decide it.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PermissionRequestInput) => input.tool_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PermissionRequestInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PermissionRequest"),
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  permission_suggestions: optionalUnknowns,
  mcp_server: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PermissionRequestInput extends Schema.Schema.Type<typeof PermissionRequestInput> {}

/**
 * `PermissionDenied` hook input: a tool use was denied.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.PermissionDeniedInput) => input.reason
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const PermissionDeniedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("PermissionDenied"),
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_use_id: Schema.String,
  reason: Schema.String,
  mcp_server: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface PermissionDeniedInput extends Schema.Schema.Type<typeof PermissionDeniedInput> {}

/**
 * `Setup` hook input: repository setup runs (`trigger`: `init` or `maintenance`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.SetupInput) => input.trigger
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const SetupInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("Setup"),
  trigger: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface SetupInput extends Schema.Schema.Type<typeof SetupInput> {}

/**
 * `TeammateIdle` hook input: a teammate became idle (deprecated by the CLI).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.TeammateIdleInput) => input.teammate_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const TeammateIdleInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("TeammateIdle"),
  teammate_name: Schema.String,
  team_name: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface TeammateIdleInput extends Schema.Schema.Type<typeof TeammateIdleInput> {}

/**
 * `TaskCreated` hook input: a task was created (deprecated by the CLI).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.TaskCreatedInput) => input.task_subject
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const TaskCreatedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("TaskCreated"),
  task_id: Schema.String,
  task_subject: Schema.String,
  task_description: optionalString,
  teammate_name: optionalString,
  team_name: optionalString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface TaskCreatedInput extends Schema.Schema.Type<typeof TaskCreatedInput> {}

/**
 * `TaskCompleted` hook input: a task was completed (deprecated by the CLI).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.TaskCompletedInput) => input.task_id
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const TaskCompletedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("TaskCompleted"),
  task_id: Schema.String,
  task_subject: Schema.String,
  task_description: optionalString,
  teammate_name: optionalString,
  team_name: optionalString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface TaskCompletedInput extends Schema.Schema.Type<typeof TaskCompletedInput> {}

/**
 * `Elicitation` hook input: an MCP server asks the user for input.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.ElicitationInput) => input.mcp_server_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const ElicitationInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("Elicitation"),
  mcp_server_name: Schema.String,
  message: Schema.String,
  mode: optionalString,
  url: optionalString,
  elicitation_id: optionalString,
  requested_schema: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface ElicitationInput extends Schema.Schema.Type<typeof ElicitationInput> {}

/**
 * `ElicitationResult` hook input: the user answered an MCP elicitation.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.ElicitationResultInput) => input.action
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const ElicitationResultInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("ElicitationResult"),
  mcp_server_name: Schema.String,
  elicitation_id: optionalString,
  mode: optionalString,
  action: Schema.String,
  content: optionalUnknown
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface ElicitationResultInput extends Schema.Schema.Type<typeof ElicitationResultInput> {}

/**
 * `ConfigChange` hook input: a settings file changed (`source`: `user_settings`, `project_settings`, `local_settings`, `policy_settings`, `skills`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.ConfigChangeInput) => input.source
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const ConfigChangeInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("ConfigChange"),
  source: Schema.String,
  file_path: optionalString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface ConfigChangeInput extends Schema.Schema.Type<typeof ConfigChangeInput> {}

/**
 * `WorktreeCreate` hook input: a git worktree is to be created; the answer must give its path.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.WorktreeCreateInput) => input.name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const WorktreeCreateInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("WorktreeCreate"),
  name: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface WorktreeCreateInput extends Schema.Schema.Type<typeof WorktreeCreateInput> {}

/**
 * `WorktreeRemove` hook input: a git worktree is to be removed.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.WorktreeRemoveInput) => input.worktree_path
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const WorktreeRemoveInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("WorktreeRemove"),
  worktree_path: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface WorktreeRemoveInput extends Schema.Schema.Type<typeof WorktreeRemoveInput> {}

/**
 * `InstructionsLoaded` hook input: an instructions file (CLAUDE.md, rules) was loaded.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.InstructionsLoadedInput) => input.file_path
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const InstructionsLoadedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("InstructionsLoaded"),
  file_path: Schema.String,
  memory_type: Schema.String,
  load_reason: Schema.String,
  globs: optionalStrings,
  trigger_file_path: optionalString,
  parent_file_path: optionalString
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface InstructionsLoadedInput extends Schema.Schema.Type<typeof InstructionsLoadedInput> {}

/**
 * `CwdChanged` hook input: the working directory changed.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.CwdChangedInput) => input.new_cwd
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const CwdChangedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("CwdChanged"),
  old_cwd: Schema.String,
  new_cwd: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface CwdChangedInput extends Schema.Schema.Type<typeof CwdChangedInput> {}

/**
 * `FileChanged` hook input: a watched file changed (`event`: `change`, `add`, `unlink`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.FileChangedInput) => input.file_path
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const FileChangedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("FileChanged"),
  file_path: Schema.String,
  event: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface FileChangedInput extends Schema.Schema.Type<typeof FileChangedInput> {}

/**
 * `DirectoryAdded` hook input: a directory was added to the session (`source`: `slash_command`, `register_repo_root`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.DirectoryAddedInput) => input.directory
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const DirectoryAddedInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("DirectoryAdded"),
  directory: Schema.String,
  source: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface DirectoryAddedInput extends Schema.Schema.Type<typeof DirectoryAddedInput> {}

/**
 * `MessageDisplay` hook input: an assistant message is displayed, in deltas.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const read = (input: Hook.MessageDisplayInput) => input.delta
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const MessageDisplayInput = Schema.Struct({
  ...BaseInput,
  hook_event_name: Schema.Literal("MessageDisplay"),
  turn_id: Schema.String,
  message_id: Schema.String,
  index: Schema.Number,
  final: Schema.Boolean,
  delta: Schema.String
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface MessageDisplayInput extends Schema.Schema.Type<typeof MessageDisplayInput> {}

/**
 * The input of an event this version does not know, with the CLI's object unchanged in `raw`.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const event = (input: Hook.UnknownHookInput) => input.raw.hook_event_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const UnknownHookInput = Schema.Struct({
  hook_event_name: Schema.Literal("Unknown"),
  raw: RawObject
})

/**
 * @since 0.1.0
 * @category inputs
 */
export interface UnknownHookInput extends Schema.Schema.Type<typeof UnknownHookInput> {}

// Every modelled event's input, in one place: `HookInput`, `HookEvent` and the decoder's
// dispatch table are derived from it.
const knownInputs = [
  PreToolUseInput,
  PostToolUseInput,
  PostToolUseFailureInput,
  PostToolBatchInput,
  NotificationInput,
  UserPromptSubmitInput,
  UserPromptExpansionInput,
  SessionStartInput,
  SessionEndInput,
  StopInput,
  StopFailureInput,
  SubagentStartInput,
  SubagentStopInput,
  PreCompactInput,
  PostCompactInput,
  PreModelSwitchInput,
  PostModelSwitchInput,
  PermissionRequestInput,
  PermissionDeniedInput,
  SetupInput,
  TeammateIdleInput,
  TaskCreatedInput,
  TaskCompletedInput,
  ElicitationInput,
  ElicitationResultInput,
  ConfigChangeInput,
  WorktreeCreateInput,
  WorktreeRemoveInput,
  InstructionsLoadedInput,
  CwdChangedInput,
  FileChangedInput,
  DirectoryAddedInput,
  MessageDisplayInput
] as const

/**
 * What a hook callback receives, discriminated by `hook_event_name`.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const describe = (input: Hook.HookInput): string =>
 *   input.hook_event_name === "PreToolUse" ? `about to run ${input.tool_name}` : input.hook_event_name
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export const HookInput = Schema.Union(...knownInputs, UnknownHookInput)

/**
 * @since 0.1.0
 * @category inputs
 */
export type HookInput = Schema.Schema.Type<typeof HookInput>

/**
 * Every hook event the CLI knows: the `hook_event_name`s of `HookInput`'s members.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const events: ReadonlyArray<Hook.HookEvent> = Hook.HookEvent.literals
 * ```
 *
 * @since 0.1.0
 * @category events
 */
export const HookEvent = Schema.Literal(...Arr.map(knownInputs, (input) => input.fields.hook_event_name.literals[0]))

/**
 * @since 0.1.0
 * @category events
 */
export type HookEvent = Schema.Schema.Type<typeof HookEvent>

/**
 * The input of one event.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const command = (input: Hook.HookInputFor<"PreToolUse">) => input.tool_input
 * ```
 *
 * @since 0.1.0
 * @category inputs
 */
export type HookInputFor<K extends HookEvent> = Extract<HookInput, { readonly hook_event_name: K }>

const byEvent: ReadonlyMap<string, Guard.Member<HookInput>> = new Map(
  knownInputs.map((input) => [input.fields.hook_event_name.literals[0], Guard.member(input)])
)

/**
 * Decodes the `input` of a `hook_callback` request. Returns the CLI's object itself when valid,
 * an `UnknownHookInput` for an event this version does not know, and a `MessageParseError`
 * (with the raw value) for a known event that breaks its schema.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Hook } from "effect-claude-agent"
 *
 * const decoded = Hook.decodeInput({ hook_event_name: "BrandNewEvent", session_id: "s" })
 * // Either.right({ hook_event_name: "Unknown", raw: { hook_event_name: "BrandNewEvent", session_id: "s" } })
 * Either.isRight(decoded) // true
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeInput = (raw: unknown): Either.Either<HookInput, MessageParseError> => {
  if (!Predicate.isRecord(raw)) {
    return Either.left(new MessageParseError({ detail: "a hook input must be a JSON object", raw }))
  }
  const event = raw.hook_event_name
  if (typeof event !== "string") {
    return Either.left(new MessageParseError({ detail: "a hook input must have a string \"hook_event_name\"", raw }))
  }
  const m = byEvent.get(event)
  if (m === undefined) return Either.right({ hook_event_name: "Unknown", raw })
  if (m.is(raw)) return Either.right(raw)
  return Either.left(new MessageParseError({ detail: `invalid ${event} hook input: ${m.explain(raw)}`, raw }))
}

// ---------------------------------------------------------------------------------------------
// outputs
// ---------------------------------------------------------------------------------------------

const OptionalString = optionalString
const OptionalBoolean = optionalBoolean
const OptionalStrings = optionalStrings

// An answer's `hookEventName` is its input's `hook_event_name` Schema: one Literal per event,
// shared by the event's input and output (two dozen fewer Schemas made at import).
interface EventNamed<E extends HookEvent> {
  readonly fields: { readonly hook_event_name: Schema.Literal<[E]> }
}

const contextOnly = <E extends HookEvent>(input: EventNamed<E>) =>
  Schema.Struct({ hookEventName: input.fields.hook_event_name, additionalContext: OptionalString })

const watchPaths = <E extends HookEvent>(input: EventNamed<E>) =>
  Schema.Struct({ hookEventName: input.fields.hook_event_name, watchPaths: OptionalStrings })

const ElicitationAnswer = {
  action: Schema.optional(Schema.Literal("accept", "decline", "cancel")),
  content: optionalRawObject
}

/**
 * The event-specific part of a hook's answer, discriminated by `hookEventName` (which must be the
 * event of the input). Events missing here take no event-specific answer.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const specific: Hook.HookSpecificOutput = {
 *   hookEventName: "PreToolUse",
 *   permissionDecision: "deny",
 *   permissionDecisionReason: "no network access"
 * }
 * ```
 *
 * @since 0.1.0
 * @category outputs
 */
export const HookSpecificOutput = Schema.Union(
  Schema.Struct({
    hookEventName: PreToolUseInput.fields.hook_event_name,
    /** `defer` ends the turn at this call without running it (`terminal_reason: "tool_deferred"`); see `Hook.defer`. */
    permissionDecision: Schema.optional(Schema.Literal("allow", "deny", "ask", "defer")),
    /** Shown to the model on `deny` (as `PreToolUse:<tool> hook error: <reason>`). */
    permissionDecisionReason: OptionalString,
    /** Replaces the tool's input. */
    updatedInput: optionalRawObject,
    additionalContext: OptionalString
  }),
  Schema.Struct({
    hookEventName: PostToolUseInput.fields.hook_event_name,
    additionalContext: OptionalString,
    classifierContext: OptionalString,
    updatedToolOutput: optionalUnknown,
    updatedMCPToolOutput: optionalUnknown
  }),
  contextOnly(PostToolUseFailureInput),
  contextOnly(PostToolBatchInput),
  contextOnly(NotificationInput),
  Schema.Struct({
    hookEventName: UserPromptSubmitInput.fields.hook_event_name,
    additionalContext: OptionalString,
    sessionTitle: OptionalString,
    suppressOriginalPrompt: OptionalBoolean
  }),
  Schema.Struct({
    hookEventName: UserPromptExpansionInput.fields.hook_event_name,
    additionalContext: OptionalString,
    suppressOriginalPrompt: OptionalBoolean
  }),
  Schema.Struct({
    hookEventName: SessionStartInput.fields.hook_event_name,
    additionalContext: OptionalString,
    initialUserMessage: OptionalString,
    sessionTitle: OptionalString,
    watchPaths: OptionalStrings,
    reloadSkills: OptionalBoolean
  }),
  contextOnly(StopInput),
  contextOnly(SubagentStartInput),
  contextOnly(SubagentStopInput),
  Schema.Struct({
    hookEventName: PreModelSwitchInput.fields.hook_event_name,
    permissionDecision: Schema.optional(Schema.Literal("allow", "deny", "ask")),
    permissionDecisionReason: OptionalString
  }),
  contextOnly(PostModelSwitchInput),
  Schema.Struct({
    hookEventName: PermissionRequestInput.fields.hook_event_name,
    decision: Schema.Union(
      Schema.Struct({
        behavior: Schema.Literal("allow"),
        updatedInput: optionalRawObject,
        updatedPermissions: optionalUnknowns
      }),
      Schema.Struct({
        behavior: Schema.Literal("deny"),
        message: OptionalString,
        interrupt: OptionalBoolean
      })
    )
  }),
  Schema.Struct({ hookEventName: PermissionDeniedInput.fields.hook_event_name, retry: OptionalBoolean }),
  contextOnly(SetupInput),
  Schema.Struct({ hookEventName: ElicitationInput.fields.hook_event_name, ...ElicitationAnswer }),
  Schema.Struct({ hookEventName: ElicitationResultInput.fields.hook_event_name, ...ElicitationAnswer }),
  Schema.Struct({ hookEventName: WorktreeCreateInput.fields.hook_event_name, worktreePath: Schema.String }),
  watchPaths(CwdChangedInput),
  watchPaths(FileChangedInput),
  Schema.Struct({ hookEventName: MessageDisplayInput.fields.hook_event_name, displayContent: OptionalString })
)

/**
 * @since 0.1.0
 * @category outputs
 */
export type HookSpecificOutput = Schema.Schema.Type<typeof HookSpecificOutput>

/**
 * A hook's synchronous answer. Every field is optional: `{}` means "no opinion".
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const halt: Hook.SyncHookOutput = { continue: false, stopReason: "budget reached" }
 * ```
 *
 * @since 0.1.0
 * @category outputs
 */
export const SyncHookOutput = Schema.Struct({
  /** `false` stops the session after this hook (with `stopReason` shown to the user). */
  continue: OptionalBoolean,
  /** Hides the hook's output from the transcript. */
  suppressOutput: OptionalBoolean,
  stopReason: OptionalString,
  /** The legacy decision field; prefer `hookSpecificOutput`. */
  decision: Schema.optional(Schema.Literal("approve", "block")),
  /** A message shown to the user. */
  systemMessage: OptionalString,
  /** Terminal escape sequence to emit (OSC 0/1/2/9/99/777 ending with BEL only). */
  terminalSequence: OptionalString,
  reason: OptionalString,
  hookSpecificOutput: Schema.optional(HookSpecificOutput)
})

/**
 * @since 0.1.0
 * @category outputs
 */
export interface SyncHookOutput extends Schema.Schema.Type<typeof SyncHookOutput> {}

/**
 * A hook's asynchronous answer: the CLI goes on without waiting for the hook.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const later: Hook.AsyncHookOutput = { async: true, asyncTimeout: 30000 }
 * ```
 *
 * @since 0.1.0
 * @category outputs
 */
export const AsyncHookOutput = Schema.Struct({
  async: Schema.Literal(true),
  /** Passed to the CLI unchanged. */
  asyncTimeout: optionalNumber
})

/**
 * @since 0.1.0
 * @category outputs
 */
export interface AsyncHookOutput extends Schema.Schema.Type<typeof AsyncHookOutput> {}

/**
 * What a hook callback answers.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer: Hook.HookOutput = { systemMessage: "checked by policy" }
 * ```
 *
 * @since 0.1.0
 * @category outputs
 */
export const HookOutput = Schema.Union(AsyncHookOutput, SyncHookOutput)

/**
 * @since 0.1.0
 * @category outputs
 */
export type HookOutput = Schema.Schema.Type<typeof HookOutput>

const hookOutput = Guard.member(HookOutput)

// A JSON-like copy without `undefined` members: optional fields set to `undefined` are absent on
// the wire, as the CLI expects. Only plain objects and arrays are walked.
const dropUndefined = (u: unknown): unknown => {
  if (Array.isArray(u)) return u.map(dropUndefined)
  if (!Predicate.isRecord(u)) return u
  const proto: unknown = Object.getPrototypeOf(u)
  if (proto !== Object.prototype && proto !== null) return u
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(u)) {
    if (value !== undefined) out[key] = dropUndefined(value)
  }
  return out
}

// Whether `dropUndefined` would change anything: most answers have no `undefined` member, and
// are then sent as they are, without a copy.
const hasUndefined = (u: unknown): boolean => {
  if (Array.isArray(u)) return u.some(hasUndefined)
  if (!Predicate.isRecord(u)) return false
  const proto: unknown = Object.getPrototypeOf(u)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key in u) {
    if (!Object.hasOwn(u, key)) continue
    const value = u[key]
    if (value === undefined || hasUndefined(value)) return true
  }
  return false
}

/**
 * Checks a hook's answer against `HookOutput` and returns the object to put in the
 * `control_response`, without `undefined` fields. Fields this version does not model are kept.
 * A value that breaks the schema (possible from untyped code) is a `ParseError`.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const wire = Hook.encodeOutput(Hook.deny("no network access"))
 * // Either.right({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", … } })
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeOutput = (output: HookOutput): Either.Either<unknown, ParseResult.ParseError> =>
  Either.map(hookOutput.validate(output), () => hasUndefined(output) ? dropUndefined(output) : output)
