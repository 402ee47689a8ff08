/**
 * Spans in a test: a tracer that keeps every span made under it, so a test can assert the span
 * tree the SDK builds (session → turn → tool call, hook, permission) without an OpenTelemetry
 * exporter.
 *
 * @since 0.1.0
 */
import type { Effect, Tracer } from "effect"
import * as SpanTree from "../SpanTree.js"

/**
 * What `make` returns: the tracer to run code under, and the spans it has made so far (a live
 * array, in the order the spans started; read `status` to see which ended).
 *
 * @example
 * ```ts
 * import { SpanRecorder } from "effect-claude-agent/testing"
 *
 * const names = (recorder: SpanRecorder.SpanRecorder) => recorder.spans.map((span) => span.name)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SpanRecorder {
  readonly tracer: Tracer.Tracer
  readonly spans: ReadonlyArray<Tracer.Span>
}

/**
 * A recorder over the current tracer: spans are still made (and exported) by it, and also kept.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SpanRecorder } from "effect-claude-agent/testing"
 *
 * const program = Effect.gen(function*() {
 *   const recorder = yield* SpanRecorder.make
 *   yield* Effect.void.pipe(Effect.withSpan("work"), Effect.withTracer(recorder.tracer))
 *   return recorder.spans.map((span) => span.name) // ["work"]
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<SpanRecorder> = SpanTree.record
