/**
 * Content blocks: the parts of an assistant or user message (`message.content[i]`), with the
 * Messages API's wire field names.
 *
 * A block type this version does not know is delivered as `UnknownContentBlock`
 * (`{ type: "unknown", raw }`) so that a newer CLI or model never breaks decoding and nothing is
 * dropped.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { optionalBoolean, optionalString, NullOrString } from "../internal/schema/schemas.js"

/**
 * A text block.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.TextBlock = { type: "text", text: "hello" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  citations: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface TextBlock extends Schema.Schema.Type<typeof TextBlock> {}

/**
 * Extended thinking. `signature` lets the API verify the block when it is sent back.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.ThinkingBlock = { type: "thinking", thinking: "hmm", signature: "sig" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ThinkingBlock = Schema.Struct({
  type: Schema.Literal("thinking"),
  thinking: Schema.String,
  signature: optionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ThinkingBlock extends Schema.Schema.Type<typeof ThinkingBlock> {}

/**
 * Thinking the API returned encrypted.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.RedactedThinkingBlock = { type: "redacted_thinking", data: "…" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RedactedThinkingBlock = Schema.Struct({
  type: Schema.Literal("redacted_thinking"),
  data: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface RedactedThinkingBlock extends Schema.Schema.Type<typeof RedactedThinkingBlock> {}

/**
 * A tool call by the model. SDK MCP tools are named `mcp__<server>__<tool>`.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.ToolUseBlock = { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolUseBlock extends Schema.Schema.Type<typeof ToolUseBlock> {}

/**
 * The result of a tool call, sent back to the model in a `user` message.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.ToolResultBlock = { type: "tool_result", tool_use_id: "toolu_1", content: "ok" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.Unknown))),
  is_error: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolResultBlock extends Schema.Schema.Type<typeof ToolResultBlock> {}

/**
 * A call to a tool the API runs itself (web search, web fetch, code execution, …).
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.ServerToolUseBlock = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServerToolUseBlock = Schema.Struct({
  type: Schema.Literal("server_tool_use", "mcp_tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown,
  server_name: optionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ServerToolUseBlock extends Schema.Schema.Type<typeof ServerToolUseBlock> {}

/**
 * The result of a server tool. `content` is kept as the API sent it.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.ServerToolResultBlock = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServerToolResultBlock = Schema.Struct({
  type: Schema.Literal(
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_result"
  ),
  tool_use_id: Schema.String,
  content: Schema.Unknown,
  is_error: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ServerToolResultBlock extends Schema.Schema.Type<typeof ServerToolResultBlock> {}

/**
 * An image: base64 data or a URL.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.ImageBlock = {
 *   type: "image",
 *   source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Union(
    Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.String, data: Schema.String }),
    Schema.Struct({ type: Schema.Literal("url"), url: Schema.String }),
    Schema.Struct({ type: Schema.Literal("file"), file_id: Schema.String })
  )
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ImageBlock extends Schema.Schema.Type<typeof ImageBlock> {}

/**
 * A document (PDF, plain text, …). `source` is kept as sent.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.DocumentBlock = {
 *   type: "document",
 *   source: { type: "text", media_type: "text/plain", data: "notes" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const DocumentBlock = Schema.Struct({
  type: Schema.Literal("document"),
  source: Schema.Unknown,
  title: Schema.optional(NullOrString)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface DocumentBlock extends Schema.Schema.Type<typeof DocumentBlock> {}

/**
 * A block whose `type` this version does not know, carried unchanged in `raw`.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const block: ContentBlock.UnknownContentBlock = { type: "unknown", raw: { type: "hologram", depth: 3 } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UnknownContentBlock = Schema.Struct({
  type: Schema.Literal("unknown"),
  raw: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UnknownContentBlock extends Schema.Schema.Type<typeof UnknownContentBlock> {}

// Every modelled block, in one place: the union and the "is this type known" check use it.
const knownBlocks = [
  TextBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  ToolUseBlock,
  ToolResultBlock,
  ServerToolUseBlock,
  ServerToolResultBlock,
  ImageBlock,
  DocumentBlock
] as const

/**
 * Every content block, discriminated by `type`.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const describe = (block: ContentBlock.ContentBlock): string =>
 *   block.type === "text" ? block.text : block.type
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlock = Schema.Union(...knownBlocks, UnknownContentBlock)

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = Schema.Schema.Type<typeof ContentBlock>

const knownTypes: ReadonlySet<string> = new Set(knownBlocks.flatMap((schema) => schema.fields.type.literals))

/**
 * Whether a content block `type` is one this version models (anything else becomes
 * `UnknownContentBlock`).
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * ContentBlock.isKnownType("text") // true
 * ContentBlock.isKnownType("hologram") // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isKnownType = (type: unknown): boolean => typeof type === "string" && knownTypes.has(type)

/**
 * Content a caller may put in a user message: text, images, documents and tool results.
 *
 * @example
 * ```ts
 * import { ContentBlock } from "effect-claude-agent"
 * const content: ReadonlyArray<ContentBlock.ContentBlockParam> = [
 *   { type: "text", text: "What is in this picture?" },
 *   { type: "image", source: { type: "url", url: "https://example.com/cat.png" } }
 * ]
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockParam = Schema.Union(TextBlock, ImageBlock, DocumentBlock, ToolResultBlock)

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlockParam = Schema.Schema.Type<typeof ContentBlockParam>
