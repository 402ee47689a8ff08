/**
 * The spans of a run as a tree, for development: see session → turn → subagent / tool call → hook /
 * permission, with durations, tokens and cost, without an OpenTelemetry collector.
 *
 * `SpanTree.print` runs an effect under a tracer that keeps every span made under it (and still
 * hands each to the program's own tracer), and writes the tree when the effect ends, however it
 * ends. `record`, `fromSpans` and `format` are its parts, for code that wants the tree itself.
 *
 * @since 0.1.0
 */
import { Cause, Console, Effect, Exit, Option, Tracer } from "effect"
import { dual } from "effect/Function"

/**
 * A span and the spans under it, children in the order they started.
 *
 * @example
 * ```ts
 * import { SpanTree } from "effect-claude-agent"
 *
 * const count = (node: SpanTree.Node): number => 1 + node.children.reduce((n, c) => n + count(c), 0)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Node {
  readonly span: Tracer.Span
  readonly children: ReadonlyArray<Node>
}

/**
 * What `record` returns: the tracer to run code under, and the spans it has made so far (a live
 * array, in the order they started; a span's `status` says whether it has ended).
 *
 * @example
 * ```ts
 * import { SpanTree } from "effect-claude-agent"
 *
 * const names = (recorder: SpanTree.Recorder) => recorder.spans.map((span) => span.name)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Recorder {
  readonly tracer: Tracer.Tracer
  readonly spans: ReadonlyArray<Tracer.Span>
}

/**
 * Options of `fromSpans`, `render` and `print`.
 *
 * @example
 * ```ts
 * import type { SpanTree } from "effect-claude-agent"
 *
 * // Leave out the MCP handshake: a left-out span's children hang under its nearest kept ancestor.
 * const options: SpanTree.Options = { keep: (span) => span.name !== "ControlChannel.mcp_message" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Which spans to show. Default: all. */
  readonly keep?: ((span: Tracer.Span) => boolean) | undefined
}

/**
 * A tracer over the current one that also keeps every span it makes: spans are still made (and
 * exported) by the program's tracer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SpanTree } from "effect-claude-agent"
 *
 * const program = Effect.gen(function*() {
 *   const recorder = yield* SpanTree.record
 *   yield* Effect.void.pipe(Effect.withSpan("work"), Effect.withTracer(recorder.tracer))
 *   return SpanTree.render(recorder.spans)
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const record: Effect.Effect<Recorder> = Effect.map(Effect.tracer, (base) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = base.span(name, parent, context, links, startTime, kind, options)
      spans.push(span)
      return span
    },
    context: base.context
  })
  return { tracer, spans }
})

/**
 * The trees `spans` form: each root is a kept span with no kept ancestor among `spans`; a span
 * left out by `keep` passes its children to its nearest kept ancestor.
 *
 * @example
 * ```ts
 * import type { Tracer } from "effect"
 * import { SpanTree } from "effect-claude-agent"
 *
 * declare const spans: ReadonlyArray<Tracer.Span>
 * const agents = SpanTree.fromSpans(spans, { keep: (span) => span.attributes.get("gen_ai.operation.name") === "invoke_agent" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSpans = (spans: ReadonlyArray<Tracer.Span>, options: Options = {}): ReadonlyArray<Node> => {
  const keep = options.keep ?? (() => true)
  const byId = new Map(spans.map((span) => [span.spanId, span]))
  const children = new Map<string, Array<Tracer.Span>>()
  const roots: Array<Tracer.Span> = []
  for (const span of spans) {
    if (!keep(span)) continue
    let above = parentOf(span, byId)
    while (above !== undefined && !keep(above)) above = parentOf(above, byId)
    if (above === undefined) {
      roots.push(span)
    } else {
      const list = children.get(above.spanId) ?? []
      list.push(span)
      children.set(above.spanId, list)
    }
  }
  const node = (span: Tracer.Span): Node => ({
    span,
    children: (children.get(span.spanId) ?? []).sort(byStart).map(node)
  })
  return roots.sort(byStart).map(node)
}

const parentOf = (span: Tracer.Span, byId: ReadonlyMap<string, Tracer.Span>): Tracer.Span | undefined =>
  Option.isSome(span.parent) ? byId.get(span.parent.value.spanId) : undefined

const byStart = (a: Tracer.Span, b: Tracer.Span): number =>
  a.status.startTime < b.status.startTime ? -1 : a.status.startTime > b.status.startTime ? 1 : 0

/**
 * A span's line: its name, its duration (or `running`), and what the SDK's spans carry that a
 * reader wants first (the model; an agent's tokens and cost, and a turn's outcome; a tool call's
 * `error.type`; a request's tool or hook), then `failed` or `interrupted` when it ended so. Tokens
 * are the GenAI convention's: input tokens include cached ones.
 *
 * @example
 * ```ts
 * import type { Tracer } from "effect"
 * import { SpanTree } from "effect-claude-agent"
 *
 * declare const span: Tracer.Span
 * const line = SpanTree.label(span) // "invoke_agent claude-code  454 ms  success  2601 in / 108 out tokens  $0.0126"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const label = (span: Tracer.Span): string => {
  const attribute = (key: string) => span.attributes.get(key)
  const time = span.status._tag === "Ended"
    ? milliseconds(Number(span.status.endTime - span.status.startTime) / 1e6)
    : "running"
  const parts = [span.name, time]
  const operation = attribute("gen_ai.operation.name")
  if (operation === "invoke_agent") {
    // A turn (the client span of an invocation) says how it ended; a subagent, only when it failed.
    if (span.kind === "client") parts.push(String(attribute("claude.result.subtype") ?? "unfinished"))
    parts.push(
      `${String(attribute("gen_ai.usage.input_tokens") ?? 0)} in / ${
        String(attribute("gen_ai.usage.output_tokens") ?? 0)
      } out tokens`,
      `$${Number(attribute("claude.usage.cost_usd") ?? 0).toFixed(4)}`
    )
  } else if (operation !== "execute_tool") {
    for (const key of labelled) {
      const value = attribute(key)
      if (value !== undefined) parts.push(String(value))
    }
  }
  const error = attribute("error.type")
  if (error !== undefined && span.kind !== "client") parts.push(String(error))
  if (span.status._tag === "Ended" && Exit.isFailure(span.status.exit)) {
    parts.push(Cause.isInterruptedOnly(span.status.exit.cause) ? "interrupted" : "failed")
  }
  return parts.join("  ")
}

// The session's model; a control request's tool, hook event, MCP server and method.
const labelled = ["claude.model", "tool_name", "hook_event_name", "server_name", "method"]

const milliseconds = (ms: number): string => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`

/**
 * Draws trees one span a line, children under their parent with `├─` / `└─`, ending with a newline.
 *
 * @example
 * ```ts
 * import type { Tracer } from "effect"
 * import { SpanTree } from "effect-claude-agent"
 *
 * declare const spans: ReadonlyArray<Tracer.Span>
 * const text = SpanTree.format(SpanTree.fromSpans(spans))
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (nodes: ReadonlyArray<Node>): string => {
  const lines: Array<string> = []
  const walk = (node: Node, prefix: string) =>
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1
      lines.push(`${prefix}${last ? "└─ " : "├─ "}${label(child.span)}`)
      walk(child, `${prefix}${last ? "   " : "│  "}`)
    })
  for (const root of nodes) {
    lines.push(label(root.span))
    walk(root, "")
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`
}

/**
 * `format(fromSpans(spans, options))`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SpanTree } from "effect-claude-agent"
 *
 * const text = Effect.map(SpanTree.record, (recorder) => SpanTree.render(recorder.spans))
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const render = (spans: ReadonlyArray<Tracer.Span>, options?: Options): string =>
  format(fromSpans(spans, options))

/**
 * Runs `self` keeping the spans made under it, and when it ends (success, failure or
 * interruption) writes their tree with Effect's `Console` (replace it with `Effect.withConsole`
 * to send the text elsewhere); nothing when no span was made. For development: every span stays in memory until `self` ends.
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { ClaudeAgent, SpanTree } from "effect-claude-agent"
 *
 * ClaudeAgent.query("What is 2 + 2?").pipe(
 *   Stream.runDrain,
 *   SpanTree.print(),
 *   Effect.provide(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))),
 *   NodeRuntime.runMain
 * )
 * // ClaudeAgent.session  788 ms
 * // ├─ AgentSession.make  5.6 ms
 * // └─ invoke_agent claude-code  688 ms  success  5144 in / 31 out tokens  $0.0212
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const print: {
  (options?: Options): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, options?: Options): Effect.Effect<A, E, R>
} = dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R>(self: Effect.Effect<A, E, R>, options?: Options): Effect.Effect<A, E, R> =>
    Effect.flatMap(record, (recorder) =>
      self.pipe(
        Effect.withTracer(recorder.tracer),
        Effect.ensuring(Effect.suspend(() => {
          const text = render(recorder.spans, options)
          return text === "" ? Effect.void : Console.log(text.trimEnd())
        }))
      ))
)
