// The outbound half of the channel over the in-memory fake CLI, answering by hand: replies this
// version cannot read, interruption, and the end of the channel's scope.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Fiber, Layer, Scope, TestClock } from "effect"
import * as Control from "../../../src/schema/Control.js"
import { ControlChannel } from "../../../src/services/ControlChannel.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"

// A CLI that never answers on its own: each test writes the reply.
const silent = FakeCli.layer({ onControlRequest: () => Effect.never })
const env = ControlChannel.layer().pipe(Layer.provideMerge(silent))

const sentRequest = (cli: FakeCli.FakeCliHandle, subtype: string) =>
  Effect.map(
    cli.awaitSent((f) => f.type === "control_request" && JSON.stringify(f).includes(`"subtype":"${subtype}"`)),
    (frame) => String(frame.request_id)
  )

describe("outbound control requests", () => {
  it.scoped("a reply this version cannot read fails its request at once with invalid_response", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const fiber = yield* Effect.fork(control.request(Control.McpStatus))
      const id = yield* sentRequest(cli, "mcp_status")
      yield* cli.emit({ type: "control_response", response: { subtype: "error", request_id: id } })
      const result = yield* Effect.either(Fiber.join(fiber))
      expect(Either.isLeft(result) && result.left._tag).toBe("ControlError")
      if (Either.isLeft(result) && result.left._tag === "ControlError") {
        expect(result.left.errorCode).toBe("invalid_response")
        expect(result.left.requestId).toBe(id)
        expect(result.left.error).toContain("malformed control_response")
      }
    }).pipe(Effect.provide(env)))

  it.scoped("a success whose response breaks the descriptor's Schema fails with invalid_response", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const fiber = yield* Effect.fork(control.request(Control.McpStatus))
      const id = yield* sentRequest(cli, "mcp_status")
      yield* cli.emit({
        type: "control_response",
        response: { subtype: "success", request_id: id, response: { mcpServers: "none" } }
      })
      const result = yield* Effect.either(Fiber.join(fiber))
      expect(Either.isLeft(result) && result.left._tag === "ControlError" && result.left.errorCode)
        .toBe("invalid_response")
    }).pipe(Effect.provide(env)))

  it.scoped("an interrupted request is withdrawn with control_cancel_request; its late reply is ignored", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const fiber = yield* Effect.fork(control.request(Control.McpStatus))
      const id = yield* sentRequest(cli, "mcp_status")
      yield* Fiber.interrupt(fiber)
      const cancel = yield* cli.awaitSent((f) => f.type === "control_cancel_request")
      expect(cancel.request_id).toBe(id)
      yield* cli.emit({ type: "control_response", response: { subtype: "success", request_id: id } })
      // The channel still serves the next request.
      const next = yield* Effect.fork(control.request(Control.McpStatus))
      const nextId = String(
        (yield* cli.awaitSent((f) => f.type === "control_request" && f.request_id !== id)).request_id
      )
      yield* cli.emit({
        type: "control_response",
        response: { subtype: "success", request_id: nextId, response: { mcpServers: [] } }
      })
      expect(yield* Fiber.join(next)).toEqual({ mcpServers: [] })
    }).pipe(Effect.provide(env)))

  it.scoped("closing the channel's scope fails a pending request: the session was closed", () =>
    Effect.gen(function*() {
      const cli = yield* FakeCli.FakeCli
      const scope = yield* Scope.make()
      const control = yield* ControlChannel.make().pipe(Scope.extend(scope))
      const fiber = yield* Effect.fork(control.request(Control.McpStatus))
      yield* sentRequest(cli, "mcp_status")
      yield* Scope.close(scope, Exit.void)
      const result = yield* Effect.either(Fiber.join(fiber))
      expect(Either.isLeft(result) && result.left._tag === "SessionClosedError" && result.left.reason)
        .toBe("ScopeClosed")
    }).pipe(Effect.provide(silent)))

  // The deadline timer is forked by the request's sender, which may be uninterruptible (a close
  // that sends `interrupt`); the channel's close stops the timer and waits for it.
  it.scoped("a request sent from an uninterruptible region times out, and the channel's close stops its timer", () =>
    Effect.gen(function*() {
      const cli = yield* FakeCli.FakeCli
      const scope = yield* Scope.make()
      const control = yield* ControlChannel.make().pipe(Scope.extend(scope))
      const timedOut = yield* Effect.fork(
        Effect.uninterruptible(control.request(Control.McpStatus, {}, { timeout: "2 seconds" }))
      )
      yield* sentRequest(cli, "mcp_status")
      yield* TestClock.adjust("2 seconds")
      expect(yield* Effect.flip(Fiber.join(timedOut))).toMatchObject({ _tag: "TimeoutException" })

      const pending = yield* Effect.fork(
        Effect.uninterruptible(control.request(Control.GetContextUsage, {}, { timeout: "5 seconds" }))
      )
      yield* sentRequest(cli, "get_context_usage")
      // The close interrupts the sleeping timer and waits for it.
      yield* Scope.close(scope, Exit.void)
      expect(yield* Effect.flip(Fiber.join(pending))).toMatchObject({ _tag: "SessionClosedError" })
      // The fake CLI's handlers run on the sender's fiber: interruptible, so the CLI can stop.
    }).pipe(Effect.provide(FakeCli.layer({ onControlRequest: () => Effect.interruptible(Effect.never) }))))

  it.scoped("each request times out at its own deadline, a shorter one sent after a longer one first", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const long = yield* Effect.fork(control.request(Control.McpStatus, {}, { timeout: "10 seconds" }))
      const longId = yield* sentRequest(cli, "mcp_status")
      const short = yield* Effect.fork(control.request(Control.GetContextUsage, {}, { timeout: "2 seconds" }))
      const shortId = yield* sentRequest(cli, "get_context_usage")
      const answered = yield* Effect.fork(control.request(Control.McpStatus, {}, { timeout: "1 second" }))
      const answeredId = String(
        (yield* cli.awaitSent((f) =>
          f.type === "control_request" && f.request_id !== longId && f.request_id !== shortId
        )).request_id
      )
      yield* cli.emit({
        type: "control_response",
        response: { subtype: "success", request_id: answeredId, response: { mcpServers: [] } }
      })
      expect(yield* Fiber.join(answered)).toEqual({ mcpServers: [] })

      yield* TestClock.adjust("1999 millis")
      expect(short.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const shortResult = yield* Effect.either(Fiber.join(short))
      expect(
        Either.isLeft(shortResult) && shortResult.left._tag === "TimeoutException" && shortResult.left.timeoutMillis
      )
        .toBe(2000)
      expect((yield* cli.awaitSent((f) => f.type === "control_cancel_request" && f.request_id === shortId)).request_id)
        .toBe(shortId)
      expect(long.unsafePoll()).toBeNull()

      yield* TestClock.adjust("8 seconds")
      const longResult = yield* Effect.either(Fiber.join(long))
      expect(Either.isLeft(longResult) && longResult.left._tag === "TimeoutException" && longResult.left.requestId)
        .toBe(longId)
      // The answered request never timed out: no cancel was sent for it.
      const cancels = (yield* cli.sent).filter((f) => f.type === "control_cancel_request").map((f) => f.request_id)
      expect(cancels).toEqual([shortId, longId])
    }).pipe(Effect.provide(env)))

  it.scoped("start writes at once; closing the caller's scope withdraws a request nobody waited for", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const scope = yield* Scope.make()
      const wait = yield* control.start(Control.McpStatus).pipe(Scope.extend(scope))
      const id = yield* sentRequest(cli, "mcp_status")
      yield* Scope.close(scope, Exit.void)
      expect((yield* cli.awaitSent((f) => f.type === "control_cancel_request")).request_id).toBe(id)
      // A wait started after the withdrawal never completes: the reply is not delivered to it.
      yield* cli.emit({
        type: "control_response",
        response: { subtype: "success", request_id: id, response: { mcpServers: [] } }
      })
      const waiting = yield* Effect.fork(wait)
      yield* TestClock.adjust("61 seconds")
      expect(waiting.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(waiting)
    }).pipe(Effect.provide(env)))

  it.scoped("a started request answered before anyone waits is delivered to the wait", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const wait = yield* control.start(Control.McpStatus)
      const id = yield* sentRequest(cli, "mcp_status")
      yield* cli.emit({
        type: "control_response",
        response: { subtype: "success", request_id: id, response: { mcpServers: [] } }
      })
      expect(yield* wait).toEqual({ mcpServers: [] })
    }).pipe(Effect.provide(env)))

  it.scoped("onSettled sees a started request's decoded reply, or its failure, before any wait completes", () =>
    Effect.gen(function*() {
      const control = yield* ControlChannel
      const cli = yield* FakeCli.FakeCli
      const seen: Array<Exit.Exit<unknown, unknown>> = []
      // Nobody waits on `answered`: the reply is still decoded and handed to onSettled.
      const answered = yield* control.start(Control.McpStatus, {}, {
        onSettled: (outcome) => Effect.sync(() => void seen.push(outcome))
      })
      const answeredId = yield* sentRequest(cli, "mcp_status")
      yield* cli.emit({
        type: "control_response",
        response: { subtype: "success", request_id: answeredId, response: { mcpServers: [] } }
      })
      expect(yield* answered).toEqual({ mcpServers: [] })
      expect(seen).toEqual([Exit.succeed({ mcpServers: [] })])

      const late = yield* control.start(Control.McpStatus, {}, {
        timeout: "2 seconds",
        onSettled: (outcome) => Effect.sync(() => void seen.push(outcome))
      })
      yield* TestClock.adjust("2 seconds")
      expect(yield* Effect.flip(late)).toMatchObject({ _tag: "TimeoutException", timeoutMillis: 2000 })
      const [, timedOut] = seen
      expect(timedOut !== undefined && Exit.isFailure(timedOut) && Cause.squash(timedOut.cause))
        .toMatchObject({ _tag: "TimeoutException" })
    }).pipe(Effect.provide(env)))
})
