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
import { type Duration, Effect, type Option, type Scope, type Stream } from "effect"
import type * as McpServer from "./McpServer.js"
import type * as ContentBlock from "./schema/ContentBlock.js"
import type * as Control from "./schema/Control.js"
import type * as Message from "./schema/Message.js"
import type * as Options from "./schema/Options.js"
import type * as Usage from "./Usage.js"
import * as Close from "./internal/session/close.js"
import * as Open from "./internal/session/open.js"
import type {
  BudgetExceededError,
  CLIConnectionError,
  CLIEndedError,
  McpServersPendingError,
  MessageParseError,
  PoolClosedError,
  SessionClosedError
} from "./SdkError.js"
import {
  type ControlChannel,
  type ControlChannelShape,
  type RequestError,
  type RequestOptions,
  type RunState,
  type StreamError
} from "./services/ControlChannel.js"
import { type HookRegistry } from "./services/HookRegistry.js"
import { type McpBridge } from "./services/McpBridge.js"
import type { SessionStoreError } from "./services/SessionStore.js"
import { type Transport } from "./services/Transport.js"

/**
 * What the message streams (`messages`, `receiveResponse`) can fail with: the framing of stdout,
 * the connection, the process, a message that breaks the schema of its known type, or the
 * failure of `initialize` (no answer within the control deadline, or an error answer): a session
 * whose CLI never initialised cannot run a turn; for a session of an `AgentPool`, the pool's close
 * that stopped its turn (`PoolClosedError`); with `sessionStoreFailure: "fail"`, a failed append
 * to the session store (`SessionStoreError`, the turn's stream only: the session goes on); a
 * `Budget` cap the running turn crossed (`BudgetExceededError`: the turn was interrupted, the
 * session goes on).
 *
 * @since 0.1.0
 * @category models
 */
export type MessageError =
  | StreamError
  | MessageParseError
  | RequestError
  | PoolClosedError
  | SessionStoreError
  | BudgetExceededError

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
   * session's `controlTimeout`); servers still pending then fail the call with
   * `McpServersPendingError` (the set itself has been applied). The CLI goes on connecting them, and
   * meanwhile may hold the session's later control requests (`mcpServerStatus`, `setModel`,
   * `interrupt`, …) until it gives up, after its MCP connection timeout (30 s by default): a
   * warning is logged when the call gives up, so a later request's wait has an explanation. A
   * `timeout` shorter than the servers take to start buys nothing; a longer one, or none, is
   * usually what you want.
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
   * turn runs are queued by the CLI (and may be merged into the running turn). Under a `Budget`
   * whose caps for the session's account are spent, fails with `BudgetExceededError` and writes
   * nothing.
   */
  readonly send: (
    prompt: Prompt
  ) => Effect.Effect<string, CLIConnectionError | SessionClosedError | BudgetExceededError>
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
   * `OptionsError`.
   */
  readonly setMcpServers: <R = never>(
    servers: McpServers<R>,
    options?: SetMcpServersOptions
  ) => Effect.Effect<Control.McpSetServersResponse, RequestError | McpServersPendingError, R>
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
  readonly sessionId: Effect.Effect<string, StreamError | CLIEndedError>
  /** Closes the CLI's input; the CLI finishes the running turn and exits. */
  readonly endInput: Effect.Effect<void>
  /**
   * The session's spend so far: every `result` the CLI wrote (read or not), attributed to the main
   * agent, each subagent and each tool call, per model (see `Usage`; each result's own turn is
   * `Usage.ofResult`).
   */
  readonly usage: Effect.Effect<Usage.Usage>
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
  /** Delivers `command_lifecycle` messages (`options.includeCommandLifecycle`). */
  readonly includeCommandLifecycle?: boolean | undefined
  /** Delivers the run states the CLI writes for the SDK (`options.includeSessionState`). */
  readonly includeSessionState?: boolean | undefined
  /**
   * The deadline of control requests (`options.controlTimeout`), for waits the session runs
   * itself (`setMcpServers` with `awaitConnection`). Default 60 s.
   */
  readonly controlTimeout?: Duration.DurationInput | undefined
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
export const isIdle: (run: RunState) => boolean = Close.isIdle

/**
 * Makes a session from the services in context: the `Transport` (the CLI's process, or a fake),
 * the `ControlChannel` over it, and the `HookRegistry`, `McpBridge` and (when present)
 * `PermissionHandler` that answer the CLI's requests. It registers those handlers (and one for
 * `elicitation`: `config.onElicitation`, or a decline), writes `initialize` (with the registry's
 * hooks and the bridge's servers), and returns at once: the
 * reply is awaited lazily by `initializationResult`, so the first prompt can follow `initialize`
 * without a round trip. `ClaudeAgent.session` builds these services per session with
 * `SessionServices.build`; each can be replaced with a layer of your own (`SessionServices.Layers`).
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
  Effect.flatMap(
    Effect.context<Transport | ControlChannel | HookRegistry | McpBridge>(),
    (services) => Open.open(services, config)
  )
