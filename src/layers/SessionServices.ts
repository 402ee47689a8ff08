/**
 * `SessionServices`: the five services a session runs on, built in one step per session.
 *
 * Each session is built from `Transport` ← `ControlChannel` ← `HookRegistry`, `McpBridge` and
 * (with a permission callback) `PermissionHandler`. Each is a `Layer`, and each is replaced the
 * same way: a layer of your own in the `Layers` given to `ClaudeAgent.make`. The layers are built
 * in that order, in a scope of the session's, with what is below them in context, and with
 * `SessionLaunch`: the session's argv, env and options.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Context, Duration, Effect, ExecutionStrategy, Layer, Scope } from "effect"
import * as NodePath from "node:path"
import * as Defer from "../internal/approvals/defer.js"
import * as Defaults from "../internal/defaults.js"
import * as Discovery from "../internal/cli/discovery.js"
import type * as Launch from "../internal/cli/launch.js"
import * as Mirror from "../internal/session/mirror.js"
import * as StoredSession from "../internal/session/storedSession.js"
import * as Turns from "../internal/session/turns.js"
import type * as McpServer from "../McpServer.js"
import type * as Options from "../schema/Options.js"
import { OptionsError, type SdkError } from "../SdkError.js"
import * as Channel from "../internal/control/channel.js"
import { ControlChannel } from "../services/ControlChannel.js"
import * as HookRegistry from "../services/HookRegistry.js"
import * as McpBridge from "../services/McpBridge.js"
import * as PermissionHandler from "../services/PermissionHandler.js"
import { Transport } from "../services/Transport.js"

/**
 * What one session is launched with: in context while its services are built, so that a layer
 * can read the argv, env and working directory (`launch`) and the validated options.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { SessionServices, Transport } from "effect-claude-agent"
 *
 * declare const spawn: (args: ReadonlyArray<string>) => Effect.Effect<Transport.TransportShape>
 * const transport = Layer.effect(
 *   Transport.Transport,
 *   Effect.flatMap(SessionServices.SessionLaunch, ({ launch }) => spawn(launch.args))
 * )
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionLaunch extends Context.Tag("effect-claude-agent/SessionServices/SessionLaunch")<
  SessionLaunch,
  {
    readonly launch: Launch.Launch
    readonly options: Options.Options<unknown>
  }
>() {}

/**
 * What a session's layers may read from context: the launch, and every service below them.
 *
 * @since 0.1.0
 * @category models
 */
export type Below = SessionLaunch | Transport | ControlChannel

/**
 * The layers a session is built from. `transport` is required; each other one replaces what the
 * options would build: `controlChannel` the default channel (`ControlChannel.layer` with the
 * options' `controlTimeout` and `messageBufferBytes`), `hookRegistry` the `hooks` option,
 * `mcpBridge` the in-process servers of `mcpServers`, `permissionHandler` the `canUseTool` option
 * (and, like it, turns on `--permission-prompt-tool=stdio`). Giving a callback service here and
 * the same callbacks in the options is an `OptionsError`. The layers need nothing but `Below`:
 * provide anything else before passing them.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ClaudeAgent, ControlChannel, type SessionServices } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * // Every control request of every session is logged.
 * const logged = Layer.effect(
 *   ControlChannel.ControlChannel,
 *   Effect.map(ControlChannel.ControlChannel, (channel) => ({
 *     ...channel,
 *     request: (request, ...args) =>
 *       Effect.zipRight(Effect.log(`control request ${request.subtype}`), channel.request(request, ...args))
 *   }))
 * ).pipe(Layer.provide(ControlChannel.ControlChannel.layer()))
 * const layers: SessionServices.Layers = { transport: FakeCli.layer(), controlChannel: logged }
 * const agent = ClaudeAgent.make(layers)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Layers {
  readonly transport: Layer.Layer<Transport, SdkError, SessionLaunch>
  readonly controlChannel?: Layer.Layer<ControlChannel, SdkError, SessionLaunch | Transport> | undefined
  readonly hookRegistry?: Layer.Layer<HookRegistry.HookRegistry, SdkError, Below> | undefined
  readonly mcpBridge?: Layer.Layer<McpBridge.McpBridge, SdkError, Below> | undefined
  readonly permissionHandler?: Layer.Layer<PermissionHandler.PermissionHandler, SdkError, Below> | undefined
}

/**
 * What `build` provides to `AgentSession.make`.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | SessionLaunch
  | Transport
  | ControlChannel
  | HookRegistry.HookRegistry
  | McpBridge.McpBridge

// Finds the CLI and spawns it with the session's launch, in the scope of the context.
const spawnCli = Effect.fnUntraced(function*(
  { launch, options }: Context.Tag.Service<SessionLaunch>,
  fs: FileSystem.FileSystem,
  path: Path.Path
) {
  const cli = yield* Discovery.findCliWith(fs, path, options.pathToClaudeCodeExecutable, launch.env)
  // A JavaScript CLI runs under `executable` (node by default), like the official SDK does.
  const { args, command } = Discovery.invocation(cli, options.executable, options.executableArgs)
  const transport = yield* Transport.makeSubprocess({
    command,
    args: [...args, ...launch.args],
    env: launch.env,
    cwd: launch.cwd,
    maxBufferSize: options.maxBufferSize ?? Defaults.maxBufferSize,
    closeGracePeriod: options.closeGracePeriod,
    onStderr: options.stderr
  })
  // Beside the session, never in front of it: it only warns. It takes the version the CLI reports
  // in its `initialize` reply, so no second CLI process competes with this one's start-up; `-v`
  // runs only when the reply has none or the request fails (a timeout, a CLI that exited).
  if (!Discovery.versionCheckDone(command, launch.env, args)) {
    const reported = yield* Discovery.versionReportOf(transport)
    yield* Effect.forkScoped(Discovery.checkVersion(command, launch.env, args, reported))
  }
  return transport
})

const makeSubprocessTransport = Effect.gen(function*() {
  return yield* spawnCli(yield* SessionLaunch, yield* FileSystem.FileSystem, yield* Path.Path)
})

/**
 * The subprocess transport: finds the CLI named by the options (or on `PATH`), checks its
 * version once, and spawns it with the session's argv and env. `ClaudeAgent.layer` uses it.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { ClaudeAgent, SessionServices, Transport } from "effect-claude-agent"
 *
 * // The real CLI, with a log line per spawned session.
 * const transport = Layer.effect(
 *   Transport.Transport,
 *   Effect.zipRight(Effect.log("spawning claude"), Transport.Transport)
 * ).pipe(Layer.provide(SessionServices.subprocessTransport), Layer.provide(NodeContext.layer))
 * const agent = ClaudeAgent.make({ transport })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const subprocessTransport: Layer.Layer<
  Transport,
  SdkError,
  SessionLaunch | FileSystem.FileSystem | Path.Path
> = Layer.scoped(Transport, makeSubprocessTransport)

/**
 * `subprocessTransport` with its file system and path services given: what `ClaudeAgent.layer`
 * uses. `build` runs its constructor directly, in the session's scope, rather than building a
 * layer (a layer with `Layer.provide` costs hundreds of runtime steps and a scope per session).
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { ClaudeAgent, SessionServices } from "effect-claude-agent"
 *
 * const agent = Effect.map(Effect.context<NodeContext.NodeContext>(), (services) =>
 *   ClaudeAgent.make({ transport: SessionServices.subprocessTransportWith(services) }))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const subprocessTransportWith = (
  services: Context.Context<FileSystem.FileSystem | Path.Path>
): Layer.Layer<Transport, SdkError, SessionLaunch> => {
  const picked = Context.pick(FileSystem.FileSystem, Path.Path)(services)
  const layer = subprocessTransport.pipe(Layer.provide(Layer.succeedContext(picked)))
  const fs = Context.get(picked, FileSystem.FileSystem)
  const path = Context.get(picked, Path.Path)
  // In the caller's own scope it runs as it is: providing the context would set and restore the
  // fiber's (the CLI's stderr callbacks and the version check need none of it).
  direct.set(layer, (below, scope, callers) => {
    const spawn = spawnCli(Context.get(below, SessionLaunch), fs, path)
    return callers ? spawn : Scope.extend(spawn, scope)
  })
  return layer
}

// Layers made by this module whose service is made by a known effect: built by running it.
const direct = new WeakMap<
  Layer.Layer<Transport, SdkError, SessionLaunch>,
  (
    below: Context.Context<SessionLaunch>,
    scope: Scope.Scope,
    callers: boolean
  ) => Effect.Effect<Context.Tag.Service<Transport>, SdkError, Scope.Scope>
>()

/**
 * The default `ControlChannel`: `ControlChannel.layer` with the options' `controlTimeout` and
 * `messageBufferBytes`.
 *
 * @example
 * ```ts
 * import { SessionServices } from "effect-claude-agent"
 *
 * const layers = { controlChannel: SessionServices.controlChannel }
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const controlChannel: Layer.Layer<ControlChannel, never, SessionLaunch | Transport> = Layer.unwrapEffect(
  Effect.map(
    SessionLaunch,
    ({ options }) =>
      ControlChannel.layer({ controlTimeout: options.controlTimeout, messageBufferBytes: options.messageBufferBytes })
  )
)

// A callback service given twice would leave one of the two silently unused.
const conflict = (field: string, service: string) =>
  new OptionsError({
    field,
    detail: `a ${service} layer is given for this session and would replace it: give the callbacks in one place only`
  })

const sdkServers = <R>(options: Options.Options<R>): ReadonlyArray<McpServer.McpServer<R>> =>
  Object.values(options.mcpServers ?? {}).filter((server): server is McpServer.McpServer<R> => server.type === "sdk")

/**
 * Fails with `OptionsError` when `layers` replaces a callback service whose callbacks the options
 * give too. Checked before anything is launched.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PermissionHandler, Permission, SessionServices } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const layers = {
 *   transport: FakeCli.layer(),
 *   permissionHandler: PermissionHandler.layer(() => Effect.succeed(Permission.allow()))
 * }
 * // Fails: canUseTool is given twice.
 * const check = SessionServices.checkOverrides(layers, { canUseTool: () => Effect.succeed(Permission.allow()) })
 * ```
 *
 * @since 0.1.0
 * @category validation
 */
export const checkOverrides = <R>(layers: Layers, options: Options.Options<R>): Effect.Effect<void, OptionsError> => {
  if (layers.hookRegistry !== undefined && options.hooks !== undefined) {
    return Effect.fail(conflict("hooks", "HookRegistry"))
  }
  if (layers.mcpBridge !== undefined && sdkServers(options).length > 0) {
    return Effect.fail(conflict("mcpServers", "McpBridge"))
  }
  if (layers.permissionHandler !== undefined && options.canUseTool !== undefined) {
    return Effect.fail(conflict("canUseTool", "PermissionHandler"))
  }
  return Effect.void
}

/**
 * Whether the session's CLI asks `can_use_tool` over stdio (`--permission-prompt-tool=stdio`):
 * with a `permissionHandler` layer or a `canUseTool` option.
 *
 * @example
 * ```ts
 * import { SessionServices } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const asks = SessionServices.asksPermissions({ transport: FakeCli.layer() }, {}) // false
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const asksPermissions = <R>(layers: Layers, options: Options.Options<R>): boolean =>
  layers.permissionHandler !== undefined || options.canUseTool !== undefined

/**
 * Builds a session's services, one after the other, in the current scope when it closes its
 * finalizers sequentially, and otherwise in a sequential scope forked from it: closing it stops the
 * callbacks, the control channel's reader and the process, in that order. The layers given are built with one memo map (a layer two of them share is built
 * once), each with `SessionLaunch` and the services below it in context; a service with no layer
 * given is made by its constructor from the options. A session without a permission callback
 * gets no `PermissionHandler`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentSession, SessionServices } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const launch = { args: [], env: {}, cwd: undefined, initialize: {} }
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const services = yield* SessionServices.build({ transport: FakeCli.layer() }, launch, {})
 *   const session = yield* AgentSession.make().pipe(Effect.provide(services))
 *   yield* session.send("hello")
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = <R>(
  layers: Layers,
  launch: Launch.Launch,
  options: Options.Options<R>
): Effect.Effect<Context.Context<Services>, SdkError, Scope.Scope | R> =>
  Effect.gen(function*() {
    // The services stop one after the other, in reverse: a session's scope closed sequentially
    // (a query's, an `Effect.scoped`'s) holds them itself, any other gets a sequential child scope.
    const parent = yield* Effect.scope
    const scope = parent.strategy._tag === "Sequential"
      ? parent
      : yield* Scope.fork(parent, ExecutionStrategy.sequential)
    // Made by the first layer built: a session with none given but its transport's constructor
    // (`ClaudeAgent.layer`'s) builds none.
    let memoMap: Layer.MemoMap | undefined
    // One step: the given layer, or the default's constructor run in the same scope. The default
    // is not built as a layer: that costs a memo-map entry and a scope of its own per service per
    // session, for nothing to share.
    const buildOn = <I, RIn, RBelow>(layer: Layer.Layer<I, SdkError, RIn>, below: Context.Context<RBelow>) => {
      const buildWith = (memo: Layer.MemoMap) => Effect.provide(Layer.buildWithMemoMap(layer, memo, scope), below)
      if (memoMap !== undefined) return buildWith(memoMap)
      return Effect.flatMap(Layer.makeMemoMap, (made) => {
        memoMap ??= made
        return buildWith(memoMap)
      })
    }
    // In the caller's own scope an effect runs as it is; in a child scope, with that scope provided.
    const inScope = <A, E, R>(effect: Effect.Effect<A, E, R>) => scope === parent ? effect : Scope.extend(effect, scope)
    const step = <I, S, RL, RF, RBelow>(
      tag: Context.Tag<I, S>,
      given: Layer.Layer<I, SdkError, RL> | undefined,
      fallback: Effect.Effect<S, SdkError, RF>,
      below: Context.Context<RBelow>
    ): Effect.Effect<Context.Context<I>, SdkError, Exclude<RL, RBelow> | Exclude<RF, Scope.Scope | RBelow>> =>
      given !== undefined
        ? buildOn(given, below)
        : Effect.map(Effect.provide(fallback, Context.add(below, Scope.Scope, scope)), (service) =>
          Context.make(tag, service))
    const deferSettings = options.approvalStore === undefined ? undefined : {
      store: options.approvalStore,
      timeout: Duration.decode(options.approvalTimeout ?? Defer.DEFAULT_TIMEOUT),
      projectKey: yield* StoredSession.projectKeyOf(options.cwd ?? NodePath.resolve(".")),
      cwd: NodePath.resolve(options.cwd ?? ".")
    }
    // The running turn, shared by the channel (its inbound spans) and the session (its turns).
    const base = Context.make(SessionLaunch, { launch, options }).pipe(
      Context.add(Turns.CurrentTurn, Turns.makeCurrentTurn(options)),
      // With a store, the channel's reader mirrors the transcript into it.
      (context) =>
        options.sessionStore === undefined ? context : Context.add(context, Mirror.MirrorSettings, {
          store: options.sessionStore,
          flush: options.sessionStoreFlush ?? "batched",
          failure: options.sessionStoreFailure ?? "message",
          configDir: launch.env.CLAUDE_CONFIG_DIR
        }),
      // With an approval store, the reader records the calls the session's turns stop at.
      (context) =>
        deferSettings === undefined ? context : Context.add(context, Defer.DeferSettings, deferSettings)
    )
    const transport = direct.get(layers.transport)
    const withTransport = Context.merge(
      base,
      transport === undefined
        ? yield* buildOn(layers.transport, base)
        : Context.make(Transport, yield* transport(base, scope, scope === parent))
    )
    const channelConfig = {
      controlTimeout: options.controlTimeout,
      messageBufferBytes: options.messageBufferBytes
    }
    // The default channel looks its services up in the context it is given (the fiber's with the
    // session's over it, as providing them would make it) rather than having them provided.
    const withChannel = Context.merge(
      withTransport,
      layers.controlChannel === undefined
        ? Context.make(
          ControlChannel,
          yield* inScope(
            Effect.contextWithEffect((fiber: Context.Context<never>) =>
              Channel.makeIn(Context.merge(fiber, withTransport), scope, channelConfig)
            )
          )
        )
        : yield* buildOn(layers.controlChannel, withTransport)
    )
    // No hooks, no layer: the shared empty registry, with nothing to run.
    const withHooks = options.hooks === undefined && layers.hookRegistry === undefined
      ? Context.add(withChannel, HookRegistry.HookRegistry, HookRegistry.HookRegistry.empty)
      : Context.merge(
        withChannel,
        yield* step(
          HookRegistry.HookRegistry,
          layers.hookRegistry,
          options.hooks === undefined
            ? Effect.succeed(HookRegistry.HookRegistry.empty)
            : HookRegistry.make(options.hooks),
          withChannel
        )
      )
    const mcp = McpBridge.make(sdkServers(options))
    // The default bridge needs the scope alone (its tools' services are the caller's): in the
    // caller's own scope it runs as it is, with no context to provide around it.
    const withMcp = Context.merge(
      withHooks,
      layers.mcpBridge === undefined && scope === parent
        ? Context.make(McpBridge.McpBridge, yield* mcp)
        : yield* step(McpBridge.McpBridge, layers.mcpBridge, mcp, withChannel)
    )
    if (layers.permissionHandler !== undefined) {
      return Context.merge(withMcp, yield* buildOn(layers.permissionHandler, withChannel))
    }
    // No callback, no service: `AgentSession.make` then answers `can_use_tool` as unsupported.
    if (options.canUseTool === undefined) return withMcp
    const permissions = yield* PermissionHandler.make(options.canUseTool).pipe(Effect.provide(withChannel))
    return Context.add(withMcp, PermissionHandler.PermissionHandler, permissions)
  })
