// Every message frame the CLI wrote in the recorded sessions decodes to its typed variant and
// round-trips through `Message.encode`; fields and types a newer CLI may add are kept, never
// dropped and never a failure.
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Message from "../../src/schema/Message.js"
import { messageSamples } from "../support/messageSamples.js"

type Frame = { readonly [key: string]: unknown }

const isFrame = (u: unknown): u is Frame => typeof u === "object" && u !== null && !Array.isArray(u)

const lines = (url: URL): ReadonlyArray<Frame> =>
  readFileSync(url, "utf8").split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line)).filter(
    isFrame
  )

// What reaches `Message.decode`: everything on stdout but the control protocol.
const isMessageFrame = (frame: Frame) => typeof frame.type === "string" && !frame.type.startsWith("control_")

const transcripts = new URL("../fixtures/transcripts/", import.meta.url)
const recorded: ReadonlyArray<readonly [string, Frame]> = [
  ...readdirSync(fileURLToPath(transcripts))
    .filter((file) => file.endsWith(".stdout.jsonl"))
    .flatMap((file) => lines(new URL(file, transcripts)).map((frame) => [file, frame] as const)),
  ...lines(new URL("../fixtures/cli-2.1.330-stdout.jsonl", import.meta.url)).map((frame) =>
    ["cli-2.1.330-stdout", frame] as const
  ),
  ...messageSamples.map(([name, frame]) => [`sample ${name}`, frame] as const)
].filter(([, frame]) => isMessageFrame(frame))

const frames = recorded.map(([, frame]) => frame)
const streamEvents = frames.filter((frame) => frame.type === "stream_event")

const decodeOk = (raw: unknown): Message.Message => {
  const result = Message.decode(raw)
  if (Either.isLeft(result)) expect.fail(result.left.message)
  return result.right
}

// Through JSON and back, as a store or a wire would carry the encoded frame.
const viaJson = (u: unknown): unknown => JSON.parse(JSON.stringify(u))

const eventOf = (m: Message.Message): Message.RawStreamEvent => {
  if (m.type !== "stream_event") return expect.fail(`expected a stream_event, got ${m.type}`)
  return m.event
}

// A key no schema names, and JSON values for it.
const extraKey = fc.string({ minLength: 1, maxLength: 12 }).map((k) => `x_${k}`)
const jsonValue = fc.jsonValue({ maxDepth: 2 })
// A `type` no schema of this version knows.
const newType = fc.string({ minLength: 1, maxLength: 12 }).map((t) => `future_${t}`)

describe("recorded frames", () => {
  it("cover every stream event type, each delta kind the CLI sent, and command_lifecycle", () => {
    expect(frames.length).toBeGreaterThan(100)
    const kinds = new Set(streamEvents.map((frame) => {
      const event = decodeOk(frame)
      const e = eventOf(event)
      return e.type === "content_block_delta" ? `${e.type}/${e.delta.type}` : e.type
    }))
    expect([...kinds].sort()).toEqual([
      "content_block_delta/signature_delta",
      "content_block_delta/text_delta",
      "content_block_delta/thinking_delta",
      "content_block_start",
      "content_block_stop",
      "message_delta",
      "message_start",
      "message_stop"
    ])
    expect(frames.some((frame) => frame.type === "command_lifecycle")).toBe(true)
  })

  it("every one decodes to a known variant, as the CLI's object itself", () => {
    for (const [source, frame] of recorded) {
      const m = decodeOk(frame)
      expect(m.type, source).not.toBe("unknown")
      expect(m, source).toBe(frame)
    }
  })

  it("every stream event's event is typed: none is left unknown, nor any delta or block in it", () => {
    for (const frame of streamEvents) {
      const e = eventOf(decodeOk(frame))
      expect(e.type).not.toBe("unknown")
      if (e.type === "content_block_delta") expect(e.delta.type).not.toBe("unknown")
      if (e.type === "content_block_start") expect(e.content_block.type).not.toBe("unknown")
    }
  })

  it("every one round-trips: encode gives back the frame, and through JSON it decodes to an equal message", () => {
    for (const [source, frame] of recorded) {
      const m = decodeOk(frame)
      expect(Message.encode(m), source).toBe(frame)
      expect(decodeOk(viaJson(Message.encode(m))), source).toEqual(m)
    }
  })
})

describe("what a newer CLI may add", () => {
  it.prop("a recorded frame with fields of its own decodes to itself, every field kept", [
    fc.constantFrom(...frames),
    extraKey,
    jsonValue
  ], ([frame, key, value]) => {
    const raw = { ...frame, [key]: value }
    const m = decodeOk(raw)
    expect(m).toBe(raw)
    expect(viaJson(Message.encode(m))).toEqual(viaJson(raw))
  })

  it.prop("a recorded stream event with fields of its own in the event and its delta keeps them all", [
    fc.constantFrom(...streamEvents),
    extraKey,
    jsonValue
  ], ([frame, key, value]) => {
    const event = isFrame(frame.event) ? frame.event : {}
    const delta = isFrame(event.delta) ? { delta: { ...event.delta, [key]: value } } : {}
    const raw = { ...frame, event: { ...event, [key]: value, ...delta } }
    const m = decodeOk(raw)
    expect(m).toBe(raw)
    expect(eventOf(m).type).toBe(event.type)
  })

  it.prop("an unknown event type is delivered wrapped, its object unchanged in raw, and encodes back", [
    fc.constantFrom(...streamEvents),
    newType
  ], ([frame, type]) => {
    const original = { ...(isFrame(frame.event) ? frame.event : {}), type }
    const raw = { ...frame, event: original }
    const m = decodeOk(raw)
    expect(eventOf(m)).toEqual({ type: "unknown", raw: original })
    if (m.type === "stream_event" && m.event.type === "unknown") expect(m.event.raw).toBe(original)
    expect(Message.encode(m)).toEqual(raw)
    expect(decodeOk(viaJson(Message.encode(m)))).toEqual(m)
    // Decoding what decode returned gives it back: the wrapper is not wrapped again.
    expect(decodeOk(viaJson(m))).toEqual(m)
  })

  it.prop("an unknown delta or content block type is wrapped inside a typed event, and encodes back", [
    fc.constantFrom(
      ...streamEvents.filter((frame) =>
        isFrame(frame.event) &&
        (frame.event.type === "content_block_delta" || frame.event.type === "content_block_start")
      )
    ),
    newType
  ], ([frame, type]) => {
    const event = isFrame(frame.event) ? frame.event : {}
    const field = event.type === "content_block_delta" ? "delta" : "content_block"
    const inner = { ...(isFrame(event[field]) ? event[field] : {}), type }
    const raw = { ...frame, event: { ...event, [field]: inner } }
    const e = eventOf(decodeOk(raw))
    expect(e.type).toBe(event.type)
    expect(e).toHaveProperty(field, { type: "unknown", raw: inner })
    expect(Message.encode(decodeOk(raw))).toEqual(raw)
  })

  it.prop("an unknown message type is an UnknownMessage carrying the frame itself", [
    fc.constantFrom(...frames),
    newType
  ], ([frame, type]) => {
    const raw = { ...frame, type }
    const m = decodeOk(raw)
    expect(m).toEqual({ type: "unknown", raw })
    expect(Message.encode(m)).toBe(raw)
  })
})
