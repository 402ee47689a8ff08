// The inbound half of the channel over the in-memory fake CLI: defects, the count of running
// handlers and its wait, the span of each request.
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, FiberRef, Layer, Metric, MetricLabel, Schema } from "effect"
import * as HookRegistry from "../../../src/services/HookRegistry.js"
import * as Control from "../../../src/schema/Control.js"
import { ControlChannel } from "../../../src/services/ControlChannel.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"
import * as SpanRecorder from "../../../src/testing/SpanRecorder.js"
import * as Telemetry from "../../../src/Telemetry.js"

const env = ControlChannel.layer().pipe(Layer.provideMerge(FakeCli.layer()))

describe("inbound control requests", () => {
  it.scoped("a handler that throws instead of failing is answered as a defect", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* control.handle(Control.HookCallback, () => {
        throw new TypeError("not an effect")
      })
      const answer = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} }, "r-throw")
      expect(answer.subtype).toBe("error")
      expect(answer.request_id).toBe("r-throw")
      expect(String(answer.error)).toContain("handler defect: not an effect")
    }).pipe(Effect.provide(env)))

  it.effect("each answer records its time in the subtype's series, under the channel's metric labels", () =>
    Effect.gen(function*() {
      const labels = [MetricLabel.make("tenant", `inbound-${Math.random()}`)]
      const series = Telemetry.callbackDuration.pipe(Metric.tagged("subtype", "hook_callback"))
      const countUnder = (labels: ReadonlyArray<MetricLabel.MetricLabel>) =>
        Effect.map(Metric.value(series).pipe(Effect.locally(FiberRef.currentMetricLabels, labels)), (s) => s.count)
      const withoutLabels = yield* countUnder([])
      yield* Effect.gen(function*() {
        const control = yield* ControlChannel
        const cli = yield* FakeCli.FakeCli
        yield* control.handle(Control.HookCallback, () => Effect.succeed({}))
        for (const id of ["r-metric-1", "r-metric-2", "r-metric-3"]) {
          const answer = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} }, id)
          expect(answer.subtype).toBe("success")
        }
      }).pipe(Effect.provide(env), Effect.scoped, Effect.locally(FiberRef.currentMetricLabels, labels))
      expect(yield* countUnder(labels)).toBe(3)
      expect(yield* countUnder([])).toBe(withoutLabels)
    }))

  it.scoped("counts running handlers; awaitNoneInFlight waits for the last one", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const release = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      yield* control.handle(Control.CanUseTool, (req) =>
        Deferred.succeed(started, undefined).pipe(
          Effect.zipRight(Deferred.await(release)),
          Effect.as({ behavior: "allow" as const, updatedInput: req.input })
        ))
      expect(yield* control.inFlight).toBe(0)
      yield* control.awaitNoneInFlight
      const answer = yield* Effect.fork(
        cli.requestRaw({ subtype: "can_use_tool", tool_name: "Bash", input: {} }, "r-wait")
      )
      yield* Deferred.await(started)
      expect(yield* control.inFlight).toBe(1)
      const idle = yield* Effect.fork(control.awaitNoneInFlight)
      yield* Effect.repeat(Fiber.status(idle), { until: (status) => status._tag === "Suspended" })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(idle)
      expect(yield* control.inFlight).toBe(0)
      expect((yield* Fiber.join(answer)).subtype).toBe("success")
    }).pipe(Effect.provide(env)))

  it.effect("each request gets one server span, ended, with its subtype and id, under the channel's span", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* SpanRecorder.make
      yield* Effect.gen(function*() {
        const control = yield* ControlChannel
        const cli = yield* FakeCli.FakeCli
        yield* control.handle(Control.HookCallback, () => Effect.succeed({}))
        yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_1", input: {} }, "r-span-1")
        yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_1", input: {} }, "r-span-2")
      }).pipe(Effect.provide(env), Effect.scoped, Effect.withSpan("outer"), Effect.withTracer(tracer))
      const outer = spans.find((s) => s.name === "outer")
      const hooks = spans.filter((s) => s.name === "ControlChannel.hook_callback")
      expect(hooks.map((s) => s.attributes.get("control.request_id"))).toEqual(["r-span-1", "r-span-2"])
      for (const span of hooks) {
        expect(span.kind).toBe("server")
        expect(span.status._tag).toBe("Ended")
        expect(span.attributes.get("control.subtype")).toBe("hook_callback")
        expect(span.attributes.get("callback_id")).toBe("hook_1")
        expect(span.parent._tag === "Some" && span.parent.value.spanId).toBe(outer?.spanId)
      }
    }))
  it.scoped("a payload keeps the fields its Schema does not name; a malformed one is answered with an error", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const seen = yield* Deferred.make<unknown>()
      yield* control.handle(Control.HookCallback, (payload) => Effect.as(Deferred.succeed(seen, payload), {}))
      const ok = yield* cli.requestRaw({
        subtype: "hook_callback",
        callback_id: "hook_0",
        input: { a: 1 },
        extra: "kept"
      }, "r-1")
      expect(ok.subtype).toBe("success")
      expect(yield* Deferred.await(seen)).toMatchObject({ callback_id: "hook_0", input: { a: 1 }, extra: "kept" })
      const bad = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: 7, input: {} }, "r-2")
      expect(bad.subtype).toBe("error")
      expect(String(bad.error)).toContain("malformed hook_callback request")
    }).pipe(Effect.provide(env)))

  it.scoped("an answer keeps the fields an open Schema allows and loses those a closed struct does not name", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* control.handle(Control.HookCallback, () => Effect.succeed({ continue: true, extra: 1 }))
      const open = { mcp_response: { id: 1 }, extra: "dropped" }
      yield* control.handle(Control.McpMessage, () => Effect.succeed(open))
      const hook = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} }, "r-h")
      expect(hook.response).toEqual({ continue: true, extra: 1 })
      const mcp = yield* cli.requestRaw({ subtype: "mcp_message", server_name: "s", message: {} }, "r-m")
      expect(mcp.response).toEqual({ mcp_response: { id: 1 } })
    }).pipe(Effect.provide(env)))

  it.scoped("a Schema with a transformation decodes the payload and encodes the answer", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const Halve = Control.request("test_halve", {
        payload: Schema.Struct({ n: Schema.NumberFromString }),
        success: Schema.Struct({ half: Schema.NumberFromString })
      })
      yield* control.handle(Halve, ({ n }) => Effect.succeed({ half: n / 2 }))
      const answer = yield* cli.requestRaw({ subtype: "test_halve", n: "42" }, "r-t")
      expect(answer.response).toEqual({ half: "21" })
      const bad = yield* cli.requestRaw({ subtype: "test_halve", n: 42 }, "r-t2")
      expect(String(bad.error)).toContain("malformed test_halve request")
    }).pipe(Effect.provide(env)))

  it.effect("a hook's captured services reach its callback through the channel, whose spans sit under the request's", () =>
    Effect.gen(function*() {
      class Policy extends Context.Tag("test/inbound/Policy")<Policy, { readonly reason: string }>() {}
      const { spans, tracer } = yield* SpanRecorder.make
      const answers = yield* Effect.gen(function*() {
        const control = yield* ControlChannel
        const cli = yield* FakeCli.FakeCli
        const registry = yield* HookRegistry.make({
          Stop: [{
            hooks: [
              () => Effect.map(Policy, (policy) => ({ stopReason: policy.reason })).pipe(Effect.withSpan("user.hook"))
            ]
          }]
        }).pipe(Effect.provideService(Policy, { reason: "captured" }))
        yield* control.handle(Control.HookCallback, registry.handleCallback)
        const input = {
          hook_event_name: "Stop",
          session_id: "s",
          transcript_path: "/t",
          cwd: "/",
          stop_hook_active: false
        }
        const first = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input }, "r-cap-1")
        const second = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input }, "r-cap-2")
        // Called outside the channel, the handler provides the services itself.
        const direct = yield* registry.handleCallback({ callback_id: "hook_0", input }, "r-direct")
        return [first.response, second.response, direct]
      }).pipe(Effect.provide(env), Effect.scoped, Effect.withTracer(tracer))
      expect(answers).toEqual([{ stopReason: "captured" }, { stopReason: "captured" }, { stopReason: "captured" }])
      const requests = spans.filter((s) => s.name === "ControlChannel.hook_callback")
      const user = spans.filter((s) => s.name === "user.hook")
      expect(user).toHaveLength(3)
      expect(user.slice(0, 2).map((s) => s.parent._tag === "Some" ? s.parent.value.spanId : undefined))
        .toEqual(requests.map((s) => s.spanId))
    }))

  it.scoped("an answer whose struct names all its fields goes out without the others, whatever its shape", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      class Answer {
        readonly mcp_response = { jsonrpc: "2.0", id: 3, result: {} }
        readonly extra = "class"
      }
      const symbol = Symbol("extra")
      const answers: Record<string, unknown> = {
        exact: { mcp_response: { jsonrpc: "2.0", id: 1, result: {} } },
        extra: { mcp_response: { jsonrpc: "2.0", id: 2, result: {} }, extra: "dropped" },
        instance: new Answer(),
        symbol: { mcp_response: { jsonrpc: "2.0", id: 4, result: {} }, [symbol]: "dropped" },
        missing: { other: "dropped" }
      }
      const seen: Array<unknown> = []
      // Untyped code can answer anything.
      yield* control.handle(Control.McpMessage, (payload) => Effect.sync(() => Object(answers[payload.server_name])))
      for (const name of Object.keys(answers)) {
        const answer = yield* cli.requestRaw({ subtype: "mcp_message", server_name: name, message: {} }, `r-${name}`)
        seen.push(answer.subtype === "success" ? answer.response : `error: ${String(answer.error)}`)
      }
      expect(seen.slice(0, 4)).toStrictEqual([
        { mcp_response: { jsonrpc: "2.0", id: 1, result: {} } },
        { mcp_response: { jsonrpc: "2.0", id: 2, result: {} } },
        { mcp_response: { jsonrpc: "2.0", id: 3, result: {} } },
        { mcp_response: { jsonrpc: "2.0", id: 4, result: {} } }
      ])
      // Unknown accepts a missing value: the answer is `{ mcp_response: undefined }`, `{}` on the wire.
      expect(seen[4]).toStrictEqual({})
    }).pipe(Effect.provide(env)))

  it.scoped("cancelling a request interrupts a hook callback with captured services, and nothing is answered", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const registry = yield* HookRegistry.make({
        Stop: [{
          hooks: [() =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )]
        }]
      })
      yield* control.handle(Control.HookCallback, registry.handleCallback)
      const input = {
        hook_event_name: "Stop",
        session_id: "s",
        transcript_path: "/t",
        cwd: "/",
        stop_hook_active: false
      }
      yield* Effect.fork(cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input }, "r-cancel"))
      yield* Deferred.await(started)
      expect(yield* control.inFlight).toBe(1)
      yield* cli.cancel("r-cancel")
      yield* Deferred.await(interrupted)
      yield* control.awaitNoneInFlight
      const written = yield* cli.sent
      expect(written.some((f) => f.type === "control_response")).toBe(false)
    }).pipe(Effect.provide(env)))
})
