// End-to-end: the real `claude` binary (from node_modules) against ScriptedModel on 127.0.0.1.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids, isAlive } from "../support/processes.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const resultOf = (messages: Chunk.Chunk<Message.Message>) => Chunk.toArray(messages).filter(Message.isResult)

describe("e2e: real claude CLI against ScriptedModel", () => {
  it.scopedLive("one-shot query: text reply, typed messages, success result", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("Hello from the scripted model.") }])
      const options = yield* model.options()
      const messages = yield* ClaudeAgent.query("hi", options).pipe(Stream.runCollect)
      const all = Chunk.toArray(messages)
      expect(all.some(Message.isSystemInit)).toBe(true)
      const assistant = all.filter(Message.isAssistant).map(Message.assistantText).join("")
      expect(assistant).toBe("Hello from the scripted model.")
      const [result] = resultOf(messages)
      expect(result?.subtype).toBe("success")
      expect(result !== undefined && "result" in result ? result.result : undefined).toBe(
        "Hello from the scripted model."
      )
      const main = yield* model.mainRequests
      expect(main).toHaveLength(1)
      expect(ScriptedModel.lastUserText(main[0]!)).toContain("hi")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("multi-turn session, setModel, setPermissionMode, mcpServerStatus, initializationResult", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.text("first answer") },
        { reply: ScriptedModel.text("second answer") }
      ])
      const session = yield* ClaudeAgent.session(yield* model.options())
      yield* session.send("turn one")
      const one = yield* session.receiveResponse.pipe(Stream.runCollect)
      expect(resultOf(one).map((r) => ("result" in r ? r.result : undefined))).toEqual(["first answer"])

      const init = yield* session.initializationResult
      expect(init.pid).toBeTypeOf("number")
      expect(Option.getOrUndefined(session.pid)).toBe(init.pid)

      expect((yield* session.setModel("claude-haiku-4-5")).model).toBe("claude-haiku-4-5")
      expect((yield* session.setPermissionMode("acceptEdits")).mode).toBe("acceptEdits")
      const invalid = yield* session.setPermissionMode("not-a-mode" as never).pipe(Effect.flip)
      // Refused before it is sent: the mode is not one the protocol has.
      expect(invalid).toMatchObject({ _tag: "OptionsError", field: "set_permission_mode" })
      expect((yield* session.mcpServerStatus()).mcpServers).toEqual([])

      yield* session.send("turn two")
      const two = yield* session.receiveResponse.pipe(Stream.runCollect)
      expect(resultOf(two).map((r) => ("result" in r ? r.result : undefined))).toEqual(["second answer"])
      const main = yield* model.mainRequests
      expect(main.map((r) => r.model)).toEqual([expect.not.stringMatching(/haiku/), "claude-haiku-4-5"])
      expect(typeof (yield* session.sessionId)).toBe("string")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("includePartialMessages delivers stream_event deltas", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{
        reply: ScriptedModel.slowText("abcdefghij", { chunkSize: 2, delayMs: 1 })
      }])
      const messages = yield* ClaudeAgent.query("hi", { ...(yield* model.options()), includePartialMessages: true })
        .pipe(
          Stream.runCollect
        )
      const events = Chunk.toArray(messages).filter((m) => m.type === "stream_event")
      expect(events.length).toBeGreaterThanOrEqual(5)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("interrupt during a slowly streamed reply ends the turn; the session stays usable", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("z".repeat(400), { chunkSize: 4, delayMs: 25 }) },
        { reply: ScriptedModel.text("still here") }
      ])
      const session = yield* ClaudeAgent.session({ ...(yield* model.options()), includePartialMessages: true })
      yield* session.send("write slowly")
      const streaming = yield* Deferred.make<void>()
      const turn = yield* session.receiveResponse.pipe(
        Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
        Stream.runCollect,
        Effect.fork
      )
      yield* Deferred.await(streaming)
      const receipt = yield* session.interrupt()
      expect(receipt.still_queued).toEqual([])
      const [interrupted] = resultOf(yield* Fiber.join(turn))
      expect(interrupted?.subtype).toBe("error_during_execution")
      expect(interrupted?.is_error).toBe(true)

      yield* session.send("are you still there?")
      const next = resultOf(yield* session.receiveResponse.pipe(Stream.runCollect))
      expect(next.map((r) => ("result" in r ? r.result : undefined))).toEqual(["still here"])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("an API error (HTTP 500) arrives as api_retry messages and an error result; the stream does not fail", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.httpError(500, "api_error", "fake internal error"), times: Infinity }
      ])
      const options = yield* model.options()
      const messages = yield* ClaudeAgent.query("hi", {
        ...options,
        env: { ...options.env, CLAUDE_CODE_MAX_RETRIES: "2" }
      }).pipe(Stream.runCollect)
      const all = Chunk.toArray(messages)
      const retries = all.filter((m) => m.type === "system" && "subtype" in m && m.subtype === "api_retry")
      expect(retries).toHaveLength(2)
      const [result] = resultOf(messages)
      expect(result?.is_error).toBe(true)
      expect(result !== undefined && "api_error_status" in result ? result.api_error_status : undefined).toBe(500)

      const failed = yield* ClaudeAgent.query("hi", {
        ...options,
        env: { ...options.env, CLAUDE_CODE_MAX_RETRIES: "0" }
      })
        .pipe(ClaudeAgent.failOnErrorResult, Stream.runDrain, Effect.flip)
      expect(failed._tag).toBe("ResultError")
      expect(failed.message).toContain("API error (HTTP 500)")
      expect(failed.message).not.toContain("success")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("closing the scope mid-turn leaves no claude process behind", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("y".repeat(2000), { chunkSize: 2, delayMs: 50 }) }
      ])
      const options = yield* model.options()
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ ...options, includePartialMessages: true })
        yield* session.send("go")
        yield* session.receiveResponse.pipe(
          Stream.filter((m) => m.type === "stream_event"),
          Stream.take(1),
          Stream.runDrain
        )
        const pid = Option.getOrThrow(session.pid)
        expect(isAlive(pid)).toBe(true)
        return pid
      }))
      // The scope is closed: the finalizer waited for the process to be reaped.
      expect(isAlive(pid)).toBe(false)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("interrupting the consumer of query ends the process", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("w".repeat(2000), { chunkSize: 2, delayMs: 50 }) }
      ])
      const options = yield* model.options()
      const fiber = yield* ClaudeAgent.query("go", options).pipe(Stream.runDrain, Effect.fork)
      // The CLI is mid-turn once the model has been asked.
      yield* model.waitForRequests(1)
      const before = claudePids(options.env.HOME)
      expect(before.length).toBe(1)
      yield* Fiber.interrupt(fiber)
      expect(claudePids(options.env.HOME)).toEqual([])
    }).pipe(Effect.provide(AgentLive)))
})
