/**
 * The GenAI metrics of a finished turn, tagged per the convention. Tagged metrics are made once
 * per set of tags: a turn records a few of them.
 *
 * @internal
 */
import { Metric, type MetricLabel } from "effect"
import * as Telemetry from "../../Telemetry.js"
import type { Usage } from "../../Usage.js"
import * as GenAi from "./genai.js"

type Histogram = typeof Telemetry.genAiTokenUsage

const base = (metric: Histogram, requestModel: string | undefined): Histogram => {
  const tagged = metric.pipe(
    Metric.tagged(GenAi.OPERATION, GenAi.INVOKE_AGENT),
    Metric.tagged(GenAi.PROVIDER, GenAi.ANTHROPIC)
  )
  return requestModel === undefined ? tagged : Metric.tagged(tagged, GenAi.REQUEST_MODEL, requestModel)
}

const made = new Map<string, Histogram>()
const cached = (key: string, make: () => Histogram): Histogram => {
  let found = made.get(key)
  if (found === undefined) {
    found = make()
    made.set(key, found)
  }
  return found
}

const tokens = (requestModel: string | undefined, model: string, type: "input" | "output") =>
  cached(
    `t\u0000${requestModel ?? ""}\u0000${model}\u0000${type}`,
    () =>
      base(Telemetry.genAiTokenUsage, requestModel).pipe(
        Metric.tagged(GenAi.RESPONSE_MODEL, model),
        Metric.tagged(GenAi.TOKEN_TYPE, type)
      )
  )

const duration = (requestModel: string | undefined, errorType: string | undefined) =>
  cached(`d\u0000${requestModel ?? ""}\u0000${errorType ?? ""}`, () => {
    const metric = base(Telemetry.genAiOperationDuration, requestModel)
    return errorType === undefined ? metric : Metric.tagged(metric, GenAi.ERROR_TYPE, errorType)
  })

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
  if (seconds !== undefined) duration(requestModel, errorType).unsafeUpdate(seconds, labels)
  if (usage === undefined) return
  for (const model in usage.models) {
    const spend = usage.models[model]
    if (spend === undefined) continue
    tokens(requestModel, model, "input").unsafeUpdate(GenAi.inputTokens(spend), labels)
    tokens(requestModel, model, "output").unsafeUpdate(spend.outputTokens, labels)
  }
}
