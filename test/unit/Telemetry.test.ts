// Spans and metrics of a session over the fake CLI (a mock transport), recorded by an in-memory
// tracer: what any @effect/opentelemetry exporter would receive.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, Stream, Tracer } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Telemetry from "../../src/Telemetry.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const stopInput = { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }

const recordingTracer = Effect.map(Effect.tracer, (base) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = base.span(name, parent, context, links, startTime, kind, options)
      spans.push(span)
      return span
    },
    context: base.context
  })
  return { spans, tracer }
})

const count = (metric: Metric.Metric.Counter<number>) => Effect.map(Metric.value(metric), (state) => state.count)

describe("Telemetry (fake CLI)", () => {
  it.effect("a query records session → turn and session → hook spans, and the turn, token, cost and tool metrics", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      const before = {
        sessions: yield* count(Telemetry.sessionsStarted),
        turns: yield* count(Telemetry.turns.pipe(Metric.tagged("outcome", "success"))),
        input: yield* count(Telemetry.inputTokens),
        cost: yield* count(Telemetry.costUsd),
        bash: yield* count(Telemetry.toolCalls.pipe(Metric.tagged("tool", "Bash"))),
        hooks: (yield* Metric.value(Telemetry.callbackDuration.pipe(Metric.tagged("subtype", "hook_callback")))).count
      }
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (message, cli) =>
          Effect.gen(function*() {
            yield* cli.emit({
              type: "assistant",
              message: {
                id: "msg_1",
                type: "message",
                role: "assistant",
                model: "claude-fake-1",
                content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }],
                stop_reason: null,
                stop_sequence: null,
                usage: { input_tokens: 1, output_tokens: 1 }
              },
              parent_tool_use_id: null,
              session_id: cli.sessionId,
              uuid: "00000000-0000-4000-8000-0000000000aa"
            })
            yield* cli.request({ subtype: "hook_callback", callback_id: "hook_0", input: stopInput }, "req-hook")
            yield* FakeCli.echoTurn(message, cli)
          })
      })
      yield* ClaudeAgent.query("hello", { model: "claude-fake-1", hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] } })
        .pipe(Stream.runDrain, Effect.provide(layer), Effect.withTracer(tracer))

      const session = spans.find((s) => s.name === "ClaudeAgent.session")
      const turn = spans.find((s) => s.name === "AgentSession.turn")
      const hook = spans.find((s) => s.name === "ControlChannel.hook_callback")
      expect(session?.attributes.get("claude.model")).toBe("claude-fake-1")
      expect(session?.status._tag).toBe("Ended")
      const parentOf = (span: Tracer.Span | undefined) => span?.parent._tag === "Some" ? span.parent.value.spanId : undefined
      expect(parentOf(turn)).toBe(session?.spanId)
      expect(parentOf(hook)).toBe(session?.spanId)
      expect(turn?.status._tag).toBe("Ended")
      expect(turn?.attributes.get("claude.result.subtype")).toBe("success")
      expect(turn?.attributes.get("claude.result.cost_usd")).toBe(0.001)
      expect(turn?.attributes.get("claude.usage.input_tokens")).toBe(10)

      expect((yield* count(Telemetry.sessionsStarted)) - before.sessions).toBe(1)
      expect((yield* count(Telemetry.turns.pipe(Metric.tagged("outcome", "success")))) - before.turns).toBe(1)
      expect((yield* count(Telemetry.inputTokens)) - before.input).toBe(10)
      expect((yield* count(Telemetry.costUsd)) - before.cost).toBeCloseTo(0.001)
      expect((yield* count(Telemetry.toolCalls.pipe(Metric.tagged("tool", "Bash")))) - before.bash).toBe(1)
      const hooks = (yield* Metric.value(Telemetry.callbackDuration.pipe(Metric.tagged("subtype", "hook_callback")))).count
      expect(hooks - before.hooks).toBe(1)
    }))

  it.effect("the CLI gets the session span's context as TRACEPARENT", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      let env: Readonly<Record<string, string>> = {}
      const agent = ClaudeAgent.make((launch) => {
        env = launch.env
        return Effect.map(FakeCli.make(), ({ transport }) => transport)
      })
      yield* agent.query("hi").pipe(Stream.runDrain, Effect.withTracer(tracer))
      const session = spans.find((s) => s.name === "ClaudeAgent.session")
      expect(env.TRACEPARENT).toBe(`00-${session?.traceId}-${session?.spanId}-01`)
    }))
})
