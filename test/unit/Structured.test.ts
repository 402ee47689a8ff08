// Structured output typed by a Schema, over the in-memory fake CLI: what the CLI is sent
// (`initialize` `jsonSchema`, `--json-schema`), how a `result`'s `structured_output` is decoded,
// and the typed failures (a value the Schema rejects, no value, a failed run).
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Schema, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Launch from "../../src/internal/cli/launch.js"
import * as Control from "../../src/schema/Control.js"
import * as Message from "../../src/schema/Message.js"
import * as Options from "../../src/schema/Options.js"
import { ResultError, StructuredOutputError } from "../../src/SdkError.js"
import * as Structured from "../../src/Structured.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const Event = Schema.Struct({
  title: Schema.String,
  at: Schema.Date,
  seats: Schema.Int.pipe(Schema.positive())
})

const eventJsonSchema = {
  type: "object",
  required: ["title", "at", "seats"],
  properties: {
    title: { type: "string" },
    at: { type: "string", description: "a string to be decoded into a Date" },
    seats: { type: "integer", description: "a positive number", title: "positive", exclusiveMinimum: 0 }
  },
  additionalProperties: false
}

// A fake CLI whose model answers every prompt with this `result` (and records `initialize`).
const answering = (result: FakeCli.JsonObject) =>
  Effect.gen(function*() {
    const initialize = yield* Deferred.make<Control.InitializePayload>()
    const layer = FakeCli.layerClaudeAgent({
      answers: [
        FakeCli.answer(Control.Initialize, (payload, _cli, byDefault) =>
          Deferred.succeed(initialize, payload).pipe(Effect.zipRight(byDefault)))
      ],
      onUserMessage: (_, cli) =>
        Effect.forEach([FakeCli.frames.systemInit(), result], cli.emit, { discard: true })
    })
    return { initialize, layer }
  })

const structuredResult = (value: unknown): FakeCli.JsonObject => ({
  ...FakeCli.frames.result(JSON.stringify(value)),
  structured_output: value
})

describe("ClaudeAgent.structured (fake CLI)", () => {
  it.effect("sends the Schema's JSON Schema in initialize and decodes structured_output to the Schema's Type", () =>
    Effect.gen(function*() {
      const { initialize, layer } = yield* answering(
        structuredResult({ title: "Launch", at: "2025-03-04T05:06:07.000Z", seats: 12 })
      )
      const event = yield* ClaudeAgent.structured("When is the launch?", Event).pipe(Effect.provide(layer))
      // Decoded, not just validated: the wire string became a Date.
      expect(event.at).toBeInstanceOf(Date)
      expect(event.at.toISOString()).toBe("2025-03-04T05:06:07.000Z")
      expect(event).toMatchObject({ title: "Launch", seats: 12 })
      expect((yield* Deferred.await(initialize)).jsonSchema).toEqual(eventJsonSchema)
    }))

  it.effect("a value the JSON Schema allows but the Schema rejects is a StructuredOutputError showing value and issue", () =>
    Effect.gen(function*() {
      const value = { title: "Launch", at: "next Tuesday-ish", seats: 0 }
      const { layer } = yield* answering(structuredResult(value))
      const error = yield* ClaudeAgent.structured("When?", Event).pipe(Effect.flip, Effect.provide(layer))
      expect(error).toBeInstanceOf(StructuredOutputError)
      if (!(error instanceof StructuredOutputError)) return
      expect(error.value).toEqual(value)
      expect(error.sessionId).toBe("00000000-0000-4000-8000-000000000001")
      // Every bad field, one line, named by path.
      expect(error.issue).toContain("at: ")
      expect(error.issue).toContain("seats: ")
      expect(error.issue).not.toContain("\n")
      expect(error.message).toContain("does not match the schema")
      expect(error.message).toContain("\"next Tuesday-ish\"")
    }))

  it.effect("a failed run (error_max_structured_output_retries) is a ResultError with the CLI's reason", () =>
    Effect.gen(function*() {
      const { layer } = yield* answering(
        FakeCli.frames.result("Failed to provide valid structured output after 5 attempts", {
          subtype: "error_max_structured_output_retries",
          isError: true
        })
      )
      const error = yield* ClaudeAgent.structured("When?", Event).pipe(Effect.flip, Effect.provide(layer))
      expect(error).toBeInstanceOf(ResultError)
      expect(error).toMatchObject({
        subtype: "error_max_structured_output_retries",
        detail: "Failed to provide valid structured output after 5 attempts"
      })
    }))

  it.effect("an API error reported as success with is_error is a ResultError, not a decode failure", () =>
    Effect.gen(function*() {
      const { layer } = yield* answering(FakeCli.frames.result("API Error: 500 boom", { isError: true }))
      const error = yield* ClaudeAgent.structured("When?", Event).pipe(Effect.flip, Effect.provide(layer))
      expect(error).toMatchObject({ _tag: "ResultError", subtype: "success", detail: "API Error: 500 boom" })
    }))
})

describe("Structured.decode and Structured.outputs", () => {
  it.effect("a success result without structured_output is a StructuredOutputError with no value", () =>
    Effect.gen(function*() {
      const result = yield* Schema.decodeUnknown(Message.ResultMessage)(FakeCli.frames.result("plain text"))
      const error = yield* Effect.flip(Structured.decode(Event)(result))
      expect(error).toBeInstanceOf(StructuredOutputError)
      expect(error).toMatchObject({ value: undefined })
      expect(error.message).toContain("no structured output")
    }))

  it.effect("outputs decodes one value per turn of a prompt stream", () =>
    Effect.gen(function*() {
      const Verdict = Schema.Struct({ prime: Schema.Boolean, n: Schema.NumberFromString })
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (message, cli) => {
          const n = FakeCli.userText(message)
          return Effect.forEach(
            [FakeCli.frames.systemInit(), structuredResult({ prime: n === "7", n })],
            cli.emit,
            { discard: true }
          )
        }
      })
      const verdicts = yield* ClaudeAgent.query(Stream.make("7", "9"), { outputSchema: Verdict }).pipe(
        Structured.outputs(Verdict),
        Stream.runCollect,
        Effect.provide(layer)
      )
      expect(Chunk.toArray(verdicts)).toEqual([{ prime: true, n: 7 }, { prime: false, n: 9 }])
    }))
})

describe("the outputSchema option", () => {
  it("goes to the CLI as --json-schema and initialize jsonSchema, like outputFormat", () => {
    const options = Effect.runSync(Options.validate({ outputSchema: Event }))
    expect(Launch.buildArgs(options)).toContain(`--json-schema=${JSON.stringify(eventJsonSchema)}`)
    expect(Launch.buildInitialize(options).jsonSchema).toEqual(eventJsonSchema)
  })

  it("is refused together with outputFormat, for a non-object Schema, and when it is not a Schema", () => {
    const both = Effect.runSync(Effect.flip(Options.validate({
      outputSchema: Event,
      outputFormat: { type: "json_schema", schema: { type: "object" } }
    })))
    expect(both).toMatchObject({ field: "outputSchema" })
    expect(both.detail).toContain("outputFormat")

    const scalar = Effect.runSync(Effect.flip(Options.validate({ outputSchema: Schema.String })))
    expect(scalar).toMatchObject({ field: "outputSchema" })
    expect(scalar.detail).toContain("must describe an object")

    const noJson = Effect.runSync(
      Effect.flip(Options.validate({ outputSchema: Schema.Struct({ n: Schema.BigIntFromSelf }) }))
    )
    expect(noJson).toMatchObject({ field: "outputSchema" })
    expect(noJson.detail).toContain("has no JSON Schema")
    expect(noJson.detail).not.toContain("\n")

    const notASchema = Effect.runSync(Effect.flip(Options.check({ outputSchema: { type: "object" } })))
    expect(notASchema).toMatchObject({ field: "outputSchema" })
    expect(notASchema.detail).toContain("an Effect Schema")
  })
})

describe("a schema that is not a Schema (untyped JavaScript)", () => {
  const notASchema = <T>(value: unknown): T => value as T

  it.effect("structured(prompt, { foo: 1 }) fails with OptionsError naming outputSchema, not a thrown TypeError", () =>
    Effect.gen(function*() {
      const { layer } = yield* answering(structuredResult({ foo: 1 }))
      const run = Effect.suspend(() => ClaudeAgent.structured("x", notASchema<typeof Event>({ foo: 1 })))
      const error = yield* Effect.flip(run.pipe(Effect.provide(layer)))
      expect(error).toMatchObject({ _tag: "OptionsError", field: "outputSchema" })
    }))

  it.effect("Structured.decode of a non-Schema fails with OptionsError naming schema", () =>
    Effect.gen(function*() {
      const result = yield* Schema.decodeUnknown(Message.ResultMessage)(structuredResult({ foo: 1 }))
      const error = yield* Effect.flip(Structured.decode(notASchema<typeof Event>({ foo: 1 }))(result))
      expect(error).toMatchObject({ _tag: "OptionsError", field: "schema" })
      expect(error.message).toContain("expected an Effect Schema, got object")
    }))
})
