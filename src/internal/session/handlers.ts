/**
 * The session's answers to the CLI's requests, registered on its control channel.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import * as Control from "../../schema/Control.js"
import type { ControlChannelShape } from "../../services/ControlChannel.js"
import type { HookRegistryShape } from "../../services/HookRegistry.js"
import type { McpBridgeShape } from "../../services/McpBridge.js"
import type { PermissionHandlerShape } from "../../services/PermissionHandler.js"
import { provideCaptured } from "../effect/captured.js"

// What the official SDKs answer an elicitation nobody handles.
const declined: Control.ElicitationResult = { action: "decline" }

/**
 * Registers the hook, MCP, permission and elicitation handlers. Done before `initialize` is
 * written: the CLI may call back before it answers. Without callbacks, hook and MCP requests
 * still get (error) answers, never silence, and an elicitation is declined as the official SDKs do.
 *
 * @internal
 */
export const register = <R>(
  control: ControlChannelShape,
  services: {
    readonly hooks: HookRegistryShape
    readonly mcp: McpBridgeShape
    readonly permissions: Option.Option<PermissionHandlerShape>
  },
  onElicitation: Control.OnElicitation<unknown, R> | undefined
): Effect.Effect<void, never, R> =>
  Effect.gen(function*() {
    yield* control.handle(Control.HookCallback, services.hooks.handleCallback)
    yield* control.handle(Control.McpMessage, services.mcp.handleMessage)
    if (Option.isSome(services.permissions)) {
      yield* control.handle(Control.CanUseTool, services.permissions.value.canUseTool)
    }
    if (onElicitation === undefined) {
      return yield* control.handle(Control.Elicitation, () => Effect.succeed(declined))
    }
    const callbackContext = yield* Effect.context<R>()
    yield* control.handle(
      Control.Elicitation,
      (request, requestId) => provideCaptured(onElicitation(request, requestId), callbackContext)
    )
  })
