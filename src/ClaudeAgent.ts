/**
 * `ClaudeAgent`: run Claude Code agents from Effect.
 *
 * `query` runs one prompt (or a stream of prompts) and streams the typed messages back;
 * `session` opens a long-lived conversation with control methods. Both spawn the real `claude`
 * CLI under `ClaudeAgent.layer`, or an in-memory fake CLI under `FakeCli.layerClaudeAgent`
 * (`effect-claude-agent/testing`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Context, Effect, ExecutionStrategy, Layer, Metric, Option, type Schema, Scope, Stream } from "effect"
import { dual } from "effect/Function"
import * as AgentSession from "./AgentSession.js"
import * as Defaults from "./internal/defaults.js"
import * as Discovery from "./internal/discovery.js"
import * as Launch from "./internal/launch.js"
import * as Query from "./internal/query.js"
import * as Turns from "./internal/turns.js"
import * as ResultErrors from "./internal/resultError.js"
import * as Message from "./schema/Message.js"
import * as Options from "./schema/Options.js"
import { CLIConnectionError, OptionsError, ResultError, type SdkError, type StructuredOutputError } from "./SdkError.js"
import type * as McpServer from "./McpServer.js"
import * as Structured from "./Structured.js"
import * as Telemetry from "./Telemetry.js"
import { ControlChannel, type ControlChannelConfig } from "./services/ControlChannel.js"
import * as HookRegistry from "./services/HookRegistry.js"
import * as McpBridge from "./services/McpBridge.js"
import * as PermissionHandler from "./services/PermissionHandler.js"
import { Transport, type TransportShape } from "./services/Transport.js"

/**
 * A prompt for `query`: a string (one turn), or a stream of prompts (one turn each, in order;
 * the run ends when the stream has ended and the CLI has finished). The stream may fail with
 * errors of its own (`E`) and need services (`R`); the query then carries both.
 *
 * @since 0.1.0
 * @category models
 */
export type QueryPrompt<E = never, R = never> = Query.QueryPrompt<E, R>

/**
 * Starts the transport for one session. `ClaudeAgent.layer` spawns the CLI; tests swap this.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportFactory = (
  launch: Launch.Launch,
  options: Options.Options<unknown>
) => Effect.Effect<TransportShape, SdkError, Scope.Scope>

/**
 * How each session's `ControlChannel` is built from its `Transport`. The default is
 * `ControlChannel.layer`; a replacement can wrap it (to log or meter every request) or stand in
 * for it.
 *
 * @since 0.1.0
 * @category models
 */
export type ControlChannelFactory = (config: ControlChannelConfig) => Layer.Layer<ControlChannel, never, Transport>

/**
 * How `make` builds each session's services, beyond the transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  /** The session's control channel over its transport. Default `ControlChannel.layer`. */
  readonly controlChannel?: ControlChannelFactory | undefined
}

/**
 * The service's operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaudeAgentShape {
  /** `R`: what the options' callbacks (hooks, `canUseTool`, SDK MCP tools) need. */
  readonly session: <R = never>(
    options?: Options.Options<R>
  ) => Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R>
  readonly query: <R = never, E = never, RP = never>(
    prompt: QueryPrompt<E, RP>,
    options?: Options.Options<R>
  ) => Stream.Stream<Message.Message, SdkError | E, R | RP>
}

/**
 * The `ClaudeAgent` service tag.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* ClaudeAgent.ClaudeAgent
 *   const session = yield* agent.session({ model: "claude-sonnet-4-5" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class ClaudeAgent extends Context.Tag("effect-claude-agent/ClaudeAgent")<ClaudeAgent, ClaudeAgentShape>() {}

// A callback service given twice would leave one of the two silently unused.
const conflict = (field: string, service: string) =>
  new OptionsError({
    field,
    detail: `a ${service} is provided in the context of this session and would replace it: ` +
      `give the callbacks in one place only`
  })

/**
 * Builds the service from a transport factory. Each session is a layer graph built in the
 * session's scope: `Transport` (from the factory) → `ControlChannel` → `HookRegistry`,
 * `McpBridge` and, with a permission callback, `PermissionHandler` → `AgentSession`. The callback
 * services come from the options, unless the caller's context already provides one of them (a
 * `HookRegistry` layer of your own, say): then that one is used, and giving the same callbacks
 * in the options too is an `OptionsError`. `layer` is this with the subprocess; the testing
 * entry's `FakeCli.layerClaudeAgent` with the fake CLI.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ClaudeAgent, ControlChannel } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * // Every control request of every session is logged.
 * const agent = ClaudeAgent.make(
 *   () => Effect.map(FakeCli.make(), ({ transport }) => transport),
 *   {
 *     controlChannel: (config) =>
 *       Layer.scoped(
 *         ControlChannel.ControlChannel,
 *         Effect.map(ControlChannel.ControlChannel.make(config), (channel) => ({
 *           ...channel,
 *           request: (request, ...args) =>
 *             Effect.zipRight(Effect.log(`control request ${request.subtype}`), channel.request(request, ...args))
 *         }))
 *       )
 *   }
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (factory: TransportFactory, makeOptions: MakeOptions = {}): ClaudeAgentShape => {
  const controlChannel = makeOptions.controlChannel ?? ControlChannel.layer
  const session = <R = never>(
    input: Options.Options<R> = {}
  ): Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R> =>
    Effect.gen(function*() {
      const options = yield* Options.validate(input)
      const givenHooks = yield* Effect.serviceOption(HookRegistry.HookRegistry)
      const givenMcp = yield* Effect.serviceOption(McpBridge.McpBridge)
      const givenPermissions = yield* Effect.serviceOption(PermissionHandler.PermissionHandler)
      const sdkServers = Object.values(options.mcpServers ?? {}).filter(
        (server): server is McpServer.McpServer<R> => server.type === "sdk"
      )
      if (Option.isSome(givenHooks) && options.hooks !== undefined) {
        return yield* Effect.fail(conflict("hooks", "HookRegistry"))
      }
      if (Option.isSome(givenMcp) && sdkServers.length > 0) {
        return yield* Effect.fail(conflict("mcpServers", "McpBridge"))
      }
      if (Option.isSome(givenPermissions) && options.canUseTool !== undefined) {
        return yield* Effect.fail(conflict("canUseTool", "PermissionHandler"))
      }
      const stdioPermissions = Option.isSome(givenPermissions) || options.canUseTool !== undefined
      if (options.canUseTool !== undefined) yield* warnShadowedCanUseTool(options)
      // The session's span lives as long as the session: its turns and the CLI's requests are its
      // children, and the CLI joins the trace through TRACEPARENT.
      const span = yield* Effect.makeSpanScoped("ClaudeAgent.session", {
        kind: "client",
        attributes: { ...(options.model === undefined ? {} : { "claude.model": options.model }) }
      })
      yield* Metric.increment(Telemetry.sessionsStarted)
      yield* Metric.increment(Telemetry.sessionsActive)
      yield* Effect.addFinalizer(() => Metric.incrementBy(Telemetry.sessionsActive, -1))
      const prepared = Launch.prepareLaunch(options, processEnv(), stdioPermissions)
      const launch = prepared.env.TRACEPARENT !== undefined ? prepared : {
        ...prepared,
        env: { ...prepared.env, TRACEPARENT: `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}` }
      }

      return yield* Effect.gen(function*() {
        // The session's services, built one after the other in a scope of their own: closing it
        // stops the callbacks, the control channel's reader and the process, in that order. Built
        // by hand rather than as a layer graph: `Layer.mergeAll` forks a fiber per member, and a
        // session without hooks or SDK MCP servers should not pay for building them.
        const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
        // The running turn, shared by the channel (its inbound spans) and the session (its turns).
        const core = Context.make(Turns.CurrentTurn, Turns.makeCurrentTurn()).pipe(
          Context.add(Transport, yield* Scope.extend(factory(launch, options), scope))
        )
        const channel = yield* Layer.buildWithScope(
          controlChannel({ controlTimeout: options.controlTimeout, messageBufferBytes: options.messageBufferBytes }),
          scope
        ).pipe(Effect.provide(core))
        const withChannel = Context.merge(core, channel)
        const hooks = Option.isSome(givenHooks)
          ? givenHooks.value
          : options.hooks === undefined
          ? HookRegistry.HookRegistry.empty
          : yield* HookRegistry.make(options.hooks).pipe(Effect.provide(withChannel))
        const mcp = Option.isSome(givenMcp)
          ? givenMcp.value
          : yield* Scope.extend(McpBridge.make(sdkServers), scope).pipe(Effect.provide(withChannel))
        const permissions = Option.isSome(givenPermissions)
          ? Option.some(givenPermissions.value)
          : options.canUseTool === undefined
          ? Option.none()
          : Option.some(yield* PermissionHandler.make(options.canUseTool).pipe(Effect.provide(withChannel)))
        const services = withChannel.pipe(
          Context.add(HookRegistry.HookRegistry, hooks),
          Context.add(McpBridge.McpBridge, mcp),
          (context) =>
            Option.isSome(permissions)
              ? Context.add(context, PermissionHandler.PermissionHandler, permissions.value)
              : context
        )
        return yield* AgentSession.make({
          initialize: launch.initialize,
          sessionId: options.sessionId,
          closeGracePeriod: options.closeGracePeriod,
          onElicitation: options.onElicitation,
          verbatimPrompts: options.verbatimPrompts,
          controlTimeout: options.controlTimeout
        }).pipe(Effect.provide(services))
      }).pipe(Effect.withParentSpan(span))
    })

  return { session, query: Query.fromSessions(session) }
}

// The official SDKs warn too: these settings decide before the callback is asked.
const warnShadowedCanUseTool = <R>(options: Options.Options<R>) => {
  const bare = (options.allowedTools ?? []).filter((tool) => !tool.includes("("))
  return Effect.all([
    options.permissionMode === "bypassPermissions"
      ? Effect.logWarning(
        "effect-claude-agent: canUseTool is never called with permissionMode \"bypassPermissions\": every tool is allowed"
      )
      : Effect.void,
    bare.length > 0
      ? Effect.logWarning(
        `effect-claude-agent: canUseTool is not called for tools in allowedTools (${bare.join(", ")}): they are always allowed`
      )
      : Effect.void
  ], { discard: true })
}

const processEnv = (): Record<string, string | undefined> => {
  const proc: unknown = Reflect.get(globalThis, "process")
  if (typeof proc !== "object" || proc === null || !("env" in proc)) return {}
  const env = proc.env
  if (typeof env !== "object" || env === null) return {}
  const out: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(env)) {
    if (typeof value === "string") out[key] = value
  }
  return out
}

/**
 * The transport factory behind `layer`: finds the CLI, checks its version once, and spawns it as
 * a scoped subprocess. For layers that wrap the real transport (recording, instrumentation).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * // The same as ClaudeAgent.layer, with a log line per spawned session.
 * const logged = Layer.effect(
 *   ClaudeAgent.ClaudeAgent,
 *   Effect.map(ClaudeAgent.subprocessFactory, (spawn) =>
 *     ClaudeAgent.make((launch, options) => Effect.zipRight(Effect.log("spawning claude"), spawn(launch, options))))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const subprocessFactory: Effect.Effect<
  TransportFactory,
  never,
  FileSystem.FileSystem | Path.Path
> = Effect.map(
  Effect.context<FileSystem.FileSystem | Path.Path>(),
  (all): TransportFactory => {
    // Only these services: the caller's whole context may hold the Scope a layer was built in,
    // and providing that would tie every session's process to the layer's lifetime.
    const context = Context.pick(FileSystem.FileSystem, Path.Path)(all)
    return (launch, options) =>
      Effect.gen(function*() {
        const cli = yield* Discovery.findCli(options.pathToClaudeCodeExecutable, launch.env)
        // A JavaScript CLI runs under `executable` (node by default), like the official SDK does.
        const { args, command } = Discovery.invocation(cli, options.executable, options.executableArgs)
        // Beside the spawn, never in front of it: it only warns, and a wrapper script that does
        // not answer `-v` must not delay the session.
        if (!Discovery.versionCheckDone(command, launch.env, args)) {
          yield* Effect.forkScoped(Discovery.checkVersion(command, launch.env, args))
        }
        return yield* Transport.makeSubprocess({
          command,
          args: [...args, ...launch.args],
          env: launch.env,
          cwd: launch.cwd,
          maxBufferSize: options.maxBufferSize ?? Defaults.maxBufferSize,
          closeGracePeriod: options.closeGracePeriod,
          onStderr: options.stderr
        })
      }).pipe(Effect.provide(context))
  }
)

/**
 * The service backed by the real `claude` CLI. Needs a `FileSystem` and `Path` to find it (on
 * Node: `NodeContext.layer` from `@effect/platform-node`); the process is started with
 * `node:child_process` (Node, Bun and Deno all provide it).
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * ClaudeAgent.query("Say hi").pipe(
 *   Stream.runForEach((m) => Effect.log(m.type)),
 *   Effect.provide(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  ClaudeAgent,
  never,
  FileSystem.FileSystem | Path.Path
> = Layer.effect(ClaudeAgent, Effect.map(subprocessFactory, (factory) => make(factory)))

/**
 * Runs one prompt (or a stream of prompts) and streams every message back. With a string prompt
 * the stream ends after the prompt's `result`; interrupting the consumer ends the CLI process.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ClaudeAgent, Message } from "effect-claude-agent"
 *
 * const answer = ClaudeAgent.query("What is 2 + 2?", { maxTurns: 1 }).pipe(
 *   Stream.filter(Message.isResult),
 *   Stream.runLast
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const query = <R = never, E = never, RP = never>(
  prompt: QueryPrompt<E, RP>,
  options?: Options.Options<R>
): Stream.Stream<Message.Message, SdkError | E, ClaudeAgent | R | RP> =>
  Stream.unwrap(Effect.map(ClaudeAgent, (agent) => agent.query(prompt, options)))

/**
 * Opens a session in the current scope. Closing the scope ends the CLI process.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const session = yield* ClaudeAgent.session({ model: "claude-sonnet-4-5" })
 *   yield* session.send("Hello")
 *   yield* session.receiveResponse.pipe(Stream.runDrain)
 *   yield* session.setModel("claude-haiku-4-5")
 *   yield* session.send("And now?")
 *   yield* session.receiveResponse.pipe(Stream.runDrain)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const session = <R = never>(
  options?: Options.Options<R>
): Effect.Effect<AgentSession.AgentSession, SdkError, ClaudeAgent | Scope.Scope | R> =>
  Effect.flatMap(ClaudeAgent, (agent) => agent.session(options))

/**
 * Turns a `result` with `is_error: true` into a `ResultError` failure (the messages before it are
 * delivered first). By default an error result is data, as the CLI sends it.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * ClaudeAgent.query("hi").pipe(
 *   ClaudeAgent.failOnErrorResult,
 *   Stream.runDrain,
 *   Effect.catchTag("ResultError", (e) => Effect.logError(e.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const failOnErrorResult = <E, R>(
  self: Stream.Stream<Message.Message, E, R>
): Stream.Stream<Message.Message, E | ResultError, R> =>
  Stream.mapEffect(self, (m) => Message.isErrorResult(m) ? Effect.fail(ResultErrors.fromResult(m)) : Effect.succeed(m))

/**
 * Collects a run into its final `result` message, failing if there was none.
 *
 * @example
 * ```ts
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const result = ClaudeAgent.query("hi").pipe(ClaudeAgent.lastResult)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const lastResult = <E, R>(
  self: Stream.Stream<Message.Message, E, R>
): Effect.Effect<Message.ResultMessage, E | CLIConnectionError, R> =>
  self.pipe(
    Stream.filter(Message.isResult),
    Stream.runLast,
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new CLIConnectionError({ reason: "The run ended without a result message" })),
      onSome: Effect.succeed
    }))
  )

/**
 * Runs one prompt with structured output and returns the output decoded by `schema`: the
 * Schema's JSON Schema goes to the CLI (the option `outputSchema`), the model answers through
 * the CLI's `StructuredOutput` tool, and the `result`'s `structured_output` is decoded to `A`.
 *
 * Fails with `StructuredOutputError` (the value and what is wrong with it) when the Schema does
 * not decode the output, and with `ResultError` when the run failed: an API error, `maxTurns`
 * reached, or `error_max_structured_output_retries` (the model kept answering with output the
 * JSON Schema rejects; the CLI's `MAX_STRUCTURED_OUTPUT_RETRIES` bounds the attempts). For the
 * rest of the `result` (cost, session id) or for several turns, use the option `outputSchema`
 * with `query` or `session` and `Structured.decode` / `Structured.outputs`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const Release = Schema.Struct({ version: Schema.String, date: Schema.Date })
 * const program = ClaudeAgent.structured("When was the last release?", Release, { maxTurns: 5 }).pipe(
 *   Effect.map((release) => release.date.getFullYear()) // `date` is a Date
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const structured = <A, I, R = never>(
  prompt: string,
  schema: Schema.Schema<A, I, never>,
  options?: Omit<Options.Options<R>, "outputSchema" | "outputFormat">
): Effect.Effect<A, SdkError | ResultError | StructuredOutputError, ClaudeAgent | R> =>
  query(prompt, { ...options, outputSchema: schema }).pipe(
    lastResult,
    Effect.flatMap(Structured.decode(schema))
  )

/**
 * Sets one option on an options object (data-first or data-last), for building options in pipelines.
 *
 * @example
 * ```ts
 * import { pipe } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const options = pipe({ maxTurns: 3 }, ClaudeAgent.withOption("model", "claude-haiku-4-5"))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withOption: {
  <K extends keyof Options.Options>(key: K, value: Options.Options[K]): (self: Options.Options) => Options.Options
  <K extends keyof Options.Options>(self: Options.Options, key: K, value: Options.Options[K]): Options.Options
} = dual(3, <K extends keyof Options.Options>(self: Options.Options, key: K, value: Options.Options[K]) => ({
  ...self,
  [key]: value
}))

/**
 * A CLI started and initialized before the prompt is known (see `prewarm`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Prewarmed {
  /** The session, already initialized: `initializationResult` answers at once. */
  readonly session: AgentSession.AgentSession
  /** Runs a prompt on the prewarmed session, like `query`, without paying the start-up. */
  readonly query: <E = never, R = never>(
    prompt: QueryPrompt<E, R>
  ) => Stream.Stream<Message.Message, SdkError | E, R>
}

/**
 * Starts a CLI and completes the `initialize` handshake now, before the prompt is known, so the
 * first answer does not pay the start-up (the official SDKs' `startup()` / `prewarm()`). The
 * process lives until the current scope closes. For many spares shared by many requests, use
 * `AgentPool` with `warm`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const warm = yield* ClaudeAgent.prewarm({ model: "claude-sonnet-4-5" })
 *   // … later, when the user has typed:
 *   yield* warm.query("Summarise README.md").pipe(Stream.runDrain)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const prewarm = <R = never>(
  options?: Options.Options<R>
): Effect.Effect<Prewarmed, SdkError, ClaudeAgent | Scope.Scope | R> =>
  Effect.gen(function*() {
    const opened = yield* session(options)
    yield* opened.initializationResult
    const run = Query.fromSessions(() => Effect.succeed(opened))
    const prewarmed: Prewarmed = { session: opened, query: (prompt) => run(prompt) }
    return prewarmed
  }).pipe(Effect.withSpan("ClaudeAgent.prewarm"))
