// Turns, for telemetry: a span and the turn metrics from each prompt to its `result`. The reader
// reports results whether or not anyone consumes the messages, so a turn is measured even when
// its messages are never read.
import { Clock, Effect, Exit, Metric, Option, Predicate, type Scope, Stream, type Tracer } from "effect"
import type { ControlChannelShape } from "../services/ControlChannel.js"
import * as Telemetry from "../Telemetry.js"

interface Started {
  readonly at: bigint
  readonly span: Tracer.Span
}

const numberAt = (record: unknown, ...path: ReadonlyArray<string>): number | undefined => {
  let value: unknown = record
  for (const key of path) value = Predicate.isRecord(value) ? value[key] : undefined
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const succeeded = Telemetry.turns.pipe(Metric.tagged("outcome", "success"))
const failed = Telemetry.turns.pipe(Metric.tagged("outcome", "error"))

/**
 * Starts following the session's turns in the current scope. `started` opens a turn; each `result` closes the oldest open one. A prompt the CLI
 * merged into a running turn leaves its turn open until a later result or the end of the session.
 */
export const track = (
  control: ControlChannelShape
): Effect.Effect<{ readonly started: Effect.Effect<void> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Called inside `AgentSession.make`'s own span: turns belong to that span's parent, the session.
    const current = yield* Effect.currentSpan.pipe(Effect.option)
    const parent = Option.flatMap(current, (span) => Option.orElse(span.parent, () => current))
    const open: Array<Started> = []

    const finish = (result: { readonly [key: string]: unknown }) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeNanos
        const isError = result.is_error === true
        const cost = numberAt(result, "total_cost_usd")
        const input = numberAt(result, "usage", "input_tokens")
        const output = numberAt(result, "usage", "output_tokens")
        yield* Metric.increment(isError ? failed : succeeded)
        if (cost !== undefined) yield* Metric.incrementBy(Telemetry.costUsd, cost)
        if (input !== undefined) yield* Metric.incrementBy(Telemetry.inputTokens, input)
        if (output !== undefined) yield* Metric.incrementBy(Telemetry.outputTokens, output)
        const turn = open.shift()
        if (turn === undefined) return
        yield* Metric.update(Telemetry.turnDuration, Number(now - turn.at) / 1e6)
        const attributes: Record<string, unknown> = {
          "claude.result.subtype": result.subtype,
          "claude.result.is_error": isError,
          "claude.result.stop_reason": result.stop_reason,
          "claude.result.num_turns": result.num_turns,
          "claude.result.cost_usd": cost,
          "claude.usage.input_tokens": input,
          "claude.usage.output_tokens": output,
          "claude.session_id": result.session_id
        }
        for (const [key, value] of Object.entries(attributes)) {
          if (value !== undefined && value !== null) turn.span.attribute(key, value)
        }
        turn.span.end(now, isError ? Exit.fail(result.subtype) : Exit.void)
      })

    const results = yield* control.results
    yield* results.pipe(Stream.runForEach(finish), Effect.forkScoped)
    // Turns still open when the session closes end with it.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Clock.currentTimeNanos, (now) =>
        Effect.sync(() => {
          for (const turn of open.splice(0)) {
            turn.span.attribute("claude.turn.unfinished", true)
            turn.span.end(now, Exit.void)
          }
        }))
    )

    const started = Effect.gen(function*() {
      const at = yield* Clock.currentTimeNanos
      const span = yield* Effect.makeSpan("AgentSession.turn", {
        kind: "client",
        ...(Option.isSome(parent) ? { parent: parent.value } : {})
      })
      open.push({ at, span })
    })
    return { started }
  })
