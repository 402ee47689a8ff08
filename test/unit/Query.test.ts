// Unit tests of `ClaudeAgent.query` with prompt streams, over the in-memory fake CLI (a mock
// transport, no process): every prompt stream, fault and bad input ends in a typed result.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Data, Deferred, Effect, Exit, Fiber, Layer, Ref, Stream, TestClock } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Control from "../../src/schema/Control.js"
import { Transport } from "../../src/services/Transport.js"
import * as Message from "../../src/schema/Message.js"
import type { SdkError } from "../../src/SdkError.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

class Greeting extends Effect.Tag("test/Greeting")<Greeting, { readonly text: string }>() {}

class PromptSourceError extends Data.TaggedError("PromptSourceError")<{ readonly reason: string }> {}

// A fake CLI that records when its input ends (the SDK's half of stopping the process).
const withInputEnd = Effect.gen(function*() {
  const ended = yield* Deferred.make<void>()
  const layer = FakeCli.layerClaudeAgent({
    onInputEnd: (cli) => Deferred.succeed(ended, undefined).pipe(Effect.zipRight(cli.exit({ exitCode: 0 })))
  })
  return { ended, layer }
})

describe("ClaudeAgent.query with a prompt stream (fake CLI)", () => {
  it.effect("an empty prompt stream ends with no messages, and the CLI's input is closed", () =>
    Effect.gen(function*() {
      const { ended, layer } = yield* withInputEnd
      const messages = yield* ClaudeAgent.query(Stream.empty).pipe(Stream.runCollect, Effect.provide(layer))
      expect(Chunk.size(messages)).toBe(0)
      expect(yield* Deferred.isDone(ended)).toBe(true)
    }))

  it.effect("a prompt stream that dies ends the query with that defect and closes the CLI's input", () =>
    Effect.gen(function*() {
      const { ended, layer } = yield* withInputEnd
      const exit = yield* ClaudeAgent.query(Stream.concat(Stream.make("one"), Stream.dieMessage("boom"))).pipe(
        Stream.runCollect,
        Effect.provide(layer),
        Effect.exit
      )
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) expect(Cause.pretty(exit.cause)).toContain("boom")
      yield* Deferred.await(ended)
    }))

  it.effect("a prompt stream that fails ends the query with its own typed error", () =>
    Effect.gen(function*() {
      const { ended, layer } = yield* withInputEnd
      const prompts = Stream.concat(Stream.make("one"), Stream.fail(new PromptSourceError({ reason: "queue closed" })))
      // The error type is the union of the SDK's and the prompt stream's: this line would not compile otherwise.
      const error: SdkError | PromptSourceError = yield* ClaudeAgent.query(prompts).pipe(
        Stream.runDrain,
        Effect.provide(layer),
        Effect.flip
      )
      expect(error).toBeInstanceOf(PromptSourceError)
      yield* Deferred.await(ended)
    }))

  it.effect("a prompt stream that fails while the consumer waits for messages ends the query at once", () =>
    Effect.gen(function*() {
      // No prompt is sent, so the consumer is waiting on the message stream when the prompt
      // stream fails: the failure must reach it rather than wait for the CLI's output.
      const gate = yield* Deferred.make<void>()
      const prompts = Stream.fromEffect(
        Effect.zipRight(Deferred.await(gate), Effect.fail(new PromptSourceError({ reason: "late" })))
      )
      const consumer = yield* ClaudeAgent.query(prompts).pipe(
        Stream.runDrain,
        Effect.provide(FakeCli.layerClaudeAgent()),
        Effect.fork
      )
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      const exit = yield* Fiber.await(consumer)
      expect(exit).toMatchObject({ _tag: "Failure" })
      if (Exit.isFailure(exit)) expect(Cause.failureOption(exit.cause)).toMatchObject({ value: { reason: "late" } })
    }))

  it.effect("a prompt stream that needs services passes that requirement on to the query", () =>
    Effect.gen(function*() {
      const prompts = Stream.fromEffect(Effect.map(Greeting, (g) => g.text))
      const texts = yield* ClaudeAgent.query(prompts).pipe(
        Stream.filter(Message.isAssistant),
        Stream.map(Message.assistantText),
        Stream.runCollect,
        Effect.provide(FakeCli.layerClaudeAgent()),
        Effect.provideService(Greeting, { text: "hello there" })
      )
      expect(Chunk.toArray(texts)).toEqual(["echo: hello there"])
    }))

  it.effect("one turn per prompt: each prompt is written after the previous prompt's result", () =>
    Effect.gen(function*() {
      // When the fake CLI starts a turn, how many user messages has the SDK written so far?
      const seenAtTurnStart = yield* Ref.make<ReadonlyArray<number>>([])
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (message, cli) =>
          Effect.gen(function*() {
            const users = (yield* cli.sent).filter((f) => f.type === "user").length
            yield* Ref.update(seenAtTurnStart, (all) => [...all, users])
            yield* FakeCli.echoTurn(message, cli)
          })
      })
      const messages = yield* ClaudeAgent.query(Stream.make("a", "b", "c", "d")).pipe(
        Stream.runCollect,
        Effect.provide(layer)
      )
      expect(Chunk.toArray(messages).filter(Message.isResult)).toHaveLength(4)
      expect(yield* Ref.get(seenAtTurnStart)).toEqual([1, 2, 3, 4])
    }))

  it.effect("a prompt that is neither a string nor a Stream is an OptionsError naming the prompt", () =>
    Effect.gen(function*() {
      // What untyped JavaScript could pass: the compiler would refuse it.
      const notAPrompt: unknown = 42
      const run: Stream.Stream<unknown, SdkError, ClaudeAgent.ClaudeAgent> = Reflect.apply(
        ClaudeAgent.query,
        undefined,
        [
          notAPrompt
        ]
      )
      const bad = yield* Stream.runDrain(run).pipe(Effect.flip, Effect.provide(FakeCli.layerClaudeAgent()))
      expect(bad).toMatchObject({ _tag: "OptionsError", field: "prompt" })
    }))
})

describe("ClaudeAgent.query's session scope (fake CLI)", () => {
  it.effect("a consumer that stops early closes the session: the CLI's input is closed before the stream returns", () =>
    Effect.gen(function*() {
      const { ended, layer } = yield* withInputEnd
      const first = yield* ClaudeAgent.query("hello").pipe(Stream.take(1), Stream.runCollect, Effect.provide(layer))
      expect(Chunk.size(first)).toBe(1)
      expect(yield* Deferred.isDone(ended)).toBe(true)
    }))

  it.effect("a session that fails to open ends the query with its error", () =>
    Effect.gen(function*() {
      const error = yield* ClaudeAgent.query("hello", { maxTurns: -1 }).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(FakeCli.layerClaudeAgent())
      )
      expect(error).toMatchObject({ _tag: "OptionsError" })
    }))
})

describe("a CLI that never answers initialize (fake CLI)", () => {
  // Like a wrapper script waiting on a login prompt: it starts, reads, and never writes a line.
  const silent = FakeCli.layerClaudeAgent({
    answers: [FakeCli.answer(Control.Initialize, () => Effect.never)],
    onUserMessage: () => Effect.never
  })

  it.effect("query fails with TimeoutException for initialize at the control deadline", () =>
    Effect.gen(function*() {
      const fiber = yield* ClaudeAgent.query("hi", { controlTimeout: "2 seconds" }).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.fork
      )
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutException", subtype: "initialize", timeoutMillis: 2000 })
    }).pipe(Effect.provide(silent)))

  it.effect("a session's message stream fails the same way", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ controlTimeout: "2 seconds" })
        yield* session.send("hi")
        return yield* session.messages.pipe(Stream.runDrain, Effect.flip)
      })).pipe(Effect.fork)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutException", subtype: "initialize" })
    }).pipe(Effect.provide(silent)))
})

describe("ClaudeAgent.prewarm (fake CLI)", () => {
  it.scoped("starts and initializes the CLI before the prompt; its queries run on that process", () =>
    Effect.gen(function*() {
      const initialized = yield* Deferred.make<void>()
      let spawned = 0
      const agent = ClaudeAgent.make({
        transport: Layer.scoped(
          Transport,
          Effect.suspend(() =>
            Effect.map(
              FakeCli.make({
                answers: [
                  FakeCli.answer(
                    Control.Initialize,
                    (_payload, _cli, byDefault) =>
                      Deferred.succeed(initialized, undefined).pipe(Effect.zipRight(byDefault))
                  )
                ]
              }),
              ({ transport }) => {
                spawned++
                return transport
              }
            )
          )
        )
      })
      const warm = yield* ClaudeAgent.prewarm().pipe(Effect.provideService(ClaudeAgent.ClaudeAgent, agent))
      // Initialized before any prompt exists.
      expect(yield* Deferred.isDone(initialized)).toBe(true)
      const first = yield* warm.query("one").pipe(
        Stream.filter(Message.isAssistant),
        Stream.map(Message.assistantText),
        Stream.runCollect
      )
      const second = yield* warm.query("two").pipe(
        Stream.filter(Message.isAssistant),
        Stream.map(Message.assistantText),
        Stream.runCollect
      )
      expect([...Chunk.toArray(first), ...Chunk.toArray(second)]).toEqual(["echo: one", "echo: two"])
      expect(spawned).toBe(1)
    }))
})
