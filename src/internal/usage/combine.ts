/**
 * Usage summaries put together: per agent and model, and two stretches of spend as one.
 *
 * @internal
 */
import type { AgentUsage, ToolUsage, Usage } from "../../Usage.js"
import * as F from "./figures.js"
import type { ModelFigures } from "./fold.js"

/** Figures summed per model. @internal */
export const byModel = (entries: Iterable<readonly [string, F.Figures]>): Record<string, F.Figures> => {
  const out: Record<string, F.Figures> = {}
  for (const [model, figures] of entries) out[model] = F.add(out[model] ?? F.zero, figures)
  return out
}

/** An agent's summary from its figures per model. @internal */
export const agentUsage = (
  agent: AgentUsage["agent"],
  toolUseId: string | undefined,
  agentType: string | undefined,
  models: Record<string, F.Figures>
): AgentUsage => F.withFigures(F.sum(Object.values(models)), { agent, toolUseId, agentType, models })

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
  return F.withFigures(F.sum(Object.values(models)), {
    turns: a.turns + b.turns,
    main: mergeAgent(a.main, b.main),
    subagents: mergeBy(a.subagents, b.subagents, (s) => s.toolUseId, mergeAgent),
    unattributed: mergeAgent(a.unattributed, b.unattributed),
    tools: mergeBy(a.tools, b.tools, (t) => t.toolUseId, mergeTool),
    models
  })
}
