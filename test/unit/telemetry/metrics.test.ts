// Metrics with fixed tags (`internal/telemetry/metrics.ts`'s `tagged`): the same series as
// `Metric.tagged` applied tag by tag, with and without the fiber's metric labels.
import { describe, expect, it } from "@effect/vitest"
import { Effect, FiberRef, Metric, MetricBoundaries, MetricLabel } from "effect"
import { tagged } from "../../../src/internal/telemetry/metrics.js"

describe("metrics with fixed tags", () => {
  it.effect("update the series Metric.tagged names, the fiber's labels after the tags, none repeated", () =>
    Effect.gen(function*() {
      const counter = Metric.counter(`fixed_tags_${Math.random()}`)
      const fixed = tagged(counter, [["agent", "main"], ["model", "m1"]])
      const viaTagged = counter.pipe(Metric.tagged("agent", "main"), Metric.tagged("model", "m1"))
      fixed.update(2, [])
      fixed.update(3, [])
      expect((yield* Metric.value(viaTagged)).count).toBe(5)

      // With the fiber's labels: the same series as `Metric.tagged` under `Effect.tagMetrics`.
      const labels = [MetricLabel.make("tenant", "t1"), MetricLabel.make("model", "m1")]
      fixed.update(7, labels)
      fixed.update(1, labels)
      const underLabels = yield* Metric.value(viaTagged).pipe(
        Effect.locally(FiberRef.currentMetricLabels, labels)
      )
      expect(underLabels.count).toBe(8)
      // The untagged series and the one without the fiber's labels are untouched by those.
      expect((yield* Metric.value(viaTagged)).count).toBe(5)
      expect((yield* Metric.value(counter)).count).toBe(0)
    }))

  it.effect("a histogram with several tags records into the series of the tags in order", () =>
    Effect.gen(function*() {
      const histogram = Metric.histogram(
        `fixed_tags_histogram_${Math.random()}`,
        MetricBoundaries.linear({ start: 0, width: 10, count: 3 })
      )
      const fixed = tagged(histogram, [["a", "1"], ["b", "2"], ["c", "3"]])
      for (const value of [1, 12, 25]) fixed.update(value, [])
      const state = yield* Metric.value(
        histogram.pipe(Metric.tagged("a", "1"), Metric.tagged("b", "2"), Metric.tagged("c", "3"))
      )
      expect(state.count).toBe(3)
      expect(state.sum).toBe(38)
    }))
})
