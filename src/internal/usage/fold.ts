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
import type { AgentUsage, ToolUsage, Usage } from "../../Usage.js"
import * as F from "./figures.js"

type Raw = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Raw => typeof u === "object" && u !== null && !Array.isArray(u)
const num = (u: unknown): number => (typeof u === "number" && Number.isFinite(u) ? u : 0)
const optionalNum = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)
const str = (u: unknown): string | undefined => (typeof u === "string" && u.length > 0 ? u : undefined)

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

// ---------------------------------------------------------------------------------------------
// settling a turn
// ---------------------------------------------------------------------------------------------

const modelFigures = (record: unknown): ModelFigures | undefined => {
  if (!isObject(record)) return undefined
  const out: Record<string, F.Figures> = {}
  for (const [model, entry] of Object.entries(record)) {
    if (!isObject(entry)) continue
    out[model] = {
      inputTokens: num(entry.inputTokens),
      outputTokens: num(entry.outputTokens),
      cacheReadInputTokens: num(entry.cacheReadInputTokens),
      cacheCreationInputTokens: num(entry.cacheCreationInputTokens),
      costUsd: num(entry.costUSD)
    }
  }
  return out
}

// The turn's own figures per model: the CLI's `model_usage_since_last_result`, or the change of
// the cumulative `modelUsage` since the last result.
// `undefined` when the result names no model (an API error's result, a fake's): its
// `total_cost_usd` is then split over the responses seen.
const turnModels = (state: State, result: Raw): ModelFigures | undefined => {
  const since = modelFigures(result.model_usage_since_last_result)
  if (since !== undefined && Object.keys(since).length > 0) return since
  const cumulative = modelFigures(result.modelUsage)
  if (cumulative === undefined || Object.keys(cumulative).length === 0) return undefined
  const before = state.cumulative?.models ?? {}
  const out: Record<string, F.Figures> = {}
  for (const [model, figures] of Object.entries(cumulative)) {
    const diff = F.remainder(figures, before[model] ?? F.zero)
    if (!F.isZero(diff)) out[model] = diff
  }
  return out
}

interface Hint {
  readonly tokens: number
  /** From a figure the CLI reported (the result's, a subagent's), not from the content's size. */
  readonly reported: boolean
}

// Output tokens each response is thought to have when no `message_delta` said: the main
// agent's share of the result's `usage.output_tokens`, a subagent's last response from its
// reported context size, anything else from its size (four characters a token).
const outputHints = (responses: ReadonlyArray<Response>, state: State, result: Raw): Array<Hint> => {
  const hints = responses.map((r): Hint => ({ tokens: Math.ceil(r.size / 4), reported: false }))
  const mainOutput = isObject(result.usage) ? optionalNum(result.usage.output_tokens) : undefined
  if (mainOutput !== undefined) {
    const unknown: Array<number> = []
    let known = 0
    responses.forEach((r, i) => {
      if (r.agent !== undefined) return
      if (r.outputTokens === undefined) unknown.push(i)
      else known += r.outputTokens
    })
    const shares = F.apportion(Math.max(0, mainOutput - known), unknown.map((i) => responses[i]?.size ?? 0))
    unknown.forEach((i, k) => (hints[i] = { tokens: shares[k] ?? 0, reported: true }))
  }
  for (const [agent, total] of state.reported) {
    let last = -1
    responses.forEach((r, i) => (r.agent === agent ? (last = i) : undefined))
    const r = responses[last]
    if (r === undefined || r.outputTokens !== undefined) continue
    const tokens = total - r.inputTokens - r.cacheReadInputTokens - r.cacheCreationInputTokens
    hints[last] = { tokens: Math.max(0, tokens), reported: true }
  }
  return hints
}

// Gives each of `claimants` its wanted tokens out of `pool`, or shares `pool` in proportion when
// they want more; returns what is left.
const grant = (
  out: Array<number>,
  claimants: ReadonlyArray<number>,
  wanted: (i: number) => number,
  pool: number
): number => {
  const asks = claimants.map(wanted)
  const total = asks.reduce((a, b) => a + b, 0)
  const shares = total <= pool ? asks : F.apportion(pool, asks)
  claimants.forEach((i, k) => (out[i] = shares[k] ?? 0))
  return pool - Math.min(total, pool)
}

// The output tokens of each response: exact where known; then the reported hints, then the
// estimated ones, out of what the model's total leaves for them. When every request of the
// model shows in the messages (no input or cache tokens unaccounted for), output left over is
// theirs too: it goes to the estimated responses, or the reported ones if none is.
const outputs = (
  responses: ReadonlyArray<Response>,
  modelOf: ReadonlyArray<string>,
  models: ModelFigures | undefined,
  hints: ReadonlyArray<Hint>
): Array<number> => {
  const out = responses.map((r, i) => r.outputTokens ?? hints[i]?.tokens ?? 0)
  if (models === undefined) return out
  for (const [model, figures] of Object.entries(models)) {
    const reported: Array<number> = []
    const estimated: Array<number> = []
    let known = 0
    let shown = F.zero
    responses.forEach((r, i) => {
      if (modelOf[i] !== model) return
      shown = F.add(shown, { ...F.zero, ...r, outputTokens: 0, costUsd: 0 })
      if (r.outputTokens !== undefined) known += r.outputTokens
      else if (hints[i]?.reported === true) reported.push(i)
      else estimated.push(i)
    })
    const wanted = (i: number) => hints[i]?.tokens ?? 0
    const left = grant(out, estimated, wanted, grant(out, reported, wanted, Math.max(0, figures.outputTokens - known)))
    const hidden = F.remainder({ ...figures, outputTokens: 0, costUsd: 0 }, shown)
    const takers = estimated.length > 0 ? estimated : reported
    if (left === 0 || !F.isZero(hidden) || takers.length === 0) continue
    const extra = F.apportion(left, takers.map((i) => out[i] ?? 0))
    takers.forEach((i, k) => (out[i] = (out[i] ?? 0) + (extra[k] ?? 0)))
  }
  return out
}

interface Priced {
  readonly response: Response
  readonly model: string
  readonly figures: F.Figures
}

// Each response's figures with its share of its model's cost, and what no response shows.
const price = (
  responses: ReadonlyArray<Response>,
  modelOf: ReadonlyArray<string>,
  output: ReadonlyArray<number>,
  models: ModelFigures | undefined,
  turnCost: number
): { readonly priced: Array<Priced>; readonly unattributed: ModelFigures } => {
  const tokens = responses.map((r, i): F.Figures => ({
    inputTokens: r.inputTokens,
    outputTokens: output[i] ?? 0,
    cacheReadInputTokens: r.cacheReadInputTokens,
    cacheCreationInputTokens: r.cacheCreationInputTokens,
    costUsd: 0
  }))
  const buckets: ModelFigures = models ?? { "": { ...F.sum(tokens), costUsd: turnCost } }
  const bucketOf = (i: number) => (models === undefined ? "" : modelOf[i] ?? "")
  const perUnit = new Map<string, number>()
  const unattributed: Record<string, F.Figures> = {}
  for (const [model, figures] of Object.entries(buckets)) {
    const shown = F.sum(tokens.filter((_, i) => bucketOf(i) === model))
    const rest = F.remainder({ ...figures, costUsd: 0 }, shown)
    const units = F.weight(shown) + F.weight(rest)
    const unit = units > 0 ? figures.costUsd / units : 0
    perUnit.set(model, unit)
    const restCost = units > 0 ? F.weight(rest) * unit : figures.costUsd
    const left = { ...rest, costUsd: restCost }
    // Without per-model figures, cost that no token shows has no model to go under.
    if (!F.isZero(left)) unattributed[model === "" ? "unknown" : model] = left
  }
  const priced = responses.map((response, i): Priced => {
    const figures = tokens[i] ?? F.zero
    return {
      response,
      model: modelOf[i] ?? response.model,
      figures: { ...figures, costUsd: F.weight(figures) * (perUnit.get(bucketOf(i)) ?? 0) }
    }
  })
  return { priced, unattributed }
}

const byModel = (entries: Iterable<readonly [string, F.Figures]>): Record<string, F.Figures> => {
  const out: Record<string, F.Figures> = {}
  for (const [model, figures] of entries) out[model] = F.add(out[model] ?? F.zero, figures)
  return out
}

const agentUsage = (
  agent: AgentUsage["agent"],
  toolUseId: string | undefined,
  agentType: string | undefined,
  models: Record<string, F.Figures>
): AgentUsage => ({ ...F.sum(Object.values(models)), agent, toolUseId, agentType, models })

// A response's figures shared among the tool calls it asked for.
const toolShares = (p: Priced): Array<ToolUsage> => {
  const calls = p.response.tools
  if (calls.length === 0) return []
  const even = calls.map(() => 1)
  const split = (n: number) => F.apportion(n, even)
  const input = split(p.figures.inputTokens)
  const output = split(p.figures.outputTokens)
  const cacheRead = split(p.figures.cacheReadInputTokens)
  const cacheCreation = split(p.figures.cacheCreationInputTokens)
  return calls.map((call, k): ToolUsage => ({
    toolUseId: call.id,
    name: call.name,
    model: p.model,
    agentToolUseId: p.response.agent,
    inputTokens: input[k] ?? 0,
    outputTokens: output[k] ?? 0,
    cacheReadInputTokens: cacheRead[k] ?? 0,
    cacheCreationInputTokens: cacheCreation[k] ?? 0,
    costUsd: p.figures.costUsd / calls.length
  }))
}

const summarize = (priced: ReadonlyArray<Priced>, unattributed: ModelFigures, state: State): Usage => {
  const main = byModel(priced.filter((p) => p.response.agent === undefined).map((p) => [p.model, p.figures]))
  const subagentIds: Array<string> = []
  for (const p of priced) {
    const agent = p.response.agent
    if (agent !== undefined && !subagentIds.includes(agent)) subagentIds.push(agent)
  }
  const subagents = subagentIds.map((id) =>
    agentUsage(
      "subagent",
      id,
      state.agentTypes.get(id),
      byModel(priced.filter((p) => p.response.agent === id).map((p) => [p.model, p.figures]))
    )
  )
  const rest = agentUsage("unattributed", undefined, undefined, { ...unattributed })
  const mainUsage = agentUsage("main", undefined, undefined, main)
  const models = byModel([mainUsage, ...subagents, rest].flatMap((a) => Object.entries(a.models)))
  return {
    ...F.sum(Object.values(models)),
    turns: 1,
    main: mainUsage,
    subagents,
    unattributed: rest,
    tools: priced.flatMap(toolShares),
    models
  }
}

/**
 * Closes the turn at its `result` (raw): the turn's `Usage`, and the state for the next turn.
 *
 * @internal
 */
export const settle = (state: State, result: Raw): { readonly usage: Usage; readonly state: State } => {
  const models = turnModels(state, result)
  const totalCost = optionalNum(result.total_cost_usd)
  const turnCost = totalCost === undefined ? 0 : Math.max(0, totalCost - (state.cumulative?.costUsd ?? 0))
  const responses = state.responses
  const names = models === undefined ? [] : Object.keys(models)
  // A response whose model the result does not list is counted under the result's only model.
  const modelOf = responses.map((r) =>
    models === undefined || r.model in models || names.length !== 1 ? r.model : names[0] ?? r.model
  )
  const hints = outputHints(responses, state, result)
  const output = outputs(responses, modelOf, models, hints)
  const { priced, unattributed } = price(responses, modelOf, output, models, turnCost)
  const usage = summarize(priced, unattributed, state)
  const cumulative = modelFigures(result.modelUsage)
  const next: State = {
    responses: [],
    streaming: new Map(),
    reported: new Map(),
    agentTypes: state.agentTypes,
    cumulative: cumulative === undefined && totalCost === undefined
      ? state.cumulative
      : { models: cumulative ?? state.cumulative?.models ?? {}, costUsd: totalCost ?? state.cumulative?.costUsd ?? 0 }
  }
  return { usage, state: next }
}

const mergeModels = (a: ModelFigures, b: ModelFigures): Record<string, F.Figures> =>
  byModel([...Object.entries(a), ...Object.entries(b)])

const mergeAgent = (a: AgentUsage, b: AgentUsage): AgentUsage =>
  agentUsage(a.agent, a.toolUseId, a.agentType ?? b.agentType, mergeModels(a.models, b.models))

const mergeBy = <A>(
  as: ReadonlyArray<A>,
  bs: ReadonlyArray<A>,
  key: (a: A) => string | undefined,
  merge: (a: A, b: A) => A
): Array<A> => {
  if (bs.length === 0) return as.slice()
  const out = as.slice()
  const at = new Map<string | undefined, number>()
  out.forEach((a, i) => at.set(key(a), i))
  for (const b of bs) {
    const k = key(b)
    const i = at.get(k)
    const a = i === undefined ? undefined : out[i]
    if (i === undefined || a === undefined) {
      at.set(k, out.length)
      out.push(b)
    } else {
      out[i] = merge(a, b)
    }
  }
  return out
}

const mergeTool = (a: ToolUsage, b: ToolUsage): ToolUsage => ({ ...a, ...F.add(a, b) })

/**
 * No spend: the identity of `combine`.
 *
 * @internal
 */
export const empty: Usage = {
  ...F.zero,
  turns: 0,
  main: agentUsage("main", undefined, undefined, {}),
  subagents: [],
  unattributed: agentUsage("unattributed", undefined, undefined, {}),
  tools: [],
  models: {}
}

/**
 * The spend of two stretches of a session together: figures added, a subagent or tool call
 * seen in both counted as one.
 *
 * @internal
 */
export const combine = (a: Usage, b: Usage): Usage => {
  const models = mergeModels(a.models, b.models)
  return {
    ...F.sum(Object.values(models)),
    turns: a.turns + b.turns,
    main: mergeAgent(a.main, b.main),
    subagents: mergeBy(a.subagents, b.subagents, (s) => s.toolUseId, mergeAgent),
    unattributed: mergeAgent(a.unattributed, b.unattributed),
    tools: mergeBy(a.tools, b.tools, (t) => t.toolUseId, mergeTool),
    models
  }
}
