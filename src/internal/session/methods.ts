/**
 * The session's methods that are one or two control requests each, and `send`.
 *
 * @internal
 */
import { Effect } from "effect"
import type { AgentSession, InterruptOptions, Prompt } from "../../AgentSession.js"
import * as Control from "../../schema/Control.js"
import * as Message from "../../schema/Message.js"
import type { BudgetExceededError } from "../../SdkError.js"
import type { ControlChannelShape } from "../../services/ControlChannel.js"
import type { TransportShape } from "../../services/Transport.js"
import * as Initialize from "./initialize.js"

// `Effect.fn(name)` captures a stack trace for its definition site when called: once here, not
// once per method per session (≈ 20 per `make`). Each session's methods are still made by
// `Effect.fn`, so the spans and their call-site stack traces are the same.
const traced = {
  send: Effect.fn("AgentSession.send"),
  interrupt: Effect.fn("AgentSession.interrupt"),
  setPermissionMode: Effect.fn("AgentSession.setPermissionMode"),
  setModel: Effect.fn("AgentSession.setModel"),
  setMaxThinkingTokens: Effect.fn("AgentSession.setMaxThinkingTokens"),
  mcpServerStatus: Effect.fn("AgentSession.mcpServerStatus"),
  getContextUsage: Effect.fn("AgentSession.getContextUsage"),
  reinitialize: Effect.fn("AgentSession.reinitialize"),
  readMcpResource: Effect.fn("AgentSession.readMcpResource"),
  applyFlagSettings: Effect.fn("AgentSession.applyFlagSettings"),
  updateSettings: Effect.fn("AgentSession.updateSettings"),
  reloadPlugins: Effect.fn("AgentSession.reloadPlugins"),
  reloadSkills: Effect.fn("AgentSession.reloadSkills"),
  reloadOutputStyles: Effect.fn("AgentSession.reloadOutputStyles"),
  backgroundTasks: Effect.fn("AgentSession.backgroundTasks"),
  setMcpPermissionModeOverride: Effect.fn("AgentSession.setMcpPermissionModeOverride"),
  rewindFiles: Effect.fn("AgentSession.rewindFiles"),
  stopTask: Effect.fn("AgentSession.stopTask"),
  reconnectMcpServer: Effect.fn("AgentSession.reconnectMcpServer"),
  toggleMcpServer: Effect.fn("AgentSession.toggleMcpServer")
}

const isUserFrame = (prompt: Prompt): prompt is Message.UserMessageInput =>
  typeof prompt === "object" && "type" in prompt && prompt.type === "user"

// Every user message carries a uuid: it is the id `rewindFiles` takes, and `interrupt` reports
// queued messages by it. (With one, the CLI also reports `command_lifecycle` messages.)
const toUserFrame = (prompt: Prompt, verbatim: boolean): Message.UserMessageInput & { readonly uuid: string } => {
  const frame = isUserFrame(prompt) ? prompt : Message.userMessage(prompt)
  return { ...frame, uuid: frame.uuid ?? crypto.randomUUID(), ...(verbatim ? { client_composed: true } : {}) }
}

/**
 * Makes `send`: writes the user frame and opens its turn.
 *
 * @internal
 */
export const send = (
  transport: TransportShape,
  started: Effect.Effect<void>,
  verbatim: boolean,
  admit?: Effect.Effect<void, BudgetExceededError> | undefined
): AgentSession["send"] =>
  traced.send(function*(prompt: Prompt) {
    if (admit !== undefined) yield* admit
    const frame = toUserFrame(prompt, verbatim)
    yield* transport.send(frame)
    yield* started
    return frame.uuid
  })

/**
 * Makes `reinitialize`: the same fields as the first `initialize`, with the servers served now.
 *
 * @internal
 */
export const reinitialize = (
  control: ControlChannelShape,
  transport: TransportShape,
  payload: Effect.Effect<Control.InitializePayload>
): AgentSession["reinitialize"] =>
  traced.reinitialize(function*(options) {
    return yield* Initialize.send(control, transport, yield* payload, options)
  })

/**
 * The control methods, each the request of its `Control` descriptor.
 *
 * @internal
 */
export type ControlMethods = Pick<
  AgentSession,
  | "interrupt"
  | "setPermissionMode"
  | "setModel"
  | "setMaxThinkingTokens"
  | "mcpServerStatus"
  | "getContextUsage"
  | "readMcpResource"
  | "applyFlagSettings"
  | "updateSettings"
  | "reloadPlugins"
  | "reloadSkills"
  | "reloadOutputStyles"
  | "backgroundTasks"
  | "setMcpPermissionModeOverride"
  | "rewindFiles"
  | "stopTask"
  | "reconnectMcpServer"
  | "toggleMcpServer"
>

/**
 * Makes the control methods over the session's channel.
 *
 * @internal
 */
export const make = (control: ControlChannelShape): ControlMethods => ({
  interrupt: traced.interrupt(function*(options?: InterruptOptions) {
    return yield* control.request(
      Control.Interrupt,
      options?.cancelQueued === true ? { cancel_queued: true } : {},
      options
    )
  }),
  setPermissionMode: traced.setPermissionMode(function*(mode, options) {
    return yield* control.request(Control.SetPermissionMode, { mode }, options)
  }),
  setModel: traced.setModel(function*(model, options) {
    return yield* control.request(Control.SetModel, model === undefined ? {} : { model }, options)
  }),
  setMaxThinkingTokens: traced.setMaxThinkingTokens(function*(tokens, display, options) {
    yield* control.request(
      Control.SetMaxThinkingTokens,
      display === undefined
        ? { max_thinking_tokens: tokens }
        : { max_thinking_tokens: tokens, thinking_display: display },
      options
    )
  }),
  mcpServerStatus: traced.mcpServerStatus(function*(options) {
    return yield* control.request(Control.McpStatus, {}, options)
  }),
  getContextUsage: traced.getContextUsage(function*(options) {
    return yield* control.request(
      Control.GetContextUsage,
      options?.detail === undefined ? {} : { detail: options.detail },
      options
    )
  }),
  readMcpResource: traced.readMcpResource(function*(serverName, uri, options) {
    return yield* control.request(Control.McpReadResource, { serverName, uri }, options)
  }),
  applyFlagSettings: traced.applyFlagSettings(function*(settings, options) {
    yield* control.request(Control.ApplyFlagSettings, { settings }, options)
  }),
  updateSettings: traced.updateSettings(function*(source, settings, options) {
    yield* control.request(Control.UpdateSettings, { source, settings }, options)
  }),
  reloadPlugins: traced.reloadPlugins(function*(options) {
    return yield* control.request(Control.ReloadPlugins, {
      ...(options?.holdOnCacheImpact === undefined ? {} : { hold_on_cache_impact: options.holdOnCacheImpact }),
      ...(options?.addPlugins === undefined ? {} : { add_plugins: options.addPlugins }),
      ...(options?.refuseIfBusy === undefined ? {} : { refuse_if_busy: options.refuseIfBusy })
    }, options)
  }),
  reloadSkills: traced.reloadSkills(function*(options) {
    return yield* control.request(Control.ReloadSkills, {}, options)
  }),
  reloadOutputStyles: traced.reloadOutputStyles(function*(options) {
    return yield* control.request(Control.ReloadOutputStyles, {}, options)
  }),
  backgroundTasks: traced.backgroundTasks(function*(toolUseId, options) {
    const reply = yield* control.request(
      Control.BackgroundTasks,
      toolUseId === undefined ? {} : { tool_use_id: toolUseId },
      options
    )
    // The CLI says `false` only when a given tool use matched nothing; otherwise it sends nothing.
    return reply.backgrounded ?? true
  }),
  setMcpPermissionModeOverride: traced.setMcpPermissionModeOverride(function*(serverName, mode, options) {
    return yield* control.request(Control.SetMcpPermissionModeOverride, { serverName, mode }, options)
  }),
  rewindFiles: traced.rewindFiles(function*(userMessageId, options) {
    // The CLI answers "cannot rewind" as data to a dry run but as an error to the real call:
    // asking the dry run first makes it data in both cases.
    const check = yield* control.request(
      Control.RewindFiles,
      { user_message_id: userMessageId, dry_run: true },
      options
    )
    if (options?.dryRun === true || !check.canRewind) return check
    return yield* control.request(Control.RewindFiles, { user_message_id: userMessageId }, options)
  }),
  stopTask: traced.stopTask(function*(taskId, options) {
    yield* control.request(Control.StopTask, { task_id: taskId }, options)
  }),
  reconnectMcpServer: traced.reconnectMcpServer(function*(serverName, options) {
    yield* control.request(Control.McpReconnect, { serverName }, options)
  }),
  toggleMcpServer: traced.toggleMcpServer(function*(serverName, enabled, options) {
    yield* control.request(Control.McpToggle, { serverName, enabled }, options)
  })
})
