/**
 * The fake CLI's answers to the SDK's control requests: entries typed by the `Control`
 * descriptors (payload decoded, answer encoded), and the CLI 2.1.330's answers as the default
 * table.
 *
 * @internal
 */
import { Effect, Either, Predicate, Schema } from "effect"
import * as Control from "../../schema/Control.js"
import type { Answer, ControlFailure, FakeCliHandle, JsonObject } from "../FakeCli.js"

/** @internal */
export const AnswerTypeId: unique symbol = Symbol.for("effect-claude-agent/testing/FakeCli/Answer")

/** @internal */
export const controlFailure = (error: string, errorCode?: string): ControlFailure => ({
  _tag: "ControlFailure",
  error,
  ...(errorCode !== undefined ? { errorCode } : {})
})

/** @internal */
export const isControlFailure = (u: unknown): u is ControlFailure =>
  Predicate.isRecord(u) && u._tag === "ControlFailure"

/**
 * What the CLI writes for one control request: the encoded `response` (`undefined`: no
 * `response` key) or an error.
 *
 * @internal
 */
export type Reply = Either.Either<unknown, ControlFailure>

/**
 * What the default answers remember: the MCP servers the SDK has set (`mcp_set_servers`
 * replaces the `initialize` request's `sdkMcpServers` and its own earlier set, as the CLI does),
 * and whether the process has been claimed.
 *
 * @internal
 */
export interface DefaultState {
  mcpServers: ReadonlyArray<string>
  /** Whether a `claim_session` has been accepted: the CLI accepts one per parked process. */
  claimed: boolean
}

/**
 * What an entry runs with: the fake, what the default answers need, and the default table's reply
 * to the same request.
 *
 * @internal
 */
export interface AnswerContext {
  readonly cli: FakeCliHandle
  readonly pid: number
  readonly state: DefaultState
  readonly byDefault: Effect.Effect<Reply>
}

/** @internal */
export const decodeOptions = { onExcessProperty: "preserve" } as const

// Decodes the request's fields with the descriptor's payload Schema; a request that does not
// decode is refused, as a CLI refuses what it cannot read.
const entry = <R extends Control.Request.Any>(
  descriptor: R,
  run: (payload: Control.Request.Payload<R>, context: AnswerContext) => Effect.Effect<Reply>
): Answer => {
  const decode = Schema.decodeUnknown(descriptor.payload, decodeOptions)
  return {
    [AnswerTypeId]: AnswerTypeId,
    descriptor,
    run: (fields, context) =>
      Effect.matchEffect(decode(fields), {
        onFailure: (error) =>
          Effect.succeed(Either.left(controlFailure(`Invalid ${descriptor.subtype} request: ${error.message}`))),
        onSuccess: (payload) => run(payload, context)
      })
  }
}

// Encodes a typed answer with the descriptor's success Schema. A value the Schema refuses (a
// refinement the type does not show) is answered as an error naming the fault, which the test
// then sees instead of a frame the real CLI would never write.
const encodeReply = <R extends Control.Request.Any>(descriptor: R) => {
  const encode = Schema.encode(descriptor.success, decodeOptions)
  return (answer: Control.Request.Success<R> | ControlFailure): Effect.Effect<Reply> =>
    isControlFailure(answer)
      ? Effect.succeed(Either.left(answer))
      : Effect.match(encode(answer), {
        onFailure: (error) =>
          Either.left(controlFailure(`FakeCli: the answer to ${descriptor.subtype} does not encode: ${error.message}`)),
        onSuccess: Either.right
      })
}

/**
 * An entry whose handler answers with the descriptor's success type.
 *
 * @internal
 */
export const typed = <R extends Control.Request.Any>(
  descriptor: R,
  handler: (
    payload: Control.Request.Payload<R>,
    context: AnswerContext
  ) => Effect.Effect<Control.Request.Success<R> | ControlFailure>
): Answer => {
  const encode = encodeReply(descriptor)
  return entry(descriptor, (payload, context) => Effect.flatMap(handler(payload, context), encode))
}

const initializeResponse = (payload: Control.InitializePayload, pid: number) => ({
  commands: [{
    name: "compact",
    description: "Clear conversation history but keep a summary",
    argumentHint: "",
    builtin: true
  }],
  agents: [{ name: "general-purpose", description: "General-purpose agent" }],
  output_style: "default",
  available_output_styles: ["default"],
  models: [{
    value: "default",
    resolvedModel: "claude-fake-1",
    displayName: "Default",
    description: "fake",
    supportsEffort: true,
    supportedEffortLevels: ["low", "medium", "high"],
    supportsAdaptiveThinking: true
  }],
  account: { tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" },
  pid,
  claude_code_version: "2.1.330",
  current_permission_mode: "default",
  hooks_applied: true,
  hook_on_failure_supported: true,
  // As 2.1.330: confirmed when the request carried them.
  ...(payload.mcpServers === undefined ? {} : { mcp_servers_applied: true }),
  ...(payload.plugins === undefined ? {} : { plugins_applied: true }),
  capabilities: []
})

const contextUsage = {
  categories: [{ id: "free_space", name: "Free space", tokens: 200000, color: "promptBorder", kind: "free" }],
  totalTokens: 0,
  maxTokens: 200000,
  rawMaxTokens: 200000,
  percentage: 0,
  model: "claude-fake-1",
  memoryFiles: [],
  mcpTools: [],
  agents: [],
  isAutoCompactEnabled: true,
  apiUsage: null
}

const setServers = (servers: ReadonlyArray<string>, state: DefaultState): Control.McpSetServersResponse => {
  const previous = state.mcpServers
  state.mcpServers = servers
  return {
    added: servers.filter((name) => !previous.includes(name)),
    removed: previous.filter((name) => !servers.includes(name)),
    errors: {}
  }
}

// The CLI's allowlist per settings file (a session whose `settingSources` exclude the file is
// refused too).
const updateSettings = (payload: Control.Request.Payload<typeof Control.UpdateSettings>): Reply => {
  const allowed = payload.source === "localSettings" ? "outputStyle" : "effortLevel"
  const refused = Object.keys(payload.settings).filter((key) => key !== allowed)
  return refused.length > 0
    ? Either.left(controlFailure(`update_settings keys not allowed: ${refused.join(", ")}`))
    : Either.right({})
}

const none = Effect.succeed(undefined)

// As a parked CLI 2.1.330 answers: one claim per process, then `not_a_spare`. The fake does not
// see argv, so it answers as a parked process until it has been claimed.
const claimSession = (
  payload: Control.ClaimSessionPayload,
  { cli, pid, state }: AnswerContext
): Effect.Effect<Control.ClaimSessionResponse | ControlFailure> =>
  Effect.sync(() => {
    if (state.claimed) {
      return controlFailure(
        "not_a_spare: claim_session is only accepted by a process started with --await-claim that has not been claimed yet"
      )
    }
    state.claimed = true
    return {
      status: "ok",
      cwd: payload.cwd,
      session_id: cli.sessionId,
      parked_ms: 0,
      sdk_mcp_settled: true,
      ...(payload.include_initialize === true
        ? {
          initialize: {
            ...initializeResponse({}, pid),
            ...(payload.permission_mode === undefined ? {} : { current_permission_mode: payload.permission_mode })
          }
        }
        : {})
    }
  })

/**
 * The answers of the CLI 2.1.330 to every SDK→CLI request, one entry per descriptor. Replies the
 * CLI sends without a `response` key answer `undefined`; `stop_task` and `update_settings` answer
 * `{}` on the wire, as the CLI does, although their descriptors decode no payload.
 *
 * @internal
 */
export const defaultAnswers: ReadonlyArray<Answer> = [
  typed(Control.Initialize, (payload, { pid, state }) =>
    Effect.sync(() => {
      state.mcpServers = payload.sdkMcpServers ?? []
      return initializeResponse(payload, pid)
    })),
  typed(Control.Interrupt, () => Effect.succeed({ still_queued: [] })),
  typed(Control.SetModel, (payload) => Effect.succeed({ model: payload.model ?? "claude-fake-1" })),
  typed(Control.SetPermissionMode, (payload) => Effect.succeed({ mode: payload.mode })),
  typed(Control.SetMaxThinkingTokens, () => none),
  typed(Control.McpStatus, () => Effect.succeed({ mcpServers: [] })),
  typed(Control.GetContextUsage, () => Effect.succeed(contextUsage)),
  typed(Control.RewindFiles, () => Effect.succeed({ canRewind: false, error: "File rewinding is not enabled." })),
  entry(Control.StopTask, () => Effect.succeed(Either.right({}))),
  typed(Control.McpReconnect, () => Effect.succeed(controlFailure("SDK servers should be handled in print.ts"))),
  typed(Control.McpToggle, () => none),
  typed(
    Control.McpSetServers,
    (payload, { state }) => Effect.sync(() => setServers(Object.keys(payload.servers), state))
  ),
  typed(Control.McpServerMessage, () => none),
  // The CLI checks the scheme first; the fake has no server of its own to read from.
  typed(Control.McpReadResource, (payload) =>
    Effect.succeed(
      payload.uri.startsWith("ui://")
        ? controlFailure(`Server not found: ${payload.serverName}`)
        : controlFailure("mcp_read_resource: uri must use the ui:// scheme")
    )),
  typed(Control.SetMcpPermissionModeOverride, (payload) =>
    Effect.succeed({
      warning: payload.mode === null
        ? `MCP server '${payload.serverName}' is not known; its stored override was cleared.`
        : `MCP server '${payload.serverName}' is not yet known; override stored but will not apply until a server with that exact name connects.`
    })),
  typed(Control.ApplyFlagSettings, () => none),
  typed(Control.ClaimSession, claimSession),
  entry(Control.UpdateSettings, (payload) => Effect.succeed(updateSettings(payload))),
  typed(
    Control.ReloadPlugins,
    () => Effect.succeed({ commands: [], agents: [], plugins: [], mcpServers: [], error_count: 0 })
  ),
  typed(Control.ReloadSkills, () => Effect.succeed({ skills: [] })),
  typed(
    Control.ReloadOutputStyles,
    () => Effect.succeed({ available_output_styles: ["default", "Explanatory", "Learning"] })
  ),
  // No foreground task runs in the fake: the CLI sends an empty reply, or `false` for a given tool use.
  typed(
    Control.BackgroundTasks,
    (payload) => Effect.succeed(payload.tool_use_id === undefined ? {} : { backgrounded: false })
  )
]

/**
 * The answer table: an entry per subtype, the last one given for a subtype winning.
 *
 * @internal
 */
export const tableOf = (answers: ReadonlyArray<Answer>): ReadonlyMap<string, Answer> =>
  new Map(answers.map((a) => [a.descriptor.subtype, a]))

/** @internal */
export const defaultTable = tableOf(defaultAnswers)

/**
 * The CLI's answer to a subtype it does not know.
 *
 * @internal
 */
export const unsupported = (subtype: string): Effect.Effect<Reply> =>
  Effect.succeed(Either.left(controlFailure(`Unsupported control request subtype: ${subtype}`, "unsupported_request")))

/**
 * The `control_response` frame carrying a reply.
 *
 * @internal
 */
export const replyFrame = (requestId: string, reply: Reply): JsonObject =>
  Either.match(reply, {
    onLeft: (failure) => ({
      type: "control_response",
      response: {
        subtype: "error",
        request_id: requestId,
        error: failure.error,
        ...(failure.errorCode !== undefined ? { error_code: failure.errorCode } : {})
      }
    }),
    onRight: (response) => ({
      type: "control_response",
      response: response === undefined
        ? { subtype: "success", request_id: requestId }
        : { subtype: "success", request_id: requestId, response }
    })
  })
