/**
 * `HookRegistry`: answers the CLI's `hook_callback` control requests.
 *
 * The registry owns the hook callbacks of a session: it assigns their ids, contributes the
 * `hooks` field of `initialize` (`{ Event: [{ matcher, hookCallbackIds, timeout }] }`) and answers
 * `hook_callback` by id: it decodes the input, runs the callback with the services captured when
 * the registry was made, and checks the answer before it goes on the wire. The callback's logs
 * carry the control channel's annotations (`callback_id`, `hook_event_name`, the request id):
 * the registry adds none of its own, which would cost a set-and-restore per call.
 *
 * A callback that fails or dies makes the handler fail, so the CLI gets an `error` response and
 * never mistakes a broken hook for an approval. A callback whose request the CLI cancels is
 * interrupted and nothing is answered.
 *
 * @since 0.1.0
 */
import { Cause, Context, Duration, Effect, Either, Layer, Option, Predicate, Schema } from "effect"
import * as Hook from "../Hook.js"
import type * as Control from "../schema/Control.js"
import * as Issues from "../internal/schema/issues.js"
import type { InboundHandler } from "./ControlChannel.js"
import { callbackEffect, providing } from "../internal/effect/captured.js"
import { optionalString } from "../internal/schema/schemas.js"

/**
 * What a hook registry does for one session.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookRegistryShape {
  /** The `hooks` field of the `initialize` request. */
  readonly initializeHooks: { readonly [event: string]: ReadonlyArray<unknown> }
  /** The handler for the `hook_callback` control subtype. */
  readonly handleCallback: InboundHandler<typeof Control.HookCallback>
}

/**
 * One matcher as the `initialize` request carries it. `timeout` is in seconds.
 *
 * @example
 * ```ts
 * import { HookRegistry } from "effect-claude-agent"
 * const wire: HookRegistry.InitializeHookMatcher = { matcher: "Bash", hookCallbackIds: ["hook_0"], timeout: 30 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface InitializeHookMatcher {
  readonly matcher?: string
  readonly hookCallbackIds: ReadonlyArray<string>
  readonly timeout?: number
  readonly onFailure?: "continue" | "block"
}

/**
 * The hook registry service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HookRegistry } from "effect-claude-agent"
 *
 * const ids = Effect.map(HookRegistry.HookRegistry, (registry) => Object.keys(registry.initializeHooks))
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class HookRegistry extends Context.Tag("effect-claude-agent/HookRegistry")<HookRegistry, HookRegistryShape>() {
  /**
   * A registry with no hooks: `initialize` carries `hooks: {}` and every `hook_callback` is
   * answered with an error (the CLI then treats the hook as failed, never as approved).
   *
   * @example
   * ```ts
   * import { HookRegistry } from "effect-claude-agent"
   * const ids = Object.keys(HookRegistry.HookRegistry.empty.initializeHooks) // []
   * ```
   *
   * @since 0.1.0
   */
  static readonly empty: HookRegistryShape = {
    initializeHooks: {},
    handleCallback: (request) =>
      Effect.fail(
        new HookCallbackError({
          callbackId: request.callback_id,
          detail: "no hook callback is registered with this id (this session registered no hooks)"
        })
      )
  }

  /**
   * The empty registry as a layer.
   *
   * @example
   * ```ts
   * import { HookRegistry } from "effect-claude-agent"
   * const layer = HookRegistry.HookRegistry.layerEmpty
   * ```
   *
   * @since 0.1.0
   */
  static readonly layerEmpty: Layer.Layer<HookRegistry> = Layer.succeed(HookRegistry, HookRegistry.empty)
}

interface Registered<R> {
  readonly event: string
  readonly callback: Hook.HookCallback<unknown, R>
  readonly fail: (detail: string) => Effect.Effect<never, HookCallbackError>
  /** What a call's outcome becomes: made once per callback, as its id and event are known then. */
  readonly outcome: {
    readonly onFailure: (cause: Cause.Cause<unknown>) => Effect.Effect<never, unknown>
    readonly onSuccess: (output: Hook.HookOutput) => Effect.Effect<Record<string, unknown>, HookCallbackError>
  }
}

// The CLI takes seconds; an infinite duration means "no deadline", which is the CLI's default.
const timeoutSeconds = (timeout: Duration.DurationInput): number | undefined => {
  const duration = Duration.decode(timeout)
  return Duration.isFinite(duration) ? Duration.toSeconds(duration) : undefined
}

const initializeMatcher = <R>(matcher: Hook.HookMatcher<R>, ids: ReadonlyArray<string>): InitializeHookMatcher => {
  const seconds = matcher.timeout === undefined ? undefined : timeoutSeconds(matcher.timeout)
  return {
    ...(matcher.matcher === undefined ? {} : { matcher: matcher.matcher }),
    hookCallbackIds: ids,
    ...(seconds === undefined ? {} : { timeout: seconds }),
    ...(matcher.onFailure === undefined ? {} : { onFailure: matcher.onFailure })
  }
}

/**
 * A hook callback failed, or answered something the CLI cannot read, or the CLI called a callback
 * id this session never registered (`event` is then absent). The control channel answers the CLI
 * with an `error` (the hook then counts as failed, never as approved) and logs it once.
 *
 * @example
 * ```ts
 * import { HookRegistry } from "effect-claude-agent"
 * const e = new HookRegistry.HookCallbackError({ event: "PreToolUse", callbackId: "hook_0", detail: "boom" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class HookCallbackError extends Schema.TaggedError<HookCallbackError>(
  "effect-claude-agent/HookCallbackError"
)("HookCallbackError", {
  /** The hook event the callback was registered for; absent for an id that was never registered. */
  event: optionalString,
  callbackId: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `${this.event ?? "unknown"} hook callback ${this.callbackId}: ${this.detail}`
  }
}

const describe = (e: unknown): string =>
  Predicate.hasProperty(e, "message") && typeof e.message === "string" ? e.message : String(e)

// A callback as the registry keeps it, with its failures and the handling of its outcome. One
// step for what `catchAllDefect`, `catchAll` and `flatMap` did in three: a defect first, then a
// failure; an interruption goes through as it is.
const registered = <R>(id: string, event: string, callback: Hook.HookCallback<unknown, R>): Registered<R> => {
  const fail = (detail: string) => Effect.fail(new HookCallbackError({ event, callbackId: id, detail }))
  return {
    event,
    callback,
    fail,
    outcome: {
      onFailure: (cause) => {
        const defect = Cause.dieOption(cause)
        if (Option.isSome(defect)) return fail(`died: ${describe(defect.value)}`)
        const failure = Cause.failureOption(cause)
        if (Option.isNone(failure)) return Effect.failCause(cause)
        const e = failure.value
        return e instanceof HookCallbackError ? Effect.fail(e) : fail(`failed: ${describe(e)}`)
      },
      onSuccess: (output) => {
        const encoded = Hook.encodeOutput(output)
        if (Either.isLeft(encoded)) return fail(`returned an invalid output: ${Issues.describe(encoded.left)}`)
        const wire = encoded.right
        return Predicate.isRecord(wire) ? Effect.succeed(wire) : fail("returned an output that is not an object")
      }
    }
  }
}

/**
 * Builds the registry for a session's hooks. Ids are `hook_0`, `hook_1`, … in a stable order:
 * events in the object's order, then matchers, then callbacks. The services the callbacks need
 * (`R`) are captured now and provided to every call.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, HookRegistry } from "effect-claude-agent"
 *
 * const registry = HookRegistry.make({
 *   PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(Hook.deny("no shell"))], timeout: "10 seconds" }]
 * })
 * // initializeHooks: { PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"], timeout: 10 }] }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R>(hooks: Hook.Hooks<R>): Effect.Effect<HookRegistryShape, never, R> =>
  Effect.map(Effect.context<R>(), (context) => {
    const byId = new Map<string, Registered<R>>()
    const initializeHooks: Record<string, ReadonlyArray<InitializeHookMatcher>> = {}
    for (const [event, matchers] of Object.entries(hooks)) {
      if (matchers === undefined || matchers.length === 0) continue
      initializeHooks[event] = matchers.map((matcher) => {
        const ids = matcher.hooks.map((callback) => {
          const id = `hook_${byId.size}`
          const field = `hooks.${event}`
          byId.set(id, registered(id, event, (input, toolUseId) => callbackEffect(callback(input, toolUseId), field)))
          return id
        })
        return initializeMatcher(matcher, ids)
      })
    }

    // The services are provided around the whole answer, once: the control channel then starts
    // the answer's fiber with them (see `providing`).
    const answer = (request: Control.Request.Payload<typeof Control.HookCallback>) =>
      Effect.suspend(() => {
        const id = request.callback_id
        const registered = byId.get(id)
        if (registered === undefined) {
          return Effect.fail(
            new HookCallbackError({ callbackId: id, detail: "no hook callback is registered with this id" })
          )
        }
        const decoded = Hook.decodeInput(request.input)
        if (Either.isLeft(decoded)) return registered.fail(`invalid input: ${decoded.left.detail}`)
        return Effect.matchCauseEffect(registered.callback(decoded.right, request.tool_use_id), registered.outcome)
      })

    const handleCallback: InboundHandler<typeof Control.HookCallback> = providing(answer, context)
    return { initializeHooks, handleCallback }
  })

/**
 * The registry for `hooks` as a layer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HookRegistry } from "effect-claude-agent"
 *
 * const layer = HookRegistry.layer({ Stop: [{ hooks: [() => Effect.succeed({})] }] })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R>(hooks: Hook.Hooks<R>): Layer.Layer<HookRegistry, never, R> =>
  Layer.effect(HookRegistry, make(hooks))
