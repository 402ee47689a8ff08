// The frame reader without I/O: bytes in, frames (with their UTF-8 sizes), noise and problems out.
// Exhaustive cases, then properties over the recorded CLI transcripts and arbitrary unicode JSON:
// any cutting of the byte stream into chunks gives the same frames, and the sizes add up.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { encodeFrame } from "../../../src/internal/protocol/json.js"
import { LineSplitter } from "../../../src/internal/protocol/lineSplitter.js"
import { type Frame, FrameReader, type ReadProblem } from "../../../src/internal/protocol/reader.js"

const enc = new TextEncoder()

/** Splits `bytes` at the given cut points into separate chunks (copies, as a pipe would hand them). */
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

interface Read {
  readonly frames: Array<Frame>
  readonly noise: Array<string>
  readonly problem: ReadProblem | undefined
  /** How many chunks were pushed before the problem. */
  readonly pushed: number
}

const read = (chunks: Iterable<Uint8Array>, max = 1024 * 1024): Read => {
  const reader = new FrameReader(max)
  const frames: Array<Frame> = []
  const noise: Array<string> = []
  let problem: ReadProblem | undefined
  let pushed = 0
  for (const chunk of chunks) {
    pushed++
    problem = reader.push(chunk)
    frames.push(...reader.takeFrames())
    noise.push(...(reader.takeNoise() ?? []))
    if (problem !== undefined) break
  }
  if (problem === undefined) problem = reader.end()
  frames.push(...reader.takeFrames())
  noise.push(...(reader.takeNoise() ?? []))
  return { frames, noise, problem, pushed }
}

const values = (r: Read) => r.frames.map((f) => f.value)

const lines = (chunks: ReadonlyArray<Uint8Array>, max = 1024 * 1024) => {
  const splitter = new LineSplitter(max)
  const out: Array<string> = []
  for (const chunk of chunks) {
    const pushed = splitter.push(chunk)
    if (!Array.isArray(pushed)) return pushed
    out.push(...pushed)
  }
  const last = splitter.flush()
  if (last !== undefined) out.push(last)
  return out
}

describe("FrameReader", () => {
  it("many frames in one chunk and one frame across many chunks", () => {
    const text = `{"a":1}\n{"b":2}\n{"c":"${"x".repeat(5000)}"}\n`
    const bytes = enc.encode(text)
    const expected = [{ a: 1 }, { b: 2 }, { c: "x".repeat(5000) }]
    expect(values(read([bytes]))).toEqual(expected)
    const tiny = cut(bytes, Array.from({ length: bytes.length }, (_, i) => i))
    expect(tiny.length).toBe(bytes.length)
    expect(values(read(tiny))).toEqual(expected)
    expect(lines(tiny)).toEqual(text.split("\n").slice(0, 3))
  })

  it("a 4-byte character survives every cut inside it, and every pair of cuts", () => {
    const text = `{"t":"a😀b"}\n`
    const bytes = enc.encode(text)
    const at = bytes.indexOf(0xf0)
    for (let p = at; p <= at + 4; p++) {
      expect(values(read(cut(bytes, [p])))).toEqual([{ t: "a😀b" }])
      for (let q = p + 1; q <= at + 4; q++) expect(values(read(cut(bytes, [p, q])))).toEqual([{ t: "a😀b" }])
    }
    // Each byte its own chunk.
    expect(values(read(cut(bytes, [at + 1, at + 2, at + 3])))).toEqual([{ t: "a😀b" }])
  })

  it("multi-byte UTF-8 split across chunks survives at every cut point", () => {
    const text = `{"t":"ok 🚀 é 中文 ok"}\n`
    const bytes = enc.encode(text)
    for (let p = 1; p < bytes.length; p++) expect(values(read(cut(bytes, [p])))).toEqual([{ t: "ok 🚀 é 中文 ok" }])
  })

  it("strips \\r before \\n, on whole lines and on a line across chunks, and counts it", () => {
    const bytes = enc.encode("{\"a\":\"é\"}\r\n{\"b\":\"中\"}\r\n")
    const cr = bytes.indexOf(0x0d)
    for (const chunks of [[bytes], cut(bytes, [3, cr + 1, bytes.length - 3])]) {
      const r = read(chunks)
      expect(values(r)).toEqual([{ a: "é" }, { b: "中" }])
      expect(r.frames.map((f) => f.bytes)).toEqual([12, 13])
    }
    expect(lines([enc.encode("{\"a\":1}\r\n{\"b\":2}")])).toEqual(["{\"a\":1}", "{\"b\":2}"])
  })

  it("blank and non-{ lines are noise; blank ones are not reported", () => {
    const r = read([enc.encode("[debug] starting\n\n{\"a\":1}\n   \nWARNING x\r\n\t{\"b\":2}\n[1,2]\n")])
    expect(values(r)).toEqual([{ a: 1 }, { b: 2 }])
    expect(r.noise).toEqual(["[debug] starting", "   ", "WARNING x", "[1,2]"])
    expect(r.problem).toBeUndefined()
  })

  it("hasOutput: true while frames or noise wait to be taken, false once taken or for a partial line", () => {
    const reader = new FrameReader(1024)
    expect(reader.hasOutput()).toBe(false)
    reader.push(enc.encode("{\"a\":"))
    expect(reader.hasOutput()).toBe(false)
    reader.push(enc.encode("1}\n"))
    expect(reader.hasOutput()).toBe(true)
    reader.takeFrames()
    expect(reader.hasOutput()).toBe(false)
    reader.push(enc.encode("debug\n"))
    expect(reader.hasOutput()).toBe(true)
    reader.takeNoise()
    expect(reader.hasOutput()).toBe(false)
  })

  it("a noise line is reported by its first 200 characters", () => {
    const r = read([enc.encode("n".repeat(500) + "\n")])
    expect(r.noise).toEqual(["n".repeat(200) + "…"])
  })

  it("a { line that is not JSON is a problem with the line's prefix and the parser's message; frames before it stay", () => {
    const r = read([enc.encode("{\"a\":1}\n{not json at all\n{\"c\":3}\n")])
    expect(values(r)).toEqual([{ a: 1 }])
    expect(r.problem?.reason).toBe("InvalidJson")
    expect(r.problem?.linePrefix).toBe("{not json at all")
    expect(r.problem !== undefined && "parseError" in r.problem ? r.problem.parseError.length : 0).toBeGreaterThan(0)
  })

  it("after a problem the reader takes nothing more", () => {
    const reader = new FrameReader(1024)
    expect(reader.push(enc.encode("{oops\n"))?.reason).toBe("InvalidJson")
    expect(reader.push(enc.encode("{\"a\":1}\n"))).toBeUndefined()
    expect(reader.end()).toBeUndefined()
    expect(reader.takeFrames()).toEqual([])
  })

  it("a complete line exactly at the limit passes; one byte more fails, naming the limit", () => {
    const line = `{"s":"${"y".repeat(90)}"}` // 98 bytes
    expect(read([enc.encode(line + "\n")], line.length).frames).toEqual([{ value: { s: "y".repeat(90) }, bytes: 99 }])
    const failed = read([enc.encode(line + "\n")], line.length - 1).problem
    expect(failed).toEqual({ reason: "LineTooLong", linePrefix: line, limit: 97, observed: 98 })
  })

  it("the limit is in bytes, not characters", () => {
    const line = `{"s":"${"中".repeat(30)}"}` // 38 characters, 98 bytes
    expect(read([enc.encode(line + "\n")], 98).problem).toBeUndefined()
    expect(read([enc.encode(line + "\n")], 97).problem?.reason).toBe("LineTooLong")
  })

  it("the limit holds on a line completed across chunks", () => {
    const line = enc.encode(`{"s":"${"y".repeat(90)}"}\n`)
    expect(read(cut(line, [40, 80]), 98).problem).toBeUndefined()
    expect(read(cut(line, [40, 80]), 97).problem).toMatchObject({ reason: "LineTooLong", limit: 97, observed: 98 })
  })

  it("an endless line fails while still partial, after about limit / chunk size pushes", () => {
    function* endless() {
      yield enc.encode("{\"pad\":\"")
      for (;;) yield enc.encode("x".repeat(1000))
    }
    const r = read(endless(), 10_000)
    expect(r.problem?.reason).toBe("LineTooLong")
    expect(r.problem).toMatchObject({ limit: 10_000 })
    expect(r.problem !== undefined && "observed" in r.problem ? r.problem.observed : 0).toBeGreaterThan(10_000)
    expect(r.problem?.linePrefix).toBe("{\"pad\":\"" + "x".repeat(192) + "…")
    expect(r.pushed).toBeLessThanOrEqual(12)
  })

  it("a last line without a newline is read at the end, sized without a newline", () => {
    const r = read([enc.encode("{\"a\":1}\n{\"last\":\"é\""), enc.encode("}")])
    expect(r.frames).toEqual([{ value: { a: 1 }, bytes: 8 }, { value: { last: "é" }, bytes: 13 }])
    expect(read([enc.encode("{\"a\":1}\n{\"cut")]).problem?.reason).toBe("InvalidJson")
  })

  it("each frame's size is its line's UTF-8 bytes plus the newline", () => {
    const r = read([enc.encode("{\"a\":1}\nnoise\n{\"bb\":22}\n{\"t\":\"日本語\"}\n{\"e\":\"😀\"}\n")])
    expect(r.frames.map((f) => f.bytes)).toEqual([8, 10, 18, 13])
    // 3 bytes per character: non-Latin text counts three times its UTF-16 length.
    const cjk = `{"t":"${"語".repeat(1000)}"}`
    expect(read([enc.encode(cjk + "\n")]).frames[0]?.bytes).toBe(3000 + 9)
  })
})

describe("encodeFrame", () => {
  it("escapes U+2028/U+2029 and ends with one newline", () => {
    const line = encodeFrame({ s: "a\u2028b\u2029c" })
    expect(line).toBe("{\"s\":\"a\\u2028b\\u2029c\"}\n")
    expect(JSON.parse(line)).toEqual({ s: "a\u2028b\u2029c" })
  })
})

// What the CLI wrote on stdout in recorded sessions (test/fixtures/transcripts).
const fixtures = fileURLToPath(new URL("../../fixtures/transcripts/", import.meta.url))
const transcripts = readdirSync(fixtures)
  .filter((f) => f.endsWith(".stdout.jsonl"))
  .map((f) => enc.encode(readFileSync(fixtures + f, "utf8")))

// Cut points for a stream of `length` bytes: up to 60 positions, a few of them close together.
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 60 })
const points = (fractions: ReadonlyArray<number>, length: number) => fractions.map((f) => Math.floor(f * length))

const sum = (frames: ReadonlyArray<Frame>) => frames.reduce((n, f) => n + f.bytes, 0)

describe("FrameReader properties", () => {
  it("the recordings hold several transcripts, with non-ASCII text", () => {
    expect(transcripts.length).toBeGreaterThanOrEqual(3)
    for (const bytes of transcripts) expect(bytes.length).toBeGreaterThan(new TextDecoder().decode(bytes).length)
  })

  it.prop(
    "recorded stdout: any cutting into chunks gives the same frames, and their sizes add up to the stream",
    [fc.integer({ min: 0, max: 3 }), cuts],
    ([which, fractions]) => {
      const bytes = transcripts[which % transcripts.length] ?? new Uint8Array()
      const whole = read([bytes])
      const expected = new TextDecoder().decode(bytes).split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
      expect(values(whole)).toEqual(expected)
      const r = read(cut(bytes, points(fractions, bytes.length)))
      expect(r.problem).toBeUndefined()
      expect(r.frames).toEqual(whole.frames)
      expect(sum(r.frames)).toBe(bytes.length)
    },
    { fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "arbitrary unicode JSON, CRLF or LF: any cutting gives the frames written, sized in UTF-8 bytes",
    [fc.array(fc.jsonValue({ stringUnit: "binary", maxDepth: 3 }), { maxLength: 30 }), fc.boolean(), cuts],
    ([vals, crlf, fractions]) => {
      const text = vals.map((v) => JSON.stringify({ v }) + (crlf ? "\r\n" : "\n")).join("")
      const bytes = enc.encode(text)
      const r = read(cut(bytes, points(fractions, bytes.length)))
      expect(r.problem).toBeUndefined()
      expect(values(r)).toEqual(vals.map((v) => JSON.parse(JSON.stringify({ v }))))
      expect(sum(r.frames)).toBe(bytes.length)
    },
    { fastCheck: { numRuns: 300 } }
  )
})
