/**
 * `ControlChannel`: the control protocol over a `Transport`.
 *
 * One reader fiber owns the transport's stdout. It routes control traffic on the raw frame's
 * `type` before anything is queued for the user: `control_response` completes a pending request,
 * `control_request` runs a registered handler in its own fiber, `control_cancel_request`
 * interrupts that fiber. Everything else goes to a bounded queue that `messages` drains. When the
 * reader ends, every pending request fails at once with the real cause.
 *
 * @since 0.1.0
 */
import type { Duration, Effect, Exit, Scope, Stream } from "effect"
import { Context, Layer } from "effect"
import type * as Control from "../schema/Control.js"
import type {
  CLIConnectionError,
  CLIEndedError,
  ControlError,
  OptionsError,
  ProcessError,
  SessionClosedError,
  TimeoutException
} from "../SdkError.js"
import * as internal from "../internal/control/channel.js"
import type { ReadError, Transport } from "./Transport.js"

/**
 * A handler for one CLI→SDK request (`can_use_tool`, `hook_callback`, `mcp_message`, …): it gets
 * the payload, decoded with the descriptor's payload Schema (fields it does not name are kept),
 * and the request id; its success is encoded with the descriptor's success Schema and sent as the
 * `response`; a failure or defect becomes an `error` answer. If the CLI cancels the request, the
 * handler's fiber is interrupted and nothing is written.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control, ControlChannel } from "effect-claude-agent"
 *
 * const allowAll: ControlChannel.InboundHandler<typeof Control.CanUseTool> = (request) =>
 *   Effect.succeed({ behavior: "allow", updatedInput: request.input })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type InboundHandler<Req extends Control.Request.Any> = (
  payload: Control.Request.Payload<Req>,
  requestId: string
) => Effect.Effect<Control.Request.Success<Req>, unknown>

/**
 * Options for one outbound control request.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** The deadline for the answer; defaults to the channel's (60 s unless configured). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Options for a request written with `start`: those of any request, and what to run where the
 * request is settled.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartOptions<Req extends Control.Request.Any> extends RequestOptions {
  /**
   * Runs with the request's outcome (its reply decoded, or its failure) where the request is
   * settled, before the wait completes and uninterruptibly: on the reader's fiber for a reply, the
   * deadline's for a timeout, the one that ends the channel otherwise. So a check of the reply
   * needs no fiber waiting for it. It must not wait (the reader waits on it). Not run for a
   * request withdrawn because its scope closed.
   */
  readonly onSettled?:
    | ((outcome: Exit.Exit<Control.Request.Success<Req>, RequestError>) => Effect.Effect<void>)
    | undefined
}

/**
 * What an outbound control request can fail with: the CLI's error answer (or a reply that breaks
 * the descriptor's success Schema: `ControlError` with `errorCode: "invalid_response"`), the
 * deadline, an invalid argument (`OptionsError`: nothing was sent), a broken pipe, the CLI's end
 * before it answered, the session's close, or the death of the process.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestError =
  | ControlError
  | TimeoutException
  | OptionsError
  | CLIConnectionError
  | CLIEndedError
  | SessionClosedError
  | ProcessError

/**
 * What the message stream can fail with: the framing of stdout, the connection, the process, the
 * session's close while the stream was still read.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamError = ReadError | ProcessError | SessionClosedError

/**
 * The arguments of `request` after the descriptor: the payload (optional when the request sends
 * nothing beside its subtype), then the options.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestArgs<Req extends Control.Request.Any> = {} extends Control.Request.Payload<Req>
  ? [payload?: Control.Request.Payload<Req>, options?: RequestOptions]
  : [payload: Control.Request.Payload<Req>, options?: RequestOptions]

/**
 * The arguments of `start` after the descriptor: the payload (optional when the request sends
 * nothing beside its subtype), then the options.
 *
 * @since 0.1.0
 * @category models
 */
export type StartArgs<Req extends Control.Request.Any> = {} extends Control.Request.Payload<Req>
  ? [payload?: Control.Request.Payload<Req>, options?: StartOptions<Req>]
  : [payload: Control.Request.Payload<Req>, options?: StartOptions<Req>]

/**
 * The control channel's operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControlChannelShape {
  /**
   * Sends `{type:"control_request", request_id, request:{subtype, ...payload}}` and waits for the
   * matching `control_response`; succeeds with its `response` decoded by the descriptor. On the
   * deadline a `control_cancel_request` is sent and the request fails with `TimeoutException`.
   */
  readonly request: <Req extends Control.Request.Any>(
    request: Req,
    ...args: RequestArgs<Req>
  ) => Effect.Effect<Control.Request.Success<Req>, RequestError>
  /**
   * Writes a request now and returns the wait for its reply (the deadline runs from the write),
   * decoded where the reply is settled and kept: every wait gets the same outcome. For a request
   * that must be on the wire before anything sent after it, like `initialize`, without making the
   * caller wait for the reply. The caller's scope withdraws the request if it is still pending
   * when the scope closes (a wait then never completes).
   */
  readonly start: <Req extends Control.Request.Any>(
    request: Req,
    ...args: StartArgs<Req>
  ) => Effect.Effect<Effect.Effect<Control.Request.Success<Req>, RequestError>, RequestError, Scope.Scope>
  /** Registers the handler for one CLI→SDK request, replacing any previous one for its subtype. */
  readonly handle: <Req extends Control.Request.Any>(request: Req, handler: InboundHandler<Req>) => Effect.Effect<void>
  /**
   * Every frame that is not control traffic, raw, in order. Single consumer. Ends when the CLI
   * exits cleanly (or with code 1 right after an error `result`, which is how the CLI reports
   * one); fails with `ProcessError` when it dies otherwise, or with the framing error.
   */
  readonly messages: Stream.Stream<unknown, StreamError>
  /** How many inbound handlers are running now. */
  readonly inFlight: Effect.Effect<number>
  /** Completes when no inbound handler is running. */
  readonly awaitNoneInFlight: Effect.Effect<void>
  /** The `session_id` of the latest message that carried one. */
  readonly lastSessionId: Effect.Effect<string | undefined>
  /** Waits for the first `session_id` the CLI reports; fails if the session ends first. */
  readonly awaitSessionId: Effect.Effect<string, StreamError | CLIEndedError>
  /** Completes when the reader has ended (with the error that ended it, if any). */
  readonly closed: Effect.Effect<void, StreamError>
  /** The run's state as last reported by the CLI, and whether a `result` was the last turn message. */
  readonly runState: Effect.Effect<RunState>
  /** Completes when the run state satisfies `predicate` (checked now and on every change), or the reader ends. */
  readonly awaitRunState: (predicate: (state: RunState) => boolean) => Effect.Effect<void>
  /**
   * Every `result` frame from now on, raw, as the reader sees it (whether or not anyone consumes
   * `messages`): for telemetry and supervision. Subscribed when this effect runs, in its scope.
   */
  readonly results: Effect.Effect<Stream.Stream<{ readonly [key: string]: unknown }>, never, Scope.Scope>
}

/**
 * The run's state: `state` is the CLI's last `session_state_changed` (`running`,
 * `requires_action`, `idle`; `undefined` before the first), `afterResult` whether the turn's
 * `result` came after the last assistant output, `results` how many results came so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunState {
  readonly state: string | undefined
  readonly afterResult: boolean
  /** How many `result` messages the CLI has written. */
  readonly results: number
}

/**
 * Configuration of a control channel.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControlChannelConfig {
  /** Default deadline for outbound requests. Default 60 seconds. */
  readonly controlTimeout?: Duration.DurationInput | undefined
  /**
   * How many bytes of messages (as the CLI wrote them) may wait for the consumer before the
   * reader pauses. Below that, a consumer that is behind never delays control traffic: the reader
   * keeps reading, answering hooks, permission prompts and tool calls. At the cap it waits for the
   * consumer (logging a warning once), which also holds back control frames: they share one pipe.
   * Default 64 MiB.
   */
  readonly messageBufferBytes?: number | undefined
}

/**
 * The `ControlChannel` service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control, ControlChannel } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const control = yield* ControlChannel.ControlChannel
 *   const status = yield* control.request(Control.McpStatus, {}, { timeout: "5 seconds" })
 *   yield* Effect.log(status.mcpServers.map((server) => server.name))
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class ControlChannel extends Context.Tag("effect-claude-agent/ControlChannel")<
  ControlChannel,
  ControlChannelShape
>() {
  /**
   * Builds a control channel over the `Transport` in context, with its reader fiber in the
   * current scope.
   *
   * @example
   * ```ts
   * import { ControlChannel } from "effect-claude-agent"
   *
   * const channel = ControlChannel.ControlChannel.make({ controlTimeout: "30 seconds" })
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly make = (
    config: ControlChannelConfig = {}
  ): Effect.Effect<ControlChannelShape, never, Transport | Scope.Scope> => internal.make(config)

  /**
   * The control channel as a layer over the `Transport` in context.
   *
   * @example
   * ```ts
   * import { Layer } from "effect"
   * import { ControlChannel, Transport } from "effect-claude-agent"
   *
   * declare const transportLayer: Layer.Layer<Transport.Transport>
   * const layer = ControlChannel.ControlChannel.layer().pipe(Layer.provide(transportLayer))
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer = (config: ControlChannelConfig = {}): Layer.Layer<ControlChannel, never, Transport> =>
    Layer.scoped(ControlChannel, internal.make(config))
}
