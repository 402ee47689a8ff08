/**
 * `HookRegistry`: answers the CLI's `hook_callback` control requests.
 *
 * The registry owns the hook callbacks of a session: it assigns their ids, contributes the
 * `hooks` field of `initialize` (`{ Event: [{ matcher, hookCallbackIds, timeout }] }`) and answers
 * `hook_callback` by id. This version ships the seam and the empty registry (no hooks: `hooks: {}`,
 * and any `hook_callback` is answered with an error naming the unknown id); typed hook callbacks
 * come with the callbacks feature.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { InboundHandler } from "./ControlChannel.js"

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
  readonly handleCallback: InboundHandler
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
        new Error(
          `no hook callback is registered with id ${String(request.callback_id)} (this session registered no hooks)`
        )
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
