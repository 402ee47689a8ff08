/**
 * Who spent it: the tokens and dollars of a turn or a session, attributed to the main agent,
 * each subagent (by the tool use that started it, with its agent type) and each tool call (the
 * tokens of the response that asked for it), per model.
 *
 * Every `result` a session reads carries its turn's `Usage` (`Usage.ofResult`), and sessions
 * keep the running total (`session.usage`). The figures come from the messages themselves: each
 * API response counts once (the CLI repeats its `usage` on every content block), and a model's
 * cost in the result's own `modelUsage` is split among the responses that used it, in
 * proportion to their tokens at list-price ratios. What no message shows (the CLI's side
 * requests: titles, compaction) is `unattributed`, so the parts add up to the result's
 * `total_cost_usd` and token totals. Input and cache figures are exact; output tokens are exact
 * for the main agent's turn and for responses streamed with `includePartialMessages`, and
 * estimated otherwise, within the model's total.
 *
 * @since 0.1.0
 */
import { Option } from "effect"
import * as Fold from "./internal/usage/fold.js"
import { settledFor, Tally } from "./internal/usage/tally.js"
import type * as Message from "./schema/Message.js"

/**
 * Tokens by kind and what they cost, in US dollars.
 *
 * @example
 * ```ts
 * import type { Usage } from "effect-claude-agent"
 *
 * const tokens = (s: Usage.Spend) => s.inputTokens + s.outputTokens + s.cacheReadInputTokens + s.cacheCreationInputTokens
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Spend {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
  readonly costUsd: number
}

/**
 * The spend of one agent: the main agent, one subagent (`toolUseId` is the tool use that
 * started it, `agentType` its `subagent_type`), or what no message shows (`unattributed`), in
 * total and per model.
 *
 * @example
 * ```ts
 * import type { Usage } from "effect-claude-agent"
 *
 * const label = (a: Usage.AgentUsage) => a.agent === "subagent" ? `${a.agentType ?? "subagent"} ${a.toolUseId}` : a.agent
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentUsage extends Spend {
  readonly agent: "main" | "subagent" | "unattributed"
  readonly toolUseId: string | undefined
  readonly agentType: string | undefined
  readonly models: { readonly [model: string]: Spend }
}

/**
 * The spend of one tool call: the figures of the response that asked for it (shared evenly
 * among the tool calls of one response). `agentToolUseId` names the subagent that made the
 * call; `undefined` for the main agent.
 *
 * @example
 * ```ts
 * import type { Usage } from "effect-claude-agent"
 *
 * const bash = (u: Usage.Usage) => u.tools.filter((t) => t.name === "Bash").reduce((n, t) => n + t.costUsd, 0)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolUsage extends Spend {
  readonly toolUseId: string
  readonly name: string
  readonly model: string
  readonly agentToolUseId: string | undefined
}

/**
 * The spend of a turn or a session (`turns` of them): in total, per agent (`main`, `subagents`,
 * `unattributed`, which add up to the total), per tool call and per model.
 *
 * @example
 * ```ts
 * import type { Usage } from "effect-claude-agent"
 *
 * const share = (u: Usage.Usage) => u.subagents.map((s) => [s.agentType, s.costUsd / u.costUsd] as const)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage extends Spend {
  readonly turns: number
  readonly main: AgentUsage
  readonly subagents: ReadonlyArray<AgentUsage>
  readonly unattributed: AgentUsage
  readonly tools: ReadonlyArray<ToolUsage>
  readonly models: { readonly [model: string]: Spend }
}

/**
 * No spend, no turns.
 *
 * @example
 * ```ts
 * import { Usage } from "effect-claude-agent"
 *
 * Usage.empty.costUsd // 0
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Usage = Fold.empty

/**
 * Two stretches of spend together (a session's turns, or several sessions): figures added, a
 * subagent or tool call present in both counted once.
 *
 * @example
 * ```ts
 * import { Usage } from "effect-claude-agent"
 *
 * const overall = (turns: ReadonlyArray<Usage.Usage>) => turns.reduce(Usage.combine, Usage.empty)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const combine: (self: Usage, that: Usage) => Usage = Fold.combine

/**
 * The turn's spend a `result` closed, when a session read it (every session does, whether or
 * not its messages are consumed). `none` for a result made by hand or decoded elsewhere.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { ClaudeAgent, Usage } from "effect-claude-agent"
 *
 * const program = ClaudeAgent.query("Plan the migration").pipe(
 *   ClaudeAgent.lastResult,
 *   Effect.map((result) => Option.map(Usage.ofResult(result), (u) => u.subagents.length))
 * )
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const ofResult = (result: Message.ResultMessage): Option.Option<Usage> =>
  Option.fromNullable(settledFor(result)?.turn)

/**
 * The session's spend up to and including a `result` it read.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { ClaudeAgent, Usage } from "effect-claude-agent"
 *
 * const soFar = ClaudeAgent.query("hi").pipe(
 *   ClaudeAgent.lastResult,
 *   Effect.map((result) => Option.map(Usage.sessionUpTo(result), (u) => u.costUsd))
 * )
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const sessionUpTo = (result: Message.ResultMessage): Option.Option<Usage> =>
  Option.fromNullable(settledFor(result)?.session)

/**
 * Folds recorded messages (raw frames or decoded messages, as a session store or a transcript
 * holds them) into one `Usage` per `result`, in order, as a session would have.
 *
 * @example
 * ```ts
 * import { Usage } from "effect-claude-agent"
 *
 * const total = (frames: ReadonlyArray<unknown>) => Usage.fromMessages(frames).reduce(Usage.combine, Usage.empty)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromMessages = (messages: Iterable<unknown>): ReadonlyArray<Usage> => {
  const tally = new Tally()
  const turns: Array<Usage> = []
  for (const m of messages) {
    if (typeof m !== "object" || m === null || Array.isArray(m)) continue
    const frame: { readonly [key: string]: unknown } = { ...m }
    tally.observe(frame)
    const settled = frame.type === "result" ? settledFor(frame) : undefined
    if (settled !== undefined) turns.push(settled.turn)
  }
  return turns
}

/**
 * The spend of the subagent a tool use started.
 *
 * @example
 * ```ts
 * import { Usage } from "effect-claude-agent"
 *
 * const reviewer = (u: Usage.Usage) => Usage.subagent(u, "toolu_01")
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const subagent = (self: Usage, toolUseId: string): Option.Option<AgentUsage> =>
  Option.fromNullable(self.subagents.find((s) => s.toolUseId === toolUseId))

/**
 * The spend of one tool call.
 *
 * @example
 * ```ts
 * import { Usage } from "effect-claude-agent"
 *
 * const call = (u: Usage.Usage) => Usage.tool(u, "toolu_02")
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const tool = (self: Usage, toolUseId: string): Option.Option<ToolUsage> =>
  Option.fromNullable(self.tools.find((t) => t.toolUseId === toolUseId))

/**
 * Every agent's spend: the main agent, the subagents, then what no message shows. They add up
 * to the total.
 *
 * @example
 * ```ts
 * import { Usage } from "effect-claude-agent"
 *
 * const lines = (u: Usage.Usage) => Usage.agents(u).map((a) => `${a.agentType ?? a.agent}: $${a.costUsd.toFixed(4)}`)
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const agents = (self: Usage): ReadonlyArray<AgentUsage> => [self.main, ...self.subagents, self.unattributed]
