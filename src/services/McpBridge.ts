/**
 * `McpBridge`: serves in-process (SDK) MCP servers to the CLI over `mcp_message` control requests.
 *
 * The CLI is the MCP client; each JSON-RPC message it sends to an SDK server arrives wrapped in a
 * `control_request {subtype:"mcp_message", server_name, message}` and the answer goes back as the
 * control response's `{mcp_response: <JSON-RPC response>}`.
 *
 * Why JSON-RPC is implemented here, on Effect Schemas, rather than on an MCP library:
 * `@modelcontextprotocol/sdk` is a heavy dependency with its own zod types, transports and
 * Promise-based handlers (we would need a fake transport and Promise/Effect glue, and would lose
 * typed errors, interruption and the caller's services); `@effect/ai`'s `McpServer` is not a
 * dependency and is tied to `@effect/ai`'s toolkit and Layer model. The CLI only uses a handful of
 * methods (`initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping`,
 * `notifications/cancelled`), so a direct implementation gives the best types (Schema in, Schema
 * out), real interruption of tool fibers, and no weight.
 *
 * @since 0.1.0
 */
import {
  Cause,
  Clock,
  Context,
  Duration,
  Effect,
  Either,
  Exit,
  Fiber,
  FiberRef,
  Layer,
  ParseResult,
  Predicate,
  Runtime,
  Schema,
  Scope,
  Tracer
} from "effect"
import * as Captured from "../internal/effect/captured.js"
import * as Guard from "../internal/schema/guard.js"
import { decodePositiveDuration } from "../internal/schema/duration.js"
import type * as Control from "../schema/Control.js"
import type * as McpServer from "../McpServer.js"
import { OptionsError } from "../SdkError.js"
import type * as Tool from "../Tool.js"
import type { InboundHandler } from "./ControlChannel.js"
import { optionalString, optionalUnknown } from "../internal/schema/schemas.js"

/**
 * What an MCP bridge does for one session.
 *
 * @example
 * ```ts
 * import { McpBridge } from "effect-claude-agent"
 *
 * declare const bridge: McpBridge.McpBridgeShape
 * const reply = bridge.handleMessage(
 *   { server_name: "calc", message: { jsonrpc: "2.0", id: 1, method: "ping" } },
 *   "req-1"
 * )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface McpBridgeShape {
  /** The names of the servers served now, sent in `initialize` as `sdkMcpServers`. */
  readonly serverNames: Effect.Effect<ReadonlyArray<string>>
  /**
   * The CLI-side settings of the servers served now that have any (`timeout`, in milliseconds),
   * by server name: sent in `initialize` as `sdkMcpServerConfigs`. Optional for bridges of your own.
   */
  readonly serverConfigs?: Effect.Effect<Readonly<Record<string, SdkServerConfig>>> | undefined
  /** The handler for the `mcp_message` control subtype. */
  readonly handleMessage: InboundHandler<typeof Control.McpMessage>
  /**
   * Replaces the servers served (`AgentSession.setMcpServers` calls it before it tells the CLI):
   * servers not in `servers` are no longer served and their running tool calls are interrupted;
   * the others are served from now on, their tools getting the services `R` of the caller. Fails
   * with `OptionsError` on an empty or duplicate server name, or an empty or duplicate tool name
   * within a server; nothing changes then.
   */
  readonly setServers: <R = never>(
    servers: ReadonlyArray<McpServer.McpServer<R>>
  ) => Effect.Effect<SetServersResult, OptionsError, R>
}

/**
 * What `setServers` changed, by server name.
 *
 * @example
 * ```ts
 * import { McpBridge } from "effect-claude-agent"
 *
 * const summary = (r: McpBridge.SetServersResult) => `+${r.added.length} -${r.removed.length} ~${r.replaced.length}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SetServersResult {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  /**
   * Kept under the same name with a different definition (another `McpServer` value): the CLI
   * still has the old tool list and should be told to list the tools again.
   */
  readonly replaced: ReadonlyArray<string>
}

// The MCP revision answered when the client sends none; otherwise the client's is echoed, which is
// what the CLI expects (it offers the revision it speaks).
const LATEST_PROTOCOL_VERSION = "2025-11-25"

const ErrorCode = {
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603
} as const

const JsonRpcId = Schema.Union(Schema.String, Schema.Number, Schema.Null)
type JsonRpcId = typeof JsonRpcId.Type

const JsonRpcMessage = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(JsonRpcId),
  method: Schema.String,
  params: optionalUnknown
})
type JsonRpcMessage = typeof JsonRpcMessage.Type

// We never send requests to the CLI, but a stray response must still get an answer: the CLI waits
// for one on every control request.
const JsonRpcResponseIn = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: JsonRpcId,
  result: optionalUnknown,
  error: optionalUnknown
})

const InitializeParams = Schema.Struct({ protocolVersion: Schema.String })

const CallToolParams = Schema.Struct({
  name: Schema.String,
  arguments: optionalUnknown,
  // `_meta` also carries `progressToken` and may grow: only the tool-use id matters here, and a
  // malformed `_meta` must not fail the call.
  _meta: optionalUnknown
})

const CancelledParams = Schema.Struct({
  requestId: Schema.Union(Schema.String, Schema.Number),
  reason: optionalString
})

type JsonRpcResponse =
  | { readonly jsonrpc: "2.0"; readonly id: JsonRpcId; readonly result: unknown }
  | {
    readonly jsonrpc: "2.0"
    readonly id: JsonRpcId
    readonly error: { readonly code: number; readonly message: string }
  }

const success = (id: JsonRpcId, result: unknown): JsonRpcResponse => ({ jsonrpc: "2.0", id, result })

const failure = (id: JsonRpcId, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

const wrap = (response: JsonRpcResponse) => ({ mcp_response: response })

// What the official SDK answers to a notification (which has no id to answer); the CLI accepts it.
const notificationAck = wrap(success(0, {}))

const idOf = (message: unknown): JsonRpcId => {
  if (!Predicate.hasProperty(message, "id")) return null
  const id = message.id
  return typeof id === "string" || typeof id === "number" ? id : null
}

const unknownServer = (message: unknown, serverName: unknown) =>
  wrap(failure(idOf(message), ErrorCode.MethodNotFound, `SDK MCP server not found: ${String(serverName)}`))

const formatParseError = (error: ParseResult.ParseError): string => ParseResult.TreeFormatter.formatErrorSync(error)

const toWireResult = (result: Tool.ToolResult) =>
  result.isError === undefined ? { content: result.content } : { content: result.content, isError: result.isError }

const toolUseIdOf = (meta: unknown): string | undefined =>
  Predicate.hasProperty(meta, "claudecode/toolUseId") && typeof meta["claudecode/toolUseId"] === "string"
    ? meta["claudecode/toolUseId"]
    : undefined

// When a span ends, read as `Effect.withSpan` reads it: the fiber's clock, when timing is on.
const endTime = (fiber: Fiber.RuntimeFiber<unknown, unknown>): bigint =>
  fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
    ? Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeNanos()
    : BigInt(0)

// A NUL cannot occur in a server name the CLI routes by, and JSON keeps 1 and "1" apart (a number
// from JSON is finite: its text is its JSON).
const fiberKey = (server: string, id: string | number | null): string =>
  typeof id === "number" ? `${server}\u0000${id}` : `${server}\u0000${JSON.stringify(id)}`

/**
 * What the CLI keeps for an SDK server besides its name (the `sdkMcpServerConfigs` entry of
 * `initialize`).
 *
 * @example
 * ```ts
 * import type { McpBridge } from "effect-claude-agent"
 *
 * const config: McpBridge.SdkServerConfig = { timeout: 30_000 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SdkServerConfig {
  /** The per-call wall-clock limit in milliseconds (the CLI ignores values under 1000). */
  readonly timeout?: number
}

// The CLI ignores a server timeout under one second (it falls back to MCP_TOOL_TIMEOUT): a
// shorter one is refused rather than silently not applied.
const MIN_TOOL_TIMEOUT_MS = 1000

// The tool's `_meta` in `tools/list`: what the CLI reads from `anthropic/*` keys.
const toolMeta = (
  server: McpServer.McpServer<unknown>,
  tool: Tool.Tool<unknown>
): Record<string, unknown> | undefined => {
  const alwaysLoad = tool.alwaysLoad ?? server.alwaysLoad
  const meta: Record<string, unknown> = {
    ...(alwaysLoad === undefined ? {} : { "anthropic/alwaysLoad": alwaysLoad }),
    ...(tool.searchHint === undefined ? {} : { "anthropic/searchHint": tool.searchHint })
  }
  return Object.keys(meta).length === 0 ? undefined : meta
}

const toolEntry = (server: McpServer.McpServer<unknown>, tool: Tool.Tool<unknown>) => {
  const meta = toolMeta(server, tool)
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    // `annotations` matter to the CLI: `readOnlyHint: true` lets it run several calls of the tool
    // from one assistant message concurrently.
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    ...(meta === undefined ? {} : { _meta: meta })
  }
}

// A served server with the services its tools need: servers added later may need other services
// than the first ones, so each entry carries the context it was registered with.
interface ServerEntry {
  readonly server: McpServer.McpServer<unknown>
  /** Each tool's `call`, with those services provided and `span` (the call's) as its spans' parent. */
  readonly tools: ReadonlyMap<string, ToolCall>
  /** The tools by name, and the services they need (for the control channel's fast path). */
  readonly byName: ReadonlyMap<string, Tool.Tool<unknown>>
  /** Each tool's span, as the control channel's fast path makes it: the same for every call. */
  readonly spans: ReadonlyMap<string, Captured.Spanned["span"]>
  readonly services: Context.Context<never>
  readonly timeoutMs: number | undefined
}

/**
 * Starts one call of a tool in a fiber of its own, at once on the caller's stack: the caller's
 * context with the services captured for the tool's server, `span` (the call's) as the parent of
 * its spans, the caller's fiber refs (log annotations, tracer settings).
 */
type ToolCall = (
  caller: Fiber.RuntimeFiber<unknown, unknown>,
  span: Tracer.Span,
  args: unknown,
  toolUseId: string | undefined
) => Fiber.RuntimeFiber<Tool.ToolResult>

const validate = <R>(
  servers: ReadonlyArray<McpServer.McpServer<R>>,
  context: Context.Context<R>
): Either.Either<ReadonlyMap<string, ServerEntry>, OptionsError> => {
  const table = new Map<string, ServerEntry>()
  for (const server of servers) {
    if (server.name === "") {
      return Either.left(new OptionsError({ field: "mcpServers", detail: "an SDK MCP server has an empty name" }))
    }
    if (table.has(server.name)) {
      return Either.left(
        new OptionsError({
          field: `mcpServers.${server.name}`,
          detail: `two SDK MCP servers are named "${server.name}": server names must be unique`
        })
      )
    }
    const tools = new Map<string, ToolCall>()
    const byName = new Map<string, Tool.Tool<unknown>>()
    const spans = new Map<string, Captured.Spanned["span"]>()
    for (const tool of server.tools) {
      if (tool.name === "") {
        return Either.left(
          new OptionsError({ field: `mcpServers.${server.name}.tools`, detail: "a tool has an empty name" })
        )
      }
      if (tools.has(tool.name)) {
        return Either.left(
          new OptionsError({
            field: `mcpServers.${server.name}.tools.${tool.name}`,
            detail: `two tools are named "${tool.name}": tool names must be unique within a server`
          })
        )
      }
      byName.set(tool.name, tool)
      spans.set(tool.name, {
        name: `Tool.${tool.name}`,
        attributes: { "mcp.server": server.name, "tool.name": tool.name }
      })
      tools.set(tool.name, (caller, span, args, toolUseId) =>
        Runtime.runFork(
          Runtime.make({
            context: Context.add(Context.merge(caller.currentContext, context), Tracer.ParentSpan, span),
            fiberRefs: caller.getFiberRefs(),
            runtimeFlags: Runtime.defaultRuntime.runtimeFlags
          })
        )(tool.call(args, toolUseId), { immediate: true }))
    }
    let timeoutMs: number | undefined
    if (server.timeout !== undefined) {
      const field = `mcpServers.${server.name}.timeout`
      const timeout = decodePositiveDuration(field, server.timeout, { allowInfinite: false })
      if (Either.isLeft(timeout)) return Either.left(timeout.left)
      timeoutMs = Math.round(Duration.toMillis(timeout.right))
      if (timeoutMs < MIN_TOOL_TIMEOUT_MS) {
        return Either.left(
          new OptionsError({
            field,
            detail: `must be at least 1 second (the CLI ignores shorter tool-call timeouts); got ${
              Duration.format(timeout.right)
            }`
          })
        )
      }
    }
    table.set(server.name, { server, tools, byName, spans, services: context, timeoutMs })
  }
  return Either.right(table)
}

// Compiled once, on first use (a process that imports the library may serve no MCP server): every
// MCP message goes through these. A valid message or `tools/call` is its own decoding (see
// `Guard.fastPath`): the fields it carries beyond the Schema's are kept, and never read.
const preserve = { onExcessProperty: "preserve" } as const
const decodeJsonRpcMessage = Guard.lazily(() =>
  Guard.fastPath(JsonRpcMessage, Schema.decodeUnknownEither(JsonRpcMessage, preserve), { excessKept: true })
)
const isJsonRpcResponseIn = Guard.lazily(() => Schema.is(JsonRpcResponseIn))
const decodeCallToolParams = Guard.lazily(() =>
  Guard.fastPath(CallToolParams, Schema.decodeUnknownEither(CallToolParams, preserve), { excessKept: true })
)
const decodeInitializeParams = Guard.lazily(() => Schema.decodeUnknownOption(InitializeParams))
const decodeCancelledParams = Guard.lazily(() => Schema.decodeUnknownEither(CancelledParams))

interface ToolCallRequest {
  readonly id: string | number | null
  readonly name: string
  readonly args: unknown
  readonly _meta: unknown
}

// A `tools/call` request as the CLI sends it, read in plain code: a plain object with `jsonrpc:
// "2.0"`, `method: "tools/call"`, a string or number id, and a plain object of params with a
// string `name`. Such a message is what `JsonRpcMessage` and then `CallToolParams` accept as they
// are (the bridge's property test checks that both paths answer alike); any other message goes
// through them. `undefined` for anything but a `tools/call` request.
const readToolCall = (message: unknown): ToolCallRequest | undefined => {
  const envelope = Guard.plainObject(message)
  if (envelope !== undefined && envelope.jsonrpc === "2.0" && envelope.method === "tools/call") {
    const id = envelope.id
    const params = Guard.plainObject(envelope.params)
    if ((typeof id === "string" || typeof id === "number") && params !== undefined) {
      const name = params.name
      if (typeof name === "string") return { id, name, args: params.arguments, _meta: params._meta }
    }
  }
  const decoded = decodeJsonRpcMessage(message)
  if (Either.isLeft(decoded) || decoded.right.method !== "tools/call") return undefined
  const id = decoded.right.id
  if (id === undefined) return undefined
  const params = decodeCallToolParams(decoded.right.params)
  if (Either.isLeft(params)) return undefined
  return { id, name: params.right.name, args: params.right.arguments, _meta: params.right._meta }
}

/**
 * Builds a bridge serving the given in-process MCP servers, and those `setServers` puts in their
 * place later. The services `R` the tools need are captured here and provided to every tool call;
 * tool calls run in fibers owned by the current scope, so closing it interrupts whatever is still
 * running. Fails with `OptionsError` on an empty or duplicate server name, or an empty or
 * duplicate tool name within a server.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { McpBridge, McpServer, Tool } from "effect-claude-agent"
 *
 * const calc = McpServer.make({
 *   name: "calc",
 *   tools: [Tool.make("add", {
 *     description: "Add two numbers",
 *     parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *     handler: ({ a, b }) => Effect.succeed(`sum=${a + b}`)
 *   })]
 * })
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const bridge = yield* McpBridge.make([calc])
 *   return yield* bridge.serverNames // ["calc"]
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R>(
  servers: ReadonlyArray<McpServer.McpServer<R>>
): Effect.Effect<McpBridgeShape, OptionsError, R | Scope.Scope> =>
  Effect.flatMap(Effect.context<R>(), (context) => Effect.flatMap(validate(servers, context), makeServing))

// The JSON-RPC answer to a tool call, from the exit of the tool's fiber.
const toolAnswer =
  (entry: ServerEntry, id: JsonRpcId, name: string) =>
  (exit: Exit.Exit<Tool.ToolResult>): Effect.Effect<JsonRpcResponse> => {
    if (Exit.isSuccess(exit)) return Effect.succeed(success(id, toWireResult(exit.value)))
    // Cancelled by `notifications/cancelled` (or the session is closing): MCP says a cancelled
    // request gets no response, so this handler ends interrupted and the control channel
    // writes nothing.
    if (Cause.isInterruptedOnly(exit.cause)) return Effect.interrupt
    const defect = Cause.squash(exit.cause)
    const message = Predicate.hasProperty(defect, "message") && typeof defect.message === "string"
      ? defect.message
      : String(defect)
    return Effect.as(
      Effect.logWarning(
        `effect-claude-agent: SDK MCP tool ${entry.server.name}/${name} died`,
        Cause.pretty(exit.cause)
      ),
      failure(id, ErrorCode.InternalError, `Internal error in tool ${name}: ${message}`)
    )
  }

// A `tools/call` of a served tool, seen on the caller's stack: what the control channel runs in
// the answer's fiber itself, with the server's services and the `Tool.<name>` span as the
// parent of the tool's spans (no fiber of its own, no change of context). The fiber is the
// call's while it runs: `notifications/cancelled`, a server's removal and the bridge's end
// interrupt it, and the control channel then writes nothing, as MCP wants. `undefined` for
// any other message, which the bridge's `answerMessage` answers.
const fastToolCall = (
  served: () => ReadonlyMap<string, ServerEntry>,
  inFlight: Map<string, Fiber.RuntimeFiber<unknown, unknown>>
) =>
(
  { message, server_name }: Control.Request.Payload<typeof Control.McpMessage>,
  provided: Effect.Effect<Control.Request.Success<typeof Control.McpMessage>>
): Captured.Spanned & { readonly provided: typeof provided } | undefined => {
  const entry = served().get(server_name)
  if (entry === undefined) return undefined
  const call = readToolCall(message)
  if (call === undefined) return undefined
  const { _meta, args, id, name } = call
  const tool = entry.byName.get(name)
  const span = entry.spans.get(name)
  if (tool === undefined || span === undefined) return undefined
  const key = fiberKey(entry.server.name, id)
  if (inFlight.has(key)) return undefined
  return {
    _tag: "Spanned",
    provided,
    services: entry.services,
    span,
    run: (end) =>
      Effect.withFiberRuntime<Control.Request.Success<typeof Control.McpMessage>, never, unknown>((fiber) => {
        const release = () => {
          if (inFlight.get(key) === fiber) inFlight.delete(key)
        }
        inFlight.set(key, fiber)
        // An interruption skips the branches below.
        fiber.addObserver(release)
        // A `call` that throws instead of failing: the tool died (answered as `onFailure` says).
        let called: Effect.Effect<Tool.ToolResult, never, unknown>
        try {
          called = tool.call(args ?? {}, toolUseIdOf(_meta))
        } catch (defect) {
          called = Effect.die(defect)
        }
        return Effect.matchCauseEffect(called, {
          onSuccess: (result) => {
            release()
            end(Exit.succeed(result))
            return Effect.succeed(wrap(success(id, toWireResult(result))))
          },
          onFailure: (cause) => {
            release()
            const exit = Exit.failCause(cause)
            end(exit)
            return Effect.map(toolAnswer(entry, id, name)(exit), wrap)
          }
        })
      })
  }
}

const makeServing = (initial: ReadonlyMap<string, ServerEntry>): Effect.Effect<McpBridgeShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Read and replaced in single steps (the control channel reads it on the reader's stack).
    let table = initial
    // The calls running now, by key, with the fiber each runs on: `notifications/cancelled`, a
    // server's removal and the end of the bridge's scope interrupt them.
    const inFlight = new Map<string, Fiber.RuntimeFiber<unknown, unknown>>()
    // The scope's own finalizer: `Effect.addFinalizer` would diff and patch the fiber's refs
    // around it (the session's services: ~19 µs per session), and it reads nothing from them.
    yield* Scope.addFinalizer(
      yield* Effect.scope,
      Effect.suspend(() => Fiber.interruptAll(Array.from(inFlight.values())))
    )
    const interrupt = (key: string) =>
      Effect.suspend(() => {
        const fiber = inFlight.get(key)
        return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
      })

    // The tool's span, its fiber, and the wait for it: a tool that answers without waiting (most
    // do) is done when it is started, and the wait is no step at all.
    const runTool = (
      key: string,
      invoke: ToolCall,
      args: unknown,
      toolUseId: string | undefined,
      restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ) =>
    (span: Tracer.Span) =>
      Effect.withFiberRuntime<Exit.Exit<Tool.ToolResult>>((caller) => {
        let fiber: Fiber.RuntimeFiber<Tool.ToolResult>
        try {
          fiber = invoke(caller, span, args, toolUseId)
        } catch (defect) {
          // A `call` that throws instead of failing: the tool died.
          const exit = Exit.die(defect)
          span.end(endTime(caller), exit)
          return Effect.succeed(exit)
        }
        // Called at once if the fiber is already done.
        fiber.addObserver((exit) => {
          if (span.status._tag === "Started") span.end(endTime(caller), exit)
          if (inFlight.get(key) === fiber) inFlight.delete(key)
        })
        const exit = fiber.unsafePoll()
        if (exit !== null) return Effect.succeed(exit)
        inFlight.set(key, fiber)
        // An interrupted caller (the CLI withdrew the request, the session is closing) takes
        // the tool down with it: only the wait is interruptible, so the tool cannot be left
        // running by an interruption before the wait began.
        return Effect.onInterrupt(restore(Fiber.await(fiber)), () => Fiber.interrupt(fiber))
      })

    const callTool = (entry: ServerEntry, id: JsonRpcId, params: unknown): Effect.Effect<JsonRpcResponse> => {
      const decoded = decodeCallToolParams(params)
      if (Either.isLeft(decoded)) {
        return Effect.succeed(
          failure(id, ErrorCode.InvalidParams, `Invalid tools/call params: ${formatParseError(decoded.left)}`)
        )
      }
      const { name, arguments: args, _meta } = decoded.right
      const invoke = entry.tools.get(name)
      // Unknown tool: a protocol error (-32602), as the MCP spec's own example for tools/call
      // does, rather than a tool result. The CLI only calls tools it got from tools/list, so
      // this means a stale or confused client, not a model mistake the model could fix.
      if (invoke === undefined) {
        return Effect.succeed(
          failure(id, ErrorCode.InvalidParams, `Unknown tool: ${name} (server ${entry.server.name})`)
        )
      }
      const key = fiberKey(entry.server.name, id)
      if (inFlight.has(key)) {
        return Effect.succeed(
          failure(id, ErrorCode.InvalidRequest, `request id ${JSON.stringify(id)} is already in use`)
        )
      }
      const started = Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(
          Effect.makeSpan(`Tool.${name}`, {
            captureStackTrace: false,
            attributes: { "mcp.server": entry.server.name, "tool.name": name }
          }),
          runTool(key, invoke, args ?? {}, toolUseIdOf(_meta), restore)
        )
      )
      return Effect.flatMap(started, toolAnswer(entry, id, name))
    }

    const request = (entry: ServerEntry, id: JsonRpcId, message: JsonRpcMessage) => {
      switch (message.method) {
        case "initialize": {
          const params = decodeInitializeParams(message.params)
          return Effect.succeed(success(id, {
            protocolVersion: params._tag === "Some" ? params.value.protocolVersion : LATEST_PROTOCOL_VERSION,
            // `listChanged`: a server given again under its name with new tools is announced
            // with `notifications/tools/list_changed` (`AgentSession.setMcpServers`).
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: entry.server.name, version: entry.server.version },
            ...(entry.server.instructions === undefined ? {} : { instructions: entry.server.instructions })
          }))
        }
        case "ping":
          return Effect.succeed(success(id, {}))
        case "tools/list":
          return Effect.succeed(success(id, {
            tools: entry.server.tools.map((tool) => toolEntry(entry.server, tool))
          }))
        case "tools/call":
          return callTool(entry, id, message.params)
        default:
          return Effect.succeed(failure(id, ErrorCode.MethodNotFound, `Method not found: ${message.method}`))
      }
    }

    const notification = (entry: ServerEntry, message: JsonRpcMessage): Effect.Effect<void> => {
      switch (message.method) {
        case "notifications/cancelled": {
          const params = decodeCancelledParams(message.params)
          if (Either.isLeft(params)) {
            return Effect.logDebug(
              `effect-claude-agent: ignoring malformed notifications/cancelled: ${formatParseError(params.left)}`
            )
          }
          return interrupt(fiberKey(entry.server.name, params.right.requestId))
        }
        case "notifications/initialized":
          return Effect.void
        default:
          return Effect.logDebug(`effect-claude-agent: ignoring MCP notification ${message.method}`)
      }
    }

    const answerMessage = (
      { message, server_name }: Control.Request.Payload<typeof Control.McpMessage>
    ): Effect.Effect<Control.Request.Success<typeof Control.McpMessage>> =>
      Effect.suspend(() => {
        const entry = table.get(server_name)
        if (entry === undefined) return Effect.succeed(unknownServer(message, server_name))
        const decoded = decodeJsonRpcMessage(message)
        if (Either.isLeft(decoded)) {
          if (isJsonRpcResponseIn(message)) {
            return Effect.as(
              Effect.logDebug(`effect-claude-agent: ignoring a JSON-RPC response sent to ${server_name}`),
              notificationAck
            )
          }
          return Effect.succeed(
            wrap(failure(idOf(message), ErrorCode.InvalidRequest, `Invalid Request: ${formatParseError(decoded.left)}`))
          )
        }
        const jsonRpc = decoded.right
        if (jsonRpc.id === undefined) return Effect.as(notification(entry, jsonRpc), notificationAck)
        return Effect.map(request(entry, jsonRpc.id, jsonRpc), wrap)
      })

    const toolCallOf = fastToolCall(() => table, inFlight)

    const handleMessage: InboundHandler<typeof Control.McpMessage> = (request) => {
      const answered = answerMessage(request)
      const toolCall = toolCallOf(request, answered)
      return toolCall === undefined ? answered : Captured.spanning(toolCall)
    }

    const setServers = <R2>(next: ReadonlyArray<McpServer.McpServer<R2>>) =>
      Effect.gen(function*() {
        const nextTable = yield* validate(next, yield* Effect.context<R2>())
        const result = yield* Effect.sync((): SetServersResult => {
          const added: Array<string> = []
          const replaced: Array<string> = []
          for (const [name, entry] of nextTable) {
            const previous = table.get(name)
            if (previous === undefined) added.push(name)
            else if (previous.server !== entry.server) replaced.push(name)
          }
          const removed = Array.from(table.keys()).filter((name) => !nextTable.has(name))
          table = nextTable
          return { added, removed, replaced }
        })
        // A removed server's calls cannot be answered any more: the CLI has let go of the server.
        const gone = new Set(result.removed)
        const keys = Array.from(inFlight.keys()).filter((key) => gone.has(key.slice(0, key.indexOf("\u0000"))))
        yield* Effect.forEach(keys, interrupt, { discard: true })
        return result
      })

    return {
      serverNames: Effect.sync(() => Array.from(table.keys())),
      serverConfigs: Effect.sync(() => {
        const configs: Record<string, SdkServerConfig> = {}
        for (const [name, entry] of table) {
          if (entry.timeoutMs !== undefined) configs[name] = { timeout: entry.timeoutMs }
        }
        return configs
      }),
      handleMessage,
      setServers
    }
  })

/**
 * The MCP bridge service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpBridge } from "effect-claude-agent"
 *
 * const names = Effect.flatMap(McpBridge.McpBridge, (bridge) => bridge.serverNames)
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class McpBridge extends Context.Tag("effect-claude-agent/McpBridge")<McpBridge, McpBridgeShape>() {
  /**
   * A fixed bridge with no servers: every `mcp_message` gets JSON-RPC error `-32601` naming the
   * server, and `setServers` refuses any server (`OptionsError`). A session's default bridge is
   * `layerEmpty`, which starts empty and accepts servers later.
   *
   * @example
   * ```ts
   * import { McpBridge } from "effect-claude-agent"
   * const names = McpBridge.McpBridge.empty.serverNames // Effect of []
   * ```
   *
   * @since 0.1.0
   */
  static readonly empty: McpBridgeShape = {
    serverNames: Effect.succeed([]),
    handleMessage: (request) => Effect.succeed(unknownServer(request.message, request.server_name)),
    setServers: (servers) =>
      servers.length === 0
        ? Effect.succeed({ added: [], removed: [], replaced: [] })
        : Effect.fail(
          new OptionsError({
            field: "mcpServers",
            detail: "the session's McpBridge serves no in-process servers (McpBridge.empty); " +
              "use McpBridge.layerEmpty to add some later"
          })
        )
  }

  /**
   * A bridge that serves no server at first and the servers `setServers` gives it later (tool
   * calls are interrupted when the layer's scope closes). The bridge of a session opened without
   * in-process servers.
   *
   * @example
   * ```ts
   * import { McpBridge } from "effect-claude-agent"
   * const layer = McpBridge.McpBridge.layerEmpty
   * ```
   *
   * @since 0.1.0
   */
  static readonly layerEmpty: Layer.Layer<McpBridge> = Layer.scoped(McpBridge, makeServing(new Map()))

  /**
   * A bridge serving the given servers as a layer; tool calls are interrupted when the layer's
   * scope closes.
   *
   * @example
   * ```ts
   * import { McpBridge, McpServer } from "effect-claude-agent"
   *
   * declare const calc: McpServer.McpServer
   * const layer = McpBridge.McpBridge.layer([calc])
   * ```
   *
   * @since 0.1.0
   */
  static readonly layer = <R>(
    servers: ReadonlyArray<McpServer.McpServer<R>>
  ): Layer.Layer<McpBridge, OptionsError, Exclude<R, Scope.Scope>> => Layer.scoped(McpBridge, make(servers))
}
