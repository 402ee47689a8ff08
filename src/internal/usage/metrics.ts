/**
 * The spend metrics of a settled turn: cost and tokens per agent and model.
 *
 * @internal
 */
import type { MetricLabel } from "effect"
import * as Telemetry from "../../Telemetry.js"
import { type Tagged, tagged } from "../telemetry/metrics.js"
import type { AgentUsage, Spend, Usage } from "../../Usage.js"

const agentLabel = (agent: AgentUsage): string =>
  agent.agent === "subagent" ? agent.agentType ?? "subagent" : agent.agent

const KINDS = [
  ["input", "inputTokens"],
  ["output", "outputTokens"],
  ["cache_read", "cacheReadInputTokens"],
  ["cache_creation", "cacheCreationInputTokens"]
] as const

interface Counters {
  readonly cost: Tagged<number>
  readonly tokens: ReadonlyArray<Tagged<number>>
}

// The tagged counters of one (agent, model), made once per process: the labels are few (agent
// types × models).
const made = new Map<string, Counters>()

const countersFor = (agent: string, model: string): Counters => {
  const key = `${agent}\u0000${model}`
  let found = made.get(key)
  if (found === undefined) {
    const cost = tagged(Telemetry.agentCostUsd, [["agent", agent], ["model", model]])
    const tokens = KINDS.map(([kind]) =>
      tagged(Telemetry.agentTokens, [["agent", agent], ["model", model], ["kind", kind]])
    )
    found = { cost, tokens }
    made.set(key, found)
  }
  return found
}

const recordOne = (
  agent: string,
  model: string,
  spend: Spend,
  labels: ReadonlyArray<MetricLabel.MetricLabel>
): void => {
  const counters = countersFor(agent, model)
  if (spend.costUsd !== 0) counters.cost.update(spend.costUsd, labels)
  KINDS.forEach(([, field], i) => {
    const counter = counters.tokens[i]
    if (spend[field] !== 0 && counter !== undefined) counter.update(spend[field], labels)
  })
}

/**
 * Records a turn's spend on `Telemetry.agentCostUsd` and `Telemetry.agentTokens`, with the fiber's
 * metric labels (`FiberRef.currentMetricLabels`, as `Metric.incrementBy` reads them), in place.
 *
 * @internal
 */
export const record = (usage: Usage, labels: ReadonlyArray<MetricLabel.MetricLabel>): void => {
  for (const agent of [usage.main, ...usage.subagents, usage.unattributed]) {
    const label = agentLabel(agent)
    for (const [model, spend] of Object.entries(agent.models)) recordOne(label, model, spend, labels)
  }
}
