/**
 * Telemetry: the metrics and spans every session records, with no setup.
 *
 * Spans go to whatever `Tracer` the program runs with (with `@effect/opentelemetry`, any OTLP
 * exporter), following the OpenTelemetry GenAI semantic conventions: `ClaudeAgent.session` for the
 * session's life, `invoke_agent claude-code` for each turn (prompt → `result`, with the
 * `gen_ai.*` model, conversation and usage attributes and the library's `claude.*` ones), and
 * `ControlChannel.<subtype>` for every request the CLI makes (hooks, permission prompts, SDK MCP
 * messages; an in-process tool's `tools/call` is one span, `Tool.<name>`). When the tracer records
 * spans, a turn also has an `invoke_agent <type>` span per subagent and an `execute_tool <tool>`
 * span per tool call, under the agent that made it, with the
 * requests about a call under its span. The session's span context also goes to the CLI as
 * `TRACEPARENT`, so its own spans join the trace.
 *
 * The metrics are Effect `Metric`s, read with `Metric.value` or exported by a metrics layer. To see
 * the spans of a run during development, with no exporter, `SpanTree.print` writes them as a tree.
 *
 * @since 0.1.0
 */
import { Metric, MetricBoundaries } from "effect"

/**
 * Sessions opened (a CLI process started and initialized, or a fake).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const opened = Effect.map(Metric.value(Telemetry.sessionsStarted), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const sessionsStarted = Metric.counter("claude_agent_sessions_started", {
  description: "Sessions opened"
})

/**
 * Sessions open now (up when one opens, down when its scope closes).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const open = Effect.map(Metric.value(Telemetry.sessionsActive), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const sessionsActive = Metric.counter("claude_agent_sessions_active", {
  description: "Sessions open now"
})

/**
 * Turns finished (one per `result`), tagged `outcome` (`success` or `error`).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const turns = Effect.map(Metric.value(Telemetry.turns), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const turns = Metric.counter("claude_agent_turns", { description: "Turns finished" })

/**
 * How long turns take, from the prompt being written to its `result`, in milliseconds.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const slowest = Effect.map(Metric.value(Telemetry.turnDuration), (state) => state.max)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const turnDuration = Metric.histogram(
  "claude_agent_turn_duration_ms",
  MetricBoundaries.exponential({ start: 10, factor: 2, count: 16 }),
  "Turn latency in milliseconds"
)

/**
 * Input tokens of finished turns (`usage.input_tokens` of each `result`).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const tokensIn = Effect.map(Metric.value(Telemetry.inputTokens), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const inputTokens = Metric.counter("claude_agent_input_tokens", { description: "Input tokens" })

/**
 * Output tokens of finished turns (`usage.output_tokens` of each `result`).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const tokensOut = Effect.map(Metric.value(Telemetry.outputTokens), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const outputTokens = Metric.counter("claude_agent_output_tokens", { description: "Output tokens" })

/**
 * Cost of finished turns in US dollars: each turn's own (the `total_cost_usd` of a `result` is
 * the session's so far, so a turn's is its change, as its `Usage` has it).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const spent = Effect.map(Metric.value(Telemetry.costUsd), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const costUsd = Metric.counter("claude_agent_cost_usd", { description: "Cost in US dollars" })

/**
 * Tool calls the model made, tagged `tool` with the tool's name (from the assistant's `tool_use`
 * blocks, so built-in and MCP tools alike).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const bashCalls = Effect.map(Metric.value(Telemetry.toolCalls.pipe(Metric.tagged("tool", "Bash"))), (s) => s.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const toolCalls = Metric.counter("claude_agent_tool_calls", { description: "Tool calls by tool" })

/**
 * How long the host takes to answer the CLI's requests, in milliseconds, tagged `subtype`
 * (`hook_callback`, `can_use_tool`, `mcp_message`, …): hook, permission and SDK tool round trips.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const hookP50 = Metric.value(Telemetry.callbackDuration.pipe(Metric.tagged("subtype", "hook_callback"))).pipe(
 *   Effect.map((state) => state.count)
 * )
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const callbackDuration = Metric.histogram(
  "claude_agent_callback_duration_ms",
  MetricBoundaries.exponential({ start: 0.1, factor: 2, count: 20 }),
  "Time to answer the CLI's control requests, in milliseconds"
)

/**
 * Requests waiting for an `AgentPool` process now (the queue's depth).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const depth = Effect.map(Metric.value(Telemetry.poolPending), (state) => state.value)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const poolPending = Metric.gauge("claude_agent_pool_pending", { description: "Requests waiting for a process" })

/**
 * How long `AgentPool` requests waited in the queue for a process, in milliseconds (granted,
 * timed out or given up alike). Requests served at once do not wait and are not counted.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const waits = Effect.map(Metric.value(Telemetry.poolWait), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const poolWait = Metric.histogram(
  "claude_agent_pool_wait_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 20 }),
  "Time requests waited for a pool process, in milliseconds"
)

/**
 * Cost of finished turns in US dollars by who spent it, tagged `agent` (`main`, a subagent's
 * type such as `general-purpose`, or `unattributed` for the CLI's side requests) and `model`:
 * each turn's `Usage` (see the `Usage` module), so the tags add up to the turn's cost.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const byExplorers = Telemetry.agentCostUsd.pipe(Metric.tagged("agent", "Explore"), Metric.tagged("model", "claude-sonnet-4-5"))
 * const spent = Effect.map(Metric.value(byExplorers), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const agentCostUsd = Metric.counter("claude_agent_agent_cost_usd", {
  description: "Cost in US dollars by agent and model"
})

/**
 * Tokens of finished turns by who spent them, tagged `agent` and `model` as `agentCostUsd` is,
 * and `kind` (`input`, `output`, `cache_read`, `cache_creation`).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const mainOutput = Telemetry.agentTokens.pipe(
 *   Metric.tagged("agent", "main"),
 *   Metric.tagged("model", "claude-sonnet-4-5"),
 *   Metric.tagged("kind", "output")
 * )
 * const tokens = Effect.map(Metric.value(mainOutput), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const agentTokens = Metric.counter("claude_agent_agent_tokens", {
  description: "Tokens by agent, model and kind"
})

/**
 * OpenTelemetry GenAI `gen_ai.client.token.usage`: the tokens of each agent invocation (a turn),
 * one record per model and token type, with the convention's buckets. Tagged
 * `gen_ai.operation.name` (`invoke_agent`), `gen_ai.provider.name` (`anthropic`),
 * `gen_ai.token.type` (`input`, cache reads and writes included, or `output`),
 * `gen_ai.response.model`, and `gen_ai.request.model` when the session names a model.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const output = Telemetry.genAiTokenUsage.pipe(Metric.tagged("gen_ai.token.type", "output"))
 * const records = Effect.map(Metric.value(output), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const genAiTokenUsage = Metric.histogram(
  "gen_ai.client.token.usage",
  MetricBoundaries.exponential({ start: 1, factor: 4, count: 14 }),
  "Number of input and output tokens used"
)

/**
 * OpenTelemetry GenAI `gen_ai.client.operation.duration`: how long each agent invocation (a
 * turn, from its prompt to its `result`) took, in seconds, with the convention's buckets. Tagged
 * `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model` when the session names a
 * model, and `error.type` (the result's error subtype) when the turn failed.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Telemetry } from "effect-claude-agent"
 *
 * const invocations = Effect.map(Metric.value(Telemetry.genAiOperationDuration), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const genAiOperationDuration = Metric.histogram(
  "gen_ai.client.operation.duration",
  MetricBoundaries.exponential({ start: 0.01, factor: 2, count: 14 }),
  "GenAI operation duration in seconds"
)
