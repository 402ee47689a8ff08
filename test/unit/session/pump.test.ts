// The message pump behind a query over a stream of prompts: chunks handed over one at a time, the
// end and failures of the pull passed on, and the feed's failure overtaking what waits.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Data, Effect, Exit, Fiber, Option, Queue, Stream } from "effect"
import * as Pump from "../../../src/internal/session/pump.js"

class PullError extends Data.TaggedError("PullError")<{ readonly reason: string }> {}
class FeedError extends Data.TaggedError("FeedError")<{ readonly reason: string }> {}

// A pull over a queue of chunks the test offers; `undefined` ends it, an error fails it.
const queuedPull = Effect.gen(function*() {
  const queue = yield* Queue.unbounded<Chunk.Chunk<number> | PullError | undefined>()
  let taken = 0
  const pull = Effect.flatMap(Queue.take(queue), (next) => {
    if (next === undefined) return Effect.fail(Option.none())
    if (next instanceof PullError) return Effect.fail(Option.some(next))
    taken++
    return Effect.succeed(next)
  })
  return { queue, pull, taken: () => taken }
})

describe("Pump", () => {
  it.scoped("delivers the pull's chunks in order and ends with it", () =>
    Effect.gen(function*() {
      const { pull, queue } = yield* queuedPull
      const pump = yield* Pump.make<number, PullError, FeedError>(pull)
      yield* Queue.offerAll(queue, [Chunk.make(1, 2), Chunk.make(3), undefined])
      const all = yield* Stream.runCollect(pump.stream)
      expect(Chunk.toReadonlyArray(all)).toEqual([1, 2, 3])
    }))

  it.scoped("takes the next chunk only once the consumer has taken the last one", () =>
    Effect.gen(function*() {
      const { pull, queue, taken } = yield* queuedPull
      const pump = yield* Pump.make<number, PullError, FeedError>(pull)
      yield* Queue.offerAll(queue, [Chunk.make(1), Chunk.make(2), Chunk.make(3)])
      // Nobody consumes: the pump holds one chunk and waits.
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
      expect(taken()).toBe(1)
      const first = yield* Stream.runCollect(Stream.take(pump.stream, 1))
      expect(Chunk.toReadonlyArray(first)).toEqual([1])
    }))

  it.scoped("passes the pull's failure on after the chunks before it", () =>
    Effect.gen(function*() {
      const { pull, queue } = yield* queuedPull
      const pump = yield* Pump.make<number, PullError, FeedError>(pull)
      yield* Queue.offerAll(queue, [Chunk.make(1), new PullError({ reason: "stdout" })])
      const seen: Array<number> = []
      const error = yield* pump.stream.pipe(
        Stream.runForEach((n) => Effect.sync(() => seen.push(n))),
        Effect.flip
      )
      expect(seen).toEqual([1])
      expect(error).toEqual(new PullError({ reason: "stdout" }))
    }))

  it.scoped("the feed's failure wakes a consumer waiting for the next chunk", () =>
    Effect.gen(function*() {
      const { pull } = yield* queuedPull
      const pump = yield* Pump.make<number, PullError, FeedError>(pull)
      const consumer = yield* Effect.fork(Stream.runDrain(pump.stream))
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
      pump.failed(Cause.fail(new FeedError({ reason: "prompts" })))
      const exit = yield* Fiber.await(consumer)
      expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(
        Option.some(new FeedError({ reason: "prompts" }))
      )
    }))

  it.scoped("a defect of the feed ends the stream with that defect", () =>
    Effect.gen(function*() {
      const { pull, queue } = yield* queuedPull
      const pump = yield* Pump.make<number, PullError, FeedError>(pull)
      yield* Queue.offer(queue, Chunk.make(1))
      pump.failed(Cause.die("boom"))
      const exit = yield* Effect.exit(Stream.runDrain(pump.stream))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))
})
