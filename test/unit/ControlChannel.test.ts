// Unit tests of the control channel over the in-memory fake CLI (a mock transport, no process).
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, type Duration, Effect, Fiber, FiberRef, Layer, Option, Stream, TestClock } from "effect"
import * as Control from "../../src/schema/Control.js"
import { ControlChannel } from "../../src/services/ControlChannel.js"
import { Transport } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const env = (behaviour: FakeCli.Behaviour = {}, timeout?: Duration.DurationInput) =>
  ControlChannel.layer(timeout !== undefined ? { controlTimeout: timeout } : {}).pipe(
    Layer.provideMerge(FakeCli.layer(behaviour))
  )

describe("ControlChannel", () => {
  it.scoped("matches concurrent requests to their responses by request_id", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const [a, b, c] = yield* Effect.all([
        control.request(Control.SetModel, { model: "m-a" }),
        control.request(Control.SetPermissionMode, { mode: "plan" }),
        control.request(Control.SetModel, { model: "m-c" })
      ], { concurrency: "unbounded" })
      expect(a).toEqual({ model: "m-a" })
      expect(b).toEqual({ mode: "plan" })
      expect(c).toEqual({ model: "m-c" })
      const cli = yield* FakeCli.FakeCli
      const ids = (yield* cli.sent).map((f) => f.request_id)
      expect(new Set(ids).size).toBe(3)
    }).pipe(Effect.provide(env())))

  it.scoped("an error response fails with ControlError carrying error and error_code", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const error = yield* control.request(Control.request("no_such_subtype")).pipe(Effect.flip)
      expect(error._tag).toBe("ControlError")
      if (error._tag === "ControlError") {
        expect(error.subtype).toBe("no_such_subtype")
        expect(error.errorCode).toBe("unsupported_request")
        expect(error.error).toContain("Unsupported control request subtype")
      }
    }).pipe(Effect.provide(env())))

  it.scoped("a success reply without a response payload succeeds with undefined", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const reply = yield* control.request(Control.McpToggle, { serverName: "x", enabled: false })
      expect(reply).toBeUndefined()
    }).pipe(Effect.provide(env())))

  it.scoped("times out after the deadline with TimeoutException and sends control_cancel_request", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const fiber = yield* control.request(Control.GetContextUsage).pipe(Effect.flip, Effect.fork)
      yield* cli.awaitSent((f) => f.type === "control_request")
      yield* TestClock.adjust("29 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("TimeoutException")
      if (error._tag === "TimeoutException") {
        expect(error.timeoutMillis).toBe(30_000)
        expect(error.subtype).toBe("get_context_usage")
        const cancel = yield* cli.awaitSent((f) => f.type === "control_cancel_request")
        expect(cancel.request_id).toBe(error.requestId)
      }
    }).pipe(Effect.provide(env({ onControlRequest: () => Effect.never }, "30 seconds"))))

  it.scoped("the per-call timeout overrides the channel default", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const fiber = yield* control.request(Control.McpStatus, {}, { timeout: "2 seconds" }).pipe(
        Effect.flip,
        Effect.fork
      )
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(fiber))._tag).toBe("TimeoutException")
    }).pipe(Effect.provide(env({ onControlRequest: () => Effect.never }))))

  it.scoped("pending requests fail at once with the real cause when the CLI dies", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const fiber = yield* control.request(Control.McpStatus).pipe(Effect.flip, Effect.fork)
      yield* cli.awaitSent((f) => f.type === "control_request")
      yield* cli.stderr("fatal: something broke")
      yield* cli.exit({ exitCode: 3 })
      // No clock adjustment: the failure must not wait for the 60 s deadline.
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("ProcessError")
      if (error._tag === "ProcessError") {
        expect(error.exitCode).toBe(3)
        expect(error.stderrTail).toContain("something broke")
      }
      // Later requests fail the same way immediately.
      expect((yield* control.request(Control.McpStatus).pipe(Effect.flip))._tag).toBe("ProcessError")
    }).pipe(Effect.provide(env({ onControlRequest: () => Effect.never }))))

  it.scoped("inbound requests are dispatched to handlers and answered exactly once", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* control.handle(Control.CanUseTool, (req) => Effect.succeed({ behavior: "allow", updatedInput: req.input }))
      const answer = yield* cli.requestRaw({ subtype: "can_use_tool", tool_name: "Write", input: { a: 1 } }, "r1")
      expect(answer).toEqual({
        subtype: "success",
        request_id: "r1",
        response: { behavior: "allow", updatedInput: { a: 1 } }
      })
      const responses = (yield* cli.sent).filter((f) => f.type === "control_response")
      expect(responses).toHaveLength(1)
    }).pipe(Effect.provide(env())))

  it.scoped("a handler's logs carry the request's subtype, id and details as annotations", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const seen = yield* Deferred.make<Record<string, unknown>>()
      yield* control.handle(
        Control.CanUseTool,
        (req) =>
          Effect.flatMap(
            FiberRef.get(FiberRef.currentLogAnnotations),
            (annotations) =>
              Deferred.succeed(seen, Object.fromEntries(annotations)).pipe(
                Effect.as({ behavior: "allow" as const, updatedInput: req.input })
              )
          )
      )
      yield* cli.requestRaw({ subtype: "can_use_tool", tool_name: "Write", input: {} }, "r-annotated")
      expect(yield* Deferred.await(seen)).toEqual({
        controlSubtype: "can_use_tool",
        controlRequestId: "r-annotated",
        tool_name: "Write"
      })
      // Nothing leaks into the channel's own fiber.
      expect(Object.fromEntries(yield* FiberRef.get(FiberRef.currentLogAnnotations))).toEqual({})
    }).pipe(Effect.provide(env())))

  it.scoped("a hook callback's logs carry its callback id and event", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const seen = yield* Deferred.make<Record<string, unknown>>()
      yield* control.handle(Control.HookCallback, () =>
        Effect.flatMap(FiberRef.get(FiberRef.currentLogAnnotations), (annotations) =>
          Deferred.succeed(seen, Object.fromEntries(annotations)).pipe(Effect.as({}))))
      yield* cli.requestRaw(
        { subtype: "hook_callback", callback_id: "hook_3", input: { hook_event_name: "Stop" } },
        "r-hook"
      )
      expect(yield* Deferred.await(seen)).toEqual({
        controlSubtype: "hook_callback",
        controlRequestId: "r-hook",
        callback_id: "hook_3",
        hook_event_name: "Stop"
      })
    }).pipe(Effect.provide(env())))

  it.scoped("requests with the same details each carry their own id, and other details their own", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const seen: Array<Record<string, unknown>> = []
      yield* control.handle(
        Control.HookCallback,
        () =>
          Effect.map(FiberRef.get(FiberRef.currentLogAnnotations), (annotations) => {
            seen.push(Object.fromEntries(annotations))
            return {}
          })
      )
      const stop = { hook_event_name: "Stop" }
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stop }, "r-1")
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stop }, "r-2")
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_1", input: stop }, "r-3")
      // A NUL in a value must not make it another request's details.
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0\u0000x", input: stop }, "r-4")
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0\u0000x", input: stop }, "r-5")
      // The same values under other names, and fewer details, are other details.
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} }, "r-6")
      yield* cli.requestRaw(
        { subtype: "hook_callback", callback_id: "hook_0", tool_name: "Stop", input: {} },
        "r-7"
      )
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stop }, "r-8")
      const annotation = (callbackId: string, requestId: string) => ({
        controlSubtype: "hook_callback",
        controlRequestId: requestId,
        callback_id: callbackId,
        hook_event_name: "Stop"
      })
      expect(seen).toEqual([
        annotation("hook_0", "r-1"),
        annotation("hook_0", "r-2"),
        annotation("hook_1", "r-3"),
        annotation("hook_0\u0000x", "r-4"),
        annotation("hook_0\u0000x", "r-5"),
        { controlSubtype: "hook_callback", controlRequestId: "r-6", callback_id: "hook_0" },
        { controlSubtype: "hook_callback", controlRequestId: "r-7", callback_id: "hook_0", tool_name: "Stop" },
        annotation("hook_0", "r-8")
      ])
    }).pipe(Effect.provide(env())))

  it.scoped("a handler's logs carry the annotations of the reader's logs around it", () =>
    Effect.gen(function*() {
      const cli = yield* FakeCli.FakeCli
      const seen: Array<Record<string, unknown>> = []
      // The channel, and so its reader, made under an annotation of its own.
      const control = yield* ControlChannel.make().pipe(Effect.annotateLogs("session", "s-1"))
      yield* control.handle(Control.HookCallback, () =>
        Effect.map(FiberRef.get(FiberRef.currentLogAnnotations), (annotations) => {
          seen.push(Object.fromEntries(annotations))
          return {}
        }))
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} }, "r-1")
      yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} }, "r-2")
      expect(seen.map((a) => [a.session, a.controlRequestId])).toEqual([["s-1", "r-1"], ["s-1", "r-2"]])
    }).pipe(Effect.provide(FakeCli.layer())))

  it.scoped("a failing handler answers with an error response; an unknown subtype too", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* control.handle(Control.HookCallback, () => Effect.fail(new Error("hook exploded")))
      const failed = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: {} })
      expect(failed.subtype).toBe("error")
      expect(failed.error).toBe("hook exploded")
      const defect = yield* (yield* Effect.sync(() => control.handle(Control.McpMessage, () => Effect.die("boom"))))
        .pipe(
          Effect.zipRight(cli.requestRaw({ subtype: "mcp_message", server_name: "x", message: {} }))
        )
      expect(defect.subtype).toBe("error")
      expect(String(defect.error)).toContain("boom")
      const unknown = yield* cli.requestRaw({ subtype: "elicitation" })
      expect(unknown.subtype).toBe("error")
      expect(String(unknown.error)).toContain("elicitation")
    }).pipe(Effect.provide(env())))

  it.scoped("control_cancel_request interrupts the handler's fiber and no response is written", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      yield* control.handle(Control.CanUseTool, () =>
        Deferred.succeed(started, undefined).pipe(
          Effect.zipRight(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
        ))
      const asking = yield* cli.requestRaw({ subtype: "can_use_tool", tool_name: "Bash", input: {} }, "perm-1").pipe(
        Effect.fork
      )
      yield* Deferred.await(started)
      expect(yield* control.inFlight).toBe(1)
      yield* cli.cancel("perm-1")
      yield* Deferred.await(interrupted)
      yield* control.awaitNoneInFlight
      const responses = (yield* cli.sent).filter((f) => f.type === "control_response")
      expect(responses).toEqual([])
      yield* Fiber.interrupt(asking)
    }).pipe(Effect.provide(env())))

  it.scoped("a slow message consumer does not stall control traffic", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      // Nobody reads `messages`: 100 assistant frames pile up, yet the control reply behind them arrives.
      for (let i = 0; i < 100; i++) yield* cli.emit(FakeCli.frames.assistantText(`m${i}`))
      expect(yield* control.request(Control.SetModel, { model: "x" })).toEqual({ model: "x" })
      const first = yield* control.messages.pipe(Stream.take(3), Stream.runCollect)
      expect(Chunk.size(first)).toBe(3)
    }).pipe(Effect.provide(env())))

  it.scoped("messages end cleanly on exit 0 and on exit 1 right after an error result", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* cli.emit(FakeCli.frames.result("API Error: 500", { isError: true }))
      yield* cli.exit({ exitCode: 1 })
      const all = yield* control.messages.pipe(Stream.runCollect)
      expect(Chunk.size(all)).toBe(1)
      expect(yield* control.lastSessionId).toBe(cli.sessionId)
    }).pipe(Effect.provide(env())))

  it.scoped("messages fail with ProcessError when the CLI dies without an error result", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* cli.emit(FakeCli.frames.assistantText("partial"))
      yield* cli.stderr("Error parsing streaming input line")
      yield* cli.exit({ exitCode: 1 })
      const collected: Array<unknown> = []
      const error = yield* control.messages.pipe(
        Stream.runForEach((m) => Effect.sync(() => collected.push(m))),
        Effect.flip
      )
      expect(collected).toHaveLength(1)
      expect(error._tag).toBe("ProcessError")
      expect(error.message).toContain("Error parsing streaming input line")
    }).pipe(Effect.provide(env())))

  it.scoped("a malformed JSON line fails the stream with CLIJSONDecodeError", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* cli.emitRaw("debug noise is fine")
      yield* cli.emit(FakeCli.frames.assistantText("ok"))
      yield* cli.emitRaw("{\"type\":\"assistant\",")
      const error = yield* control.messages.pipe(Stream.runDrain, Effect.flip)
      expect(error._tag).toBe("CLIJSONDecodeError")
    }).pipe(Effect.provide(env())))

  it.scoped("a CLI that exits cleanly fails what still waits with CLIEndedError: NoAnswer, NoSessionId", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const pending = yield* control.request(Control.McpStatus).pipe(Effect.flip, Effect.fork)
      yield* cli.awaitSent((f) => f.type === "control_request")
      yield* cli.exit({ exitCode: 0 })
      expect(yield* Fiber.join(pending)).toMatchObject({ _tag: "CLIEndedError", reason: "NoAnswer" })
      expect(yield* Effect.flip(control.awaitSessionId)).toMatchObject({ _tag: "CLIEndedError", reason: "NoSessionId" })
    }).pipe(Effect.provide(env({ onControlRequest: () => Effect.never }))))

  it.scoped("a CLI that crashes before reporting a session id fails awaitSessionId with the crash", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* cli.stderr("fatal: no config")
      yield* cli.exit({ exitCode: 2 })
      expect(yield* Effect.flip(control.awaitSessionId)).toMatchObject({ _tag: "ProcessError", exitCode: 2 })
    }).pipe(Effect.provide(env())))

  it.scoped("a line that cannot be framed fails a pending request with CLIConnectionError ReadFailed, caused by it", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const pending = yield* control.request(Control.McpStatus).pipe(Effect.flip, Effect.fork)
      yield* cli.awaitSent((f) => f.type === "control_request")
      yield* cli.emitRaw("{\"type\":\"assistant\",")
      const error = yield* Fiber.join(pending)
      expect(error).toMatchObject({ _tag: "CLIConnectionError", reason: "ReadFailed" })
      expect(error._tag === "CLIConnectionError" && error.cause).toMatchObject({ _tag: "CLIJSONDecodeError" })
    }).pipe(Effect.provide(env({ onControlRequest: () => Effect.never }))))

  it.scoped("stdout closed by a CLI that does not exit within 10 s is CLIConnectionError OutputClosed", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const ended = yield* control.messages.pipe(Stream.runDrain, Effect.flip, Effect.fork)
      yield* TestClock.adjust("9 seconds")
      expect(Option.isNone(yield* Fiber.poll(ended))).toBe(true)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(ended)).toMatchObject({ _tag: "CLIConnectionError", reason: "OutputClosed" })
    }).pipe(Effect.provide(
      ControlChannel.layer({}).pipe(Layer.provideMerge(Layer.succeed(Transport, {
        send: () => Effect.void,
        frames: Stream.empty,
        endInput: Effect.void,
        terminate: Effect.void,
        exitStatus: Effect.never,
        stderrTail: Effect.succeed(""),
        stderr: Stream.empty,
        pid: Option.none()
      })))
    )))
})
