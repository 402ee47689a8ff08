/**
 * `AgentSession`: one conversation with one Claude Code CLI process.
 *
 * A session is a scoped resource. `send` writes user messages, `messages` / `receiveResponse`
 * stream what the CLI says back as typed `Message`s, and the control methods (`interrupt`,
 * `setModel`, …) are control-protocol requests, each an `Effect` with a typed error. Closing the
 * session's scope ends the process: stdin EOF, a grace period, SIGTERM, SIGKILL.
 *
 * @since 0.1.0
 */
import { Chunk, Clock, Deferred, Duration, Effect, Option, Predicate, Schedule, Schema, type Scope, Stream } from "effect"
import type * as McpServer from "./McpServer.js"
import type * as ContentBlock from "./schema/ContentBlock.js"
import * as Control from "./schema/Control.js"
import * as Message from "./schema/Message.js"
import * as Options from "./schema/Options.js"
import * as Defaults from "./internal/defaults.js"
import { runDetached } from "./internal/detached.js"
import * as Turns from "./internal/turns.js"
import { type CLIConnectionError, ControlError, type MessageParseError, type OptionsError } from "./SdkError.js"
import {
  ControlChannel,
  type ControlChannelShape,
  type RequestError,
  type RequestOptions,
  type RunState,
  type StreamError
} from "./services/ControlChannel.js"
import { HookRegistry } from "./services/HookRegistry.js"
import { McpBridge } from "./services/McpBridge.js"
import { PermissionHandler } from "./services/PermissionHandler.js"
import { Transport } from "./services/Transport.js"
import { provideCaptured } from "./internal/captured.js"

/**
 * What the message streams (`messages`, `receiveResponse`) can fail with: the framing of stdout,
 * the connection, the process, a message that breaks the schema of its known type, or the
 * failure of `initialize` (no answer within the control deadline, or an error answer): a session
 * whose CLI never initialised cannot run a turn.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageError = StreamError | MessageParseError | RequestError

/**
 * What `send` accepts: a prompt string, content blocks, or a complete user message frame.
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = string | ReadonlyArray<ContentBlock.ContentBlockParam> | Message.UserMessageInput

/**
 * Options for `interrupt`.
 *
 * @example
 * ```ts
 * import type { AgentSession } from "effect-claude-agent"
 *
 * const stopEverything = (session: AgentSession.AgentSession) => session.interrupt({ cancelQueued: true })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface InterruptOptions extends RequestOptions {
  /** Also drop user messages that are queued behind the running turn. */
  readonly cancelQueued?: boolean | undefined
}

/**
 * Options for `rewindFiles`.
 *
 * @example
 * ```ts
 * import type { AgentSession } from "effect-claude-agent"
 *
 * const preview = (session: AgentSession.AgentSession, userMessageId: string) =>
 *   session.rewindFiles(userMessageId, { dryRun: true })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RewindFilesOptions extends RequestOptions {
  /** Only report what would change. */
  readonly dryRun?: boolean | undefined
}

/**
 * Options for `getContextUsage`.
 *
 * @example
 * ```ts
 * import type { AgentSession } from "effect-claude-agent"
 *
 * const usage = (session: AgentSession.AgentSession) => session.getContextUsage({ detail: "summary" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface GetContextUsageOptions extends RequestOptions {
  /**
   * `"full"` (the CLI's default) counts each category with the API's token-count endpoint;
   * `"summary"` estimates from the last response's usage, with no API call.
   */
  readonly detail?: "summary" | "full" | undefined
}

/**
 * Options for `reloadPlugins`.
 *
 * @example
 * ```ts
 * import type { AgentSession } from "effect-claude-agent"
 *
 * const reload = (session: AgentSession.AgentSession) =>
 *   session.reloadPlugins({ addPlugins: [{ type: "local", path: "/opt/plugins/review" }], refuseIfBusy: true })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ReloadPluginsOptions extends RequestOptions {
  /**
   * Apply nothing if the reload would change the tool list under the conversation's prompt
   * cache: the reply then has `held: true` and `cache_impact`. Ask again without it to apply.
   */
  readonly holdOnCacheImpact?: boolean | undefined
  /** Plugins to load as well, as if they had been in the `plugins` option (absolute paths). */
  readonly addPlugins?: ReadonlyArray<Control.PluginConfig> | undefined
  /** Reload nothing while the session is busy: fails with `ControlError` `reload_plugins_busy`. */
  readonly refuseIfBusy?: boolean | undefined
}

/**
 * Options for `setMcpServers`.
 *
 * @example
 * ```ts
 * import type { AgentSession } from "effect-claude-agent"
 *
 * // Returns once the CLI has connected the new server (or failed to), within 30 seconds.
 * const add = (session: AgentSession.AgentSession) =>
 *   session.setMcpServers({ files: { command: "mcp-files" } }, { awaitConnection: true, timeout: "30 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SetMcpServersOptions extends RequestOptions {
  /**
   * Wait until the CLI has finished connecting the added servers (none is `pending` in
   * `mcpServerStatus`: each is `connected`, `failed`, `needs-auth`, …), instead of returning as
   * soon as it has taken the set. Bounded by the same deadline as the request (`timeout`, or the
   * session's `controlTimeout`); servers still pending then fail the call with `ControlError`
   * `mcp_servers_pending` (the set itself has been applied).
   */
  readonly awaitConnection?: boolean | undefined
}

/**
 * What `setMcpServers` takes: server name → an external server's config (stdio, sse, http) or an
 * in-process server made with `McpServer.make` (listed under its own name). `R` is what the
 * in-process servers' tools need.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { type AgentSession, McpServer, Tool } from "effect-claude-agent"
 *
 * const calc = McpServer.make({
 *   name: "calc",
 *   tools: [Tool.make("add", {
 *     description: "Add two numbers",
 *     parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *     handler: ({ a, b }) => Effect.succeed(`${a + b}`)
 *   })]
 * })
 * const servers: AgentSession.McpServers = { calc, docs: { type: "http", url: "https://example.com/mcp" } }
 * const swap = (session: AgentSession.AgentSession) => session.setMcpServers(servers)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type McpServers<R = never> = {
  readonly [name: string]: Options.McpServerConfig | McpServer.McpServer<R>
}

/**
 * A live session. Every method is safe to call from any fiber.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const twoTurns = Effect.scoped(Effect.gen(function*() {
 *   const session = yield* ClaudeAgent.session({ model: "claude-sonnet-4-5" })
 *   yield* session.send("Read README.md")
 *   yield* Stream.runDrain(session.receiveResponse)
 *   yield* session.send("Now summarise it in one line")
 *   return yield* Stream.runCollect(session.receiveResponse)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentSession {
  /**
   * Writes one user message and returns its uuid (the prompt's own, when a full frame carries
   * one; generated otherwise): the id `rewindFiles` takes and `interrupt` reports. The first
   * message may be sent before `system/init`: the CLI emits that per turn. Messages sent while a
   * turn runs are queued by the CLI (and may be merged into the running turn).
   */
  readonly send: (prompt: Prompt) => Effect.Effect<string, CLIConnectionError>
  /**
   * Every message from the CLI, decoded, until the CLI exits. A single stream shared with
   * `receiveResponse`: run one consumer at a time.
   */
  readonly messages: Stream.Stream<Message.Message, MessageError>
  /** The messages up to and including the next `result`. */
  readonly receiveResponse: Stream.Stream<Message.Message, MessageError>
  /** The `interrupt` control request: ends the running turn (never a signal). */
  readonly interrupt: (options?: InterruptOptions) => Effect.Effect<Control.InterruptResponse, RequestError>
  /** Changes the permission mode for the rest of the session. */
  readonly setPermissionMode: (
    mode: Control.PermissionMode,
    options?: RequestOptions
  ) => Effect.Effect<Control.SetPermissionModeResponse, RequestError>
  /** Changes the model for the next turns; `undefined` restores the default. */
  readonly setModel: (
    model: string | undefined,
    options?: RequestOptions
  ) => Effect.Effect<Control.SetModelResponse, RequestError>
  /**
   * Sets the thinking budget; `null` resets it to the session's default. `display` replaces how
   * thinking is shown for the rest of the session (`null` clears that override; omitted: kept).
   */
  readonly setMaxThinkingTokens: (
    tokens: number | null,
    display?: Control.ThinkingDisplay | null,
    options?: RequestOptions
  ) => Effect.Effect<void, RequestError>
  /** The status of every MCP server. */
  readonly mcpServerStatus: (options?: RequestOptions) => Effect.Effect<Control.McpStatusResponse, RequestError>
  /** How the context window is used, by category (`detail: "summary"` makes no API call). */
  readonly getContextUsage: (
    options?: GetContextUsageOptions
  ) => Effect.Effect<Control.ContextUsageResponse, RequestError>
  /**
   * Replaces the session's dynamic MCP servers: external ones (stdio, sse, http) and in-process
   * ones (`McpServer.make`, served by the session's `McpBridge` from this call on, their tools
   * getting the services `R` of the caller). The set replaces the servers of earlier calls and
   * every in-process server, those of the `mcpServers` option included; external servers of the
   * `mcpServers` option stay unless a call named them. An in-process server given again under its
   * name with a new definition is swapped, and the CLI lists its tools again. Returns the CLI's
   * report (`added`, `removed`, and `errors` for servers that failed to connect). The CLI (2.1.330)
   * answers once it has tried to connect the added external servers (a stdio server that never
   * answers holds the reply for the CLI's 30 s connection timeout, then shows in `errors`), but
   * connects in-process servers after answering: `awaitConnection` waits for those too. A bad server
   * (a missing `command`, duplicate tool names, …) is refused before anything is sent or changed:
   * `ControlError` with `errorCode: "invalid_request"`.
   */
  readonly setMcpServers: <R = never>(
    servers: McpServers<R>,
    options?: SetMcpServersOptions
  ) => Effect.Effect<Control.McpSetServersResponse, RequestError, R>
  /**
   * The slash commands and skills: from the `initialize` reply, or the latest
   * `system/commands_changed` among the messages read so far.
   */
  readonly supportedCommands: Effect.Effect<ReadonlyArray<Control.SlashCommand>, RequestError>
  /** The models the CLI offers (from the `initialize` reply; no request is sent). */
  readonly supportedModels: Effect.Effect<ReadonlyArray<Control.ModelInfo>, RequestError>
  /** The subagents the CLI offers (from the `initialize` reply; no request is sent). */
  readonly supportedAgents: Effect.Effect<ReadonlyArray<Control.AgentInfo>, RequestError>
  /** The account the CLI runs as (from the `initialize` reply; no request is sent). */
  readonly accountInfo: Effect.Effect<Control.AccountInfo, RequestError>
  /**
   * Sends `initialize` again, with the same fields as the first (and the in-process servers
   * served now), and returns the CLI's fresh reply; `initializationResult` keeps the first. The
   * CLI registers the hooks again, and resolves a hook callback it was still waiting for itself.
   */
  readonly reinitialize: (options?: RequestOptions) => Effect.Effect<Control.InitializeResponse, RequestError>
  /**
   * Reads a `ui://` resource (an MCP Apps widget) from an MCP server the CLI connected to itself
   * (not an in-process one). The content is the server's: render it sandboxed.
   */
  readonly readMcpResource: (
    serverName: string,
    uri: string,
    options?: RequestOptions
  ) => Effect.Effect<Control.McpReadResourceResponse, RequestError>
  /**
   * Merges settings into the session's flag layer (the `settings` option, mid-session): top-level
   * keys replace earlier ones, `null` clears a key; an invalid value fails the whole call.
   */
  readonly applyFlagSettings: (
    settings: { readonly [key: string]: unknown },
    options?: RequestOptions
  ) => Effect.Effect<void, RequestError>
  /**
   * Writes settings into a settings file through the CLI and applies them: `outputStyle` in
   * `localSettings`, `effortLevel` in `userSettings` (the CLI refuses other keys, and sources the
   * session's `settingSources` exclude).
   */
  readonly updateSettings: (
    source: Control.SettingsFileSource,
    settings: { readonly [key: string]: string },
    options?: RequestOptions
  ) => Effect.Effect<void, RequestError>
  /** Reloads plugins from disk; the reply lists the session's commands, agents, plugins and MCP servers. */
  readonly reloadPlugins: (options?: ReloadPluginsOptions) => Effect.Effect<Control.ReloadPluginsResponse, RequestError>
  /**
   * Re-reads skills from disk: a skill file written while the session runs is seen from the next
   * turn on. The reply lists the session's skills.
   */
  readonly reloadSkills: (options?: RequestOptions) => Effect.Effect<Control.ReloadSkillsResponse, RequestError>
  /** Re-reads the output-style directories from disk; the reply lists every style's name. */
  readonly reloadOutputStyles: (
    options?: RequestOptions
  ) => Effect.Effect<Control.ReloadOutputStylesResponse, RequestError>
  /**
   * Moves running foreground tasks (Bash commands, subagents) to the background, or only the one a
   * tool use started. `false` only when `toolUseId` matched no foreground task.
   */
  readonly backgroundTasks: (toolUseId?: string, options?: RequestOptions) => Effect.Effect<boolean, RequestError>
  /**
   * Pins an MCP server's permission mode (`"default"`: ask for every action; `"auto"`: the
   * classifier decides), or clears it with `null`. It only tightens. The reply's `warning` says
   * when no server of that name is known (the override applies once one connects).
   */
  readonly setMcpPermissionModeOverride: (
    serverName: string,
    mode: "default" | "auto" | null,
    options?: RequestOptions
  ) => Effect.Effect<Control.SetMcpPermissionModeOverrideResponse, RequestError>
  /**
   * Restores files changed since the given user message (its uuid, as `send` returned it; needs
   * `enableFileCheckpointing`). "Cannot rewind" is always data (`canRewind: false` with `error`),
   * never a failure: a dry run is asked first, and the files are restored only when it says they
   * can be. With `dryRun`, only the dry run's report.
   */
  readonly rewindFiles: (
    userMessageId: string,
    options?: RewindFilesOptions
  ) => Effect.Effect<Control.RewindFilesResponse, RequestError>
  /** Stops a background task. */
  readonly stopTask: (taskId: string, options?: RequestOptions) => Effect.Effect<void, RequestError>
  /** Reconnects an MCP server. */
  readonly reconnectMcpServer: (serverName: string, options?: RequestOptions) => Effect.Effect<void, RequestError>
  /** Enables or disables an MCP server. */
  readonly toggleMcpServer: (
    serverName: string,
    enabled: boolean,
    options?: RequestOptions
  ) => Effect.Effect<void, RequestError>
  /** The CLI's answer to `initialize`: commands, models, account, output styles, its `pid`, … */
  readonly initializationResult: Effect.Effect<Control.InitializeResponse, RequestError>
  /** The session id: known at once with `options.sessionId`, otherwise the first one the CLI reports. */
  readonly sessionId: Effect.Effect<string, CLIConnectionError>
  /** Closes the CLI's input; the CLI finishes the running turn and exits. */
  readonly endInput: Effect.Effect<void>
  /** The CLI's process id, when there is a process. */
  readonly pid: Option.Option<number>
  /**
   * The CLI's stderr, line by line, from the moment the stream is run until the CLI exits (the
   * `stderr` option sees every line from the start). stderr is drained whether or not anyone
   * reads this.
   */
  readonly stderr: Stream.Stream<string>
  /** The underlying control channel, for control requests without a method here (`Control.request`). */
  readonly control: ControlChannelShape
}

/**
 * What `make` needs beyond the session's services. `ClaudeAgent.session` derives it from `Options`.
 * `R` is what `onElicitation` needs.
 *
 * @example
 * ```ts
 * import type { AgentSession } from "effect-claude-agent"
 *
 * const config: AgentSession.SessionConfig = { closeGracePeriod: "5 seconds", controlTimeout: "30 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionConfig<R = never> {
  /**
   * The `initialize` fields from the options (system prompt, agents, JSON schema). `hooks` and
   * `sdkMcpServers` are added from the session's `HookRegistry` and `McpBridge`.
   */
  readonly initialize?: Control.InitializePayload | undefined
  /** Known up front when the caller chose it (`options.sessionId`). */
  readonly sessionId?: string | undefined
  /** How long closing waits for running callbacks before closing stdin. Default 5 s. */
  readonly closeGracePeriod?: Duration.DurationInput | undefined
  /** Answers MCP servers' requests for user input; without it they are declined. */
  readonly onElicitation?: Control.OnElicitation<unknown, R> | undefined
  /** Sends every user message with `client_composed: true` (`options.verbatimPrompts`). */
  readonly verbatimPrompts?: boolean | undefined
  /**
   * The deadline of control requests (`options.controlTimeout`), for waits the session runs
   * itself (`setMcpServers` with `awaitConnection`). Default 60 s.
   */
  readonly controlTimeout?: Duration.DurationInput | undefined
}

// `Effect.fn(name)` captures a stack trace for its definition site when called: once here, not
// once per method per session (≈ 20 per `make`). Each session's methods are still made by
// `Effect.fn`, so the spans and their call-site stack traces are unchanged.
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
  toggleMcpServer: Effect.fn("AgentSession.toggleMcpServer"),
}

const connectPoll = Duration.millis(100)

// What the `initialize` reply must confirm, as the official SDK checks it: a CLI too old to read
// MCP servers from `initialize` omits `mcp_servers_applied` and runs without them; one that does
// not honour `onFailure` would let a blocking hook's failure through. Either ends the session.
const confirmApplied = (
  payload: Control.InitializePayload,
  reply: Control.InitializeResponse
): Effect.Effect<void, ControlError> => {
  const version = reply.claude_code_version === undefined ? "" : ` (version ${reply.claude_code_version})`
  if (payload.mcpServers !== undefined) {
    if (reply.mcp_servers_applied === undefined) {
      return Effect.fail(
        new ControlError({
          subtype: Control.Initialize.subtype,
          requestId: Control.Initialize.subtype,
          error: `This Claude Code${version} is too old to read MCP servers from the initialize request, so it ` +
            `started without them; the session was ended. Update the CLI, or use mcpServersDelivery: "argv".`,
          errorCode: "mcp_servers_not_applied"
        })
      )
    }
    if (!reply.mcp_servers_applied) {
      return Effect.logWarning(
        "effect-claude-agent: the CLI reports that it did not load the MCP servers sent in initialize: " +
          "this session may run without them (check that nothing removes --await-initialize)."
      )
    }
  }
  const blocking = Object.values(payload.hooks ?? {}).some((matchers) =>
    matchers.some((matcher) => Predicate.isRecord(matcher) && matcher.onFailure === "block")
  )
  if (blocking && reply.hook_on_failure_supported !== true) {
    return Effect.fail(
      new ControlError({
        subtype: Control.Initialize.subtype,
        requestId: Control.Initialize.subtype,
        error: `This Claude Code${version} does not honour onFailure on hook matchers, so a failing hook ` +
          `with onFailure: "block" would not block; the session was ended. Update the CLI, or remove onFailure: "block".`,
        errorCode: "hook_on_failure_unsupported"
      })
    )
  }
  if (payload.plugins !== undefined && payload.plugins.length > 0 && reply.plugins_applied !== true) {
    return Effect.logWarning(
      `effect-claude-agent: the CLI reports plugins_applied=${String(reply.plugins_applied)} for the plugins ` +
        "sent in initialize: it runs with the plugins it was launched with."
    )
  }
  return Effect.void
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
 * Whether a run state is idle: the CLI reported `idle`, or never reported a state (older CLIs,
 * fakes).
 *
 * @example
 * ```ts
 * import { AgentSession } from "effect-claude-agent"
 *
 * const waitIdle = (session: AgentSession.AgentSession) => session.control.awaitRunState(AgentSession.isIdle)
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const isIdle = (run: RunState): boolean => run.state === undefined || run.state === "idle"

const isResultFrame = (frame: unknown): boolean =>
  typeof frame === "object" && frame !== null && "type" in frame && frame.type === "result"

const CommandsChanged = Schema.Struct({ commands: Schema.Array(Control.SlashCommand) })
const decodeCommandsChanged = Schema.decodeUnknownOption(CommandsChanged)

// The commands of a `system/commands_changed` frame (the CLI sends one after `reload_skills`).
const changedCommands = (frame: unknown): Option.Option<ReadonlyArray<Control.SlashCommand>> =>
  Predicate.isRecord(frame) && frame.type === "system" && frame.subtype === "commands_changed"
    ? Option.map(decodeCommandsChanged(frame), (changed) => changed.commands)
    : Option.none()

// What the official SDKs answer an elicitation nobody handles.
const declined: Control.ElicitationResult = { action: "decline" }

const listChanged = { jsonrpc: "2.0", method: "notifications/tools/list_changed" }

// A request refused before it was written: no request id was used.
const refused = (subtype: string, error: OptionsError) =>
  new ControlError({ subtype, requestId: "not sent", error: error.message, errorCode: "invalid_request" })

/**
 * Makes a session from the services in context: the `Transport` (the CLI's process, or a fake),
 * the `ControlChannel` over it, and the `HookRegistry`, `McpBridge` and (when present)
 * `PermissionHandler` that answer the CLI's requests. It registers those handlers (and one for
 * `elicitation`: `config.onElicitation`, or a decline), writes `initialize` (with the registry's
 * hooks and the bridge's servers), and returns at once: the
 * reply is awaited lazily by `initializationResult`, so the first prompt can follow `initialize`
 * without a round trip. `ClaudeAgent.session` builds these services as one layer graph per
 * session; replace any of them with a layer of your own.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { AgentSession, ControlChannel, HookRegistry, McpBridge } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const services = Layer.mergeAll(HookRegistry.HookRegistry.layerEmpty, McpBridge.McpBridge.layerEmpty).pipe(
 *   Layer.provideMerge(ControlChannel.ControlChannel.layer({ controlTimeout: "10 seconds" })),
 *   Layer.provideMerge(FakeCli.layer())
 * )
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const session = yield* AgentSession.make()
 *   yield* session.send("hello")
 *   yield* session.receiveResponse.pipe(Stream.runForEach((m) => Effect.log(m.type)))
 * })).pipe(Effect.provide(services))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R = never>(
  config: SessionConfig<R> = {}
): Effect.Effect<
  AgentSession,
  RequestError,
  Transport | ControlChannel | HookRegistry | McpBridge | Scope.Scope | R
> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const control = yield* ControlChannel
    const hooks = yield* HookRegistry
    const mcp = yield* McpBridge
    const permissions = yield* Effect.serviceOption(PermissionHandler)
    const callbackContext = yield* Effect.context<R>()

    // Before `initialize` is written: the CLI may call back before it answers. Without callbacks,
    // hook and MCP requests still get (error) answers, never silence, and an elicitation is
    // declined as the official SDKs do.
    yield* control.handle(Control.HookCallback, hooks.handleCallback)
    yield* control.handle(Control.McpMessage, mcp.handleMessage)
    if (Option.isSome(permissions)) yield* control.handle(Control.CanUseTool, permissions.value.canUseTool)
    const onElicitation = config.onElicitation
    yield* control.handle(
      Control.Elicitation,
      onElicitation === undefined
        ? () => Effect.succeed(declined)
        : (request, requestId) => provideCaptured(onElicitation(request, requestId), callbackContext)
    )

    // The same fields every time, with the in-process servers served at the time.
    const initializePayload = Effect.zipWith(
      mcp.serverNames,
      mcp.serverConfigs ?? Effect.succeed({}),
      (names, configs): Control.InitializePayload => ({
        ...config.initialize,
        hooks: hooks.initializeHooks,
        ...(names.length === 0 ? {} : { sdkMcpServers: names }),
        ...(Object.keys(configs).length === 0 ? {} : { sdkMcpServerConfigs: configs })
      })
    )

    // On the wire before any user message, but its reply is awaited only by `initializationResult`:
    // the first prompt does not wait for a round trip.
    const firstPayload = yield* initializePayload
    const initReply = yield* control.start(Control.Initialize, firstPayload)
    const initializationResult = yield* Effect.cached(
      Effect.flatMap(initReply, (reply) =>
        Effect.as(
          confirmApplied(firstPayload, reply).pipe(
            // As the official SDK does: the session ends, and no prompt is answered without what
            // the caller asked for.
            Effect.tapError(() => Effect.zipRight(transport.terminate, transport.endInput))
          ),
          reply
        ))
    )
    // `system/commands_changed` replaces the commands of the `initialize` reply.
    let latestCommands: ReadonlyArray<Control.SlashCommand> | undefined
    // One `setMcpServers` at a time: the bridge's set and the CLI's must be changed in the same order.
    const serversLock = yield* Effect.makeSemaphore(1)
    const turns = yield* Turns.track(control, Option.getOrUndefined(yield* Effect.serviceOption(Turns.CurrentTurn)))
    // A CLI that never answers `initialize` (a wrapper script, a login prompt) must not leave the
    // message streams waiting forever: its failure ends them.
    const initFailed = yield* Deferred.make<never, RequestError>()
    let initAnswered = false
    let initError: RequestError | undefined
    yield* initializationResult.pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.zipRight(Effect.sync(() => void (initError = error)), Deferred.fail(initFailed, error)),
        onSuccess: () => Effect.sync(() => void (initAnswered = true))
      }),
      Effect.forkScoped
    )

    // Frames taken from the queue but not yet emitted: a turn's stream stops at its `result`, and
    // whatever followed it in the same chunk waits here for the next consumer.
    let leftover: Array<unknown> = []
    let pendingError: MessageParseError | undefined
    const rawPull = yield* Stream.toPull(control.messages)
    // Until `initialize` is answered a pull also ends with its failure; after that it cannot fail,
    // and the pull runs alone (a race forks two fibers, too much to pay for every read).
    const pullFrames: Effect.Effect<Chunk.Chunk<unknown>, Option.Option<MessageError>> = Effect.suspend(() => {
      if (initError !== undefined) return Effect.fail(Option.some(initError))
      if (initAnswered) return rawPull
      return Effect.raceFirst(rawPull, Effect.mapError(Deferred.await(initFailed), Option.some))
    })

    // A chunk ends at a `result` (what follows waits in `leftover`): `endsTurn` says it did.
    let endsTurn = false
    const pull: Effect.Effect<Chunk.Chunk<Message.Message>, Option.Option<MessageError>> = Effect.suspend(() => {
      endsTurn = false
      if (pendingError !== undefined) {
        const e = pendingError
        pendingError = undefined
        return Effect.fail(Option.some(e))
      }
      if (initError !== undefined) return Effect.fail(Option.some(initError))
      const source: Effect.Effect<ReadonlyArray<unknown>, Option.Option<MessageError>> = leftover.length > 0
        ? Effect.sync(() => {
          const taken = leftover
          leftover = []
          return taken
        })
        : Effect.map(pullFrames, Chunk.toReadonlyArray)
      return Effect.map(source, (frames) => {
        const out: Array<Message.Message> = []
        for (let i = 0; i < frames.length; i++) {
          const frame = frames[i]
          const decoded = Message.decode(frame)
          if (decoded._tag === "Left") {
            pendingError = decoded.left
            leftover = frames.slice(i + 1)
            break
          }
          out.push(decoded.right)
          const commands = changedCommands(frame)
          if (Option.isSome(commands)) latestCommands = commands.value
          if (isResultFrame(frame)) {
            endsTurn = true
            if (i + 1 < frames.length) leftover = frames.slice(i + 1)
            break
          }
        }
        return Chunk.unsafeFromArray(out)
      })
    })

    const messages: Stream.Stream<Message.Message, MessageError> = Stream.repeatEffectChunkOption(pull)
    // `takeUntil(isResult)` without a stage of its own: the chunk that holds the result ends with it.
    const receiveResponse: Stream.Stream<Message.Message, MessageError> = Stream.suspend(() => {
      let done = false
      return Stream.repeatEffectChunkOption(Effect.suspend(() => {
        if (done) return Effect.fail(Option.none())
        return Effect.map(pull, (chunk) => {
          if (endsTurn) done = true
          return chunk
        })
      }))
    })

    const closeGrace = config.closeGracePeriod !== undefined
      ? Duration.decode(config.closeGracePeriod)
      : Defaults.closeGracePeriod
    // Closing, in two cases (every wait bounded by the grace period):
    // - the turn finished (its `result` came): the CLI may still call back (a hook, a background
    //   task) until it reports `idle`, and answers need stdin; wait for idle and for running
    //   callbacks, then close stdin;
    // - the turn is still running (the consumer was interrupted): the CLI would finish the turn
    //   after EOF, so ask it to stop with the protocol's `interrupt` first; it then goes idle
    //   within milliseconds and exits on EOF, with no signal needed.
    // - `initialize` is still unanswered (or failed): the CLI has done nothing anyone waits for,
    //   and before it has initialised it takes seconds to notice the end of its input; stop it.
    // The deadlines run on the live clock: a test under `TestClock` whose fake CLI never reports
    // `idle` must still be able to close its session.
    const liveClock = Clock.make()
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        if (!initAnswered) {
          yield* transport.terminate
          return yield* transport.endInput
        }
        const { afterResult, state } = yield* control.runState
        const running = state === "running" || state === "requires_action"
        if (running && !afterResult) {
          yield* control.request(Control.Interrupt, {}, { timeout: closeGrace }).pipe(
            Effect.interruptible,
            Effect.ignore
          )
        }
        // Nothing to wait for (the usual case: the CLI said `idle` after the result): no waits to
        // fork, race and time.
        if (isIdle(yield* control.runState) && (yield* control.inFlight) === 0) return yield* transport.endInput
        // The waits are made interruptible so that their deadline can stop them; `runDetached`
        // keeps the closing fiber's own pending interruption from stopping them at once.
        yield* Effect.zip(control.awaitRunState(isIdle), control.awaitNoneInFlight, { concurrent: true }).pipe(
          Effect.interruptible,
          Effect.timeout(closeGrace),
          Effect.ignore
        )
        yield* transport.endInput
      }).pipe(Effect.withClock(liveClock), runDetached)
    )

    // The CLI connects added in-process servers after its reply (external ones before it);
    // `mcp_status` shows them `pending` until then. Polled: the CLI reports no event for it.
    const awaitConnected = (names: ReadonlyArray<string>, options: RequestOptions): Effect.Effect<void, RequestError> => {
      if (names.length === 0) return Effect.void
      const deadline = Duration.decode(options.timeout ?? config.controlTimeout ?? Defaults.controlTimeout)
      let waiting: ReadonlyArray<string> = names
      const check = Effect.map(control.request(Control.McpStatus, {}, options), (status) => {
        waiting = names.filter((name) => {
          const server = status.mcpServers.find((s) => s.name === name)
          return server === undefined || server.status === "pending"
        })
        return waiting.length > 0
      })
      return check.pipe(
        Effect.repeat({ schedule: Schedule.spaced(connectPoll), while: (pending: boolean) => pending }),
        Effect.asVoid,
        Effect.timeoutFail({
          duration: deadline,
          onTimeout: () =>
            new ControlError({
              subtype: Control.McpSetServers.subtype,
              requestId: Control.McpSetServers.subtype,
              error: `still connecting after ${Duration.format(deadline)}: ${waiting.join(", ")}`,
              errorCode: "mcp_servers_pending"
            })
        })
      )
    }

    const session: AgentSession = {
      send: traced.send(function*(prompt: Prompt) {
        const frame = toUserFrame(prompt, config.verbatimPrompts === true)
        yield* transport.send(frame)
        yield* turns.started
        return frame.uuid
      }),
      messages,
      receiveResponse,
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
      setMcpServers: <R2>(servers: McpServers<R2>, options?: SetMcpServersOptions) =>
        Effect.gen(function*() {
          const subtype = Control.McpSetServers.subtype
          // The same checks as the `mcpServers` option, before anything is sent or changed.
          yield* Options.validate({ mcpServers: servers }).pipe(Effect.mapError((e) => refused(subtype, e)))
          const inProcess: Array<McpServer.McpServer<R2>> = []
          const wire: Record<string, { readonly [key: string]: unknown }> = {}
          for (const [name, server] of Object.entries(servers)) {
            if (server.type === "sdk") {
              inProcess.push(server)
              wire[name] = { type: "sdk", name }
            } else {
              // The CLI 2.1.330 fails a stdio server set without `args` ("Spread syntax requires
              // ...iterable not be null or undefined"); `--mcp-config` does not need them.
              wire[name] = "command" in server && server.args === undefined ? { ...server, args: [] } : server
            }
          }
          // Served before the CLI hears of them: it connects to a new server at once. (If the
          // request then fails, the bridge keeps the new set: the CLI's state is unknown anyway.)
          const change = yield* mcp.setServers(inProcess).pipe(Effect.mapError((e) => refused(subtype, e)))
          const reply = yield* control.request(Control.McpSetServers, { servers: wire }, options)
          // The CLI keeps a server it already has and its tool list: a new definition under the
          // same name needs it to list the tools again.
          yield* Effect.forEach(
            change.replaced.filter((name) => !reply.added.includes(name)),
            (name) => control.request(Control.McpServerMessage, { server_name: name, message: listChanged }, options),
            { discard: true }
          )
          if (options?.awaitConnection === true) yield* awaitConnected(reply.added, options)
          return reply
        }).pipe(serversLock.withPermits(1), Effect.withSpan("AgentSession.setMcpServers")),
      supportedCommands: Effect.suspend(() =>
        latestCommands !== undefined
          ? Effect.succeed(latestCommands)
          : Effect.map(initializationResult, (init) => latestCommands ?? init.commands)
      ),
      supportedModels: Effect.map(initializationResult, (init) => init.models),
      supportedAgents: Effect.map(initializationResult, (init) => init.agents ?? []),
      accountInfo: Effect.map(initializationResult, (init) => init.account ?? {}),
      reinitialize: traced.reinitialize(function*(options) {
        const payload = yield* initializePayload
        const reply = yield* control.request(Control.Initialize, payload, options)
        yield* confirmApplied(payload, reply).pipe(
          Effect.tapError(() => Effect.zipRight(transport.terminate, transport.endInput))
        )
        return reply
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
      setMcpPermissionModeOverride: traced.setMcpPermissionModeOverride(
        function*(serverName, mode, options) {
          return yield* control.request(Control.SetMcpPermissionModeOverride, { serverName, mode }, options)
        }
      ),
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
      }),
      initializationResult,
      sessionId: config.sessionId !== undefined ? Effect.succeed(config.sessionId) : control.awaitSessionId,
      endInput: transport.endInput,
      pid: transport.pid,
      stderr: transport.stderr,
      control
    }
    return session
  }).pipe(Effect.withSpan("AgentSession.make"))
