// The subprocess transport's stdin over an in-process `Writable` whose writes complete only when
// the test says: a full pipe holds senders back until `drain`, frames keep their order, and an
// ended or failed pipe is a CLIConnectionError.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Writable } from "node:stream"
import { StdinFrames } from "../../../src/internal/process/stdin.js"

// A pipe with a 16-byte buffer; each write's callback is held until `flush`.
const pipe = () => {
  const written: Array<string> = []
  const held: Array<() => void> = []
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString("utf8"))
      held.push(() => callback())
    }
  })
  const flush = () => {
    while (held.length > 0) held.shift()?.()
  }
  return { stream, written, flush }
}

describe("StdinFrames", () => {
  it.effect("a sender waits while the pipe is full and goes on at drain; frames are written in order", () =>
    Effect.gen(function*() {
      const { flush, stream, written } = pipe()
      const stdin = new StdinFrames(stream)
      // Larger than the buffer: `write` asks the sender to wait for `drain`.
      const first = yield* Effect.fork(stdin.send({ n: 1, pad: "x".repeat(32) }))
      const second = yield* Effect.fork(stdin.send({ n: 2 }))
      yield* Effect.yieldNow()
      expect(first.unsafePoll()).toBeNull()
      expect(second.unsafePoll()).toBeNull()
      flush()
      yield* Effect.yieldNow()
      flush()
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(written.join("")).toBe(`{"n":1,"pad":"${"x".repeat(32)}"}\n{"n":2}\n`)
      // With room in the pipe a send does not wait.
      flush()
      yield* stdin.send({ n: 3 })
    }))

  it.effect("after end, and after a pipe error, a send fails with CLIConnectionError", () =>
    Effect.gen(function*() {
      const ended = new StdinFrames(pipe().stream)
      yield* ended.end
      expect(yield* Effect.flip(ended.send({ a: 1 }))).toMatchObject({
        _tag: "CLIConnectionError",
        reason: "InputClosed"
      })

      const { stream } = pipe()
      const failed = new StdinFrames(stream)
      stream.destroy(new Error("EPIPE"))
      yield* Effect.promise(() => new Promise((resolve) => stream.once("close", resolve)))
      const error = yield* Effect.flip(failed.send({ a: 1 }))
      expect(error.reason).toBe("WriteFailed")
      expect(error.message).toContain("EPIPE")
    }))

  it.effect("a sender held by a full pipe is released when the pipe closes", () =>
    Effect.gen(function*() {
      const { stream } = pipe()
      const stdin = new StdinFrames(stream)
      const held = yield* Effect.fork(stdin.send({ pad: "x".repeat(64) }))
      yield* Effect.yieldNow()
      expect(held.unsafePoll()).toBeNull()
      stream.destroy()
      yield* Fiber.join(held)
    }))
})
