/**
 * The session's `initialize` request: its payload, what its reply must confirm, and the state of
 * the handshake that the message pull and the close sequence read.
 *
 * @internal
 */
import { Deferred, Effect, Predicate, type Scope } from "effect"
import * as Control from "../../schema/Control.js"
import { OptionsError } from "../../SdkError.js"
import type { ControlChannelShape, RequestError, RequestOptions } from "../../services/ControlChannel.js"
import type { HookRegistryShape } from "../../services/HookRegistry.js"
import type { McpBridgeShape } from "../../services/McpBridge.js"
import type { TransportShape } from "../../services/Transport.js"

/**
 * The payload: the options' fields, the registry's hooks and the in-process servers served at the
 * time (the same fields every time it is sent).
 *
 * @internal
 */
export const payload = (
  fields: Control.InitializePayload | undefined,
  hooks: HookRegistryShape,
  mcp: McpBridgeShape
): Effect.Effect<Control.InitializePayload> =>
  Effect.zipWith(
    mcp.serverNames,
    mcp.serverConfigs ?? Effect.succeed({}),
    (names, configs): Control.InitializePayload => ({
      ...fields,
      hooks: hooks.initializeHooks,
      ...(names.length === 0 ? {} : { sdkMcpServers: names }),
      ...(Object.keys(configs).length === 0 ? {} : { sdkMcpServerConfigs: configs })
    })
  )

// The CLI answered `initialize`, but its reply shows it cannot honour the option `field`.
const notHonoured = (field: string, detail: string) => new OptionsError({ field, detail })

/**
 * What the reply must confirm, as the official SDK checks it: a CLI too old to read MCP servers
 * from `initialize` omits `mcp_servers_applied` and runs without them; one that does not honour
 * `onFailure` would let a blocking hook's failure through. Either ends the session.
 *
 * @internal
 */
export const confirmApplied = (
  sent: Control.InitializePayload,
  reply: Control.InitializeResponse
): Effect.Effect<void, OptionsError> => {
  const version = reply.claude_code_version === undefined ? "" : ` (version ${reply.claude_code_version})`
  if (sent.mcpServers !== undefined) {
    if (reply.mcp_servers_applied === undefined) {
      return Effect.fail(notHonoured(
        "mcpServers",
        `this Claude Code${version} is too old to read MCP servers from the initialize request, so it ` +
          `started without them; the session was ended. Update the CLI, or use mcpServersDelivery: "argv".`
      ))
    }
    if (!reply.mcp_servers_applied) {
      return Effect.logWarning(
        "effect-claude-agent: the CLI reports that it did not load the MCP servers sent in initialize: " +
          "this session may run without them (check that nothing removes --await-initialize)."
      )
    }
  }
  const blocking = Object.values(sent.hooks ?? {}).some((matchers) =>
    matchers.some((matcher) => Predicate.isRecord(matcher) && matcher.onFailure === "block")
  )
  if (blocking && reply.hook_on_failure_supported !== true) {
    return Effect.fail(notHonoured(
      "hooks",
      `this Claude Code${version} does not honour onFailure on hook matchers, so a failing hook ` +
        `with onFailure: "block" would not block; the session was ended. Update the CLI, or remove onFailure: "block".`
    ))
  }
  if (sent.plugins !== undefined && sent.plugins.length > 0 && reply.plugins_applied !== true) {
    return Effect.logWarning(
      `effect-claude-agent: the CLI reports plugins_applied=${String(reply.plugins_applied)} for the plugins ` +
        "sent in initialize: it runs with the plugins it was launched with."
    )
  }
  return Effect.void
}

/**
 * Sends `initialize` and checks its reply. As the official SDK does, a reply that does not confirm
 * what was asked ends the session: no prompt is answered without what the caller asked for.
 *
 * @internal
 */
export const send = (
  control: ControlChannelShape,
  transport: TransportShape,
  sent: Control.InitializePayload,
  options?: RequestOptions
): Effect.Effect<Control.InitializeResponse, RequestError> =>
  Effect.flatMap(control.request(Control.Initialize, sent, options), (reply) => confirmed(transport, sent, reply))

const confirmed = (transport: TransportShape, sent: Control.InitializePayload, reply: Control.InitializeResponse) =>
  Effect.as(
    confirmApplied(sent, reply).pipe(Effect.tapError(() => Effect.zipRight(transport.terminate, transport.endInput))),
    reply
  )

/**
 * Writes the first `initialize` now (on the wire before any user message) and returns its checked
 * reply, awaited once and cached (the first prompt does not wait for a round trip), with the
 * handshake's state.
 *
 * @internal
 */
export const start = (
  control: ControlChannelShape,
  transport: TransportShape,
  sent: Control.InitializePayload
): Effect.Effect<Tracked<Control.InitializeResponse>, RequestError, Scope.Scope> =>
  Effect.flatMap(
    control.start(Control.Initialize, sent),
    (reply) => track(Effect.flatMap(reply, (r) => confirmed(transport, sent, r)), transport.terminate)
  )

/**
 * Where the handshake is, for those that must not wait on it: the message pull (which ends with
 * its failure) and the close sequence (which stops a CLI that never initialised).
 *
 * @internal
 */
export interface InitState {
  readonly answered: () => boolean
  readonly error: () => RequestError | undefined
}

/**
 * The handshake's state and its result, awaited once and cached.
 *
 * @internal
 */
export interface Tracked<A> extends InitState {
  readonly result: Effect.Effect<A, RequestError>
}

/**
 * Follows `initialized` in the current scope, on a fiber of its own. The state changes before the
 * result is completed, so whoever sees the result sees the state. A failed handshake stops the CLI
 * (a session that could not initialise serves nothing), which ends its output: a message pull
 * waiting for it then ends, with the handshake's failure, and needs no race against it.
 *
 * @internal
 */
export const track = <A>(
  initialized: Effect.Effect<A, RequestError>,
  /** Stops the CLI (the transport's `terminate`); not awaited: it waits for the exit. */
  stop: Effect.Effect<void>
): Effect.Effect<Tracked<A>, never, Scope.Scope> =>
  Effect.flatMap(Deferred.make<A, RequestError>(), (done) => {
    let answered = false
    let error: RequestError | undefined
    const observed = initialized.pipe(
      Effect.tap(() => Effect.sync(() => void (answered = true))),
      Effect.tapError((e) => Effect.zipRight(Effect.sync(() => void (error = e)), Effect.forkDaemon(stop))),
      // Also an interruption (the session's scope closed first): later waits end with it.
      Effect.intoDeferred(done)
    )
    return Effect.as(Effect.forkScoped(observed), {
      answered: () => answered,
      error: () => error,
      result: Deferred.await(done)
    })
  })
