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
 * One API response as its assistant messages showed it. The fold updates the running turn's
 * responses in place (each message of a response adds to its `size` and `tools`); readers see
 * them as read-only.
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

// A response as the fold builds it: the same fields, the ones a later message adds to writable.
type Building = Omit<Response, "outputTokens" | "size" | "tools"> & {
  outputTokens: number | undefined
  size: number
  readonly tools: Array<{ readonly id: string; readonly name: string }>
}

/**
 * What the fold keeps: the running turn's responses, and what lasts across turns. A state belongs
 * to one fold, which updates it in place: a turn can hold tens of thousands of messages, and
 * copying its responses at each one would make the turn quadratic.
 *
 * @internal
 */
export interface State {
  readonly responses: Array<Building>
  /** Where each response is in `responses`, by agent and message id (`responseKey`). */
  readonly index: Map<string, number>
  /** The response the last frame added or changed (-1: none yet), for running totals. */
  readonly touched: { index: number }
  /** The message each agent is streaming now (agent key, `""` for the main agent → message id). */
  readonly streaming: Map<string, string>
  /** Each subagent's last reported `total_tokens`. */
  readonly reported: Map<string, number>
  /** Subagent tool use id → agent type. */
  readonly agentTypes: Map<string, string>
  /** The last result's cumulative `modelUsage` and `total_cost_usd`. */
  readonly cumulative: { readonly models: ModelFigures; readonly costUsd: number } | undefined
}

/** @internal */
export type ModelFigures = { readonly [model: string]: F.Figures }

/**
 * A new fold's state.
 *
 * @internal
 */
export const make = (): State => ({
  responses: [],
  index: new Map(),
  touched: { index: -1 },
  streaming: new Map(),
  reported: new Map(),
  agentTypes: new Map(),
  cumulative: undefined
})

/** @internal */
export const responseKey = (agent: string | undefined, id: string): string => `${agent ?? ""}\u0000${id}`

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

// Where the response of (`agent`, `id`) is in `responses`: most often the one the last message
// touched (a response's messages come one after the other), so the index is asked only on a change.
const indexOf = (state: State, agent: string | undefined, id: string): number | undefined => {
  const last = state.responses[state.touched.index]
  return last !== undefined && last.id === id && last.agent === agent
    ? state.touched.index
    : state.index.get(responseKey(agent, id))
}

const observeAssistant = (state: State, frame: Raw): State => {
  const message = frame.message
  if (!isObject(message)) return state
  const id = str(message.id)
  const agent = str(frame.parent_tool_use_id)
  let size = 0
  let tools: Array<{ readonly id: string; readonly name: string }> | undefined
  const agentTypes = state.agentTypes
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      if (!isObject(block)) continue
      size += contentSize(block)
      if (block.type !== "tool_use") continue
      const toolId = str(block.id)
      const name = str(block.name)
      if (toolId === undefined || name === undefined) continue
      ;(tools ??= []).push({ id: toolId, name })
      const type = isObject(block.input) ? str(block.input.subagent_type) : undefined
      if (SUBAGENT_TOOLS.has(name) && type !== undefined && !agentTypes.has(toolId)) {
        agentTypes.set(toolId, type)
      }
    }
  }
  const responses = state.responses
  const at = id === undefined ? undefined : indexOf(state, agent, id)
  const seen = at === undefined ? undefined : responses[at]
  if (at !== undefined && seen !== undefined) {
    seen.size += size
    if (tools !== undefined) { for (const tool of tools) seen.tools.push(tool) }
    state.touched.index = at
    return state
  }
  const usage = isObject(message.usage) ? message.usage : {}
  const response: Building = {
    id,
    agent,
    model: str(message.model) ?? "unknown",
    inputTokens: num(usage.input_tokens),
    cacheReadInputTokens: num(usage.cache_read_input_tokens),
    cacheCreationInputTokens: num(usage.cache_creation_input_tokens),
    outputTokens: undefined,
    size,
    tools: tools ?? []
  }
  if (id !== undefined) state.index.set(responseKey(agent, id), responses.length)
  state.touched.index = responses.length
  responses.push(response)
  return state
}

const observeStreamEvent = (state: State, frame: Raw): State => {
  const event = frame.event
  // Deltas of content, the most frequent frames, tell nothing about spend.
  if (!isObject(event) || (event.type !== "message_start" && event.type !== "message_delta")) return state
  const key = str(frame.parent_tool_use_id) ?? ""
  if (event.type === "message_start") {
    const id = isObject(event.message) ? str(event.message.id) : undefined
    if (id !== undefined) state.streaming.set(key, id)
    return state
  }
  if (!isObject(event.usage)) return state
  const output = optionalNum(event.usage.output_tokens)
  const id = state.streaming.get(key)
  if (output === undefined || id === undefined) return state
  const at = indexOf(state, str(frame.parent_tool_use_id), id)
  const seen = at === undefined ? undefined : state.responses[at]
  if (at !== undefined && seen !== undefined) {
    seen.outputTokens = output
    state.touched.index = at
  }
  return state
}

const observeSystem = (state: State, frame: Raw): State => {
  const toolUseId = str(frame.tool_use_id)
  if (toolUseId === undefined) return state
  switch (frame.subtype) {
    case "task_started": {
      const type = str(frame.subagent_type)
      if (type !== undefined) state.agentTypes.set(toolUseId, type)
      return state
    }
    case "task_progress":
    case "task_notification": {
      const total = isObject(frame.usage) ? optionalNum(frame.usage.total_tokens) : undefined
      if (total !== undefined) state.reported.set(toolUseId, total)
      return state
    }
    default:
      return state
  }
}

/**
 * Takes one message frame (raw, as the CLI wrote it) into account, updating `state` in place
 * (returned for convenience). A `result` is `settle`'s.
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
