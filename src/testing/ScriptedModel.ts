/**
 * A scripted Anthropic Messages API server on 127.0.0.1, for driving the real `claude` CLI offline.
 *
 * The CLI is pointed at it with `ANTHROPIC_BASE_URL`. Each real agent turn ("main" request) is
 * answered by the first matching scripted {@link Rule}; the CLI's own side requests (model probes,
 * title generation, compaction) and `count_tokens` are answered without consuming rules, so a
 * script only has to describe the conversation a test cares about.
 *
 * @since 0.1.0
 */
import { FileSystem, HttpRouter, HttpServerRequest, HttpServerResponse, Path } from "@effect/platform"
import { NodeFileSystem, NodeHttpServer, NodeHttpServerRequest, NodePath } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Predicate, Ref, Scope, Stream, SubscriptionRef } from "effect"
import * as http from "node:http"
import * as Framing from "../internal/protocol/json.js"
import * as Sse from "./internal/sse.js"

// ---------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------

/**
 * One content block of a scripted assistant message.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const block: ScriptedModel.Block = { _tag: "Text", text: "hi", chunkSize: 2, delayMs: 0 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Block =
  | { readonly _tag: "Text"; readonly text: string; readonly chunkSize: number; readonly delayMs: number }
  | { readonly _tag: "Thinking"; readonly thinking: string; readonly signature: string }
  | { readonly _tag: "ToolUse"; readonly id: string | undefined; readonly name: string; readonly input: unknown }

/**
 * How a streamed message ends: normally, with an SSE `event: error`, or with the socket cut
 * before `message_stop`.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const ending: ScriptedModel.Ending = { _tag: "Complete" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Ending =
  | { readonly _tag: "Complete" }
  | { readonly _tag: "SseError"; readonly type: string; readonly message: string }
  | { readonly _tag: "Truncated" }

/**
 * Data describing one reply of the scripted model: an assistant message (possibly ending in a
 * mid-stream failure) or an HTTP error.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply: ScriptedModel.Reply = ScriptedModel.text("hello")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Reply =
  | {
    readonly _tag: "Message"
    readonly blocks: ReadonlyArray<Block>
    readonly ending: Ending
    /** The usage the response reports, instead of the estimates (see `withUsage`). */
    readonly usage?: Usage | undefined
  }
  | { readonly _tag: "HttpError"; readonly status: number; readonly type: string; readonly message: string }

const message = (blocks: ReadonlyArray<Block>, ending: Ending = { _tag: "Complete" }): Reply => ({
  _tag: "Message",
  blocks,
  ending
})

/**
 * A text reply, streamed as a single `text_delta`.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const rule: ScriptedModel.Rule = { reply: ScriptedModel.text("Hello!") }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): Reply =>
  message([{ _tag: "Text", text, chunkSize: Math.max(1, text.length), delayMs: 0 }])

/**
 * A text reply streamed as `text_delta` chunks of `chunkSize` characters with `delayMs` between
 * them, so a test can act while the reply is still streaming.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.slowText("z".repeat(400), { chunkSize: 4, delayMs: 25 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const slowText = (text: string, opts: { readonly chunkSize: number; readonly delayMs: number }): Reply =>
  message([{
    _tag: "Text",
    text,
    chunkSize: Math.max(1, Math.floor(opts.chunkSize)),
    delayMs: Math.max(0, opts.delayMs)
  }])

/**
 * Prefixes a reply with a thinking block (`thinking_delta` + `signature_delta`). An HTTP error
 * reply is returned unchanged, because it carries no content.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.thinking("The user wants a file.", ScriptedModel.toolUse("Write", { file_path: "a.txt", content: "a" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const thinking = (thinking: string, then: Reply): Reply =>
  then._tag === "Message"
    ? message([{ _tag: "Thinking", thinking, signature: "scripted-signature" }, ...then.blocks], then.ending)
    : then

/**
 * A `tool_use` reply (`stop_reason: "tool_use"`); the input is streamed as `input_json_delta`.
 * Without `id`, one is generated per response (`toolu_scripted_<message>_<block>`).
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.toolUse("Bash", { command: "ls" }, { id: "toolu_1" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolUse = (name: string, input: unknown, opts?: { readonly id?: string }): Reply =>
  message([{ _tag: "ToolUse", id: opts?.id, name, input }])

/**
 * Concatenates the content of several message replies into one message (for example some text
 * followed by two tool calls). The ending of the last reply wins; HTTP errors are skipped.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.sequence(ScriptedModel.text("Let me look."), ScriptedModel.toolUse("Bash", { command: "ls" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const sequence = (...replies: ReadonlyArray<Reply>): Reply => {
  const blocks: Array<Block> = []
  let ending: Ending = { _tag: "Complete" }
  for (const reply of replies) {
    if (reply._tag !== "Message") continue
    for (const block of reply.blocks) blocks.push(block)
    ending = reply.ending
  }
  return message(blocks, ending)
}

/**
 * The usage figures a scripted response reports, each one replacing its estimate: input
 * (four characters of the request a token by default), output (of the content), and the cache
 * figures (0 by default). As the API does, `message_start` carries the input and cache figures
 * with an output of 1, and `message_delta` the final output.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const usage: ScriptedModel.Usage = { inputTokens: 1000, outputTokens: 50, cacheReadInputTokens: 4000 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly cacheReadInputTokens?: number | undefined
  readonly cacheCreationInputTokens?: number | undefined
}

/**
 * A message reply that reports the given usage figures (the others stay estimated): apply it
 * last, after `sequence` or `thinking`, which make a new message. An HTTP
 * error is returned as it is.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.withUsage(ScriptedModel.text("done"), { inputTokens: 2000, outputTokens: 12 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const withUsage = (reply: Reply, usage: Usage): Reply =>
  reply._tag === "Message" ? { ...reply, usage: { ...reply.usage, ...usage } } : reply

/**
 * An HTTP error answer with the API's JSON error body `{type:"error",error:{type,message}}`.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const rule: ScriptedModel.Rule = { reply: ScriptedModel.httpError(529, "overloaded_error", "Overloaded"), times: Infinity }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpError = (status: number, type: string, message: string): Reply => ({
  _tag: "HttpError",
  status,
  type,
  message
})

/**
 * A stream that starts normally (`message_start`) and then fails with an SSE `event: error`.
 * A non-streaming request answered with this reply gets the same error as an HTTP error instead.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.sseError("overloaded_error", "Overloaded")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const sseError = (type: string, message: string): Reply => ({
  _tag: "Message",
  blocks: [],
  ending: { _tag: "SseError", type, message }
})

/**
 * A stream cut off without `message_stop`: the text block starts, one delta is written, then the
 * socket is destroyed.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const reply = ScriptedModel.truncated("Half an ans")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const truncated = (text: string): Reply =>
  message([{ _tag: "Text", text, chunkSize: Math.max(1, text.length), delayMs: 0 }], { _tag: "Truncated" })

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/**
 * A request the server received. `kind` is `"main"` for a real agent turn (tools offered,
 * `max_tokens > 1`, not a compaction), `"side"` for the CLI's own requests, and `"count_tokens"`.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const isBash = (req: ScriptedModel.RecordedRequest) => req.tools.includes("Bash")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedRequest {
  readonly kind: "main" | "side" | "count_tokens"
  readonly path: string
  readonly model: string
  readonly system: string
  readonly tools: ReadonlyArray<string>
  readonly messages: ReadonlyArray<unknown>
  readonly stream: boolean
  readonly maxTokens: number | undefined
  /** The request headers, names in lower case (`anthropic-beta`, `anthropic-version`, `x-api-key`, …). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/**
 * One scripted answer: used for the first main requests it matches, `times` times (default 1,
 * may be `Infinity`).
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const rule: ScriptedModel.Rule = {
 *   match: (req) => ScriptedModel.toolResults(req).length > 0,
 *   reply: ScriptedModel.text("done")
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly match?: (req: RecordedRequest) => boolean
  readonly reply: Reply
  readonly times?: number
}

type JsonObject = { readonly [key: string]: unknown }

const isArray = (u: unknown): u is ReadonlyArray<unknown> => Array.isArray(u)

const textOfBlocks = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!isArray(content)) return ""
  const parts: Array<string> = []
  for (const block of content) {
    if (typeof block === "string") parts.push(block)
    else if (Predicate.isRecord(block)) {
      if (block.type === "text" && typeof block.text === "string") parts.push(block.text)
      else if (block.type === "tool_result") parts.push(textOfBlocks(block.content))
    }
  }
  return parts.filter((p) => p.length > 0).join("\n")
}

const messagesOf = (req: RecordedRequest): ReadonlyArray<JsonObject> => req.messages.filter(Predicate.isRecord)

// The user messages after the last assistant message: what the model is being asked to answer.
const trailingUserMessages = (req: RecordedRequest): ReadonlyArray<JsonObject> => {
  const messages = messagesOf(req)
  const out: Array<JsonObject> = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m === undefined || m.role === "assistant") break
    if (m.role === "user") out.unshift(m)
  }
  return out
}

/**
 * The text of the last user message: string content, text blocks and the text inside
 * `tool_result` blocks, joined with newlines.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const rule: ScriptedModel.Rule = {
 *   match: (req) => ScriptedModel.lastUserText(req).includes("weather"),
 *   reply: ScriptedModel.text("Sunny.")
 * }
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const lastUserText = (req: RecordedRequest): string => {
  const users = messagesOf(req).filter((m) => m.role === "user")
  const last = users[users.length - 1]
  return last === undefined ? "" : textOfBlocks(last.content)
}

/**
 * The `tool_result` blocks the CLI sent back in the user message(s) after the last assistant
 * message; empty when the request is not answering a tool call.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const afterTool = (req: ScriptedModel.RecordedRequest) => ScriptedModel.toolResults(req).length > 0
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const toolResults = (
  req: RecordedRequest
): ReadonlyArray<{ tool_use_id: string; content: unknown; is_error?: boolean }> => {
  const out: Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> = []
  for (const m of trailingUserMessages(req)) {
    if (!isArray(m.content)) continue
    for (const block of m.content) {
      if (!Predicate.isRecord(block) || block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue
      out.push(
        typeof block.is_error === "boolean"
          ? { tool_use_id: block.tool_use_id, content: block.content, is_error: block.is_error }
          : { tool_use_id: block.tool_use_id, content: block.content }
      )
    }
  }
  return out
}

/**
 * How many `tool_result` blocks the whole conversation in the request holds: the number of tool
 * calls answered so far. Matching on it scripts a multi-step tool-using turn by step.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const rules: ReadonlyArray<ScriptedModel.Rule> = [
 *   { match: (req) => ScriptedModel.toolResultCount(req) === 0, reply: ScriptedModel.toolUse("Read", { file_path: "a.txt" }) },
 *   { match: (req) => ScriptedModel.toolResultCount(req) === 1, reply: ScriptedModel.text("done") }
 * ]
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const toolResultCount = (req: RecordedRequest): number => {
  let n = 0
  for (const m of req.messages) {
    if (!Predicate.isRecord(m) || !isArray(m.content)) continue
    for (const block of m.content) {
      if (Predicate.isRecord(block) && block.type === "tool_result") n++
    }
  }
  return n
}

const COMPACT_PREFIX = "CRITICAL: Respond with TEXT ONLY"

const toRecorded = (
  pathname: string,
  headers: Readonly<Record<string, string>>,
  body: unknown
): RecordedRequest => {
  const b = Predicate.isRecord(body) ? body : {}
  const tools = isArray(b.tools)
    ? b.tools.flatMap((t) => (Predicate.isRecord(t) && typeof t.name === "string" ? [t.name] : []))
    : []
  const maxTokens = typeof b.max_tokens === "number" ? b.max_tokens : undefined
  const base: RecordedRequest = {
    kind: "side",
    path: pathname,
    model: typeof b.model === "string" ? b.model : "",
    system: textOfBlocks(b.system),
    tools,
    messages: isArray(b.messages) ? b.messages : [],
    stream: b.stream === true,
    maxTokens,
    headers,
    body
  }
  if (pathname === "/v1/messages/count_tokens") return { ...base, kind: "count_tokens" }
  // protocol.md §10: a main-loop request offers tools, has max_tokens > 1 and is not a compaction.
  const main = tools.length > 0 && maxTokens !== undefined && maxTokens > 1 &&
    !lastUserText(base).trimStart().startsWith(COMPACT_PREFIX)
  return main ? { ...base, kind: "main" } : base
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

const requestId = (n: number): string => `req_scripted_${n}`

const jsonResponse = (status: number, id: string, body: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body, { status, headers: { "request-id": id } })

const errorResponse = (
  status: number,
  id: string,
  type: string,
  message: string
): HttpServerResponse.HttpServerResponse => jsonResponse(status, id, Sse.errorBody(type, message))

// The one raw escape hatch. A truncated reply must lose its connection mid-body: ending the
// response would make it a complete one, so the socket itself is ended, after the bytes already
// written have left (`destroySoon`). The platform interrupts the handler once the response closes.
const cutConnection = (request: HttpServerRequest.HttpServerRequest): Stream.Stream<never> =>
  Stream.fromEffect(Effect.async<never>((resume) => {
    const response = NodeHttpServerRequest.toServerResponse(request)
    const closed = () => resume(Effect.interrupt)
    const socket = response.socket
    if (socket === null || response.destroyed) return closed()
    response.once("close", closed)
    socket.destroySoon()
    return Effect.sync(() => void response.off("close", closed))
  }))

const encoder = new TextEncoder()

const answer = (
  request: HttpServerRequest.HttpServerRequest,
  recorded: RecordedRequest,
  reply: Reply,
  n: number
): HttpServerResponse.HttpServerResponse => {
  const id = requestId(n)
  if (reply._tag === "HttpError") return errorResponse(reply.status, id, reply.type, reply.message)
  const message: Sse.Message = {
    id: `msg_scripted_${n}`,
    model: recorded.model,
    content: reply.blocks.map((block, i): Sse.Content =>
      block._tag === "ToolUse" ? { ...block, id: block.id ?? `toolu_scripted_${n}_${i}` } : block
    ),
    inputTokens: Sse.estimateTokens(recorded.messages),
    usage: reply.usage
  }
  const ending = reply.ending
  if (!recorded.stream) {
    switch (ending._tag) {
      case "SseError":
        return errorResponse(Sse.statusOfErrorType(ending.type), id, ending.type, ending.message)
      case "Truncated": {
        const full = JSON.stringify(Sse.messageJson(message))
        const half = encoder.encode(full.slice(0, Math.floor(full.length / 2)))
        return HttpServerResponse.stream(Stream.concat(Stream.make(half), cutConnection(request)), {
          contentType: "application/json",
          headers: { "request-id": id }
        })
      }
      case "Complete":
        return jsonResponse(200, id, Sse.messageJson(message))
    }
  }
  const events = Sse.events(message, ending)
  return HttpServerResponse.stream(
    ending._tag === "Truncated" ? Stream.concat(events, cutConnection(request)) : events,
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "request-id": id } }
  )
}

// Request bodies are untrusted text: they enter through the library's one JSON boundary.
const parseBody = (raw: string): Option.Option<JsonObject> => {
  try {
    return Option.liftPredicate(Framing.parseJsonBoundary(raw), Predicate.isRecord)
  } catch {
    return Option.none()
  }
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

/**
 * The running scripted model: its URL, what it received, and launch options for the CLI.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ScriptedModel } from "effect-claude-agent/testing"
 *
 * const program = Effect.gen(function*() {
 *   const model: ScriptedModel.ScriptedModelShape = yield* ScriptedModel.make([{ reply: ScriptedModel.text("hi") }])
 *   return yield* model.mainRequests
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedModelShape {
  /** `http://127.0.0.1:PORT`, to be used as `ANTHROPIC_BASE_URL`. */
  readonly url: string
  /** Every request received (all kinds), in arrival order. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** The `"main"` requests only. */
  readonly mainRequests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Waits until at least `n` main requests satisfying `pred` arrived, and returns those requests. */
  readonly waitForRequests: (
    n: number,
    pred?: (r: RecordedRequest) => boolean
  ) => Effect.Effect<ReadonlyArray<RecordedRequest>>
  /**
   * Creates a fresh temporary directory (removed when the model's scope closes) with an isolated
   * `HOME` and a working directory, and returns options that point the CLI at this server.
   */
  readonly options: () => Effect.Effect<{
    env: Record<string, string>
    cwd: string
    settingSources: ReadonlyArray<never>
  }>
}

const DEFAULT_REPLY: Reply = text("(scripted model: no rule matched)")
const SIDE_REPLY: Reply = text("ok")

const MESSAGES = "/v1/messages"
const COUNT_TOKENS = "/v1/messages/count_tokens"

const NodeFiles = Layer.merge(NodeFileSystem.layer, NodePath.layer)

/**
 * Starts a scripted model on 127.0.0.1 (a free port) for the lifetime of the current scope.
 * Main requests take the first rule whose `match` accepts them and whose `times` are not used
 * up; without one, `config.defaultReply` (a text saying no rule matched) is sent.
 *
 * The server is `@effect/platform-node`'s `HttpServer`: requests are handled by effects in the
 * caller's runtime (its logger, tracer and `Clock`, which paces `slowText`), and closing the scope
 * closes the port and every open connection, including a reply still streaming.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ScriptedModel } from "effect-claude-agent/testing"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("Hello!") }])
 *   const options = yield* model.options()
 *   // ClaudeAgent.query("hi", options) ...
 *   return options.env.ANTHROPIC_BASE_URL === model.url
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  rules: ReadonlyArray<Rule>,
  config?: { readonly defaultReply?: Reply }
): Effect.Effect<ScriptedModelShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const recorded = yield* SubscriptionRef.make<ReadonlyArray<RecordedRequest>>([])
    const remaining = yield* Ref.make<ReadonlyArray<number>>(rules.map((r) => r.times ?? 1))
    const defaultReply = config?.defaultReply ?? DEFAULT_REPLY

    // Records the request and picks its reply in one step, so concurrent requests see a
    // consistent rule budget and a recording always precedes its answer.
    const decide = (request: RecordedRequest): Effect.Effect<{ readonly reply: Reply; readonly n: number }> =>
      Effect.gen(function*() {
        const all = yield* SubscriptionRef.updateAndGet(recorded, (rs) => [...rs, request])
        const n = all.length
        if (request.kind !== "main") return { reply: SIDE_REPLY, n }
        const reply = yield* Ref.modify(remaining, (counts): readonly [Reply, ReadonlyArray<number>] => {
          for (let i = 0; i < rules.length; i++) {
            const rule = rules[i]
            const left = counts[i] ?? 0
            if (rule === undefined || left <= 0) continue
            if (rule.match !== undefined && !rule.match(request)) continue
            const next = counts.slice()
            next[i] = left - 1
            return [rule.reply, next]
          }
          return [defaultReply, counts]
        })
        return { reply, n }
      })

    const handle = (pathname: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const raw = yield* Effect.option(request.text)
        if (Option.isNone(raw)) {
          return errorResponse(500, "req_scripted_500", "api_error", "the request body could not be read")
        }
        const body = parseBody(raw.value)
        if (Option.isNone(body)) {
          return errorResponse(400, "req_scripted_400", "invalid_request_error", "request body is not a JSON object")
        }
        const headers: Record<string, string> = Object.fromEntries(Object.entries(request.headers))
        const req = toRecorded(pathname, headers, body.value)
        const { n, reply } = yield* decide(req)
        yield* Effect.logDebug("ScriptedModel: request").pipe(
          Effect.annotateLogs({ kind: req.kind, path: pathname, request: n })
        )
        if (req.kind === "count_tokens") {
          return jsonResponse(200, requestId(n), { input_tokens: Sse.estimateTokens(req.messages) })
        }
        return answer(request, req, reply, n)
      })

    const app = HttpRouter.empty.pipe(
      HttpRouter.post(MESSAGES, handle(MESSAGES)),
      HttpRouter.post(COUNT_TOKENS, handle(COUNT_TOKENS)),
      Effect.catchTag("RouteNotFound", ({ request }) => {
        const pathname = request.url.split("?")[0] ?? request.url
        return Effect.succeed(
          errorResponse(404, "req_scripted_404", "not_found_error", `${request.method} ${pathname} is not scripted`)
        )
      })
    )

    const nodeServer = http.createServer()
    const server = yield* NodeHttpServer.make(() => nodeServer, { host: "127.0.0.1", port: 0 }).pipe(Effect.orDie)
    // Runs before the platform's own close (finalizers run in reverse): close() alone would wait
    // for keep-alive connections and for replies still streaming.
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        nodeServer.close(() => resume(Effect.void))
        nodeServer.closeAllConnections()
      })
    )
    yield* server.serve(app)
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const url = `http://127.0.0.1:${port}`

    const mainOnly = (rs: ReadonlyArray<RecordedRequest>) => rs.filter((r) => r.kind === "main")

    const waitForRequests = (n: number, pred?: (r: RecordedRequest) => boolean) =>
      recorded.changes.pipe(
        Stream.map((rs) => mainOnly(rs).filter((r) => pred === undefined || pred(r))),
        Stream.filter((rs) => rs.length >= n),
        Stream.runHead,
        Effect.map(Option.getOrElse((): ReadonlyArray<RecordedRequest> => []))
      )

    const options = () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        // The resolved path (macOS's temporary directory is behind a symlink): the CLI reports
        // resolved paths, and tests compare against this one.
        const dir = yield* Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "scripted-model-" }), fs.realPath)
        const home = path.join(dir, "home")
        const configDir = path.join(home, ".claude")
        const cwd = path.join(dir, "work")
        yield* fs.makeDirectory(configDir, { recursive: true })
        yield* fs.makeDirectory(cwd, { recursive: true })
        const env: Record<string, string> = {
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "sk-ant-test-dummy",
          HOME: home,
          CLAUDE_CONFIG_DIR: configDir,
          DISABLE_TELEMETRY: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_ERROR_REPORTING: "1"
        }
        const settingSources: ReadonlyArray<never> = []
        return { env, cwd, settingSources }
      }).pipe(Effect.orDie, Effect.provide(NodeFiles), Scope.extend(scope))

    return {
      url,
      requests: SubscriptionRef.get(recorded),
      mainRequests: Effect.map(SubscriptionRef.get(recorded), mainOnly),
      waitForRequests,
      options
    } satisfies ScriptedModelShape
  })

/**
 * The scripted model as a service, for layer-based tests.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ScriptedModel } from "effect-claude-agent/testing"
 *
 * const program = Effect.gen(function*() {
 *   const model = yield* ScriptedModel.ScriptedModel
 *   return model.url
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class ScriptedModel extends Context.Tag("effect-claude-agent/testing/ScriptedModel")<
  ScriptedModel,
  ScriptedModelShape
>() {}

/**
 * A layer running {@link make} for the layer's lifetime.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 * const ModelLive = ScriptedModel.layer([{ reply: ScriptedModel.text("Hello!") }])
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  rules: ReadonlyArray<Rule>,
  config?: { readonly defaultReply?: Reply }
): Layer.Layer<ScriptedModel> => Layer.scoped(ScriptedModel, make(rules, config))
