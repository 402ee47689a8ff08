import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import * as Framing from "../../src/internal/framing.js"
import { CLIJSONDecodeError } from "../../src/SdkError.js"

const enc = new TextEncoder()

/** Splits `bytes` at the given cut points into separate chunks. */
const cut = (bytes: Uint8Array, points: ReadonlyArray<number>): Array<Uint8Array> => {
  const sorted = [...new Set(points)].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let prev = 0
  for (const p of sorted) {
    out.push(bytes.slice(prev, p))
    prev = p
  }
  out.push(bytes.slice(prev))
  return out
}

const runLines = (chunks: ReadonlyArray<Uint8Array>, max = 1024 * 1024) =>
  Stream.fromIterable(chunks).pipe(Framing.splitLines(max), Stream.runCollect, Effect.map(Chunk.toArray))

const runFrames = (chunks: ReadonlyArray<Uint8Array>, max = 1024 * 1024) =>
  Stream.fromIterable(chunks).pipe(Framing.frames(max), Stream.map((f) => f.value), Stream.runCollect, Effect.map(Chunk.toArray))

// A small deterministic PRNG so "random" chunk boundaries are reproducible.
const prng = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

describe("framing", () => {
  it.effect("many frames in one chunk and one frame across many chunks", () =>
    Effect.gen(function*() {
      const text = `{"a":1}\n{"b":2}\n{"c":"${"x".repeat(5000)}"}\n`
      const bytes = enc.encode(text)
      expect(yield* runLines([bytes])).toEqual(text.split("\n").slice(0, 3))
      const tiny = cut(bytes, Array.from({ length: bytes.length }, (_, i) => i))
      expect(yield* runLines(tiny)).toEqual(text.split("\n").slice(0, 3))
    }))

  it.effect("multi-byte UTF-8 split across chunks survives at every cut point", () =>
    Effect.gen(function*() {
      const text = `{"t":"ok 🚀 é 中文 ok"}\n`
      const bytes = enc.encode(text)
      for (let p = 1; p < bytes.length; p++) {
        const frames = yield* runFrames(cut(bytes, [p]))
        expect(frames).toEqual([{ t: "ok 🚀 é 中文 ok" }])
      }
    }))

  it.effect("random chunk boundaries give the same frames as one chunk", () =>
    Effect.gen(function*() {
      const values = Array.from({ length: 200 }, (_, i) => ({ i, s: "ü🚀".repeat(i % 7), n: null }))
      const bytes = enc.encode(values.map((v) => JSON.stringify(v)).join("\n") + "\n")
      const rand = prng(42)
      for (let round = 0; round < 20; round++) {
        const points = Array.from({ length: 30 }, () => Math.floor(rand() * bytes.length))
        expect(yield* runFrames(cut(bytes, points))).toEqual(values)
      }
    }))

  it.effect("strips \\r and keeps a complete last line without a newline", () =>
    Effect.gen(function*() {
      expect(yield* runLines([enc.encode("{\"a\":1}\r\n{\"b\":2}")])).toEqual(["{\"a\":1}", "{\"b\":2}"])
    }))

  it.effect("a line across chunks: \\r before the cut, a character cut in two, a last line without a newline", () =>
    Effect.gen(function*() {
      const bytes = enc.encode("{\"a\":\"é\"}\r\n{\"b\":\"中\"}")
      const cr = bytes.indexOf(0x0d)
      const mid = bytes.lastIndexOf(0xe4) + 1 // inside the three bytes of 中
      expect(yield* runLines(cut(bytes, [3, cr + 1, mid]))).toEqual(["{\"a\":\"é\"}", "{\"b\":\"中\"}"])
    }))

  it.effect("an over-long line fails while still partial, naming the limit and the option", () =>
    Effect.gen(function*() {
      let pulled = 0
      // An endless line: the splitter must fail without waiting for a newline that never comes.
      const endless = Stream.repeatEffect(Effect.sync(() => {
        pulled++
        return enc.encode("x".repeat(1000))
      }))
      const result = yield* endless.pipe(Framing.splitLines(10_000), Stream.runDrain, Effect.either)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        const error = result.left
        expect(error).toBeInstanceOf(CLIJSONDecodeError)
        expect(error.reason).toBe("LineTooLong")
        expect(error.limit).toBe(10_000)
        expect(error.observed).toBeGreaterThan(10_000)
        expect(error.message).toContain("maxBufferSize")
      }
      expect(pulled).toBeLessThanOrEqual(11)
    }))

  it.effect("a complete line exactly at the limit passes; one byte more fails", () =>
    Effect.gen(function*() {
      const line = `{"s":"${"y".repeat(90)}"}` // 98 bytes
      expect(yield* runLines([enc.encode(line + "\n")], line.length)).toEqual([line])
      const failed = yield* runLines([enc.encode(line + "\n")], line.length - 1).pipe(Effect.flip)
      expect(failed.reason).toBe("LineTooLong")
    }))

  it.effect("noise lines are skipped; a broken JSON object line fails with a prefix of the line", () =>
    Effect.gen(function*() {
      const ok = yield* runFrames([enc.encode("[debug] starting\n\n{\"a\":1}\n   \nWARNING x\n")])
      expect(ok).toEqual([{ a: 1 }])
      const bad = yield* runFrames([enc.encode("{\"a\":1}\n{not json at all\n")]).pipe(Effect.flip)
      expect(bad.reason).toBe("InvalidJson")
      expect(bad.linePrefix).toBe("{not json at all")
    }))

  it.effect("each frame carries the size of its line, newline included", () =>
    Effect.gen(function*() {
      const sized = yield* Stream.make(enc.encode("{\"a\":1}\nnoise\n{\"bb\":22}\n")).pipe(
        Framing.frames(1024),
        Stream.runCollect
      )
      expect(Chunk.toArray(sized)).toEqual([{ value: { a: 1 }, bytes: 8 }, { value: { bb: 22 }, bytes: 10 }])
    }))

  it("encodeFrame escapes U+2028/U+2029 and ends with one newline", () => {
    const line = Framing.encodeFrame({ s: "a\u2028b\u2029c" })
    expect(line).toBe("{\"s\":\"a\\u2028b\\u2029c\"}\n")
    expect(JSON.parse(line)).toEqual({ s: "a\u2028b\u2029c" })
  })
})
