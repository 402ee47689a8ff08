/**
 * An in-memory Claude Code CLI: a `Transport` test double with no process, no model and no
 * network. It answers the SDK's control requests, plays scripted turns for each user message, and
 * can itself send `can_use_tool` / `hook_callback` / `mcp_message` requests and check the answers.
 * Deterministic, and it runs under `TestClock`.
 *
 * Frames cross it as JSON text (encoded and parsed again), so a test catches anything the real
 * CLI could not receive.
 *
 * @since 0.1.0
 */
import { Context, Deferred, Effect, FiberSet, Layer, Option, Predicate, Queue, type Scope } from "effect"
import * as ClaudeAgent from "../ClaudeAgent.js"
import * as Defaults from "../internal/defaults.js"
import * as MemoryTransport from "../internal/memoryTransport.js"
import { Transport, type TransportShape } from "../services/Transport.js"

/**
 * A JSON object as the fake CLI reads and writes it.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 * const frame: FakeCli.JsonObject = { type: "assistant" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * An error answer to a control request, returned by a behaviour's `onControlRequest`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControlFailure {
  readonly _tag: "ControlFailure"
  readonly error: string
  readonly errorCode?: string | undefined
}

/**
 * Builds an error answer for `onControlRequest`.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const behaviour: FakeCli.Behaviour = {
 *   onControlRequest: (req) =>
 *     Effect.succeed(Option.some(FakeCli.controlFailure(`no ${req.subtype}`, "unsupported_request")))
 * }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const controlFailure = (error: string, errorCode?: string): ControlFailure => ({
  _tag: "ControlFailure",
  error,
  ...(errorCode !== undefined ? { errorCode } : {})
})

const isControlFailure = (u: unknown): u is ControlFailure => Predicate.isRecord(u) && u._tag === "ControlFailure"

/**
 * The CLI's side of the conversation, handed to behaviours and to tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeCliHandle {
  /** Writes a frame to the SDK (the CLI's stdout). */
  readonly emit: (frame: JsonObject) => Effect.Effect<void>
  /**
   * Sends a CLI→SDK `control_request` and waits for the SDK's `control_response` (the whole
   * `response` object: `{subtype, request_id, response?}` or `{subtype:"error", error}`).
   */
  readonly request: (
    request: { readonly subtype: string; readonly [key: string]: unknown },
    requestId?: string
  ) => Effect.Effect<JsonObject>
  /** Sends `control_cancel_request` for a request this CLI made. */
  readonly cancel: (requestId: string) => Effect.Effect<void>
  /** Writes a line to stderr. */
  readonly stderr: (line: string) => Effect.Effect<void>
  /** Ends stdout and reports this exit status. */
  readonly exit: (status?: { readonly exitCode?: number; readonly signal?: string }) => Effect.Effect<void>
  /** Writes a raw line to stdout (for noise or malformed-output tests). */
  readonly emitRaw: (line: string) => Effect.Effect<void>
  /** Every frame the SDK has written so far, parsed. */
  readonly sent: Effect.Effect<ReadonlyArray<JsonObject>>
  /** Waits for the next frame the SDK writes that satisfies `predicate` (including earlier ones not yet awaited). */
  readonly awaitSent: (predicate: (frame: JsonObject) => boolean) => Effect.Effect<JsonObject>
  /** Completes when the SDK has closed the CLI's input. */
  readonly inputEnded: Effect.Effect<void>
  /** The session id the fake reports. */
  readonly sessionId: string
}

/**
 * How the fake CLI reacts. Every field is optional; the defaults behave like a healthy CLI whose
 * model echoes the prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Behaviour {
  /** Runs for each user message, one at a time, in order. Default: `echoTurn`. */
  readonly onUserMessage?: (message: JsonObject, cli: FakeCliHandle) => Effect.Effect<void>
  /**
   * Answers an SDK→CLI control request: the success payload (`undefined` for none) or a
   * `controlFailure`. Return `Option.none()` to fall back to the default answer. Runs in its own fiber.
   */
  readonly onControlRequest?: (
    request: { readonly subtype: string; readonly [key: string]: unknown },
    cli: FakeCliHandle
  ) => Effect.Effect<Option.Option<unknown>>
  /** Runs when the SDK closes stdin, after queued user messages. Default: exit with 0 (1 after an error result). */
  readonly onInputEnd?: (cli: FakeCliHandle) => Effect.Effect<void>
  /** The `pid` reported in the initialize answer. Default 4242. */
  readonly pid?: number
}

const SESSION_ID = "00000000-0000-4000-8000-000000000001"

let uuidCounter = 0
const uuid = (): string => {
  uuidCounter++
  return `00000000-0000-4000-8000-${uuidCounter.toString(16).padStart(12, "0")}`
}

/**
 * Frame builders that match the real CLI 2.1.330's shapes.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const frame = FakeCli.frames.assistantText("hello")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const frames = {
  systemInit: (options: { readonly model?: string; readonly permissionMode?: string } = {}): JsonObject => ({
    type: "system",
    subtype: "init",
    cwd: "/fake",
    session_id: SESSION_ID,
    tools: ["Bash", "Read", "Write"],
    mcp_servers: [],
    model: options.model ?? "claude-fake-1",
    permissionMode: options.permissionMode ?? "default",
    slash_commands: [],
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.1.330",
    output_style: "default",
    agents: [],
    skills: [],
    plugins: [],
    uuid: uuid()
  }),
  assistantText: (text: string, options: { readonly model?: string } = {}): JsonObject => ({
    type: "assistant",
    message: {
      id: `msg_${uuid()}`,
      type: "message",
      role: "assistant",
      model: options.model ?? "claude-fake-1",
      content: [{ type: "text", text }],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 }
    },
    parent_tool_use_id: null,
    session_id: SESSION_ID,
    uuid: uuid()
  }),
  result: (text: string, options: { readonly isError?: boolean; readonly subtype?: string } = {}): JsonObject => ({
    type: "result",
    subtype: options.subtype ?? "success",
    is_error: options.isError ?? false,
    duration_ms: 12,
    duration_api_ms: 10,
    num_turns: 1,
    ...(options.subtype === undefined || options.subtype === "success" ? { result: text } : { errors: [text] }),
    stop_reason: "end_turn",
    session_id: SESSION_ID,
    total_cost_usd: 0.001,
    usage: { input_tokens: 10, output_tokens: 5 },
    modelUsage: {},
    permission_denials: [],
    terminal_reason: options.isError === true ? "api_error" : "completed",
    uuid: uuid()
  })
}

/**
 * The text of a user message frame (string content or its text blocks).
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * FakeCli.userText({ type: "user", message: { role: "user", content: "hi" } }) // "hi"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const userText = (frame: JsonObject): string => {
  const message = frame.message
  if (!Predicate.isRecord(message)) return ""
  const content = message.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((b: unknown) => (Predicate.isRecord(b) && typeof b.text === "string" ? b.text : "")).join("")
}

/**
 * The default turn: `system/init`, one assistant text block `echo: <prompt>`, then a success `result`.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const behaviour: FakeCli.Behaviour = { onUserMessage: FakeCli.echoTurn }
 * ```
 *
 * @since 0.1.0
 * @category behaviours
 */
export const echoTurn = (message: JsonObject, cli: FakeCliHandle): Effect.Effect<void> => {
  const reply = `echo: ${userText(message)}`
  return Effect.forEach(
    [frames.systemInit(), frames.assistantText(reply), frames.result(reply)],
    cli.emit,
    { discard: true }
  )
}

// What the default answers remember: the MCP servers the SDK has set (`mcp_set_servers`
// replaces the `initialize` request's `sdkMcpServers` and its own earlier set, as the CLI does).
interface DefaultState {
  mcpServers: ReadonlyArray<string>
}

const stringsOf = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

const defaultAnswer = (
  request: { readonly subtype: string; readonly [key: string]: unknown },
  pid: number,
  state: DefaultState
): unknown => {
  switch (request.subtype) {
    case "initialize":
      state.mcpServers = stringsOf(request.sdkMcpServers)
      return {
        commands: [{ name: "compact", description: "Clear conversation history but keep a summary", argumentHint: "", builtin: true }],
        agents: [{ name: "general-purpose", description: "General-purpose agent" }],
        output_style: "default",
        available_output_styles: ["default"],
        models: [{
          value: "default",
          resolvedModel: "claude-fake-1",
          displayName: "Default",
          description: "fake",
          supportsEffort: true,
          supportedEffortLevels: ["low", "medium", "high"],
          supportsAdaptiveThinking: true
        }],
        account: { tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" },
        pid,
        claude_code_version: "2.1.330",
        current_permission_mode: "default",
        hooks_applied: true,
        hook_on_failure_supported: true,
        // As 2.1.330: confirmed when the request carried them.
        ...(request.mcpServers === undefined ? {} : { mcp_servers_applied: true }),
        ...(request.plugins === undefined ? {} : { plugins_applied: true }),
        capabilities: []
      }
    case "interrupt":
      return { still_queued: [] }
    case "set_model":
      return { model: typeof request.model === "string" ? request.model : "claude-fake-1" }
    case "set_permission_mode":
      return { mode: request.mode }
    case "mcp_status":
      return { mcpServers: [] }
    case "get_context_usage":
      return {
        categories: [{ id: "free_space", name: "Free space", tokens: 200000, color: "promptBorder", kind: "free" }],
        totalTokens: 0,
        maxTokens: 200000,
        rawMaxTokens: 200000,
        percentage: 0,
        model: "claude-fake-1",
        memoryFiles: [],
        mcpTools: [],
        agents: [],
        isAutoCompactEnabled: true,
        apiUsage: null
      }
    case "rewind_files":
      return { canRewind: false, error: "File rewinding is not enabled." }
    case "stop_task":
      return {}
    case "set_max_thinking_tokens":
    case "mcp_toggle":
    case "apply_flag_settings":
    case "mcp_message":
      return undefined
    case "mcp_reconnect":
      return controlFailure("SDK servers should be handled in print.ts")
    case "mcp_set_servers": {
      const next = Predicate.isRecord(request.servers) ? Object.keys(request.servers) : []
      const previous = state.mcpServers
      state.mcpServers = next
      return {
        added: next.filter((name) => !previous.includes(name)),
        removed: previous.filter((name) => !next.includes(name)),
        errors: {}
      }
    }
    case "mcp_read_resource":
      // The CLI checks the scheme first; the fake has no server of its own to read from.
      return typeof request.uri === "string" && request.uri.startsWith("ui://")
        ? controlFailure(`Server not found: ${String(request.serverName)}`)
        : controlFailure("mcp_read_resource: uri must use the ui:// scheme")
    case "set_mcp_permission_mode_override":
      return {
        warning: request.mode === null
          ? `MCP server '${String(request.serverName)}' is not known; its stored override was cleared.`
          : `MCP server '${String(request.serverName)}' is not yet known; override stored but will not apply until a server with that exact name connects.`
      }
    case "update_settings": {
      // The CLI's allowlist per file (a session whose `settingSources` exclude the file is refused too).
      const allowed = request.source === "localSettings" ? "outputStyle" : "effortLevel"
      const keys = Predicate.isRecord(request.settings) ? Object.keys(request.settings) : []
      const refused = keys.filter((key) => key !== allowed)
      return refused.length > 0 ? controlFailure(`update_settings keys not allowed: ${refused.join(", ")}`) : {}
    }
    case "reload_plugins":
      return { commands: [], agents: [], plugins: [], mcpServers: [], error_count: 0 }
    case "reload_skills":
      return { skills: [] }
    case "reload_output_styles":
      return { available_output_styles: ["default", "Explanatory", "Learning"] }
    case "background_tasks":
      // No foreground task runs in the fake: the CLI sends an empty reply, or `false` for a given tool use.
      return typeof request.tool_use_id === "string" ? { backgrounded: false } : {}
    default:
      return controlFailure(`Unsupported control request subtype: ${request.subtype}`, "unsupported_request")
  }
}

/**
 * The handle of the fake CLI behind a `FakeCli.layer`, for tests that drive the CLI side.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const program = Effect.gen(function* () {
 *   const cli = yield* FakeCli.FakeCli
 *   const answer = yield* cli.request({ subtype: "can_use_tool", tool_name: "Bash", input: {} })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeCli extends Context.Tag("effect-claude-agent/testing/FakeCli")<FakeCli, FakeCliHandle>() {}

/**
 * Builds a fake CLI in the current scope: the `Transport` to give the SDK and the handle that
 * plays the CLI.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const { transport, cli } = yield* FakeCli.make()
 *   yield* transport.send({ type: "user", message: { role: "user", content: "hi" } })
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  behaviour: Behaviour = {}
): Effect.Effect<{ readonly transport: TransportShape; readonly cli: FakeCliHandle }, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Appended in place: copying the log per frame made a long session's frames cost O(n) each.
    const sentLog: Array<JsonObject> = []
    const sentQueue = yield* Queue.unbounded<JsonObject>()
    const userQueue = yield* Queue.unbounded<JsonObject | "end">()
    const inputEnded = yield* Deferred.make<void>()
    const fibers = yield* FiberSet.make()
    const awaiting = new Map<string, Deferred.Deferred<JsonObject>>()
    let lastResultWasError = false
    let requestCounter = 0
    const pid = behaviour.pid ?? 4242
    const defaults: DefaultState = { mcpServers: [] }

    const memory = yield* MemoryTransport.make({
      onSend: (frame) => (Predicate.isRecord(frame) ? receive(frame) : Effect.void),
      onEndInput: Queue.offer(userQueue, "end").pipe(
        Effect.zipRight(Deferred.succeed(inputEnded, undefined)),
        Effect.asVoid
      ),
      maxBufferSize: Defaults.maxBufferSize,
      pid: Option.some(pid)
    })

    const emit = (frame: JsonObject): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (frame.type === "result") lastResultWasError = frame.is_error === true
        return memory.writeFrame(frame)
      })

    const exit = (status: { readonly exitCode?: number; readonly signal?: string } = {}) =>
      memory.exit({
        exitCode: status.signal !== undefined ? undefined : (status.exitCode ?? 0),
        signal: status.signal
      })

    let cli: FakeCliHandle

    const answerControl = (requestId: string, request: { readonly subtype: string; readonly [key: string]: unknown }) =>
      Effect.gen(function*() {
        const custom = behaviour.onControlRequest !== undefined
          ? yield* behaviour.onControlRequest(request, cli)
          : Option.none()
        const answer = Option.isSome(custom) ? custom.value : defaultAnswer(request, pid, defaults)
        if (isControlFailure(answer)) {
          yield* emit({
            type: "control_response",
            response: {
              subtype: "error",
              request_id: requestId,
              error: answer.error,
              ...(answer.errorCode !== undefined ? { error_code: answer.errorCode } : {})
            }
          })
        } else {
          yield* emit({
            type: "control_response",
            response: answer === undefined
              ? { subtype: "success", request_id: requestId }
              : { subtype: "success", request_id: requestId, response: answer }
          })
        }
      })

    const receive = (frame: JsonObject): Effect.Effect<void> =>
      Effect.gen(function*() {
        sentLog.push(frame)
        yield* Queue.offer(sentQueue, frame)
        switch (frame.type) {
          case "user":
            yield* Queue.offer(userQueue, frame)
            return
          case "control_request": {
            const request = frame.request
            if (typeof frame.request_id === "string" && Predicate.isRecord(request) && typeof request.subtype === "string") {
              yield* FiberSet.run(fibers, answerControl(frame.request_id, { ...request, subtype: request.subtype }))
            }
            return
          }
          case "control_response": {
            const response = frame.response
            if (Predicate.isRecord(response) && typeof response.request_id === "string") {
              const waiter = awaiting.get(response.request_id)
              if (waiter !== undefined) {
                awaiting.delete(response.request_id)
                yield* Deferred.succeed(waiter, response)
              }
            }
            return
          }
          default:
            return
        }
      })

    cli = {
      emit,
      emitRaw: memory.writeLine,
      request: (request, requestId) =>
        Effect.gen(function*() {
          const id = requestId ?? `cli-req-${++requestCounter}`
          const waiter = yield* Deferred.make<JsonObject>()
          awaiting.set(id, waiter)
          yield* emit({ type: "control_request", request_id: id, request })
          return yield* Deferred.await(waiter)
        }),
      cancel: (requestId) => emit({ type: "control_cancel_request", request_id: requestId }),
      stderr: memory.writeStderr,
      exit,
      sent: Effect.sync(() => sentLog.slice()),
      awaitSent: (predicate) =>
        Effect.gen(function*() {
          const earlier = sentLog.find(predicate)
          if (earlier !== undefined) return earlier
          while (true) {
            const next = yield* Queue.take(sentQueue)
            if (predicate(next)) return next
          }
        }),
      inputEnded: Deferred.await(inputEnded),
      sessionId: SESSION_ID
    }

    // The CLI's main loop: user messages one at a time, then the end of input.
    const onUser = behaviour.onUserMessage ?? echoTurn
    const mainLoop: Effect.Effect<void> = Effect.gen(function*() {
      while (true) {
        const next = yield* Queue.take(userQueue)
        if (next === "end") {
          if (behaviour.onInputEnd !== undefined) yield* behaviour.onInputEnd(cli)
          else yield* exit({ exitCode: lastResultWasError ? 1 : 0 })
          return
        }
        yield* onUser(next, cli)
      }
    })
    yield* FiberSet.run(fibers, mainLoop)

    return { transport: memory.transport, cli }
  })

/**
 * A layer providing `Transport` (the fake) and `FakeCli` (its handle).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { AgentSession, ControlChannel, HookRegistry, McpBridge } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * // A session's services over the fake CLI, built by hand (`FakeCli.layerClaudeAgent` does this per session).
 * const services = Layer.mergeAll(HookRegistry.HookRegistry.layerEmpty, McpBridge.McpBridge.layerEmpty).pipe(
 *   Layer.provideMerge(ControlChannel.ControlChannel.layer()),
 *   Layer.provideMerge(FakeCli.layer())
 * )
 * const program = Effect.scoped(AgentSession.make()).pipe(Effect.provide(services))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (behaviour: Behaviour = {}): Layer.Layer<Transport | FakeCli> =>
  Layer.scopedContext(
    Effect.map(make(behaviour), ({ cli, transport }) => Context.make(Transport, transport).pipe(Context.add(FakeCli, cli)))
  )

/**
 * `ClaudeAgent` backed by the fake CLI: every session gets a fresh `FakeCli` with the given
 * behaviour (no process, no model, no network; runs under `TestClock`).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const test = ClaudeAgent.query("hi").pipe(
 *   Stream.runCollect,
 *   Effect.provide(FakeCli.layerClaudeAgent())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClaudeAgent = (behaviour: Behaviour = {}): Layer.Layer<ClaudeAgent.ClaudeAgent> =>
  Layer.succeed(ClaudeAgent.ClaudeAgent, ClaudeAgent.make({ transport: layer(behaviour) }))
