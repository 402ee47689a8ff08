/**
 * `PermissionHandler`: answers the CLI's `can_use_tool` control requests.
 *
 * Present in a session's context when the session has a permission callback (`canUseTool`); the
 * CLI is then started with `--permission-prompt-tool=stdio` and asks the host before a tool
 * runs. A session without one answers nothing of the kind, because the CLI asks nothing.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import * as Permission from "../Permission.js"
import type * as Control from "../schema/Control.js"
import type { InboundHandler } from "./ControlChannel.js"

/**
 * What a permission handler does for one session.
 *
 * @since 0.1.0
 * @category models
 */
export interface PermissionHandlerShape {
  /** The handler for the `can_use_tool` control subtype. */
  readonly canUseTool: InboundHandler<typeof Control.CanUseTool>
}

/**
 * The permission handler service.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { PermissionHandler } from "effect-claude-agent"
 *
 * // Allows every tool and records what was asked.
 * const asked: Array<string> = []
 * const layer = Layer.succeed(PermissionHandler.PermissionHandler, {
 *   canUseTool: (request) =>
 *     Effect.sync(() => {
 *       asked.push(request.tool_name)
 *       return { behavior: "allow", updatedInput: request.input }
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class PermissionHandler extends Context.Tag("effect-claude-agent/PermissionHandler")<
  PermissionHandler,
  PermissionHandlerShape
>() {}

/**
 * Builds the handler for a `canUseTool` callback, capturing the services it needs.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission, PermissionHandler } from "effect-claude-agent"
 *
 * const handler = PermissionHandler.make(() => Effect.succeed(Permission.allow()))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <E, R>(
  canUseTool: Permission.CanUseTool<E, R>
): Effect.Effect<PermissionHandlerShape, never, R> =>
  Effect.map(Permission.makeHandler(canUseTool), (handler) => ({ canUseTool: handler }))

/**
 * The handler for a `canUseTool` callback as a layer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission, PermissionHandler } from "effect-claude-agent"
 *
 * const layer = PermissionHandler.layer((toolName) =>
 *   Effect.succeed(toolName === "Bash" ? Permission.deny("no shell") : Permission.allow()))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R>(canUseTool: Permission.CanUseTool<E, R>): Layer.Layer<PermissionHandler, never, R> =>
  Layer.effect(PermissionHandler, make(canUseTool))
