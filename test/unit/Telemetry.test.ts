// Spans and metrics of a session over the fake CLI (a mock transport), recorded by an in-memory
// tracer: what any @effect/opentelemetry exporter would receive.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Metric, Schema, Stream, type Tracer } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionServices from "../../src/layers/SessionServices.js"
import { Transport } from "../../src/services/Transport.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as Telemetry from "../../src/Telemetry.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"

const stopInput = { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }

const recordingTracer = SpanRecorder.make

const count = (metric: Metric.Metric.Counter<number>) => Effect.map(Metric.value(metric), (state) => state.count)

describe("Telemetry (fake CLI)", () => {
  it.effect("a query records session → turn → hook spans, and the turn, token, cost and tool metrics", () =>
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
            yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stopInput }, "req-hook")
            yield* FakeCli.echoTurn(message, cli)
          })
      })
      yield* ClaudeAgent.query("hello", {
        model: "claude-fake-1",
        hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] }
      })
        .pipe(Stream.runDrain, Effect.provide(layer), Effect.withTracer(tracer))

      const session = spans.find((s) => s.name === "ClaudeAgent.session")
      const turn = spans.find((s) => s.name === "invoke_agent claude-code")
      const hook = spans.find((s) => s.name === "ControlChannel.hook_callback")
      expect(session?.attributes.get("claude.model")).toBe("claude-fake-1")
      expect(session?.status._tag).toBe("Ended")
      const parentOf = (span: Tracer.Span | undefined) =>
        span?.parent._tag === "Some" ? span.parent.value.spanId : undefined
      expect(parentOf(turn)).toBe(session?.spanId)
      expect(parentOf(hook)).toBe(turn?.spanId)
      expect(turn?.status._tag).toBe("Ended")
      expect(turn?.attributes.get("claude.result.subtype")).toBe("success")
      expect(turn?.attributes.get("claude.result.cost_usd")).toBe(0.001)
      expect(turn?.attributes.get("claude.usage.input_tokens")).toBe(10)

      expect((yield* count(Telemetry.sessionsStarted)) - before.sessions).toBe(1)
      expect((yield* count(Telemetry.turns.pipe(Metric.tagged("outcome", "success")))) - before.turns).toBe(1)
      expect((yield* count(Telemetry.inputTokens)) - before.input).toBe(10)
      expect((yield* count(Telemetry.costUsd)) - before.cost).toBeCloseTo(0.001)
      expect((yield* count(Telemetry.toolCalls.pipe(Metric.tagged("tool", "Bash")))) - before.bash).toBe(1)
      const hooks =
        (yield* Metric.value(Telemetry.callbackDuration.pipe(Metric.tagged("subtype", "hook_callback")))).count
      expect(hooks - before.hooks).toBe(1)
    }))

  it.effect("hook, permission and tool-call spans sit under the turn they happen in; between turns, under the session; the callbacks' own spans under them", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      const add = Tool.make("add", {
        description: "Adds",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        handler: ({ a, b }) => Effect.succeed(`${a + b}`).pipe(Effect.withSpan("user.tool"))
      })
      const callTool = {
        subtype: "mcp_message",
        server_name: "calc",
        message: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }
      }
      let turnNumber = 0
      let handle: FakeCli.FakeCliHandle | undefined
      const agent = ClaudeAgent.make({
        transport: Layer.scoped(
          Transport,
          Effect.suspend(() =>
            Effect.map(
              FakeCli.make({
                onUserMessage: (message, cli) =>
                  Effect.gen(function*() {
                    turnNumber++
                    yield* cli.requestRaw(
                      { subtype: "hook_callback", callback_id: "hook_0", input: stopInput },
                      `hook-${turnNumber}`
                    )
                    yield* cli.requestRaw(
                      {
                        subtype: "can_use_tool",
                        tool_name: "Bash",
                        input: { command: "ls" },
                        tool_use_id: `toolu_${turnNumber}`
                      },
                      `perm-${turnNumber}`
                    )
                    yield* cli.requestRaw(callTool, `tool-${turnNumber}`)
                    yield* FakeCli.echoTurn(message, cli)
                  })
              }),
              ({ cli, transport }) => {
                handle = cli
                return transport
              }
            )
          )
        )
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* agent.session({
          hooks: { Stop: [{ hooks: [() => Effect.succeed({}).pipe(Effect.withSpan("user.hook"))] }] },
          canUseTool: () => Effect.succeed({ behavior: "allow" as const }).pipe(Effect.withSpan("user.permission")),
          mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) }
        })
        for (const prompt of ["one", "two"]) {
          yield* session.send(prompt)
          yield* session.receiveResponse.pipe(Stream.runDrain)
        }
        // The turn ends when the reader has seen its result (another fiber): then nothing runs.
        yield* Effect.yieldNow().pipe(
          Effect.repeat({
            until: () =>
              spans.filter((s) => s.name === "invoke_agent claude-code" && s.status._tag === "Ended").length === 2
          })
        )
        if (handle !== undefined) {
          yield* handle.requestRaw(
            { subtype: "hook_callback", callback_id: "hook_0", input: stopInput },
            "hook-between"
          )
        }
      })).pipe(Effect.withTracer(tracer))

      const parentOf = (span: Tracer.Span | undefined) =>
        span?.parent._tag === "Some" ? span.parent.value.spanId : undefined
      const session = spans.find((s) => s.name === "ClaudeAgent.session")
      const turns = spans.filter((s) => s.name === "invoke_agent claude-code")
      expect(turns.length).toBe(2)
      for (const turn of turns) expect(parentOf(turn)).toBe(session?.spanId)
      const byRequest = (id: string) => spans.find((s) => s.attributes.get("control.request_id") === id)
      for (const [index, turn] of turns.entries()) {
        const n = index + 1
        expect(byRequest(`hook-${n}`)?.name).toBe("ControlChannel.hook_callback")
        expect(byRequest(`perm-${n}`)?.name).toBe("ControlChannel.can_use_tool")
        // A tool call's one span is the tool's.
        expect(byRequest(`tool-${n}`)?.name).toBe("Tool.add")
        expect(byRequest(`tool-${n}`)?.attributes.get("method")).toBe("tools/call")
        for (const id of [`hook-${n}`, `perm-${n}`, `tool-${n}`]) expect(parentOf(byRequest(id))).toBe(turn.spanId)
      }
      expect(parentOf(byRequest("hook-between"))).toBe(session?.spanId)
      // What a callback does in spans of its own sits under the request it answers.
      const named = (name: string) => spans.filter((s) => s.name === name)
      expect(named("user.hook").map(parentOf)).toEqual(
        ["hook-1", "hook-2", "hook-between"].map((id) => byRequest(id)?.spanId)
      )
      expect(named("user.permission").map(parentOf)).toEqual(["perm-1", "perm-2"].map((id) => byRequest(id)?.spanId))
      expect(named("user.tool").map(parentOf)).toEqual(["tool-1", "tool-2"].map((id) => byRequest(id)?.spanId))
      expect(named("Tool.add")).toHaveLength(2)
    }))

  it.effect("the CLI gets the session span's context as TRACEPARENT", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      let env: Readonly<Record<string, string>> = {}
      const agent = ClaudeAgent.make({
        transport: Layer.scoped(
          Transport,
          Effect.flatMap(SessionServices.SessionLaunch, ({ launch }) => {
            env = launch.env
            return Effect.map(FakeCli.make(), ({ transport }) => transport)
          })
        )
      })
      yield* agent.query("hi").pipe(Stream.runDrain, Effect.withTracer(tracer))
      const session = spans.find((s) => s.name === "ClaudeAgent.session")
      expect(env.TRACEPARENT).toBe(`00-${session?.traceId}-${session?.spanId}-01`)
    }))
})
