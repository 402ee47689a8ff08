/**
 * The session's `initialize` request: its payload, what its reply must confirm, and the state of
 * the handshake that the message pull and the close sequence read.
 *
 * @internal
 */
import { Cause, Deferred, Effect, Exit, Option, Predicate, Scope } from "effect"
import * as Control from "../../schema/Control.js"
import * as Discovery from "../cli/discovery.js"
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
 * Writes the first `initialize` now (on the wire before any user message) and returns the
 * handshake: its reply is decoded and checked where the channel settles it (the first prompt does
 * not wait for a round trip, and no fiber waits for the reply).
 *
 * @internal
 */
export const start = (
  control: ControlChannelShape,
  transport: TransportShape,
  sent: Control.InitializePayload
): Effect.Effect<Tracked<Control.InitializeResponse>, RequestError, Scope.Scope> =>
  Effect.flatMap(
    // A failed check also closes stdin, as `send`'s does.
    handshake<Control.InitializeResponse>(
      transport.terminate,
      Effect.zipRight(transport.terminate, transport.endInput)
    ),
    (init) =>
      Effect.as(
        control.start(Control.Initialize, sent, {
          onSettled: (reply) =>
            init.settle(Effect.flatMap(
              Effect.tapBoth(reply, {
                onSuccess: (r) => Discovery.reportVersion(transport, r.claude_code_version),
                onFailure: () => Discovery.reportVersion(transport, undefined)
              }),
              (r) => Effect.as(confirmApplied(sent, r), r)
            ))
        }),
        init
      )
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
 * The handshake's state and its result, kept once settled.
 *
 * @internal
 */
export interface Tracked<A> extends InitState {
  readonly result: Effect.Effect<A, RequestError>
}

/**
 * A handshake that `settle` completes, on whichever fiber settles the request.
 *
 * @internal
 */
export interface Handshake<A> extends Tracked<A> {
  /**
   * Runs the reply's outcome (its checks included: they must not wait) and records it. The state
   * changes before the result is completed, so whoever sees the result sees the state.
   */
  readonly settle: (outcome: Effect.Effect<A, RequestError>) => Effect.Effect<void>
}

/**
 * A handshake in the current scope. A failed handshake stops the CLI (a session that could not
 * initialise serves nothing), which ends its output: a message pull waiting for it then ends, with
 * the handshake's failure, and needs no race against it. The stop is not awaited (it waits for the
 * exit, and the reader may be the one settling). If the scope closes first, later waits for the
 * result are interrupted.
 *
 * @internal
 */
export const handshake = <A>(
  /** Stops the CLI (the transport's `terminate`). */
  stop: Effect.Effect<void>,
  /** Stops it when the reply came but failed its checks. */
  refuse: Effect.Effect<void> = stop
): Effect.Effect<Handshake<A>, never, Scope.Scope> =>
  Effect.flatMap(Deferred.make<A, RequestError>(), (done) => {
    let answered = false
    let error: RequestError | undefined
    const settle = (outcome: Effect.Effect<A, RequestError>) =>
      Effect.flatMap(Effect.exit(outcome), (exit) => {
        if (Exit.isSuccess(exit)) {
          answered = true
          return Deferred.done(done, exit)
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isNone(failure)) return Deferred.done(done, exit)
        error = failure.value
        return Effect.zipRight(
          Effect.forkDaemon(error._tag === "OptionsError" ? refuse : stop),
          Deferred.done(done, exit)
        )
      })
    // The scope's own finalizer: interrupting the wait reads nothing from the fiber's refs.
    return Effect.as(Effect.flatMap(Effect.scope, (scope) => Scope.addFinalizer(scope, Deferred.interrupt(done))), {
      answered: () => answered,
      error: () => error,
      result: Deferred.await(done),
      settle
    })
  })
