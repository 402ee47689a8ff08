/**
 * The GenAI metrics of a finished turn, tagged per the convention, and metrics with fixed tags
 * made once.
 *
 * @internal
 */
import { Array as Arr, type Metric, MetricLabel } from "effect"
import * as Telemetry from "../../Telemetry.js"
import type { Usage } from "../../Usage.js"
import * as GenAi from "./genai.js"

/**
 * A metric with tags fixed when it is made, updated in place with the fiber's metric labels.
 *
 * @internal
 */
export interface Tagged<In> {
  readonly update: (input: In, labels: ReadonlyArray<MetricLabel.MetricLabel>) => void
}

/**
 * `metric` with `tags` (in order), as `Metric.tagged` applied once per tag: the labels it is
 * updated with are the tags and then the fiber's labels, without repeats. A metric finds its hook
 * in a cache keyed by the labels array it is given, and `Metric.tagged` builds a new array at
 * every update (a union per tag), so each update of a metric with two tags or more made a
 * `MetricKey`, hashed it and looked it up in the registry (~3 µs each, a dozen per turn). Here
 * the array is the same for the same fiber labels.
 *
 * @internal
 */
export const tagged = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  tags: ReadonlyArray<readonly [key: string, value: string]>
): Tagged<In> => {
  const own = tags.map(([key, value]) => MetricLabel.make(key, value))
  const withLabels = new WeakMap<ReadonlyArray<MetricLabel.MetricLabel>, ReadonlyArray<MetricLabel.MetricLabel>>()
  const labelsFor = (labels: ReadonlyArray<MetricLabel.MetricLabel>) => {
    if (labels.length === 0) return own
    let all = withLabels.get(labels)
    if (all === undefined) {
      all = Arr.union(own, labels)
      withLabels.set(labels, all)
    }
    return all
  }
  return { update: (input, labels) => metric.unsafeUpdate(input, labelsFor(labels)) }
}

const made = new Map<string, Tagged<number>>()
const cached = (key: string, make: () => Tagged<number>): Tagged<number> => {
  let found = made.get(key)
  if (found === undefined) {
    found = make()
    made.set(key, found)
  }
  return found
}

const baseTags = (requestModel: string | undefined): Array<readonly [string, string]> => {
  const tags: Array<readonly [string, string]> = [[GenAi.OPERATION, GenAi.INVOKE_AGENT], [
    GenAi.PROVIDER,
    GenAi.ANTHROPIC
  ]]
  if (requestModel !== undefined) tags.push([GenAi.REQUEST_MODEL, requestModel])
  return tags
}

const tokens = (requestModel: string | undefined, model: string, type: "input" | "output") =>
  cached(
    `t\u0000${requestModel ?? ""}\u0000${model}\u0000${type}`,
    () =>
      tagged(Telemetry.genAiTokenUsage, [
        ...baseTags(requestModel),
        [GenAi.RESPONSE_MODEL, model],
        [GenAi.TOKEN_TYPE, type]
      ])
  )

const duration = (requestModel: string | undefined, errorType: string | undefined) =>
  cached(
    `d\u0000${requestModel ?? ""}\u0000${errorType ?? ""}`,
    () =>
      tagged(
        Telemetry.genAiOperationDuration,
        errorType === undefined ? baseTags(requestModel) : [...baseTags(requestModel), [GenAi.ERROR_TYPE, errorType]]
      )
  )

/**
 * Records a turn's duration and, when its spend is known, its tokens per model, with the fiber's
 * metric labels (`FiberRef.currentMetricLabels`, as `Metric.update` reads them), in place.
 *
 * @internal
 */
export const recordTurn = (
  usage: Usage | undefined,
  seconds: number | undefined,
  requestModel: string | undefined,
  errorType: string | undefined,
  labels: ReadonlyArray<MetricLabel.MetricLabel>
): void => {
  if (seconds !== undefined) duration(requestModel, errorType).update(seconds, labels)
  if (usage === undefined) return
  for (const model in usage.models) {
    const spend = usage.models[model]
    if (spend === undefined) continue
    tokens(requestModel, model, "input").update(GenAi.inputTokens(spend), labels)
    tokens(requestModel, model, "output").update(spend.outputTokens, labels)
  }
}
