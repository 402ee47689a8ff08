/**
 * The OpenTelemetry GenAI semantic conventions (v1.41) as this library uses them: attribute names,
 * the values it gives them, and the attributes of a `Usage` spend.
 *
 * @internal
 */
import type { Tracer } from "effect"
import type { Spend } from "../../Usage.js"

/** @internal */
export const OPERATION = "gen_ai.operation.name"
/** @internal */
export const PROVIDER = "gen_ai.provider.name"
/** The convention's older name for the provider, still read by many backends. @internal */
export const SYSTEM = "gen_ai.system"
/** @internal */
export const AGENT_NAME = "gen_ai.agent.name"
/** @internal */
export const AGENT_ID = "gen_ai.agent.id"
/** @internal */
export const REQUEST_MODEL = "gen_ai.request.model"
/** @internal */
export const RESPONSE_MODEL = "gen_ai.response.model"
/** @internal */
export const RESPONSE_ID = "gen_ai.response.id"
/** @internal */
export const FINISH_REASONS = "gen_ai.response.finish_reasons"
/** @internal */
export const CONVERSATION_ID = "gen_ai.conversation.id"
/** @internal */
export const INPUT_TOKENS = "gen_ai.usage.input_tokens"
/** @internal */
export const OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
/** @internal */
export const CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
/** @internal */
export const CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
/** @internal */
export const TOOL_NAME = "gen_ai.tool.name"
/** @internal */
export const TOOL_CALL_ID = "gen_ai.tool.call.id"
/** @internal */
export const TOOL_TYPE = "gen_ai.tool.type"
/** @internal */
export const TOKEN_TYPE = "gen_ai.token.type"
/** @internal */
export const ERROR_TYPE = "error.type"
/** What the convention has no name for: a spend's cost in US dollars. @internal */
export const COST_USD = "claude.usage.cost_usd"

/** @internal */
export const ANTHROPIC = "anthropic"
/** @internal */
export const INVOKE_AGENT = "invoke_agent"
/** @internal */
export const EXECUTE_TOOL = "execute_tool"

/**
 * The main agent's name when the session names none (`agent` option): the CLI's.
 *
 * @internal
 */
export const DEFAULT_AGENT_NAME = "claude-code"

/**
 * Tools whose call starts a subagent (the CLI has called it both).
 *
 * @internal
 */
export const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(["Agent", "Task"])

/**
 * `error.type` values the library reports besides a result's error subtype and a session's end
 * (the tag of the error the CLI's connection ended with).
 *
 * @internal
 */
export const ErrorType = {
  /** A tool call whose result is an error. */
  toolError: "tool_error",
  /** A tool call the permission system refused (`system/permission_denied`). */
  permissionDenied: "permission_denied",
  /** A span whose turn ended (its `result`) before it did. */
  unfinished: "unfinished",
  /** A span still open when its session closed. */
  sessionClosed: "session_closed"
} as const

/**
 * The convention's type of a tool: MCP tools (`mcp__server__tool`) reach a server, the rest are
 * functions the agent runs.
 *
 * @internal
 */
export const toolType = (name: string): "extension" | "function" => name.startsWith("mcp__") ? "extension" : "function"

/**
 * Sets a spend's tokens and cost on a span. The convention's input tokens include the cached
 * ones (Anthropic reports them apart), which are also given on their own.
 *
 * @internal
 */
export const setSpend = (span: Tracer.Span, spend: Spend): void => {
  span.attribute(INPUT_TOKENS, inputTokens(spend))
  span.attribute(OUTPUT_TOKENS, spend.outputTokens)
  span.attribute(CACHE_READ_TOKENS, spend.cacheReadInputTokens)
  span.attribute(CACHE_CREATION_TOKENS, spend.cacheCreationInputTokens)
  span.attribute(COST_USD, spend.costUsd)
}

/**
 * Input tokens as the convention counts them: uncached, cache reads and cache writes.
 *
 * @internal
 */
export const inputTokens = (spend: Spend): number =>
  spend.inputTokens + spend.cacheReadInputTokens + spend.cacheCreationInputTokens

/**
 * The model that did most of a spend (most tokens), or `undefined` when it used none.
 *
 * @internal
 */
export const mainModel = (models: { readonly [model: string]: Spend }): string | undefined => {
  let best: string | undefined
  let most = -1
  for (const model in models) {
    const spend = models[model]
    if (spend === undefined) continue
    const tokens = inputTokens(spend) + spend.outputTokens
    if (tokens > most) {
      best = model
      most = tokens
    }
  }
  return best
}
