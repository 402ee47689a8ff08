/**
 * The Anthropic Messages API on the wire, as the scripted model speaks it: a whole message as
 * JSON, the server-sent events that stream one, and the API's error body.
 *
 * Kept apart from the reply DSL so the DSL says what the model answers and this module alone
 * knows how the API encodes it.
 *
 * @internal
 */
import { Effect, Stream } from "effect"

/**
 * One content block, its `tool_use` id already chosen.
 *
 * @internal
 */
export type Content =
  | { readonly _tag: "Text"; readonly text: string; readonly chunkSize: number; readonly delayMs: number }
  | { readonly _tag: "Thinking"; readonly thinking: string; readonly signature: string }
  | { readonly _tag: "ToolUse"; readonly id: string; readonly name: string; readonly input: unknown }

/**
 * How a stream ends: `message_stop`, an `event: error`, or nothing more after the first delta
 * (the caller then cuts the connection).
 *
 * @internal
 */
export type Ending =
  | { readonly _tag: "Complete" }
  | { readonly _tag: "SseError"; readonly type: string; readonly message: string }
  | { readonly _tag: "Truncated" }

/**
 * An assistant message to send.
 *
 * @internal
 */
export interface Message {
  readonly id: string
  readonly model: string
  readonly content: ReadonlyArray<Content>
  readonly inputTokens: number
  /** Figures reported instead of the estimates: output in `message_delta`, the rest in `message_start`. */
  readonly usage?: UsageFigures | undefined
}

/**
 * The usage figures a scripted response reports.
 *
 * @internal
 */
export interface UsageFigures {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly cacheReadInputTokens?: number | undefined
  readonly cacheCreationInputTokens?: number | undefined
}

type JsonObject = { readonly [key: string]: unknown }

/**
 * A rough token count (4 characters a token), so usage numbers grow with the conversation.
 *
 * @internal
 */
export const estimateTokens = (value: unknown): number =>
  Math.max(1, Math.ceil((JSON.stringify(value ?? "") ?? "").length / 4))

/**
 * The API's error body.
 *
 * @internal
 */
export const errorBody = (type: string, message: string): JsonObject => ({ type: "error", error: { type, message } })

/**
 * The HTTP status the API uses for an error type.
 *
 * @internal
 */
export const statusOfErrorType = (type: string): number => {
  switch (type) {
    case "invalid_request_error":
      return 400
    case "authentication_error":
      return 401
    case "permission_error":
      return 403
    case "not_found_error":
      return 404
    case "rate_limit_error":
      return 429
    case "overloaded_error":
      return 529
    default:
      return 500
  }
}

const chunk = (s: string, size: number): ReadonlyArray<string> => {
  if (s.length === 0) return [""]
  const out: Array<string> = []
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
  return out
}

// A block as the stream shows it: the empty start, the deltas, and the block it adds up to.
interface Streamed {
  readonly start: JsonObject
  readonly deltas: ReadonlyArray<JsonObject>
  readonly delayMs: number
  readonly final: JsonObject
}

const streamed = (block: Content): Streamed => {
  switch (block._tag) {
    case "Text":
      return {
        start: { type: "text", text: "" },
        deltas: chunk(block.text, block.chunkSize).map((text) => ({ type: "text_delta", text })),
        delayMs: block.delayMs,
        final: { type: "text", text: block.text }
      }
    case "Thinking":
      return {
        start: { type: "thinking", thinking: "", signature: "" },
        deltas: [
          { type: "thinking_delta", thinking: block.thinking },
          { type: "signature_delta", signature: block.signature }
        ],
        delayMs: 0,
        final: { type: "thinking", thinking: block.thinking, signature: block.signature }
      }
    case "ToolUse": {
      const input = block.input ?? {}
      return {
        start: { type: "tool_use", id: block.id, name: block.name, input: {} },
        deltas: chunk(JSON.stringify(input), 16).map((partial_json) => ({ type: "input_json_delta", partial_json })),
        delayMs: 0,
        final: { type: "tool_use", id: block.id, name: block.name, input }
      }
    }
  }
}

const stopReason = (message: Message): string =>
  message.content.some((b) => b._tag === "ToolUse") ? "tool_use" : "end_turn"

const usage = (message: Message, output: number): JsonObject => ({
  input_tokens: message.usage?.inputTokens ?? message.inputTokens,
  output_tokens: output,
  cache_creation_input_tokens: message.usage?.cacheCreationInputTokens ?? 0,
  cache_read_input_tokens: message.usage?.cacheReadInputTokens ?? 0
})

const outputTokens = (message: Message): number =>
  message.usage?.outputTokens ?? estimateTokens(message.content.map((b) => streamed(b).final))

/**
 * The non-streaming answer: the whole message as one JSON object.
 *
 * @internal
 */
export const messageJson = (message: Message): JsonObject => ({
  id: message.id,
  type: "message",
  role: "assistant",
  model: message.model,
  content: message.content.map((b) => streamed(b).final),
  stop_reason: stopReason(message),
  stop_sequence: null,
  usage: usage(message, outputTokens(message))
})

const encoder = new TextEncoder()

/**
 * One server-sent event.
 *
 * @internal
 */
export const encodeEvent = (event: string, data: unknown): Uint8Array =>
  encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

interface Step {
  readonly delayMs: number
  readonly event: string
  readonly data: unknown
}

// Every event of the stream in order, each with the pause before it.
const steps = (message: Message, ending: Ending): ReadonlyArray<Step> => {
  const out: Array<Step> = [
    {
      delayMs: 0,
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: message.id,
          type: "message",
          role: "assistant",
          model: message.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: usage(message, 1)
        }
      }
    },
    { delayMs: 0, event: "ping", data: { type: "ping" } }
  ]
  const blocks = message.content.map(streamed)
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]
    if (block === undefined) continue
    out.push({
      delayMs: 0,
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: block.start }
    })
    for (let d = 0; d < block.deltas.length; d++) {
      out.push({
        delayMs: d > 0 ? block.delayMs : 0,
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: block.deltas[d] }
      })
      // A truncated stream stops after the first delta it writes.
      if (ending._tag === "Truncated") return out
    }
    out.push({ delayMs: 0, event: "content_block_stop", data: { type: "content_block_stop", index } })
  }
  switch (ending._tag) {
    case "SseError":
      out.push({ delayMs: 0, event: "error", data: errorBody(ending.type, ending.message) })
      return out
    case "Truncated":
      return out
    case "Complete":
      out.push(
        {
          delayMs: 0,
          event: "message_delta",
          data: {
            type: "message_delta",
            delta: { stop_reason: stopReason(message), stop_sequence: null },
            usage: { output_tokens: outputTokens(message) }
          }
        },
        { delayMs: 0, event: "message_stop", data: { type: "message_stop" } }
      )
      return out
  }
}

/**
 * The streamed answer: one element per event, each written after its pause (through `Clock`).
 *
 * @internal
 */
export const events = (message: Message, ending: Ending): Stream.Stream<Uint8Array> =>
  Stream.suspend(() =>
    Stream.fromIterable(steps(message, ending)).pipe(
      Stream.mapEffect((step) => {
        const bytes = encodeEvent(step.event, step.data)
        return step.delayMs > 0 ? Effect.as(Effect.sleep(step.delayMs), bytes) : Effect.succeed(bytes)
      })
    )
  )
