// The fake CLI's own contract: its answer table typed by the Control descriptors, its typed
// CLI→SDK requests, and frame ids counted per fake.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Option, Predicate, Queue, Schema, Stream } from "effect"
import * as Control from "../../src/schema/Control.js"
import { ControlChannel } from "../../src/services/ControlChannel.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const env = (behaviour: FakeCli.Behaviour = {}) =>
  ControlChannel.layer().pipe(Layer.provideMerge(FakeCli.layer(behaviour)))

describe("FakeCli answers", () => {
  it.scoped("a test's entry replaces the default answer for its descriptor; the others stay", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const status = yield* control.request(Control.McpStatus)
      expect(status).toEqual({ mcpServers: [{ name: "github", status: "connected" }] })
      expect(yield* control.request(Control.SetModel, { model: "m" })).toEqual({ model: "m" })
    }).pipe(Effect.provide(env({
      answers: [
        FakeCli.answer(
          Control.McpStatus,
          () => Effect.succeed({ mcpServers: [{ name: "github", status: "connected" }] })
        )
      ]
    }))))

  it.scoped("the handler gets the decoded payload and can answer with the default, or fail", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<Control.Request.Payload<typeof Control.SetModel>>()
      const layer = env({
        answers: [
          FakeCli.answer(Control.SetModel, (payload, _cli, byDefault) =>
            payload.model === "refused"
              ? Effect.succeed(FakeCli.controlFailure("model refused", "invalid_model"))
              : Deferred.succeed(seen, payload).pipe(Effect.zipRight(byDefault)))
        ]
      })
      yield* Effect.gen(function*() {
        const control = yield* ControlChannel
        expect(yield* control.request(Control.SetModel, { model: "claude-haiku-4-5" })).toEqual({
          model: "claude-haiku-4-5"
        })
        expect(yield* Deferred.await(seen)).toEqual({ model: "claude-haiku-4-5" })
        const error = yield* Effect.flip(control.request(Control.SetModel, { model: "refused" }))
        expect(error).toMatchObject({ _tag: "ControlError", error: "model refused", errorCode: "invalid_model" })
      }).pipe(Effect.provide(layer))
    }))

  it.scoped("the answer is encoded with the descriptor's success Schema", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      // The SDK reads the wire form: the count as the string the Schema encodes it to.
      const asText = Control.request("get_plan", { success: Schema.Struct({ count: Schema.String }) })
      expect(yield* control.request(asText)).toEqual({ count: "3" })
    }).pipe(Effect.provide(env({
      answers: [
        FakeCli.answer(
          Control.request("get_plan", { success: Schema.Struct({ count: Schema.NumberFromString }) }),
          () => Effect.succeed({ count: 3 })
        )
      ]
    }))))

  it.scoped("an answer its success Schema refuses reaches the SDK as an error naming the fault", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const error = yield* Effect.flip(control.request(Counted))
      expect(error).toMatchObject({ _tag: "ControlError", subtype: "get_count" })
      expect(
        error._tag === "ControlError" && error.error.startsWith("FakeCli: the answer to get_count does not encode")
      ).toBe(true)
    }).pipe(Effect.provide(env({ answers: [FakeCli.answer(Counted, () => Effect.succeed({ count: -1 }))] }))))

  it.scoped("a request whose payload does not decode with the descriptor is refused", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const numeric = Control.request("set_model", { payload: Schema.Struct({ model: Schema.Number }) })
      const error = yield* Effect.flip(control.request(numeric, { model: 5 }))
      expect(error).toMatchObject({ _tag: "ControlError", subtype: "set_model" })
      expect(error._tag === "ControlError" && error.error.startsWith("Invalid set_model request")).toBe(true)
    }).pipe(Effect.provide(env())))

  it.scoped("a subtype with no entry is refused as unsupported; an entry for a new subtype answers it", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const unknown = yield* Effect.flip(control.request(Control.request("no_such_subtype")))
      expect(unknown).toMatchObject({ _tag: "ControlError", errorCode: "unsupported_request" })
      expect(yield* control.request(Rename, { title: "t" })).toBeUndefined()
    }).pipe(Effect.provide(env({ answers: [FakeCli.answer(Rename, () => Effect.void)] }))))

  it.scoped("onControlRequest answers first, with any value; Option.none() falls through to the table", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const raw = Control.request("mcp_status", { success: Schema.Unknown })
      expect(yield* control.request(raw)).toEqual({ servers: "not a list" })
      expect(yield* control.request(Control.SetModel, { model: "m" })).toEqual({ model: "typed" })
    }).pipe(Effect.provide(env({
      onControlRequest: (request) =>
        Effect.succeed(request.subtype === "mcp_status" ? Option.some({ servers: "not a list" }) : Option.none()),
      answers: [FakeCli.answer(Control.SetModel, () => Effect.succeed({ model: "typed" }))]
    }))))

  it.scoped("the default answers keep the CLI's wire shapes: no response key, or an empty one", () =>
    Effect.gen(function*() {
      const { transport } = yield* FakeCli.make()
      const replies = yield* Queue.unbounded<unknown>()
      yield* transport.frames.pipe(Stream.runForEach((f) => Queue.offer(replies, f.value)), Effect.forkScoped)
      const ask = (request: FakeCli.JsonObject) =>
        transport.send({ type: "control_request", request_id: "r", request }).pipe(Effect.zipRight(Queue.take(replies)))
      expect(yield* ask({ subtype: "set_max_thinking_tokens", max_thinking_tokens: null })).toEqual({
        type: "control_response",
        response: { subtype: "success", request_id: "r" }
      })
      expect(yield* ask({ subtype: "stop_task", task_id: "no-such-task" })).toEqual({
        type: "control_response",
        response: { subtype: "success", request_id: "r", response: {} }
      })
      // Fields the descriptor does not name are sent as the CLI sends them.
      const initialized = yield* ask({ subtype: "initialize", hooks: {} })
      expect(initialized).toMatchObject({ response: { subtype: "success", response: { pid: 4242, capabilities: [] } } })
    }))
})

describe("FakeCli requests", () => {
  it.scoped("cli.request encodes the payload and decodes the SDK's answer with the descriptor", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* control.handle(
        Control.CanUseTool,
        (request) => Effect.succeed({ behavior: "allow", updatedInput: { ...request.input, checked: true } })
      )
      const decision = yield* cli.request(Control.CanUseTool, { tool_name: "Bash", input: { command: "ls" } }, {
        requestId: "perm-1"
      })
      expect(decision).toEqual({ behavior: "allow", updatedInput: { command: "ls", checked: true } })
      const sent = yield* cli.requestRaw({ subtype: "can_use_tool", tool_name: "Bash", input: {} }, "perm-2")
      expect(sent).toEqual({
        subtype: "success",
        request_id: "perm-2",
        response: { behavior: "allow", updatedInput: { checked: true } }
      })
    }).pipe(Effect.provide(env())))

  it.scoped("an error answer fails cli.request with ErrorAnswer", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      yield* control.handle(Control.HookCallback, (request) => Effect.fail(new Error(`no ${request.callback_id}`)))
      const error = yield* Effect.flip(cli.request(Control.HookCallback, { callback_id: "hook_9", input: {} }))
      expect(error).toBeInstanceOf(FakeCli.ErrorAnswer)
      expect(error).toMatchObject({
        _tag: "ErrorAnswer",
        subtype: "hook_callback",
        requestId: "cli-req-1",
        error: "no hook_9"
      })
    }).pipe(Effect.provide(env())))
})

describe("FakeCli frames", () => {
  it.scoped("each fake counts its frame ids from 1, whatever other fakes built", () =>
    Effect.gen(function*() {
      const a = yield* FakeCli.make()
      const b = yield* FakeCli.make()
      const uuids = (frames: ReadonlyArray<FakeCli.JsonObject>) => frames.map((f) => f.uuid)
      const fromA = [a.cli.frames.systemInit(), a.cli.frames.assistantText("x")]
      const fromB = [b.cli.frames.systemInit()]
      expect(uuids(fromA)).toEqual(["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000003"])
      expect(uuids(fromB)).toEqual(["00000000-0000-4000-8000-000000000001"])
      // Standalone builders have a counter of their own too.
      expect(FakeCli.makeFrames().result("done").uuid).toBe("00000000-0000-4000-8000-000000000001")
    }))

  it.scoped("the default turn's frames carry the fake's own ids", () =>
    Effect.gen(function*() {
      const { transport, cli } = yield* FakeCli.make()
      cli.frames.systemInit()
      const other = yield* FakeCli.make()
      other.cli.frames.systemInit()
      const received = yield* Queue.unbounded<unknown>()
      yield* transport.frames.pipe(Stream.runForEach((f) => Queue.offer(received, f.value)), Effect.forkScoped)
      yield* transport.send({ type: "user", message: { role: "user", content: "hi" } })
      const turn = [yield* Queue.take(received), yield* Queue.take(received), yield* Queue.take(received)]
      expect(turn.map((f) => Predicate.isRecord(f) ? f.uuid : undefined)).toEqual([
        "00000000-0000-4000-8000-000000000002",
        "00000000-0000-4000-8000-000000000004",
        "00000000-0000-4000-8000-000000000005"
      ])
    }))
})

const Counted = Control.request("get_count", { success: Schema.Struct({ count: Schema.NonNegativeInt }) })

const Rename = Control.request("rename_session", { payload: Schema.Struct({ title: Schema.String }) })
