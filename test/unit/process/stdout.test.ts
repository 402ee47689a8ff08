// The subprocess transport's stdout reader, over a real in-process stream (a `PassThrough` stands
// for the pipe): frames in order across chunk boundaries, stdout paused while the reader is behind
// and resumed when it takes, frames before a protocol error delivered before it, the end.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Logger, LogLevel, Option, Stream } from "effect"
import { PassThrough } from "node:stream"
import { READ_AHEAD_BYTES, StdoutFrames } from "../../../src/internal/process/stdout.js"
import { CLIConnectionError } from "../../../src/SdkError.js"

const line = (value: unknown) => JSON.stringify(value) + "\n"

const values = (chunk: Chunk.Chunk<{ readonly value: unknown }>) => Chunk.toArray(chunk).map((f) => f.value)

// `next` as a pull of `Stream.toPull`'s shape (the end as `None`), which the tests below read.
const pull = (source: StdoutFrames) =>
  Effect.flatMap(
    Effect.mapError(source.next, Option.some),
    (chunk) => chunk === undefined ? Effect.fail(Option.none()) : Effect.succeed(chunk)
  )

// The tag of the error a pull failed with (`Some(error)`), if it failed with one.
const failedWith = (exit: Exit.Exit<unknown, Option.Option<{ readonly _tag: string }>>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" && Option.isSome(exit.cause.error)
    ? exit.cause.error.value._tag
    : undefined

// Reads until the end; returns every frame's value, or the failure.
const drain = (source: StdoutFrames) =>
  Effect.gen(function*() {
    const out: Array<unknown> = []
    for (;;) {
      const exit = yield* Effect.exit(pull(source))
      if (Exit.isSuccess(exit)) {
        out.push(...values(exit.value))
        continue
      }
      return { out, exit }
    }
  })

describe("StdoutFrames (the subprocess transport's stdout)", () => {
  it.effect("delivers every frame in order across arbitrary chunk boundaries, then the end", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const source = StdoutFrames.fromReadable(stdout, 1024 * 1024)
      const text = Array.from({ length: 200 }, (_, i) => line({ n: i, text: "é€😀".repeat(i % 7) })).join("")
      const bytes = new TextEncoder().encode(text)
      // Cut every 37 bytes: multi-byte characters and lines split across chunks.
      for (let i = 0; i < bytes.length; i += 37) stdout.write(bytes.subarray(i, i + 37))
      stdout.end()
      const { exit, out } = yield* drain(source)
      expect(out.map((v) => (typeof v === "object" && v !== null && "n" in v ? v.n : undefined))).toEqual(
        Array.from({ length: 200 }, (_, i) => i)
      )
      expect(out[13]).toEqual({ n: 13, text: "é€😀".repeat(6) })
      // The end of stdout is the end of the frames: `None`.
      expect(exit).toStrictEqual(Exit.fail(Option.none()))
    }))

  it.effect("a reader waiting for frames is woken by the next complete line, not by a partial one", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const source = StdoutFrames.fromReadable(stdout, 1024)
      const fiber = yield* Effect.fork(pull(source))
      yield* Effect.yieldNow()
      stdout.write("{\"a\":")
      yield* Effect.yieldNow()
      expect(fiber.unsafePoll()).toBeNull()
      stdout.write("1}\n")
      const chunk = yield* Fiber.join(fiber)
      expect(values(chunk)).toEqual([{ a: 1 }])
    }))

  it.effect("stdout is paused while the reader is behind, and resumed when it takes the frames", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const source = StdoutFrames.fromReadable(stdout, 1024 * 1024)
      const frame = line({ pad: "x".repeat(1000) })
      const perWrite = 64
      const writes = Math.ceil(READ_AHEAD_BYTES / (frame.length * perWrite)) + 1
      // Flowing mode: each write is handed to the reader's `data` handler at once.
      for (let i = 0; i < writes; i++) stdout.write(frame.repeat(perWrite))
      expect(stdout.isPaused()).toBe(true)
      // What came before the pause: at least the read-ahead, at most one write more.
      const taken = yield* pull(source)
      expect(Chunk.size(taken) * frame.length).toBeGreaterThanOrEqual(READ_AHEAD_BYTES)
      expect(Chunk.size(taken) * frame.length).toBeLessThan(READ_AHEAD_BYTES + perWrite * frame.length)
      expect(stdout.isPaused()).toBe(false)
      // The rest, held back by the pause, follows; nothing is lost.
      stdout.end()
      const { out } = yield* drain(source)
      expect(Chunk.size(taken) + out.length).toBe(writes * perWrite)
    }))

  it.effect("frames before a line that is not JSON are delivered, then the protocol error", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const source = StdoutFrames.fromReadable(stdout, 1024)
      stdout.write(line({ a: 1 }) + "debug noise\n" + line({ b: 2 }) + "{not json\n" + line({ c: 3 }))
      const { exit, out } = yield* drain(source)
      expect(out).toEqual([{ a: 1 }, { b: 2 }])
      expect(failedWith(exit)).toBe("CLIJSONDecodeError")
    }))

  it.effect("a last line without a newline is delivered at the end; a too-long line is CLIJSONDecodeError", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const source = StdoutFrames.fromReadable(stdout, 1024)
      stdout.end(line({ a: 1 }) + "{\"last\":true}")
      const { out } = yield* drain(source)
      expect(out).toEqual([{ a: 1 }, { last: true }])

      const long = new PassThrough()
      const limited = StdoutFrames.fromReadable(long, 100)
      long.write("{\"pad\":\"" + "y".repeat(200))
      const { exit } = yield* drain(limited)
      expect(failedWith(exit)).toBe("CLIJSONDecodeError")
    }))

  it.effect("a read error of the pipe fails the frames with CLIConnectionError ReadFailed", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const source = StdoutFrames.fromReadable(stdout, 1024)
      stdout.destroy(new Error("EIO: i/o error"))
      const { exit } = yield* drain(source)
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail"
        ? Option.getOrUndefined(exit.cause.error)
        : undefined
      expect(error).toMatchObject({ _tag: "CLIConnectionError", reason: "ReadFailed" })
      expect(error?.message).toContain("EIO")
    }))
})

describe("StdoutFrames fed by any source", () => {
  const enc = new TextEncoder()

  it.effect("frames from the chunks before a source's failure come first, then the failure, then the end", () =>
    Effect.gen(function*() {
      const source = new StdoutFrames(1024)
      source.onData(enc.encode(line({ a: 1 }) + "{\"b\""))
      source.onData(enc.encode(":2}\n" + "{\"partial"))
      source.onFailure(new CLIConnectionError({ reason: "ReadFailed", description: "pipe broke" }))
      // Nothing after the failure is kept.
      source.onData(enc.encode(line({ c: 3 })))
      const { exit, out } = yield* drain(source)
      expect(out).toEqual([{ a: 1 }, { b: 2 }])
      expect(failedWith(exit)).toBe("CLIConnectionError")
      expect(yield* Effect.exit(pull(source))).toStrictEqual(Exit.fail(Option.none()))
    }))

  it.effect("a waiting reader is woken by a push; the stream ends at onEnd; frames are sized in UTF-8 bytes", () =>
    Effect.gen(function*() {
      const source = new StdoutFrames(1024)
      const fiber = yield* Effect.fork(Stream.runCollect(source.stream))
      yield* Effect.yieldNow()
      source.onData(enc.encode(line({ t: "日本" })))
      source.onEnd()
      const frames = Chunk.toArray(yield* Fiber.join(fiber))
      expect(frames).toEqual([{ value: { t: "日本" }, bytes: 15 }])
    }))

  it.effect("a reader interrupted while it waits takes nothing: the frames that come next go to the next reader", () =>
    Effect.gen(function*() {
      const source = new StdoutFrames(1024)
      const first = yield* Effect.fork(pull(source))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      source.onData(enc.encode(line({ a: 1 })))
      source.onData(enc.encode(line({ b: 2 })))
      expect(values(yield* pull(source))).toEqual([{ a: 1 }, { b: 2 }])
      // A reader that waits after the interrupted one is woken as usual.
      const second = yield* Effect.fork(pull(source))
      yield* Effect.yieldNow()
      source.onData(enc.encode(line({ c: 3 })))
      expect(values(yield* Fiber.join(second))).toEqual([{ c: 3 }])
    }))

  it.effect("without flow hooks nothing is paused: everything pushed is kept for the reader", () =>
    Effect.gen(function*() {
      const source = new StdoutFrames(1024 * 1024)
      const frame = enc.encode(line({ pad: "x".repeat(1000) }))
      const count = Math.ceil((2 * READ_AHEAD_BYTES) / frame.length)
      for (let i = 0; i < count; i++) source.onData(frame)
      source.onEnd()
      const { out } = yield* drain(source)
      expect(out).toHaveLength(count)
    }))

  it.effect("noise lines are logged at debug level and skipped", () =>
    Effect.gen(function*() {
      const logged: Array<unknown> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Debug") logged.push(message)
      })
      const source = new StdoutFrames(1024)
      source.onData(enc.encode("[debug] hello\n" + line({ a: 1 })))
      source.onEnd()
      const { out } = yield* drain(source).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
      expect(out).toEqual([{ a: 1 }])
      expect(JSON.stringify(logged)).toContain("[debug] hello")
    }))
})
