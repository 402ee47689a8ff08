// A consumer that is behind must not stall the CLI's control requests: messages queue (bounded by
// bytes), and the reader keeps reading and answering. Over the fake CLI (a mock transport).
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Logger, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const stopInput = { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }

// A turn of `count` assistant messages, then a hook request, then the result.
const floodThenHook = (count: number, answered: Deferred.Deferred<FakeCli.JsonObject>) =>
  FakeCli.layerClaudeAgent({
    onUserMessage: (_message, cli) =>
      Effect.gen(function*() {
        for (let i = 0; i < count; i++) yield* cli.emit(FakeCli.frames.assistantText(`message ${i} ${"x".repeat(120)}`))
        const answer = yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stopInput })
        yield* Deferred.succeed(answered, answer)
        yield* cli.emit(FakeCli.frames.result("done"))
      })
  })

const hooks = { Stop: [{ hooks: [() => Effect.succeed({ continue: true })] }] }

describe("a slow consumer (fake CLI)", () => {
  it.scoped("50k messages wait for a paused consumer while a hook behind them is answered; nothing is lost", () =>
    Effect.gen(function*() {
      const answered = yield* Deferred.make<FakeCli.JsonObject>()
      const rssBefore = process.memoryUsage().rss
      const session = yield* ClaudeAgent.session({ hooks }).pipe(Effect.provide(floodThenHook(50_000, answered)))
      yield* session.send("go")
      // Nobody reads messages yet: the hook is answered anyway.
      const answer = yield* Deferred.await(answered)
      expect(answer).toMatchObject({ subtype: "success", response: { continue: true } })
      const growth = process.memoryUsage().rss - rssBefore
      expect(growth).toBeLessThan(300 * 1024 * 1024)
      const messages = yield* session.receiveResponse.pipe(Stream.runCollect)
      const assistants = Chunk.toArray(messages).filter(Message.isAssistant)
      expect(assistants).toHaveLength(50_000)
      expect(Message.assistantText(assistants[49_999]!)).toContain("message 49999 ")
      expect(Chunk.toArray(messages).filter(Message.isResult)).toHaveLength(1)
    }))

  it.scoped("at messageBufferBytes the reader waits for the consumer, says so once, and loses nothing", () =>
    Effect.gen(function*() {
      const answered = yield* Deferred.make<FakeCli.JsonObject>()
      const full = yield* Deferred.make<string>()
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag !== "Warning") return
        const text = [message].flat().map(String).join(" ")
        warnings.push(text)
        Deferred.unsafeDone(full, Effect.succeed(text))
      })
      const session = yield* ClaudeAgent.session({ hooks, messageBufferBytes: 64 * 1024 }).pipe(
        Effect.provide(floodThenHook(2000, answered)),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      yield* session.send("go")
      expect(yield* Deferred.await(full)).toContain("messageBufferBytes")
      // The consumer catches up: everything arrives, and the hook behind the messages is answered.
      const messages = yield* session.receiveResponse.pipe(Stream.runCollect)
      expect(Chunk.toArray(messages).filter(Message.isAssistant)).toHaveLength(2000)
      expect(yield* Deferred.await(answered)).toMatchObject({ subtype: "success" })
      expect(warnings).toHaveLength(1)
    }))
})
