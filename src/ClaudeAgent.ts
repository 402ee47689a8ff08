/**
 * `ClaudeAgent`: run Claude Code agents from Effect.
 *
 * `query` runs one prompt (or a stream of prompts) and streams the typed messages back;
 * `session` opens a long-lived conversation with control methods. Both spawn the real `claude`
 * CLI under `ClaudeAgent.layer`, or an in-memory fake CLI under `ClaudeAgent.layerTest`.
 *
 * @since 0.1.0
 */
import { CommandExecutor, FileSystem, Path } from "@effect/platform"
import { Chunk, Context, Duration, Effect, Layer, Option, type Scope, Stream } from "effect"
import { dual } from "effect/Function"
import * as AgentSession from "./AgentSession.js"
import * as Discovery from "./internal/discovery.js"
import * as Launch from "./internal/launch.js"
import * as Message from "./schema/Message.js"
import * as Options from "./schema/Options.js"
import { CLIConnectionError, ResultError, type SdkError } from "./SdkError.js"
import type * as McpServer from "./McpServer.js"
import * as Permission from "./Permission.js"
import * as HookRegistry from "./services/HookRegistry.js"
import * as McpBridge from "./services/McpBridge.js"
import { Transport, type TransportShape } from "./services/Transport.js"
import * as FakeCli from "./testing/FakeCli.js"

/**
 * A prompt for `query`: a string (one turn), or a stream of prompts (one turn each, in order;
 * the run ends when the stream has ended and the CLI has finished).
 *
 * @since 0.1.0
 * @category models
 */
export type QueryPrompt = string | Stream.Stream<AgentSession.Prompt, SdkError>

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
  readonly query: <R = never>(
    prompt: QueryPrompt,
    options?: Options.Options<R>
  ) => Stream.Stream<Message.Message, SdkError, R>
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

const DEFAULT_MAX_BUFFER = 1024 * 1024

const closeGraceMillis = (options: Options.Options<unknown>): number =>
  options.closeGracePeriod !== undefined ? Duration.toMillis(Duration.decode(options.closeGracePeriod)) : 5000

/**
 * Builds the service from a transport factory. `layer` and `layerTest` are this with the
 * subprocess and the fake CLI.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const agent = ClaudeAgent.make((_launch) => Effect.map(FakeCli.make(), ({ transport }) => transport))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (factory: TransportFactory): ClaudeAgentShape => {
  const session = <R = never>(
    input: Options.Options<R> = {}
  ): Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R> =>
    Effect.gen(function*() {
      const options = yield* Options.validate(input)
      const callbacks = yield* makeCallbacks(options)
      const launch = Launch.prepareLaunch(options, processEnv(), {
        hooks: callbacks.hooks.initializeHooks,
        sdkMcpServers: callbacks.mcp.serverNames
      })
      const transport = yield* factory(launch, options)
      const agentSession = yield* AgentSession.make({
        initialize: launch.initialize,
        controlTimeout: options.controlTimeout,
        messageBufferSize: options.messageBufferSize,
        sessionId: options.sessionId,
        closeGracePeriod: options.closeGracePeriod,
        // Registered before `initialize` is written: the CLI may call back before it answers.
        // Without callbacks, hook and MCP requests still get (error) answers, never silence.
        registerHandlers: (control) =>
          Effect.all([
            control.handle("hook_callback", callbacks.hooks.handleCallback),
            control.handle("mcp_message", callbacks.mcp.handleMessage),
            callbacks.canUseTool === undefined ? Effect.void : control.handle("can_use_tool", callbacks.canUseTool)
          ], { discard: true })
      }).pipe(Effect.provideService(Transport, transport))
      return { ...agentSession, pid: transport.pid }
    }).pipe(Effect.withSpan("ClaudeAgent.session"))

  const query = <R = never>(
    prompt: QueryPrompt,
    options?: Options.Options<R>
  ): Stream.Stream<Message.Message, SdkError, R> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const s = yield* session(options)
      if (typeof prompt === "string") {
        yield* s.send(prompt)
        return s.receiveResponse.pipe(requireResult)
      }
      // Input fed concurrently: the CLI may answer the first prompt while later ones arrive. Once
      // the input has ended, stdin stays open until a result has come after the last prompt, the
      // CLI is idle and no callback is running: callbacks of the last turn need stdin to answer.
      let resultsBeforeLast = 0
      yield* prompt.pipe(
        Stream.runForEach((p) =>
          Effect.flatMap(s.control.runState, (run) => {
            resultsBeforeLast = run.results
            return s.send(p)
          })
        ),
        Effect.zipRight(s.control.awaitRunState((run) => run.results > resultsBeforeLast && AgentSession.isIdle(run))),
        Effect.zipRight(s.control.awaitNoneInFlight),
        Effect.zipRight(s.endInput),
        Effect.catchAll((e) => Effect.logWarning(`effect-claude-agent: prompt stream failed: ${e.message}`).pipe(
          Effect.zipRight(s.endInput)
        )),
        Effect.forkScoped
      )
      return s.messages
    }))

  return { session, query }
}

// The session's answers to the CLI's callbacks, built from the options with the caller's services.
const makeCallbacks = <R>(options: Options.Options<R>) =>
  Effect.gen(function*() {
    const sdkServers = Object.values(options.mcpServers ?? {}).filter(
      (server): server is McpServer.McpServer<R> => server.type === "sdk"
    )
    const hooks = options.hooks === undefined ? HookRegistry.HookRegistry.empty : yield* HookRegistry.make(options.hooks)
    const mcp = sdkServers.length === 0 ? McpBridge.McpBridge.empty : yield* McpBridge.make(sdkServers)
    const canUseTool = options.canUseTool === undefined ? undefined : yield* Permission.makeHandler(options.canUseTool)
    if (options.canUseTool !== undefined) yield* warnShadowedCanUseTool(options)
    return { hooks, mcp, canUseTool }
  })

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

// Fails a single-prompt run whose CLI ended before the prompt's result.
const requireResult = <R>(self: Stream.Stream<Message.Message, SdkError, R>) =>
  Stream.suspend(() => {
    let sawResult = false
    return self.pipe(
      // Per chunk, not per message: this runs on every message of the run.
      Stream.mapChunks((chunk) => {
        if (!sawResult && Chunk.some(chunk, Message.isResult)) sawResult = true
        return chunk
      }),
      Stream.concat(Stream.suspend(() =>
        sawResult ? Stream.empty : Stream.fail(
          new CLIConnectionError({ reason: "The Claude Code CLI ended its output before the result of the prompt" })
        )
      ))
    )
  })

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
 * The service backed by the real `claude` CLI. Needs a `CommandExecutor`, `FileSystem` and
 * `Path` (on Node: `NodeContext.layer` from `@effect/platform-node`).
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
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path
> = Layer.effect(ClaudeAgent, Effect.map(Effect.suspend(() => subprocessFactory), make))

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
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path
> = Effect.map(
  Effect.context<CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path>(),
  (all): TransportFactory => {
    // Only these services: the caller's whole context may hold the Scope a layer was built in,
    // and providing that would tie every session's process to the layer's lifetime.
    const context = Context.pick(CommandExecutor.CommandExecutor, FileSystem.FileSystem, Path.Path)(all)
    return (launch, options) =>
      Effect.gen(function*() {
        const command = yield* Discovery.findCli(options.pathToClaudeCodeExecutable, launch.env)
        yield* Discovery.checkVersion(command, launch.env)
        return yield* Transport.makeSubprocess({
          command,
          args: launch.args,
          env: launch.env,
          cwd: launch.cwd,
          maxBufferSize: options.maxBufferSize ?? DEFAULT_MAX_BUFFER,
          closeGraceMillis: closeGraceMillis(options),
          onStderr: options.stderr
        })
      }).pipe(Effect.provide(context))
  }
)

/**
 * The service backed by an in-memory fake CLI (no process, no model, no network): every session
 * gets a fresh `FakeCli` with the given behaviour.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const test = ClaudeAgent.query("hi").pipe(
 *   Stream.runCollect,
 *   Effect.provide(ClaudeAgent.layerTest())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = (behaviour: FakeCli.Behaviour = {}): Layer.Layer<ClaudeAgent> =>
  Layer.succeed(ClaudeAgent, make(() => Effect.map(FakeCli.make(behaviour), ({ transport }) => transport)))

/**
 * Runs one prompt (or a stream of prompts) and streams every message back. With a string prompt
 * the stream ends after the prompt's `result`; interrupting the consumer ends the CLI process.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
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
export const query = <R = never>(
  prompt: QueryPrompt,
  options?: Options.Options<R>
): Stream.Stream<Message.Message, SdkError, ClaudeAgent | R> =>
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
  Stream.mapEffect(self, (m) => {
    if (!Message.isErrorResult(m)) return Effect.succeed(m)
    const detail = "result" in m && typeof m.result === "string"
      ? m.result
      : "errors" in m && Array.isArray(m.errors)
      ? m.errors.join("; ")
      : m.subtype
    return Effect.fail(
      new ResultError({
        subtype: m.subtype,
        ...(typeof m.terminal_reason === "string" ? { terminalReason: m.terminal_reason } : {}),
        ...(typeof m.api_error_status === "number" ? { apiErrorStatus: m.api_error_status } : {}),
        detail,
        raw: m
      })
    )
  })

/**
 * Collects a run into its final `result` message, failing if there was none.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
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
