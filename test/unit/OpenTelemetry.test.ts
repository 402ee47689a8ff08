// The SDK's spans and metrics through @effect/opentelemetry's NodeSdk into OpenTelemetry's in-memory
// exporters, with nothing configured in the library: what an OTLP exporter would receive. The CLI
// is the fake CLI (a mock transport); the telemetry under test is the library's.
import { NodeSdk } from "@effect/opentelemetry"
import { describe, expect, it } from "@effect/vitest"
import {
  InMemoryMetricExporter,
  AggregationTemporality,
  PeriodicExportingMetricReader
} from "@opentelemetry/sdk-metrics"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Schema, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as McpServer from "../../src/McpServer.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as Tool from "../../src/Tool.js"

const stopInput = { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }

const add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  handler: ({ a, b }) => Effect.succeed(`${a + b}`)
})

// One turn in which the CLI calls a hook and the in-process tool.
const fakeCli = FakeCli.layerClaudeAgent({
  onUserMessage: (message, cli) =>
    Effect.gen(function*() {
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stopInput }, "req-hook")
      yield* cli.requestRaw({
        subtype: "mcp_message",
        server_name: "calc",
        message: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 2, b: 3 } } }
      }, "req-tool")
      yield* FakeCli.echoTurn(message, cli)
    })
})

describe("OpenTelemetry export (NodeSdk, in-memory exporters)", () => {
  it.live("session → turn → hook / tool spans and the SDK's metrics reach the exporters, linked and attributed", () => {
    const spans = new InMemorySpanExporter()
    const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
    const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 })
    const Tracing = NodeSdk.layer(() => ({
      resource: { serviceName: "agents-test" },
      spanProcessor: new SimpleSpanProcessor(spans),
      metricReader: reader
    }))
    return Effect.gen(function*() {
      yield* ClaudeAgent.query("hello", {
        model: "claude-fake-1",
        hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] },
        mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) }
      }).pipe(Stream.runDrain, Effect.provide(fakeCli), Effect.withSpan("request"))

      // Read before the layer is released: shutting the exporter down clears it.
      const finished = spans.getFinishedSpans()
      const byName = (name: string) => finished.find((span) => span.name === name)
      const request = byName("request")
      const session = byName("ClaudeAgent.session")
      const turn = byName("invoke_agent claude-code")
      const hook = byName("ControlChannel.hook_callback")
      const tool = byName("Tool.add")
      expect(finished.map((span) => span.name)).toEqual(expect.arrayContaining([
        "request",
        "ClaudeAgent.session",
        "invoke_agent claude-code",
        "ControlChannel.hook_callback",
        "Tool.add"
      ]))
      // The tool call's one span is the tool's.
      expect(finished.filter((span) => span.name === "ControlChannel.mcp_message")).toEqual([])
      const parentOf = (span: typeof finished[number] | undefined) => span?.parentSpanContext?.spanId
      expect(parentOf(session)).toBe(request?.spanContext().spanId)
      expect(parentOf(turn)).toBe(session?.spanContext().spanId)
      expect(parentOf(hook)).toBe(turn?.spanContext().spanId)
      expect(parentOf(tool)).toBe(turn?.spanContext().spanId)
      expect(new Set(finished.map((span) => span.spanContext().traceId)).size).toBe(1)
      expect(session?.attributes["claude.model"]).toBe("claude-fake-1")
      expect(turn?.attributes["claude.result.subtype"]).toBe("success")
      expect(tool?.kind).toBe(SpanKind.SERVER)
      expect(tool?.attributes).toMatchObject({
        "control.request_id": "req-tool",
        "control.subtype": "mcp_message",
        server_name: "calc",
        method: "tools/call",
        "mcp.server": "calc",
        "tool.name": "add"
      })
      expect(session?.resource.attributes["service.name"]).toBe("agents-test")
      // The turn as the GenAI conventions have it: a client invoke_agent span.
      expect(turn?.kind).toBe(SpanKind.CLIENT)
      expect(turn?.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.agent.name": "claude-code",
        "gen_ai.request.model": "claude-fake-1"
      })
      // @effect/opentelemetry exports an array attribute as its JSON text.
      expect(JSON.parse(String(turn?.attributes["gen_ai.response.finish_reasons"]))).toEqual(["end_turn"])

      yield* Effect.promise(() => reader.forceFlush())
      const exported = metrics.getMetrics().flatMap((batch) => batch.scopeMetrics.flatMap((scope) => scope.metrics))
      const names = new Set(exported.map((metric) => metric.descriptor.name))
      for (
        const name of [
          "claude_agent_sessions_started",
          "claude_agent_turns",
          "claude_agent_turn_duration_ms",
          "claude_agent_callback_duration_ms",
          "gen_ai.client.operation.duration"
        ]
      ) {
        expect(names).toContain(name)
      }
    }).pipe(Effect.provide(Tracing))
  })
})
