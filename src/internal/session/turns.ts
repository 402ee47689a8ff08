// Turns, for telemetry: a span and the turn metrics from each prompt to its `result`. The reader
// reports results whether or not anyone consumes the messages, so a turn is measured even when
// its messages are never read.
import {
  Clock,
  Context,
  Effect,
  Exit,
  FiberRef,
  Metric,
  Option,
  Predicate,
  type Scope,
  Stream,
  SubscriptionRef,
  type Tracer
} from "effect"
import type { ControlChannelShape } from "../../services/ControlChannel.js"
import * as Telemetry from "../../Telemetry.js"
import type { Usage } from "../../Usage.js"
import * as Drain from "../control/drain.js"
import * as Spend from "../usage/metrics.js"
import { settledFor } from "../usage/tally.js"
import * as Fold from "../usage/fold.js"

interface Started {
  readonly at: bigint
  readonly span: Tracer.Span
}

const numberAt = (record: unknown, ...path: ReadonlyArray<string>): number | undefined => {
  let value: unknown = record
  for (const key of path) value = Predicate.isRecord(value) ? value[key] : undefined
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

/**
 * The session's running turn, for spans made outside the turn's fiber: the control channel's
 * inbound requests (hooks, permissions, tool calls) are answered by fibers of the reader, whose
 * span is the session's; they look the turn up here to sit under it. `ClaudeAgent.session`
 * provides one to both the channel and `AgentSession.make`; without it they sit under the session.
 */
export class CurrentTurn extends Context.Tag("effect-claude-agent/internal/CurrentTurn")<
  CurrentTurn,
  { span: Tracer.Span | undefined }
>() {}

/** A fresh, empty `CurrentTurn` cell. */
export const makeCurrentTurn = (): Context.Tag.Service<CurrentTurn> => ({ span: undefined })

/**
 * The parent of the turns started in its scope, instead of the session's span: set by a caller
 * that lends one session to many users (a keyed pool session), so each use's turns sit in that
 * use's trace. The session's span is then linked from the turn.
 */
export const turnParent: FiberRef.FiberRef<Option.Option<Tracer.AnySpan>> = FiberRef.unsafeMake(
  Option.none<Tracer.AnySpan>()
)

const succeeded = Telemetry.turns.pipe(Metric.tagged("outcome", "success"))
const failed = Telemetry.turns.pipe(Metric.tagged("outcome", "error"))

/**
 * Starts following the session's turns in the current scope. `started` opens a turn; each `result` closes the oldest open one. A prompt the CLI
 * merged into a running turn leaves its turn open until a later result or the end of the session.
 */
export const track = (
  control: ControlChannelShape,
  running: Context.Tag.Service<CurrentTurn> = makeCurrentTurn()
): Effect.Effect<{ readonly started: Effect.Effect<void>; readonly usage: Effect.Effect<Usage> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Called inside `AgentSession.make`'s own span: turns belong to that span's parent, the session.
    const current = yield* Effect.currentSpan.pipe(Effect.option)
    const parent = Option.flatMap(current, (span) => Option.orElse(span.parent, () => current))
    const open: Array<Started> = []
    // The oldest open turn is the one the CLI is running.
    const opened = () => {
      running.span = open[0]?.span
    }

    // The session's spend as of the results seen here, and how many that is.
    const spent = yield* SubscriptionRef.make({ seen: 0, usage: Fold.empty })

    const finish = (result: { readonly [key: string]: unknown }) =>
      Effect.gen(function*() {
        const settled = settledFor(result)
        if (settled !== undefined) yield* Spend.record(settled.turn)
        yield* SubscriptionRef.update(spent, (s) => ({ seen: s.seen + 1, usage: settled?.session ?? s.usage }))
        const now = yield* Clock.currentTimeNanos
        const isError = result.is_error === true
        const cost = numberAt(result, "total_cost_usd")
        const input = numberAt(result, "usage", "input_tokens")
        const output = numberAt(result, "usage", "output_tokens")
        yield* Metric.increment(isError ? failed : succeeded)
        // The CLI's `total_cost_usd` is the session's so far: the turn's own cost is its `Usage`'s.
        const turnCost = settled?.turn.costUsd ?? cost
        if (turnCost !== undefined) yield* Metric.incrementBy(Telemetry.costUsd, turnCost)
        if (input !== undefined) yield* Metric.incrementBy(Telemetry.inputTokens, input)
        if (output !== undefined) yield* Metric.incrementBy(Telemetry.outputTokens, output)
        const turn = open.shift()
        opened()
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
    // Results the channel had counted before this subscription are not this tracker's to wait for.
    const before = (yield* control.runState).results
    // A pull loop rather than `Stream.runForEach`: its sink channel is set up once per session and
    // costs more than the loop (see ../control/drain.ts).
    yield* Drain.forEachChunk(results, (chunk) => Effect.forEach(chunk, finish, { discard: true })).pipe(
      Effect.forkScoped
    )
    // Turns still open when the session closes end with it.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Clock.currentTimeNanos, (now) =>
        Effect.sync(() => {
          for (const turn of open.splice(0)) {
            turn.span.attribute("claude.turn.unfinished", true)
            turn.span.end(now, Exit.void)
          }
          opened()
        }))
    )

    const started = Effect.gen(function*() {
      const at = yield* Clock.currentTimeNanos
      const lent = yield* FiberRef.get(turnParent)
      const span = yield* Effect.makeSpan("AgentSession.turn", {
        kind: "client",
        ...(Option.isSome(lent)
          ? {
            parent: lent.value,
            ...(Option.isSome(parent) ? { links: [{ _tag: "SpanLink", span: parent.value, attributes: {} }] } : {})
          }
          : Option.isSome(parent)
          ? { parent: parent.value }
          : {})
      })
      open.push({ at, span })
      opened()
    })
    // Up to date with every result the reader has seen: the tracker takes them asynchronously.
    const usage = Effect.gen(function*() {
      const target = (yield* control.runState).results - before
      const now = yield* SubscriptionRef.get(spent)
      if (now.seen >= target) return now.usage
      const caughtUp = spent.changes.pipe(
        Stream.filter((s) => s.seen >= target),
        Stream.runHead,
        Effect.map(Option.getOrElse(() => now))
      )
      const ended = Effect.zipRight(Effect.ignore(control.closed), SubscriptionRef.get(spent))
      return (yield* Effect.raceFirst(caughtUp, ended)).usage
    })
    return { started, usage }
  })
