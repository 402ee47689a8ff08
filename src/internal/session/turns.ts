// Turns, for telemetry: an `invoke_agent` span and the turn metrics from each prompt to its
// `result`. The reader reports results whether or not anyone consumes the messages, so a turn is
// measured even when its messages are never read.
import {
  Clock,
  Context,
  DefaultServices,
  Effect,
  Exit,
  FiberRef,
  type MetricLabel,
  Option,
  Predicate,
  Scope,
  Stream,
  SubscriptionRef,
  Tracer
} from "effect"
import type { ControlChannelShape } from "../../services/ControlChannel.js"
import * as Telemetry from "../../Telemetry.js"
import type { Usage } from "../../Usage.js"
import * as Drain from "../control/drain.js"
import * as Spend from "../usage/metrics.js"
import { settledFor } from "../usage/tally.js"
import * as Fold from "../usage/fold.js"
import { AgentSpans } from "../telemetry/agentSpans.js"
import * as GenAi from "../telemetry/genai.js"
import * as GenAiMetrics from "../telemetry/metrics.js"

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
 * span is the session's; they look the turn up here to sit under it, or under the tool call they
 * are about. `ClaudeAgent.session` provides one to both the channel and `AgentSession.make`;
 * without it they sit under the session.
 */
export class CurrentTurn extends Context.Tag("effect-claude-agent/internal/CurrentTurn")<
  CurrentTurn,
  {
    span: Tracer.Span | undefined
    /** The main agent's `gen_ai.agent.name`. */
    readonly agentName: string
    /** The model the session asks for, when it names one. */
    readonly requestModel: string | undefined
    /** The subagent and tool call spans, fed by the reader: set only while a tracer records. */
    agentSpans: AgentSpans | undefined
    /** Set by the control channel whose reader hands this cell the session's results. */
    fed: boolean
    /** What the reader runs on the results of a chunk, before it counts them in the run state. */
    onResults: ((results: ReadonlyArray<{ readonly [key: string]: unknown }>) => Effect.Effect<void>) | undefined
  }
>() {}

/** A fresh, empty `CurrentTurn` cell for a session with these options. */
export const makeCurrentTurn = (
  options: { readonly agent?: string | undefined; readonly model?: string | undefined } = {}
): Context.Tag.Service<CurrentTurn> => ({
  span: undefined,
  agentName: options.agent ?? GenAi.DEFAULT_AGENT_NAME,
  requestModel: options.model,
  agentSpans: undefined,
  fed: false,
  onResults: undefined
})

/**
 * The parent of the turns started in its scope, instead of the session's span: set by a caller
 * that lends one session to many users (a keyed pool session), so each use's turns sit in that
 * use's trace. The session's span is then linked from the turn.
 */
export const turnParent: FiberRef.FiberRef<Option.Option<Tracer.AnySpan>> = FiberRef.unsafeMake(
  Option.none<Tracer.AnySpan>()
)

const turnName = (running: Context.Tag.Service<CurrentTurn>): string => `${GenAi.INVOKE_AGENT} ${running.agentName}`

// A turn's attributes from its start: what is invoked, and how.
const turnAttributes = (running: Context.Tag.Service<CurrentTurn>): Record<string, unknown> => {
  const attributes: Record<string, unknown> = {
    [GenAi.OPERATION]: GenAi.INVOKE_AGENT,
    [GenAi.PROVIDER]: GenAi.ANTHROPIC,
    [GenAi.SYSTEM]: GenAi.ANTHROPIC,
    [GenAi.AGENT_NAME]: running.agentName
  }
  if (running.requestModel !== undefined) attributes[GenAi.REQUEST_MODEL] = running.requestModel
  return attributes
}

const succeeded = GenAiMetrics.tagged(Telemetry.turns, [["outcome", "success"]])
const failed = GenAiMetrics.tagged(Telemetry.turns, [["outcome", "error"]])

// Effect's default tracer: its spans go nowhere, so the spans of each message are not worth making.
const defaultTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

// The subagent and tool call spans, when the fiber's tracer records spans.
const makeAgentSpans = (running: Context.Tag.Service<CurrentTurn>, fallback: Tracer.AnySpan | undefined) =>
  Effect.gen(function*() {
    const tracer = yield* Effect.tracer
    if (tracer === defaultTracer || !(yield* FiberRef.get(FiberRef.currentTracerEnabled))) return undefined
    const clock = yield* Effect.clock
    const timing = yield* FiberRef.get(FiberRef.currentTracerTimingEnabled)
    return new AgentSpans({
      tracer,
      context: Context.empty(),
      now: timing ? () => clock.unsafeCurrentTimeNanos() : () => BigInt(0),
      turn: () => running.span,
      fallback
    })
  })

// The GenAI attributes of a turn's `result`, besides its `claude.*` ones.
const genAiAttributes = (span: Tracer.Span, result: { readonly [key: string]: unknown }, turn: Usage | undefined) => {
  if (typeof result.session_id === "string") span.attribute(GenAi.CONVERSATION_ID, result.session_id)
  if (typeof result.uuid === "string") span.attribute(GenAi.RESPONSE_ID, result.uuid)
  if (typeof result.stop_reason === "string") span.attribute(GenAi.FINISH_REASONS, [result.stop_reason])
  if (turn === undefined) return
  GenAi.setSpend(span, turn)
  const model = GenAi.mainModel(turn.main.models) ?? GenAi.mainModel(turn.models)
  if (model !== undefined) span.attribute(GenAi.RESPONSE_MODEL, model)
}

/**
 * Starts following the session's turns in the current scope. `started` opens a turn; each
 * `result` closes the oldest open one. A prompt the CLI merged into a running turn leaves its turn
 * open until a later result or the end of the session, which ends it as failed.
 *
 * Each turn is a GenAI `invoke_agent` span of kind client: the agent runs in the CLI's process,
 * which the library drives. With a `running` cell (the channel's), and when the program's tracer
 * records spans, the reader also hands the session's messages to an `AgentSpans` for the subagent
 * and tool call spans under the turns; with Effect's default tracer no message is looked at.
 */
export const track = (
  control: ControlChannelShape,
  provided?: Context.Tag.Service<CurrentTurn>
): Effect.Effect<{ readonly started: Effect.Effect<void>; readonly usage: Effect.Effect<Usage> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const running = provided ?? makeCurrentTurn()
    // Called inside `AgentSession.make`'s own span: turns belong to that span's parent, the session.
    const current = yield* Effect.currentSpan.pipe(Effect.option)
    const parent = Option.flatMap(current, (span) => Option.orElse(span.parent, () => current))
    const open: Array<Started> = []
    // The oldest open turn is the one the CLI is running.
    const opened = () => {
      running.span = open[0]?.span
    }
    const agentSpans = provided === undefined
      ? undefined
      : yield* makeAgentSpans(running, Option.getOrUndefined(parent))
    running.agentSpans = agentSpans

    // The session's spend as of the results seen here, and how many that is.
    let spent = { seen: 0, usage: Fold.empty }
    // Followed by `usage` when the tracker takes results on a fiber of its own and may lag behind
    // the run state; fed by the reader, it never does.
    const published = running.fed ? undefined : yield* SubscriptionRef.make(spent)

    // The tracker's clock, whichever fiber finishes a turn or ends the spans.
    const clock = yield* Effect.clock
    // A result's metrics and span, in plain code: the metrics are updated in place with the
    // labels `Metric.update` would read from the fiber (a dozen effects per turn otherwise).
    const finishNow = (result: { readonly [key: string]: unknown }, labels: ReadonlyArray<MetricLabel.MetricLabel>) => {
      const settled = settledFor(result)
      if (settled !== undefined) Spend.record(settled.turn, labels)
      spent = { seen: spent.seen + 1, usage: settled?.session ?? spent.usage }
      const now = clock.unsafeCurrentTimeNanos()
      const isError = result.is_error === true
      const cost = numberAt(result, "total_cost_usd")
      const input = numberAt(result, "usage", "input_tokens")
      const output = numberAt(result, "usage", "output_tokens")
      ;(isError ? failed : succeeded).update(1, labels)
      // The CLI's `total_cost_usd` is the session's so far: the turn's own cost is its `Usage`'s.
      const turnCost = settled?.turn.costUsd ?? cost
      if (turnCost !== undefined) Telemetry.costUsd.unsafeUpdate(turnCost, labels)
      if (input !== undefined) Telemetry.inputTokens.unsafeUpdate(input, labels)
      if (output !== undefined) Telemetry.outputTokens.unsafeUpdate(output, labels)
      const errorType = isError ? (typeof result.subtype === "string" ? result.subtype : "_OTHER") : undefined
      const prompted = open.shift()
      opened()
      const ms = prompted === undefined ? undefined : Number(now - prompted.at) / 1e6
      const seconds = ms === undefined ? undefined : ms / 1000
      GenAiMetrics.recordTurn(settled?.turn, seconds, running.requestModel, errorType, labels)
      if (ms !== undefined) Telemetry.turnDuration.unsafeUpdate(ms, labels)
      // A turn the CLI ran on its own is a span too where spans are recorded, so that the turns'
      // spans add up to the session's spend; its calls sit under the session.
      const turn = prompted?.span ?? agentSpans?.unprompted(result, turnName(running), Option.getOrUndefined(parent))
      if (turn === undefined) return
      if (prompted === undefined) {
        for (const [key, value] of Object.entries(turnAttributes(running))) turn.attribute(key, value)
        turn.attribute("claude.turn.prompted", false)
      }
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
        if (value !== undefined && value !== null) turn.attribute(key, value)
      }
      genAiAttributes(turn, result, settled?.turn)
      if (errorType !== undefined) turn.attribute(GenAi.ERROR_TYPE, errorType)
      turn.end(now, errorType === undefined ? Exit.void : Exit.fail(errorType))
    }
    const finish = (result: { readonly [key: string]: unknown }) =>
      Effect.flatMap(FiberRef.get(FiberRef.currentMetricLabels), (labels) => {
        finishNow(result, labels)
        // Published last: a `usage` that waits for this result sees its turn's metrics and span.
        return published === undefined ? Effect.void : SubscriptionRef.set(published, spent)
      })

    // Results the channel had counted before this point are not this tracker's to wait for.
    const before = (yield* control.runState).results
    if (running.fed) {
      // On the reader's fiber, before the run state counts them: no fiber or subscription per
      // session, and `usage` is up to date with the run state.
      running.onResults = (results) =>
        Effect.flatMap(FiberRef.get(FiberRef.currentMetricLabels), (labels) => {
          for (const result of results) finishNow(result, labels)
          return Effect.void
        })
    } else {
      // A pull loop rather than `Stream.runForEach`: its sink channel is set up once per session and
      // costs more than the loop (see ../control/drain.ts).
      yield* Drain.forEachChunk(yield* control.results, (chunk) => Effect.forEach(chunk, finish, { discard: true }))
        .pipe(Effect.forkScoped)
    }
    // Spans that will see no `result` end failed: when the CLI's connection fails, with its error's
    // tag, and otherwise when the session closes.
    const endOpen = (errorType: string) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeNanos()
        agentSpans?.close(errorType)
        for (const turn of open.splice(0)) {
          turn.span.attribute("claude.turn.unfinished", true)
          turn.span.attribute(GenAi.ERROR_TYPE, errorType)
          turn.span.end(now, Exit.fail(errorType))
        }
        opened()
      })
    // Results after the close are not this tracker's: the reader stops handing them over. The
    // scope's own finalizer: it reads nothing from the fiber's refs, which `Effect.addFinalizer`
    // would diff and patch around it.
    yield* Scope.addFinalizer(
      yield* Effect.scope,
      Effect.zipRight(Effect.sync(() => void (running.onResults = undefined)), endOpen(GenAi.ErrorType.sessionClosed))
    )
    if (agentSpans !== undefined) {
      yield* Effect.forkScoped(Effect.catchAll(control.closed, (error) => endOpen(error._tag)))
    }

    const started = Effect.gen(function*() {
      const at = yield* Clock.currentTimeNanos
      const lent = yield* FiberRef.get(turnParent)
      const span = yield* Effect.makeSpan(turnName(running), {
        kind: "client",
        captureStackTrace: false,
        attributes: turnAttributes(running),
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
    // Up to date with every result the reader has seen: a tracker on its own fiber may be behind.
    const usage = Effect.gen(function*() {
      const target = (yield* control.runState).results - before
      const now = spent
      if (now.seen >= target || published === undefined) return now.usage
      const caughtUp = published.changes.pipe(
        Stream.filter((s) => s.seen >= target),
        Stream.runHead,
        Effect.map(Option.getOrElse(() => now))
      )
      const ended = Effect.zipRight(Effect.ignore(control.closed), SubscriptionRef.get(published))
      return (yield* Effect.raceFirst(caughtUp, ended)).usage
    })
    return { started, usage }
  })
