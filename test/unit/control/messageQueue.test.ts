// The byte-bounded message queue between the reader and the user.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Option, Stream } from "effect"
import * as MessageQueue from "../../../src/internal/control/messageQueue.js"
import { CLIConnectionError } from "../../../src/SdkError.js"

// Waits until a fiber is parked on something (a latch), without sleeping.
const suspended = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
  Effect.repeat(Fiber.status(fiber), { until: (status) => status._tag === "Suspended" })

describe("MessageQueue", () => {
  it.effect("delivers the offered messages in order, then ends cleanly", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(1_000)
      yield* queue.offer([1, 2], 10)
      yield* queue.offer([3], 5)
      queue.end(undefined)
      yield* queue.offer([4], 5)
      expect(Chunk.toReadonlyArray(yield* Stream.runCollect(queue.stream))).toEqual([1, 2, 3])
    }))

  it.effect("a consumer waiting on an empty queue wakes for the next offer", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(1_000)
      const consumer = yield* Effect.fork(Stream.runCollect(Stream.take(queue.stream, 2)))
      yield* suspended(consumer)
      yield* queue.offer(["a", "b"], 2)
      expect(Chunk.toReadonlyArray(yield* Fiber.join(consumer))).toEqual(["a", "b"])
    }))

  it.effect("fails after what it holds when ended with an error", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(1_000)
      yield* queue.offer(["m"], 1)
      const error = new CLIConnectionError({ reason: "ReadFailed", description: "gone" })
      queue.end(error)
      const seen: Array<unknown> = []
      const result = yield* Stream.runForEach(queue.stream, (m) => Effect.sync(() => seen.push(m))).pipe(Effect.either)
      expect(seen).toEqual(["m"])
      expect(result).toEqual(Either.left(error))
    }))

  it.effect("at the cap the offer waits for the consumer to take what is queued", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(10)
      yield* queue.offer(["small"], 4)
      const offer = yield* Effect.fork(queue.offer(["big"], 6))
      yield* suspended(offer)
      expect(Option.isNone(yield* Fiber.poll(offer))).toBe(true)
      const pull = yield* Stream.toPull(queue.stream)
      expect(Chunk.toReadonlyArray(yield* pull)).toEqual(["small", "big"])
      yield* Fiber.join(offer)
      // Below the cap again: offers do not wait.
      yield* queue.offer(["next"], 9)
      expect(Chunk.toReadonlyArray(yield* pull)).toEqual(["next"])
    }).pipe(Effect.scoped))

  it.effect("a lazy end makes its error once, and only when the end is read", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(1_000)
      let made = 0
      queue.endLazily(() => {
        made++
        return new CLIConnectionError({ reason: "InputClosed", description: "closed" })
      })
      queue.end(undefined)
      expect(made).toBe(0)
      const first = yield* Stream.runDrain(queue.stream).pipe(Effect.either)
      const second = yield* Stream.runDrain(queue.stream).pipe(Effect.either)
      expect(Either.isLeft(first) && first.left._tag).toBe("CLIConnectionError")
      expect(second).toEqual(first)
      expect(made).toBe(1)
    }))

  it.effect("its source: poll takes everything queued at once, ready waits for an offer or the end", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(1_000)
      const source = MessageQueue.sourceOf(queue.stream)
      if (source === undefined) return expect.fail("a MessageQueue's stream has a source")
      expect(source.poll()).toBeUndefined()
      expect(source.ended()).toBeUndefined()
      const waiting = yield* Effect.fork(source.ready)
      yield* suspended(waiting)
      yield* queue.offer([1, 2], 2)
      yield* queue.offer([3], 1)
      yield* Fiber.join(waiting)
      expect(source.poll()).toEqual([1, 2, 3])
      expect(source.poll()).toBeUndefined()
      const error = new CLIConnectionError({ reason: "ReadFailed", description: "gone" })
      const ending = yield* Effect.fork(source.ready)
      yield* suspended(ending)
      queue.end(error)
      yield* Fiber.join(ending)
      expect(source.ended()).toEqual(Option.some(error))
      expect(MessageQueue.sourceOf(Stream.make(1))).toBeUndefined()
    }))

  it.scoped("toSource gives any stream's chunks through the same poll, ended and ready", () =>
    Effect.gen(function*() {
      const source = yield* MessageQueue.toSource(Stream.fromIterable([1, 2, 3]).pipe(Stream.rechunk(2)))
      const seen: Array<unknown> = []
      while (source.ended() === undefined) {
        yield* source.ready
        seen.push(...(source.poll() ?? []))
      }
      expect(seen).toEqual([1, 2, 3])
      expect(source.ended()).toEqual(Option.none())
    }))

  it.effect("push queues at once; at the cap it returns the wait for the consumer", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue.make(10)
      expect(queue.push(["a"], 4)).toBeUndefined()
      const wait = queue.push(["b"], 6)
      if (wait === undefined) return expect.fail("at the cap, push returns the wait")
      const waiting = yield* Effect.fork(wait)
      yield* suspended(waiting)
      const pull = yield* Stream.toPull(queue.stream)
      expect(Chunk.toReadonlyArray(yield* pull)).toEqual(["a", "b"])
      yield* Fiber.join(waiting)
      queue.end(undefined)
      expect(queue.push(["c"], 100)).toBeUndefined()
    }).pipe(Effect.scoped))
})
