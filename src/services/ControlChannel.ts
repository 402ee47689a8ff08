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
import type { Duration, Effect, Scope, Stream } from "effect"
import { Context, Layer } from "effect"
import type { CLIConnectionError, SdkError } from "../SdkError.js"
import * as internal from "../internal/controlChannel.js"
import type { Transport } from "./Transport.js"

/**
 * A handler for one subtype of CLI→SDK `control_request` (`can_use_tool`, `hook_callback`,
 * `mcp_message`, …). It gets the `request` object (with `subtype`) and the request id; its success
 * value is the `response` payload, its failure becomes an `error` response. If the CLI cancels the
 * request, the handler's fiber is interrupted and nothing is written.
 *
 * @since 0.1.0
 * @category models
 */
export type InboundHandler = (
  request: { readonly subtype: string; readonly [key: string]: unknown },
  requestId: string
) => Effect.Effect<unknown, unknown>

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
 * The errors an outbound control request can fail with: the CLI's error answer, the deadline,
 * or the end of the connection (with the cause that ended it).
 *
 * @since 0.1.0
 * @category models
 */
export type RequestError = SdkError

/**
 * The control channel's operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControlChannelShape {
  /**
   * Sends `{type:"control_request", request_id, request}` and waits for the matching
   * `control_response`. Succeeds with the reply's `response` payload (`undefined` when the CLI
   * sent none); fails with `ControlError`, `TimeoutException` (after which a
   * `control_cancel_request` is sent), or the error that ended the connection.
   */
  readonly request: (
    request: { readonly subtype: string; readonly [key: string]: unknown },
    options?: RequestOptions
  ) => Effect.Effect<unknown, RequestError>
  /**
   * Writes a request now and returns the wait for its reply (the deadline runs from the write).
   * For a request that must be on the wire before anything sent after it, like `initialize`,
   * without making the caller wait for the reply. The wait runs in the caller's scope.
   */
  readonly start: (
    request: { readonly subtype: string; readonly [key: string]: unknown },
    options?: RequestOptions
  ) => Effect.Effect<Effect.Effect<unknown, RequestError>, RequestError, Scope.Scope>
  /** Registers the handler for one inbound subtype, replacing any previous one. */
  readonly handle: (subtype: string, handler: InboundHandler) => Effect.Effect<void>
  /** Writes a non-control frame (a user message) to the CLI. */
  readonly send: (frame: unknown) => Effect.Effect<void, CLIConnectionError>
  /** Ends the CLI's input once every frame already sent is written. */
  readonly endInput: Effect.Effect<void>
  /**
   * Every frame that is not control traffic, raw, in order. Single consumer. Ends when the CLI
   * exits cleanly (or with code 1 right after an error `result`, which is how the CLI reports
   * one); fails with `ProcessError` when it dies otherwise, or with the framing error.
   */
  readonly messages: Stream.Stream<unknown, SdkError>
  /** How many inbound handlers are running now. */
  readonly inFlight: Effect.Effect<number>
  /** Completes when no inbound handler is running. */
  readonly awaitNoneInFlight: Effect.Effect<void>
  /** The `session_id` of the latest message that carried one. */
  readonly lastSessionId: Effect.Effect<string | undefined>
  /** Waits for the first `session_id` the CLI reports; fails if the session ends first. */
  readonly awaitSessionId: Effect.Effect<string, SdkError>
  /** Completes when the reader has ended (with the error that ended it, if any). */
  readonly closed: Effect.Effect<void, SdkError>
  /** The run's state as last reported by the CLI, and whether a `result` was the last turn message. */
  readonly runState: Effect.Effect<RunState>
  /** Completes when the run state satisfies `predicate` (checked now and on every change), or the reader ends. */
  readonly awaitRunState: (predicate: (state: RunState) => boolean) => Effect.Effect<void>
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
  /** How many non-control frames may wait for the consumer before the reader pauses. Default 4096. */
  readonly messageBufferSize?: number | undefined
}

/**
 * The `ControlChannel` service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ControlChannel } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const control = yield* ControlChannel.ControlChannel
 *   const reply = yield* control.request({ subtype: "mcp_status" }, { timeout: "5 seconds" })
 *   yield* Effect.log(reply)
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
   * import { Effect } from "effect"
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
