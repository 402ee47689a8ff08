/**
 * `AgentSession.make` over the session's services as a context: `ClaudeAgent` opens its sessions
 * over what `SessionServices.build` returns without providing it (a context set and restored
 * around the opening), and `AgentSession.make` passes the fiber's own.
 *
 * @internal
 */
import { Context, Duration, Effect, Option, Scope } from "effect"
import type { AgentSession, SessionConfig } from "../../AgentSession.js"
import { ControlChannel, type RequestError } from "../../services/ControlChannel.js"
import { HookRegistry } from "../../services/HookRegistry.js"
import { McpBridge } from "../../services/McpBridge.js"
import { PermissionHandler } from "../../services/PermissionHandler.js"
import { Transport } from "../../services/Transport.js"
import { BudgetGuard } from "../budget/guard.js"
import * as Defaults from "../defaults.js"
import * as Close from "./close.js"
import * as Handlers from "./handlers.js"
import * as Initialize from "./initialize.js"
import * as SetMcpServers from "./mcpServers.js"
import * as MessagePull from "./messagePull.js"
import * as Methods from "./methods.js"
import * as Turns from "./turns.js"

/**
 * Opens a session over `services` (a `PermissionHandler` and the `CurrentTurn` cell are taken
 * from them when present; a `BudgetGuard` from the fiber), in the current scope. See
 * `AgentSession.make`.
 *
 * @internal
 */
export const open = <R = never>(
  services: Context.Context<Transport | ControlChannel | HookRegistry | McpBridge>,
  config: SessionConfig<R>
): Effect.Effect<AgentSession, RequestError, Scope.Scope | R> =>
  Effect.gen(function*() {
    const transport = Context.get(services, Transport)
    const control = Context.get(services, ControlChannel)
    const hooks = Context.get(services, HookRegistry)
    const mcp = Context.get(services, McpBridge)
    const permissions = Context.getOption(services, PermissionHandler)
    yield* Handlers.register(control, { hooks, mcp, permissions }, config.onElicitation)

    const payload = Initialize.payload(config.initialize, hooks, mcp)
    // A CLI that never answers `initialize` (a wrapper script, a login prompt) must not leave the
    // message streams waiting forever: its failure ends them.
    const init = yield* Initialize.start(control, transport, yield* payload)
    const initializationResult = init.result
    const turns = yield* Turns.track(control, Option.getOrUndefined(Context.getOption(services, Turns.CurrentTurn)))
    const guard = yield* Effect.serviceOption(BudgetGuard)
    const pull = yield* MessagePull.make(control.messages, init, {
      includeCommandLifecycle: config.includeCommandLifecycle,
      includeSessionState: config.includeSessionState
    })
    const grace = config.closeGracePeriod !== undefined
      ? Duration.decode(config.closeGracePeriod)
      : Defaults.closeGracePeriod
    // A scope's own finalizer, uninterruptible as `Effect.addFinalizer`'s are: the close reads
    // nothing from the fiber (its clock is the live one), so the fiber's refs need no diff and
    // patch around it.
    yield* Scope.addFinalizer(yield* Effect.scope, Effect.uninterruptible(Close.close(control, transport, init, grace)))

    const session: AgentSession = {
      send: Methods.send(
        transport,
        turns.started,
        config.verbatimPrompts === true,
        Option.isSome(guard) ? guard.value.admit : undefined
      ),
      messages: pull.messages,
      receiveResponse: pull.receiveResponse,
      ...Methods.make(control),
      setMcpServers: yield* SetMcpServers.make(control, mcp, config.controlTimeout),
      // `system/commands_changed` replaces the commands of the `initialize` reply.
      supportedCommands: Effect.suspend(() => {
        const latest = pull.latestCommands()
        return latest !== undefined
          ? Effect.succeed(latest)
          : Effect.map(initializationResult, (reply) => pull.latestCommands() ?? reply.commands)
      }),
      supportedModels: Effect.map(initializationResult, (reply) => reply.models),
      supportedAgents: Effect.map(initializationResult, (reply) => reply.agents ?? []),
      accountInfo: Effect.map(initializationResult, (reply) => reply.account ?? {}),
      reinitialize: Methods.reinitialize(control, transport, payload),
      initializationResult,
      sessionId: config.sessionId !== undefined ? Effect.succeed(config.sessionId) : control.awaitSessionId,
      endInput: transport.endInput,
      usage: turns.usage,
      pid: transport.pid,
      stderr: transport.stderr,
      control
    }
    return session
  }).pipe(Effect.withSpan("AgentSession.make", { captureStackTrace: false }))
