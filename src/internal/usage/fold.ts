/**
 * The usage fold: a session's messages in, spend per agent, subagent and tool call out, one
 * `Usage` per `result`. Plain data and functions, no I/O: `observe` takes each message frame,
 * `settle` closes the turn at its `result`.
 *
 * What the CLI reports, and how it is used:
 * - an assistant message per content block, all blocks of one API response with the same
 *   `message.id` and the same `usage`: a response counts once. Its `usage` is the one the
 *   stream started with: input and cache figures are final, `output_tokens` is not;
 * - the final output count of a response in the stream's `message_delta` (with partial
 *   messages on), the main agent's output for the turn in the result's `usage`, and a
 *   subagent's last context size in its `task_notification`'s `total_tokens`. Output tokens no
 *   message reports exactly are estimated from these and the content's size, within what the
 *   model's total leaves;
 * - per model, the turn's tokens and `costUSD` in the result's `model_usage_since_last_result`
 *   (or the change of the cumulative `modelUsage`). A model's cost is split among the
 *   responses that used it in proportion to their tokens at list-price ratios; what no message
 *   shows (the CLI's side requests: titles, compaction) is `unattributed`. The parts add up to
 *   the model's figures, and so to the result's `total_cost_usd` for the turn.
 *
 * @internal
 */
import type * as F from "./figures.js"
import { isObject, num, optionalNum, type Raw, str } from "./raw.js"

/**
 * One API response as its assistant messages showed it.
 *
 * @internal
 */
export interface Response {
  readonly id: string | undefined
  /** The subagent's tool use id (`parent_tool_use_id`); `undefined` for the main agent. */
  readonly agent: string | undefined
  readonly model: string
  readonly inputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
  /** The final output count, when the stream's `message_delta` gave it. */
  readonly outputTokens: number | undefined
  /** Characters of content: the estimate of output tokens no message reports. */
  readonly size: number
  readonly tools: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

/**
 * What the fold keeps: the running turn's responses, and what lasts across turns.
 *
 * @internal
 */
export interface State {
  readonly responses: ReadonlyArray<Response>
  /** The message each agent is streaming now (agent key, `""` for the main agent → message id). */
  readonly streaming: ReadonlyMap<string, string>
  /** Each subagent's last reported `total_tokens`. */
  readonly reported: ReadonlyMap<string, number>
  /** Subagent tool use id → agent type. */
  readonly agentTypes: ReadonlyMap<string, string>
  /** The last result's cumulative `modelUsage` and `total_cost_usd`. */
  readonly cumulative: { readonly models: ModelFigures; readonly costUsd: number } | undefined
}

/** @internal */
export type ModelFigures = { readonly [model: string]: F.Figures }

/** @internal */
export const initial: State = {
  responses: [],
  streaming: new Map(),
  reported: new Map(),
  agentTypes: new Map(),
  cumulative: undefined
}

const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(["Agent", "Task"])

const contentSize = (block: Raw): number => {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text.length : 0
    case "thinking":
      return typeof block.thinking === "string" ? block.thinking.length : 0
    case "tool_use":
      return block.name === undefined ? 0 : JSON.stringify(block.input ?? null).length
    default:
      return 0
  }
}

const withEntry = <V>(map: ReadonlyMap<string, V>, key: string, value: V): ReadonlyMap<string, V> => {
  if (map.get(key) === value) return map
  const next = new Map(map)
  next.set(key, value)
  return next
}

const observeAssistant = (state: State, frame: Raw): State => {
  const message = frame.message
  if (!isObject(message)) return state
  const id = str(message.id)
  const agent = str(frame.parent_tool_use_id)
  const usage = isObject(message.usage) ? message.usage : {}
  let size = 0
  const tools: Array<{ readonly id: string; readonly name: string }> = []
  let agentTypes = state.agentTypes
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      if (!isObject(block)) continue
      size += contentSize(block)
      const toolId = str(block.id)
      const name = str(block.name)
      if (block.type !== "tool_use" || toolId === undefined || name === undefined) continue
      tools.push({ id: toolId, name })
      const type = isObject(block.input) ? str(block.input.subagent_type) : undefined
      if (SUBAGENT_TOOLS.has(name) && type !== undefined && !agentTypes.has(toolId)) {
        agentTypes = withEntry(agentTypes, toolId, type)
      }
    }
  }
  const responses = state.responses
  // The blocks of one response come together: the one to merge into is at the end.
  for (let i = responses.length - 1; i >= 0 && id !== undefined; i--) {
    const seen = responses[i]
    if (seen === undefined || seen.id !== id || seen.agent !== agent) continue
    const merged: Response = {
      ...seen,
      size: seen.size + size,
      tools: tools.length > 0 ? [...seen.tools, ...tools] : seen.tools
    }
    const next = responses.slice()
    next[i] = merged
    return { ...state, responses: next, agentTypes }
  }
  const response: Response = {
    id,
    agent,
    model: str(message.model) ?? "unknown",
    inputTokens: num(usage.input_tokens),
    cacheReadInputTokens: num(usage.cache_read_input_tokens),
    cacheCreationInputTokens: num(usage.cache_creation_input_tokens),
    outputTokens: undefined,
    size,
    tools
  }
  return { ...state, responses: [...responses, response], agentTypes }
}

const observeStreamEvent = (state: State, frame: Raw): State => {
  const event = frame.event
  // Deltas of content, the most frequent frames, tell nothing about spend.
  if (!isObject(event) || (event.type !== "message_start" && event.type !== "message_delta")) return state
  const key = str(frame.parent_tool_use_id) ?? ""
  if (event.type === "message_start") {
    const id = isObject(event.message) ? str(event.message.id) : undefined
    return id === undefined ? state : { ...state, streaming: withEntry(state.streaming, key, id) }
  }
  if (!isObject(event.usage)) return state
  const output = optionalNum(event.usage.output_tokens)
  const id = state.streaming.get(key)
  if (output === undefined || id === undefined) return state
  const responses = state.responses
  for (let i = responses.length - 1; i >= 0; i--) {
    const seen = responses[i]
    if (seen === undefined || seen.id !== id) continue
    const next = responses.slice()
    next[i] = { ...seen, outputTokens: output }
    return { ...state, responses: next }
  }
  return state
}

const observeSystem = (state: State, frame: Raw): State => {
  const toolUseId = str(frame.tool_use_id)
  if (toolUseId === undefined) return state
  switch (frame.subtype) {
    case "task_started": {
      const type = str(frame.subagent_type)
      return type === undefined ? state : { ...state, agentTypes: withEntry(state.agentTypes, toolUseId, type) }
    }
    case "task_progress":
    case "task_notification": {
      const total = isObject(frame.usage) ? optionalNum(frame.usage.total_tokens) : undefined
      return total === undefined ? state : { ...state, reported: withEntry(state.reported, toolUseId, total) }
    }
    default:
      return state
  }
}

/**
 * Takes one message frame (raw, as the CLI wrote it) into account. Frames that tell nothing
 * about spend return `state` itself. A `result` is `settle`'s.
 *
 * @internal
 */
export const observe = (state: State, frame: Raw): State => {
  switch (frame.type) {
    case "assistant":
      return observeAssistant(state, frame)
    case "stream_event":
      return observeStreamEvent(state, frame)
    case "system":
      return observeSystem(state, frame)
    default:
      return state
  }
}

export { combine, empty } from "./combine.js"
export { settle } from "./settle.js"
