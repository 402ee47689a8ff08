/**
 * Closing a turn at its `result`: output tokens no message reports exactly, each model's cost
 * split among the responses that used it, and the turn's `Usage`.
 *
 * @internal
 */
import type { ToolUsage, Usage } from "../../Usage.js"
import { agentUsage, byModel } from "./combine.js"
import * as F from "./figures.js"
import type { ModelFigures, Response, State } from "./fold.js"
import { isObject, num, optionalNum, type Raw } from "./raw.js"

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
      shown = F.add(shown, {
        inputTokens: r.inputTokens,
        outputTokens: 0,
        cacheReadInputTokens: r.cacheReadInputTokens,
        cacheCreationInputTokens: r.cacheCreationInputTokens,
        costUsd: 0
      })
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
  return F.withFigures(F.sum(Object.values(models)), {
    turns: 1,
    main: mainUsage,
    subagents,
    unattributed: rest,
    tools: priced.flatMap(toolShares),
    models
  })
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
    index: new Map(),
    touched: { index: -1 },
    streaming: new Map(),
    reported: new Map(),
    agentTypes: state.agentTypes,
    cumulative: cumulative === undefined && totalCost === undefined
      ? state.cumulative
      : { models: cumulative ?? state.cumulative?.models ?? {}, costUsd: totalCost ?? state.cumulative?.costUsd ?? 0 }
  }
  return { usage, state: next }
}
