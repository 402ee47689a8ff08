/**
 * The spend metrics of a settled turn: cost and tokens per agent and model.
 *
 * @internal
 */
import { Effect, Metric } from "effect"
import * as Telemetry from "../../Telemetry.js"
import type { AgentUsage, Usage } from "../../Usage.js"

const agentLabel = (agent: AgentUsage): string =>
  agent.agent === "subagent" ? agent.agentType ?? "subagent" : agent.agent

const KINDS = [
  ["input", "inputTokens"],
  ["output", "outputTokens"],
  ["cache_read", "cacheReadInputTokens"],
  ["cache_creation", "cacheCreationInputTokens"]
] as const

/**
 * Records turns' spend on `Telemetry.agentCostUsd` and `Telemetry.agentTokens`, with the tagged
 * counters made once per label set.
 *
 * @internal
 */
export const recorder = (): (usage: Usage) => Effect.Effect<void> => {
  const counters = new Map<string, Metric.Metric.Counter<number>>()
  const counter = (base: Metric.Metric.Counter<number>, tags: ReadonlyArray<readonly [string, string]>) => {
    const key = `${base === Telemetry.agentCostUsd ? "cost" : "tokens"}\u0000${
      tags.map((t) => t.join("=")).join("\u0000")
    }`
    let found = counters.get(key)
    if (found === undefined) {
      found = tags.reduce((m, [k, v]) => m.pipe(Metric.tagged(k, v)), base)
      counters.set(key, found)
    }
    return found
  }
  return (usage) =>
    Effect.forEach(
      [usage.main, ...usage.subagents, usage.unattributed].flatMap((agent) =>
        Object.entries(agent.models).map(([model, spend]) => ({ agent: agentLabel(agent), model, spend }))
      ),
      ({ agent, model, spend }) =>
        Effect.zipRight(
          Metric.incrementBy(counter(Telemetry.agentCostUsd, [["agent", agent], ["model", model]]), spend.costUsd),
          Effect.forEach(
            KINDS,
            ([kind, field]) =>
              Metric.incrementBy(
                counter(Telemetry.agentTokens, [["agent", agent], ["model", model], ["kind", kind]]),
                spend[field]
              ),
            { discard: true }
          )
        ),
      { discard: true }
    )
}
