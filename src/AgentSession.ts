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
import { Chunk, Clock, Duration, Effect, Option, ParseResult, type Schema, type Scope, Stream } from "effect"
import * as ContentBlock from "./schema/ContentBlock.js"
import * as Control from "./schema/Control.js"
import * as Message from "./schema/Message.js"
import { runDetached } from "./internal/detached.js"
import { CLIConnectionError, MessageParseError, type SdkError } from "./SdkError.js"
import {
  ControlChannel,
  type ControlChannelShape,
  type RequestOptions,
  type RunState
} from "./services/ControlChannel.js"
import { Transport } from "./services/Transport.js"

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
 * @since 0.1.0
 * @category models
 */
export interface RewindFilesOptions extends RequestOptions {
  /** Only report what would change. */
  readonly dryRun?: boolean | undefined
}

/**
 * A live session. Every method is safe to call from any fiber.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentSession {
  /** Writes one user message. The first may be sent before `system/init`: the CLI emits that per turn. */
  readonly send: (prompt: Prompt) => Effect.Effect<void, CLIConnectionError>
  /**
   * Every message from the CLI, decoded, until the CLI exits. A single stream shared with
   * `receiveResponse`: run one consumer at a time.
   */
  readonly messages: Stream.Stream<Message.Message, SdkError>
  /** The messages up to and including the next `result`. */
  readonly receiveResponse: Stream.Stream<Message.Message, SdkError>
  /** The `interrupt` control request: ends the running turn (never a signal). */
  readonly interrupt: (options?: InterruptOptions) => Effect.Effect<Control.InterruptResponse, SdkError>
  /** Changes the permission mode for the rest of the session. */
  readonly setPermissionMode: (
    mode: Control.PermissionMode,
    options?: RequestOptions
  ) => Effect.Effect<Control.SetPermissionModeResponse, SdkError>
  /** Changes the model for the next turns; `undefined` restores the default. */
  readonly setModel: (
    model: string | undefined,
    options?: RequestOptions
  ) => Effect.Effect<Control.SetModelResponse, SdkError>
  /** Sets the thinking budget; `null` removes the limit. */
  readonly setMaxThinkingTokens: (tokens: number | null, options?: RequestOptions) => Effect.Effect<void, SdkError>
  /** The status of every MCP server. */
  readonly mcpServerStatus: (options?: RequestOptions) => Effect.Effect<Control.McpStatusResponse, SdkError>
  /** How the context window is used, by category. */
  readonly getContextUsage: (options?: RequestOptions) => Effect.Effect<Control.ContextUsageResponse, SdkError>
  /**
   * Restores files changed since the given user message (needs `enableFileCheckpointing`). The CLI
   * reports "cannot rewind" as data (`canRewind: false` with `error`), not as a failure.
   */
  readonly rewindFiles: (
    userMessageId: string,
    options?: RewindFilesOptions
  ) => Effect.Effect<Control.RewindFilesResponse, SdkError>
  /** Stops a background task. */
  readonly stopTask: (taskId: string, options?: RequestOptions) => Effect.Effect<void, SdkError>
  /** Reconnects an MCP server. */
  readonly reconnectMcpServer: (serverName: string, options?: RequestOptions) => Effect.Effect<void, SdkError>
  /** Enables or disables an MCP server. */
  readonly toggleMcpServer: (
    serverName: string,
    enabled: boolean,
    options?: RequestOptions
  ) => Effect.Effect<void, SdkError>
  /** The CLI's answer to `initialize`: commands, models, account, output styles, its `pid`, … */
  readonly initializationResult: Effect.Effect<Control.InitializeResponse, SdkError>
  /** The session id: known at once with `options.sessionId`, otherwise the first one the CLI reports. */
  readonly sessionId: Effect.Effect<string, SdkError>
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
  /** The underlying control channel, for control subtypes without a method here. */
  readonly control: ControlChannelShape
}

/**
 * What `make` needs beyond the `Transport`: the `initialize` payload and the channel settings.
 * `ClaudeAgent.session` derives it from `Options`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionConfig {
  /** The `initialize` request (`{ subtype: "initialize", hooks, systemPrompt, … }`). */
  readonly initialize: { readonly subtype: "initialize"; readonly [key: string]: unknown }
  readonly controlTimeout?: Duration.DurationInput | undefined
  readonly messageBufferSize?: number | undefined
  /** Known up front when the caller chose it (`options.sessionId`). */
  readonly sessionId?: string | undefined
  /** How long closing waits for running callbacks before closing stdin. Default 5 s. */
  readonly closeGracePeriod?: Duration.DurationInput | undefined
  /**
   * Registers inbound control handlers before `initialize` is written (the CLI may call back
   * before it answers `initialize`).
   */
  readonly registerHandlers?: ((control: ControlChannelShape) => Effect.Effect<void>) | undefined
}

const decodeReply = <A, I>(schema: Schema.Schema<A, I>, subtype: string) => {
  const validate = ParseResult.validateEither(schema, { onExcessProperty: "preserve" })
  return (reply: unknown): Effect.Effect<A, MessageParseError> => {
    const result = validate(reply ?? {})
    return result._tag === "Right"
      ? Effect.succeed(result.right)
      : Effect.fail(
        new MessageParseError({
          detail: `unexpected ${subtype} reply: ${ParseResult.TreeFormatter.formatIssueSync(result.left)}`,
          raw: reply
        })
      )
  }
}

const decodeInterrupt = decodeReply(Control.InterruptResponse, "interrupt")
const decodeSetModel = decodeReply(Control.SetModelResponse, "set_model")
const decodeSetMode = decodeReply(Control.SetPermissionModeResponse, "set_permission_mode")
const decodeMcpStatus = decodeReply(Control.McpStatusResponse, "mcp_status")
const decodeContextUsage = decodeReply(Control.ContextUsageResponse, "get_context_usage")
const decodeRewind = decodeReply(Control.RewindFilesResponse, "rewind_files")
const decodeInitialize = decodeReply(Control.InitializeResponse, "initialize")

const isUserFrame = (prompt: Prompt): prompt is Message.UserMessageInput =>
  typeof prompt === "object" && "type" in prompt && prompt.type === "user"

const toUserFrame = (prompt: Prompt): Message.UserMessageInput =>
  isUserFrame(prompt) ? prompt : Message.userMessage(prompt)

/**
 * Whether a run state is idle: the CLI reported `idle`, or never reported a state (older CLIs,
 * fakes).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
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

/**
 * Makes a session over the `Transport` in context: starts the control channel's reader, writes
 * `initialize`, and returns at once (the reply is awaited lazily by `initializationResult`, so
 * the first prompt can follow `initialize` without a round trip).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentSession } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const session = yield* AgentSession.make({ initialize: { subtype: "initialize", hooks: {} } })
 *   yield* session.send("hello")
 *   yield* session.receiveResponse.pipe(Stream.runForEach((m) => Effect.log(m.type)))
 * })).pipe(Effect.provide(FakeCli.layer()))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("AgentSession.make")(function*(config: SessionConfig) {
  const transport = yield* Transport
  const control = yield* ControlChannel.make({
    controlTimeout: config.controlTimeout,
    messageBufferSize: config.messageBufferSize
  })
  if (config.registerHandlers !== undefined) yield* config.registerHandlers(control)

  // On the wire before any user message, but its reply is awaited only by `initializationResult`:
  // the first prompt does not wait for a round trip.
  const initReply = yield* control.start(config.initialize)
  const initializationResult = yield* Effect.cached(Effect.flatMap(initReply, decodeInitialize))

  // Pending frames taken from the queue but not yet emitted: a turn's stream stops at its
  // `result`, and whatever followed it in the same chunk waits here for the next consumer.
  let leftover: Array<unknown> = []
  let pendingError: SdkError | undefined
  const raw = control.messages
  const rawPull = yield* Stream.toPull(raw)

  const pull: Effect.Effect<Chunk.Chunk<Message.Message>, Option.Option<SdkError>> = Effect.suspend(() => {
    if (pendingError !== undefined) {
      const e = pendingError
      pendingError = undefined
      return Effect.fail(Option.some(e))
    }
    const source: Effect.Effect<ReadonlyArray<unknown>, Option.Option<SdkError>> = leftover.length > 0
      ? Effect.sync(() => {
        const taken = leftover
        leftover = []
        return taken
      })
      : Effect.map(rawPull, Chunk.toReadonlyArray)
    return Effect.map(source, (frames) => {
      const out: Array<Message.Message> = []
      for (let i = 0; i < frames.length; i++) {
        const decoded = Message.decode(frames[i])
        if (decoded._tag === "Left") {
          pendingError = decoded.left
          leftover = frames.slice(i + 1)
          break
        }
        out.push(decoded.right)
        if (isResultFrame(frames[i]) && i + 1 < frames.length) {
          leftover = leftover.length > 0 ? leftover : frames.slice(i + 1)
          break
        }
      }
      return Chunk.unsafeFromArray(out)
    })
  })

  const messages: Stream.Stream<Message.Message, SdkError> = Stream.repeatEffectChunkOption(pull)
  const receiveResponse = messages.pipe(Stream.takeUntil(Message.isResult))

  const closeGrace = config.closeGracePeriod !== undefined
    ? Duration.decode(config.closeGracePeriod)
    : Duration.seconds(5)
  // Closing, in two cases (every wait bounded by the grace period):
  // - the turn finished (its `result` came): the CLI may still call back (a hook, a background
  //   task) until it reports `idle`, and answers need stdin; wait for idle and for running
  //   callbacks, then close stdin;
  // - the turn is still running (the consumer was interrupted): the CLI would finish the turn
  //   after EOF, so ask it to stop with the protocol's `interrupt` first; it then goes idle
  //   within milliseconds and exits on EOF, with no signal needed.
  // The deadlines run on the live clock: a test under `TestClock` whose fake CLI never reports
  // `idle` must still be able to close its session.
  const liveClock = Clock.make()
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      const { afterResult, state } = yield* control.runState
      const running = state === "running" || state === "requires_action"
      if (running && !afterResult) {
        yield* control.request({ subtype: "interrupt" }, { timeout: closeGrace }).pipe(
          Effect.interruptible,
          Effect.ignore
        )
      }
      // The waits are made interruptible so that their deadline can stop them; `runDetached`
      // keeps the closing fiber's own pending interruption from stopping them at once.
      yield* Effect.zip(control.awaitRunState(isIdle), control.awaitNoneInFlight, { concurrent: true }).pipe(
        Effect.interruptible,
        Effect.timeout(closeGrace),
        Effect.ignore
      )
      yield* control.endInput
    }).pipe(Effect.withClock(liveClock), runDetached)
  )

  const session: AgentSession = {
    send: Effect.fn("AgentSession.send")(function*(prompt: Prompt) {
      yield* control.send(toUserFrame(prompt))
    }),
    messages,
    receiveResponse,
    interrupt: Effect.fn("AgentSession.interrupt")(function*(options?: InterruptOptions) {
      const reply = yield* control.request(
        options?.cancelQueued === true ? { subtype: "interrupt", cancel_queued: true } : { subtype: "interrupt" },
        options
      )
      return yield* decodeInterrupt(reply)
    }),
    setPermissionMode: Effect.fn("AgentSession.setPermissionMode")(function*(mode, options) {
      return yield* Effect.flatMap(control.request({ subtype: "set_permission_mode", mode }, options), decodeSetMode)
    }),
    setModel: Effect.fn("AgentSession.setModel")(function*(model, options) {
      return yield* Effect.flatMap(
        control.request(model === undefined ? { subtype: "set_model" } : { subtype: "set_model", model }, options),
        decodeSetModel
      )
    }),
    setMaxThinkingTokens: Effect.fn("AgentSession.setMaxThinkingTokens")(function*(tokens, options) {
      yield* control.request({ subtype: "set_max_thinking_tokens", max_thinking_tokens: tokens }, options)
    }),
    mcpServerStatus: Effect.fn("AgentSession.mcpServerStatus")(function*(options) {
      return yield* Effect.flatMap(control.request({ subtype: "mcp_status" }, options), decodeMcpStatus)
    }),
    getContextUsage: Effect.fn("AgentSession.getContextUsage")(function*(options) {
      return yield* Effect.flatMap(control.request({ subtype: "get_context_usage" }, options), decodeContextUsage)
    }),
    rewindFiles: Effect.fn("AgentSession.rewindFiles")(function*(userMessageId, options) {
      const reply = yield* control.request(
        options?.dryRun === true
          ? { subtype: "rewind_files", user_message_id: userMessageId, dry_run: true }
          : { subtype: "rewind_files", user_message_id: userMessageId },
        options
      )
      return yield* decodeRewind(reply)
    }),
    stopTask: Effect.fn("AgentSession.stopTask")(function*(taskId, options) {
      yield* control.request({ subtype: "stop_task", task_id: taskId }, options)
    }),
    reconnectMcpServer: Effect.fn("AgentSession.reconnectMcpServer")(function*(serverName, options) {
      yield* control.request({ subtype: "mcp_reconnect", serverName }, options)
    }),
    toggleMcpServer: Effect.fn("AgentSession.toggleMcpServer")(function*(serverName, enabled, options) {
      yield* control.request({ subtype: "mcp_toggle", serverName, enabled }, options)
    }),
    initializationResult,
    sessionId: config.sessionId !== undefined ? Effect.succeed(config.sessionId) : control.awaitSessionId,
    endInput: control.endInput,
    pid: Option.none(),
    stderr: transport.stderr,
    control
  }
  return session
}) satisfies (config: SessionConfig) => Effect.Effect<AgentSession, SdkError, Transport | Scope.Scope>
