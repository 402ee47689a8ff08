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
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { Context, Effect, ExecutionStrategy, FiberRef, Layer, Option, type Schema, Scope, Stream } from "effect"
import { dual } from "effect/Function"
import type * as AgentSession from "./AgentSession.js"
import { Budget } from "./Budget.js"
import * as Accounts from "./internal/budget/account.js"
import * as BudgetGuard from "./internal/budget/guard.js"
import * as Launch from "./internal/cli/launch.js"
import * as Claim from "./internal/session/claim.js"
import * as Open from "./internal/session/open.js"
import * as Query from "./internal/session/query.js"
import * as StoredSession from "./internal/session/storedSession.js"
import * as ResultErrors from "./internal/session/resultError.js"
import * as SessionServices from "./layers/SessionServices.js"
import * as Message from "./schema/Message.js"
import * as Options from "./schema/Options.js"
import {
  type ClaimRefused,
  CLIEndedError,
  type OptionsError,
  type ResultError,
  type SdkError,
  type StructuredOutputError
} from "./SdkError.js"
import * as Structured from "./Structured.js"
import * as Telemetry from "./Telemetry.js"
import * as Streams from "./internal/effect/streams.js"

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

/**
 * Builds the service from the layers each session is built from (`SessionServices.Layers`): the
 * `Transport` is required, and each of `ControlChannel`, `HookRegistry`, `McpBridge` and
 * `PermissionHandler` replaces what the options would build. Each session builds its layers in
 * its own scope with `SessionServices.build`, then runs `AgentSession.make` over them. `layer` is
 * this with the subprocess; the testing entry's `FakeCli.layerClaudeAgent` with the fake CLI.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Ref } from "effect"
 * import { ClaudeAgent, HookRegistry } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * // Every session's hooks come from one registry that allows everything and counts the calls.
 * const program = Effect.gen(function* () {
 *   const calls = yield* Ref.make(0)
 *   const hookRegistry = Layer.succeed(HookRegistry.HookRegistry, {
 *     initializeHooks: { PreToolUse: [{ hookCallbackIds: ["count"] }] },
 *     handleCallback: () => Effect.as(Ref.update(calls, (n) => n + 1), { continue: true })
 *   })
 *   return ClaudeAgent.make({ transport: FakeCli.layer(), hookRegistry })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (layers: SessionServices.Layers): ClaudeAgentShape => {
  const open = <R>(input: Options.Options<R>): Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R> =>
    Effect.gen(function*() {
      const validated = yield* Options.validate(input)
      const store = validated.sessionStore
      // With a store, a resumed session is loaded from it before the CLI starts.
      const options = store === undefined
        ? validated
        : yield* StoredSession.prepare({ ...validated, sessionStore: store }, processEnv())
      yield* SessionServices.checkOverrides(layers, options)
      if (options.canUseTool !== undefined) yield* warnShadowedCanUseTool(options)
      // The session's span lives as long as the session: its turns and the CLI's requests are its
      // children, and the CLI joins the trace through TRACEPARENT.
      const span = yield* Effect.makeSpanScoped("ClaudeAgent.session", {
        kind: "client",
        captureStackTrace: false,
        attributes: { ...(options.model === undefined ? {} : { "claude.model": options.model }) }
      })
      // Updated in place with the opener's metric labels, the close's too: `Effect.addFinalizer`
      // would diff and patch the fiber's refs around the decrement (twice per session).
      const labels = yield* FiberRef.get(FiberRef.currentMetricLabels)
      Telemetry.sessionsStarted.unsafeUpdate(1, labels)
      Telemetry.sessionsActive.unsafeUpdate(1, labels)
      yield* Scope.addFinalizer(
        yield* Effect.scope,
        Effect.sync(() => Telemetry.sessionsActive.unsafeUpdate(-1, labels))
      )
      const launch = Launch.prepareLaunch(
        options,
        processEnv(),
        SessionServices.asksPermissions(layers, options),
        `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
      )
      // Under a `Budget`, the session's channel and `send` share one guard for its account.
      const budget = yield* Effect.serviceOption(Budget)
      const guard = Option.isSome(budget)
        ? BudgetGuard.make(budget.value, yield* Accounts.resolve(budget.value, options))
        : undefined
      return yield* SessionServices.build(layers, launch, options).pipe(
        // Over the services as they are: providing them would set and restore the fiber's context.
        Effect.flatMap((services) =>
          Open.open(services, {
            initialize: launch.initialize,
            sessionId: options.sessionId,
            closeGracePeriod: options.closeGracePeriod,
            onElicitation: options.onElicitation,
            verbatimPrompts: options.verbatimPrompts,
            includeCommandLifecycle: options.includeCommandLifecycle,
            includeSessionState: options.includeSessionState,
            controlTimeout: options.controlTimeout
          })
        ),
        (opening) => guard === undefined ? opening : Effect.provideService(opening, BudgetGuard.BudgetGuard, guard),
        Effect.withParentSpan(span)
      )
    })

  // A session's finalizers depend on their order: its close waits for the CLI's `idle` through the
  // control channel's reader and then ends stdin, before the channel and the process stop. A scope
  // that runs its finalizers in parallel would race them (the reader stopped first, the close then
  // waiting out its grace period), so such a scope gets a sequential child holding the session.
  const session = <R = never>(
    input: Options.Options<R> = {}
  ): Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R> =>
    Effect.flatMap(Effect.scope, (scope) =>
      scope.strategy._tag === "Sequential"
        ? open(input)
        : Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (child) => Scope.extend(open(input), child)))

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
        `effect-claude-agent: canUseTool is not called for tools in allowedTools (${
          bare.join(", ")
        }): they are always allowed`
      )
      : Effect.void
  ], { discard: true })
}

// The environment itself, read per session (the caller may change it between sessions):
// `buildEnv` reads each variable once as it merges, so a copy here would be a second pass.
const processEnv = (): Readonly<Record<string, string | undefined>> => typeof process === "object" ? process.env : {}

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
> = Layer.effect(
  ClaudeAgent,
  // Only these services: the caller's whole context may hold the Scope a layer was built in, and
  // providing that would tie every session's process to the layer's lifetime.
  Effect.map(
    Effect.context<FileSystem.FileSystem | Path.Path>(),
    (all) => make({ transport: SessionServices.subprocessTransportWith(all) })
  )
)

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
  Streams.unwrap(Effect.map(ClaudeAgent, (agent) => agent.query(prompt, options)))

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
): Stream.Stream<Message.Message, E | ResultError, R> => ResultErrors.failAtErrorResult(self)

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
): Effect.Effect<Message.ResultMessage, E | CLIEndedError, R> =>
  self.pipe(
    Stream.filter(Message.isResult),
    Stream.runLast,
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new CLIEndedError({ reason: "NoResult" })),
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

/**
 * A session bound from a parked spare (`ParkedSpare.claim`): the session, its first prompt
 * already sent (read the answer from `session.receiveResponse`), and what the CLI said about the
 * claim. `session.initializationResult` still describes the parked process; `initialize` is the
 * claimed session's reply (the folder's commands, agents and models).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import type { ClaudeAgent } from "effect-claude-agent"
 *
 * const firstAnswer = (claimed: ClaudeAgent.Claimed) =>
 *   Effect.zipRight(Effect.logInfo(`session ${claimed.sessionId} in ${claimed.cwd}`), claimed.session.receiveResponse.pipe(Stream.runDrain))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Claimed extends Claim.Claimed {}

/**
 * A fully started CLI that is not yet any session (see `park`). Claimed once.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { ClaudeAgent } from "effect-claude-agent"
 *
 * // A pool's view of a spare: replace it when it dies while parked.
 * const watch = (spare: ClaudeAgent.ParkedSpare, replace: Effect.Effect<void>) => Effect.zipRight(spare.exited, replace)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ParkedSpare {
  /** Where the parked process waits: the host options' `cwd`, or a fresh temporary directory. */
  readonly parkingDirectory: string
  /**
   * Binds the spare to a folder and the per-session options, then sends `prompt`. The prompt is
   * sent only once the CLI has accepted the claim, `model`, `maxThinkingTokens` and `settings`:
   * on `ClaimRefused` (whatever its `reason`) the prompt has not run and the process is stopped,
   * so start the session cold. Invalid claim options fail with `OptionsError` before anything is
   * sent, and the spare stays parked.
   */
  readonly claim: (
    prompt: AgentSession.Prompt,
    options: Options.ClaimOptions
  ) => Effect.Effect<Claimed, ClaimRefused | OptionsError>
  /** Stops the CLI now rather than when the scope it was parked in closes. */
  readonly close: Effect.Effect<void>
  /** Completes when the CLI has stopped (claimed, closed, or dead while parked: then replace it). */
  readonly exited: Effect.Effect<void>
}

/**
 * Parks a CLI: starts it with `--await-claim` under the host-level options and completes the
 * `initialize` handshake before the session's folder is known, so that a claim pays neither the
 * start-up nor the tools', plugins' and MCP servers' set-up. `claim(prompt, claimOptions)` binds
 * it to a folder (`cwd`), model, permission mode, … (`Options.ClaimOptions`); everything else is
 * fixed by `hostOptions`. The process waits in `hostOptions.cwd`, or in a fresh temporary
 * directory (then a `FileSystem` must be provided, e.g. `NodeContext.layer`), and is stopped when
 * the current scope closes, claimed or not. Options naming a session (`resume`, `sessionId`, …)
 * are refused.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const spare = yield* ClaudeAgent.park({ cwd: "/var/spares", allowedTools: ["Read"] })
 *   // … later, when a user opens a project:
 *   const options = { cwd: "/srv/ada/project", model: "claude-haiku-4-5" }
 *   const answer = spare.claim("Summarise README.md", options).pipe(
 *     Effect.map((claimed) => claimed.session.receiveResponse),
 *     // Refused: the prompt has not run; start the session cold with the same options.
 *     Effect.catchTag("ClaimRefused", () => Effect.succeed(ClaudeAgent.query("Summarise README.md", options))),
 *     Stream.unwrap
 *   )
 *   yield* answer.pipe(Stream.runDrain)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const park = <R = never>(
  hostOptions?: Options.Options<R>
): Effect.Effect<ParkedSpare, SdkError, ClaudeAgent | Scope.Scope | R> =>
  Effect.flatMap(ClaudeAgent, (agent) => Claim.park(agent.session, hostOptions))
