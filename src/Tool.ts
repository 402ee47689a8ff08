/**
 * `Tool`: one tool of an in-process (SDK) MCP server, typed with an Effect `Schema`.
 *
 * The `parameters` Schema does three jobs: it is turned into the JSON Schema the model sees
 * (`tools/list`), it decodes the arguments the model sent before the handler runs, and its
 * `Type` is the handler's input. Decoding and handler failures become tool results with
 * `isError: true`, so the model sees what went wrong and can retry; only defects escape.
 *
 * @since 0.1.0
 */
import { Effect, Either, ParseResult, Predicate, Schema, SchemaAST } from "effect"
import { notAnEffect } from "./internal/effect/captured.js"
import * as Guard from "./internal/schema/guard.js"
import { objectJsonSchema } from "./internal/schema/jsonSchema.js"
import { OptionsError } from "./SdkError.js"
import { optionalBoolean, optionalString } from "./internal/schema/schemas.js"

/**
 * One block of a tool result, as MCP defines it (`text`, `image`, embedded `resource`).
 *
 * @example
 * ```ts
 * import type { Tool } from "effect-claude-agent"
 *
 * const block: Tool.ToolContent = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly data: string; readonly mimeType: string }
  | {
    readonly type: "resource"
    readonly resource: {
      readonly uri: string
      readonly mimeType?: string
      readonly text?: string
      readonly blob?: string
    }
  }

/**
 * What a tool call returns to the model: content blocks, and whether they describe an error.
 *
 * @example
 * ```ts
 * import type { Tool } from "effect-claude-agent"
 *
 * const result: Tool.ToolResult = { content: [{ type: "text", text: "no such city" }], isError: true }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResult {
  readonly content: ReadonlyArray<ToolContent>
  readonly isError?: boolean
}

/**
 * A JSON Schema whose top level describes an object, as MCP requires of a tool's `inputSchema`.
 *
 * @example
 * ```ts
 * import type { Tool } from "effect-claude-agent"
 *
 * const schema: Tool.JsonObjectSchema = { type: "object", properties: { a: { type: "number" } } }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonObjectSchema {
  readonly type: "object"
  readonly [key: string]: unknown
}

/**
 * The MCP tool annotations (`ToolAnnotations` of the MCP specification): hints about what a tool
 * does, sent with it in `tools/list`. They are hints for the client, not guarantees, and all are
 * optional.
 *
 * The CLI acts on `readOnlyHint`: a tool marked `readOnlyHint: true` is "concurrency safe", so
 * several calls of it in one assistant message run at the same time (up to
 * `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`, default 10); without it they run one after another.
 * The other hints describe the tool to the client (the CLI's `mcp_status` lists a tool's
 * annotations); `readOnlyHint` is the one that changes how the CLI calls an SDK tool.
 *
 * @example
 * ```ts
 * import { Tool } from "effect-claude-agent"
 *
 * const lookup: Tool.ToolAnnotations = { title: "Look up a city", readOnlyHint: true, openWorldHint: true }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const ToolAnnotations = Schema.Struct({
  /** A human-readable name for the tool. */
  title: optionalString,
  /** The tool does not change its environment: the CLI may run several calls of it concurrently. */
  readOnlyHint: optionalBoolean,
  /** The tool may destroy or overwrite data (meaningful when `readOnlyHint` is false). */
  destructiveHint: optionalBoolean,
  /** Calling the tool again with the same arguments has no further effect. */
  idempotentHint: optionalBoolean,
  /** The tool reaches outside a closed world (the web, other systems). */
  openWorldHint: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolAnnotations extends Schema.Schema.Type<typeof ToolAnnotations> {}

/**
 * A tool ready to be served: its wire description and a `call` that never fails (failures are
 * already tool results with `isError: true`). `R` is what the handler needs from the environment.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-claude-agent"
 *
 * const echo: Tool.Tool = Tool.make("echo", {
 *   description: "Echo the input",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<R = never> {
  /** The name inside its server; the model sees `mcp__<server>__<name>`. */
  readonly name: string
  readonly description: string
  /** The JSON Schema of the arguments, without `$schema`. */
  readonly inputSchema: JsonObjectSchema
  /** The MCP annotations sent with the tool in `tools/list`, when given. */
  readonly annotations?: ToolAnnotations | undefined
  /**
   * Offer the tool to the model up front instead of deferring it behind the CLI's tool search
   * (`_meta["anthropic/alwaysLoad"]` in `tools/list`). Unset, the server's `alwaysLoad` applies.
   */
  readonly alwaysLoad?: boolean | undefined
  /** Extra words the CLI's tool search matches this tool by (`_meta["anthropic/searchHint"]`). */
  readonly searchHint?: string | undefined
  /**
   * Decodes the raw arguments and runs the handler. `toolUseId` is the model's `tool_use` id when
   * the CLI sends it (`_meta["claudecode/toolUseId"]`).
   */
  readonly call: (args: unknown, toolUseId: string | undefined) => Effect.Effect<ToolResult, never, R>
}

/**
 * The services a tool needs (its `R`), as a type.
 *
 * @example
 * ```ts
 * import type { Tool } from "effect-claude-agent"
 *
 * declare const tool: Tool.Tool<"Db">
 * type Needs = Tool.Context<typeof tool> // "Db"
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Context<T> = T extends Tool<infer R> ? R : never

/**
 * What a handler gets besides its decoded input.
 *
 * @example
 * ```ts
 * import type { Tool } from "effect-claude-agent"
 *
 * const label = (context: Tool.HandlerContext) => context.toolUseId ?? "(no tool_use id)"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface HandlerContext {
  /** The model's `tool_use` id, when the CLI sent it. */
  readonly toolUseId: string | undefined
}

/**
 * A result with one text block.
 *
 * @example
 * ```ts
 * import { Tool } from "effect-claude-agent"
 *
 * const result = Tool.text("sum=5") // { content: [{ type: "text", text: "sum=5" }] }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): ToolResult => ({ content: [{ type: "text", text }] })

/**
 * An error result with one text block: the model sees it as a failed tool call.
 *
 * @example
 * ```ts
 * import { Tool } from "effect-claude-agent"
 *
 * const result = Tool.error("city not found") // { content: [...], isError: true }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const error = (message: string): ToolResult => ({ content: [{ type: "text", text: message }], isError: true })

// The model needs a sentence, not an object dump, to decide how to retry; JSON is the fallback
// for failures that carry no message.
const describeFailure = (failure: unknown): string => {
  if (Predicate.hasProperty(failure, "message") && typeof failure.message === "string" && failure.message !== "") {
    return failure.message
  }
  if (typeof failure === "string") return failure
  try {
    const json = JSON.stringify(failure)
    if (json !== undefined) return json
  } catch {
    // cyclic or BigInt-bearing values: fall through to String
  }
  try {
    return String(failure)
  } catch {
    return "the tool failed"
  }
}

// A property type whose decoding is the value itself: strings, numbers, booleans, literals,
// optional or not.
const isScalar = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UndefinedKeyword":
    case "Literal":
      return true
    case "Union":
      return ast.types.every(isScalar)
    default:
      return false
  }
}

// The property names, in order, of parameters that are a flat struct with no transformation (what
// most tools take); `undefined` for any other Schema.
const flatProperties = (ast: SchemaAST.AST): ReadonlyArray<PropertyKey> | undefined => {
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0) return undefined
  if (SchemaAST.typeAST(ast) !== ast || SchemaAST.encodedAST(ast) !== ast) return undefined
  return ast.propertySignatures.every((p) => isScalar(p.type)) ? ast.propertySignatures.map((p) => p.name) : undefined
}

// Whether `u`'s own keys are among `names`, in their order: decoding (which keeps the named
// properties, in the Schema's order) would then copy `u` as it is.
const onlyInOrder = (u: object, names: ReadonlyArray<PropertyKey>): boolean => {
  let at = 0
  for (const key in u) {
    if (!Object.hasOwn(u, key)) continue
    while (at < names.length && names[at] !== key) at++
    if (at === names.length) return false
    at++
  }
  return true
}

// Decodes a tool's arguments as `Schema.decodeUnknownEither(parameters, parseOptions)` does. For
// flat parameters, a valid value with no other property is its own decoding (no parser run, no
// copy): the model's arguments usually are.
const argumentsDecoder = <A, I>(
  parameters: Schema.Schema<A, I, never>,
  parseOptions: ParseOptions
): (u: unknown) => Either.Either<A, ParseResult.ParseError> => {
  const parse = Schema.decodeUnknownEither(parameters, parseOptions)
  const names = flatProperties(parameters.ast)
  if (names === undefined) return parse
  const { is } = Guard.member(parameters)
  return (u) => is(u) && Predicate.isRecord(u) && onlyInOrder(u, names) ? Either.right(u) : parse(u)
}

type ParseOptions = { readonly errors: "all"; readonly onExcessProperty: "ignore" }

/**
 * Defines a tool from a Schema and an Effect handler.
 *
 * The model's arguments are decoded with `parameters` first; a decoding failure is returned to the
 * model as an error result naming the bad field, without running the handler. A handler failure
 * `E` becomes an error result with `E`'s `message` (or its JSON). A string result is wrapped with
 * `text`. Defects are not caught: the bridge answers them with JSON-RPC error -32603. A handler
 * that returns something other than an Effect (from untyped JavaScript, an `async` handler as the
 * official SDK's `tool()` takes) answers the model with an error result and logs a warning saying
 * an Effect is expected: wrap it with `Effect.promise`.
 *
 * `annotations` (MCP `ToolAnnotations`) are sent with the tool in `tools/list`. Give
 * `readOnlyHint: true` to a tool without side effects: the CLI then runs several calls of it from
 * one assistant message concurrently, where it otherwise runs them one after another.
 *
 * The CLI defers MCP tools behind its tool search: the model first sees only the tool's name and
 * loads its schema with the `ToolSearch` tool. `alwaysLoad: true` puts the tool, with its schema,
 * in every request instead (for a tool the model needs at once; it costs prompt tokens).
 * `searchHint` gives the tool search extra words to find the tool by. Both travel in the tool's
 * `_meta` (`anthropic/alwaysLoad`, `anthropic/searchHint`), as with the official SDK's `tool()`.
 *
 * Throws an `OptionsError` at definition time when `parameters` has no JSON Schema or it is not an
 * object (for example a `Schema.Union` at the top level): that tool could never be offered to the
 * model.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-claude-agent"
 *
 * const add = Tool.make("add", {
 *   description: "Add two numbers",
 *   parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *   annotations: { readOnlyHint: true },
 *   alwaysLoad: true,
 *   handler: ({ a, b }) => Effect.succeed(`sum=${a + b}`)
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I extends { readonly [key: string]: unknown }, E, R>(
  name: string,
  options: {
    readonly description: string
    readonly parameters: Schema.Schema<A, I, never>
    readonly annotations?: ToolAnnotations | undefined
    readonly alwaysLoad?: boolean | undefined
    readonly searchHint?: string | undefined
    readonly handler: (input: A, context: HandlerContext) => Effect.Effect<ToolResult | string, E, R>
  }
): Tool<R> => {
  const parseOptions = { errors: "all", onExcessProperty: "ignore" } as const
  // Compiled once. Most parameter schemas decode synchronously: valid input then costs no fiber
  // step.
  const decodeSync = argumentsDecoder(options.parameters, parseOptions)
  const decode = Schema.decodeUnknown(options.parameters, parseOptions)
  const invalid = (parseError: ParseResult.ParseError) =>
    error(`Invalid arguments for tool "${name}":\n${ParseResult.TreeFormatter.formatErrorSync(parseError)}`)
  // Made once: every call's answer goes through them.
  const answer = {
    onFailure: (failure: E): ToolResult => error(describeFailure(failure)),
    onSuccess: (result: ToolResult | string): ToolResult => typeof result === "string" ? text(result) : result
  }
  const run = (input: A, toolUseId: string | undefined) => {
    const handled = options.handler(input, { toolUseId })
    // Untyped JavaScript may hand back a Promise (as the official SDK's tools do): the model gets
    // an error result, the developer a warning that says what to change.
    if (!Effect.isEffect(handled)) {
      const problem = notAnEffect(`tool "${name}" handler`, handled)
      return Effect.as(Effect.logWarning(`effect-claude-agent: ${problem.message}`), error(problem.message))
    }
    return Effect.match(handled, answer)
  }
  const inputSchema = objectJsonSchema(options.parameters.ast)
  if (Either.isLeft(inputSchema)) {
    throw new OptionsError({ field: `Tool "${name}" parameters`, detail: inputSchema.left })
  }
  return {
    name,
    description: options.description,
    inputSchema: inputSchema.right,
    annotations: options.annotations,
    alwaysLoad: options.alwaysLoad,
    searchHint: options.searchHint,
    call: (args, toolUseId) =>
      // Suspended so that a handler that throws is a defect of the call.
      Effect.suspend(() => {
        const input = decodeSync(args)
        if (Either.isRight(input)) return run(input.right, toolUseId)
        // Invalid, or asynchronous somewhere inside (the issue can be nested anywhere): decoded
        // again as an effect, which says which. Only input the tool refuses pays twice.
        return Effect.matchEffect(decode(args), {
          onFailure: (parseError) => Effect.succeed(invalid(parseError)),
          onSuccess: (decoded) => run(decoded, toolUseId)
        })
      })
  }
}
