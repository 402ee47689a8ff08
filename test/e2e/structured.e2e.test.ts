// End-to-end structured output: the real `claude` binary against ScriptedModel. With
// `outputSchema`, the CLI offers the model a `StructuredOutput` tool whose input schema is the
// Schema's JSON Schema; the model answers by calling it, the CLI checks the call against the JSON
// Schema (asking again when it does not match), ends the turn, and reports the value as the
// result's `structured_output`, which the library decodes with the Schema.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Predicate, Schema, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import { ResultError, StructuredOutputError } from "../../src/SdkError.js"
import * as Structured from "../../src/Structured.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const Event = Schema.Struct({
  title: Schema.String,
  at: Schema.Date,
  seats: Schema.Int.pipe(Schema.positive())
})

const afterToolResults = (n: number) => (req: ScriptedModel.RecordedRequest) => ScriptedModel.toolResultCount(req) === n

// The tool definition the CLI offered the model under this name, as sent to the API.
const offeredTool = (req: ScriptedModel.RecordedRequest | undefined, name: string): unknown => {
  const body = req?.body
  const tools = Predicate.isRecord(body) && Array.isArray(body.tools) ? body.tools : []
  return tools.find((tool: unknown) => Predicate.isRecord(tool) && tool.name === name)
}

const contentText = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content))

describe("e2e: structured output against the real claude CLI", () => {
  it.scopedLive("ClaudeAgent.structured: the model answers through StructuredOutput, the value is decoded", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{
        match: afterToolResults(0),
        reply: ScriptedModel.toolUse("StructuredOutput", { title: "Launch", at: "2025-03-04T05:06:07.000Z", seats: 12 })
      }])
      const event = yield* ClaudeAgent.structured("When is the launch?", Event, yield* model.options())

      // Decoded, not just validated: the JSON string became a Date.
      expect(event.at).toBeInstanceOf(Date)
      expect(event.at.getTime()).toBe(Date.UTC(2025, 2, 4, 5, 6, 7))
      expect(event).toMatchObject({ title: "Launch", seats: 12 })
      // The Schema's JSON Schema is what the CLI offered the model; the turn ended with the call.
      const requests = yield* model.mainRequests
      expect(requests).toHaveLength(1)
      expect(offeredTool(requests[0], "StructuredOutput")).toMatchObject({
        input_schema: {
          type: "object",
          required: ["title", "at", "seats"],
          properties: {
            title: { type: "string" },
            at: { type: "string" },
            seats: { type: "integer", exclusiveMinimum: 0 }
          }
        }
      })
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("output the JSON Schema accepts but the Schema does not decode is a StructuredOutputError", () =>
    Effect.gen(function*() {
      // A string, so the CLI's JSON Schema check passes; not a date, so Schema.Date does not.
      const value = { title: "Launch", at: "sometime soon", seats: 3 }
      const model = yield* ScriptedModel.make([
        { match: afterToolResults(0), reply: ScriptedModel.toolUse("StructuredOutput", value) }
      ])
      const error = yield* ClaudeAgent.structured("When is the launch?", Event, yield* model.options()).pipe(
        Effect.flip
      )

      expect(error).toBeInstanceOf(StructuredOutputError)
      if (!(error instanceof StructuredOutputError)) return
      expect(error.value).toEqual(value)
      expect(error.issue).toMatch(/^at: /)
      expect(error.message).toContain("\"sometime soon\"")
      expect(error.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("the CLI sends output that breaks the JSON Schema back to the model, which tries again", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { match: afterToolResults(0), reply: ScriptedModel.toolUse("StructuredOutput", { title: "Launch", seats: 0 }) },
        {
          match: afterToolResults(1),
          reply: ScriptedModel.toolUse("StructuredOutput", { title: "Launch", at: "2025-03-04T00:00:00Z", seats: 1 })
        }
      ])
      const options = yield* model.options()
      // `query` with `outputSchema` and `Structured.outputs`: the stream form of the same thing.
      const messages = yield* ClaudeAgent.query("When is the launch?", { ...options, outputSchema: Event }).pipe(
        Stream.runCollect
      )
      const events = yield* Stream.fromChunk(messages).pipe(Structured.outputs(Event), Stream.runCollect)

      expect(Chunk.toArray(events).map((e) => e.at.toISOString())).toEqual(["2025-03-04T00:00:00.000Z"])
      const [first] = (yield* model.mainRequests).slice(1).flatMap(ScriptedModel.toolResults)
      expect(first?.is_error).toBe(true)
      expect(contentText(first?.content)).toContain("Output does not match required schema")
      expect(Chunk.toArray(messages).filter(Message.isResult).map((r) => r.subtype)).toEqual(["success"])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a model that never produces valid output ends in error_max_structured_output_retries: a ResultError", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.toolUse("StructuredOutput", { title: "Launch" }), times: Infinity }
      ])
      const options = yield* model.options()
      const error = yield* ClaudeAgent.structured("When is the launch?", Event, {
        ...options,
        env: { ...options.env, MAX_STRUCTURED_OUTPUT_RETRIES: "2" }
      }).pipe(Effect.flip)

      expect(error).toBeInstanceOf(ResultError)
      expect(error).toMatchObject({ subtype: "error_max_structured_output_retries" })
      // The CLI's reason names what was wrong with the last attempt.
      expect(error.message).toContain("must have required property 'at'")
      expect(yield* model.mainRequests).toHaveLength(2)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a model that answers in text despite the CLI's reminder: a StructuredOutputError without a value", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{
        reply: ScriptedModel.text("I would rather not say."),
        times: Infinity
      }])
      const error = yield* ClaudeAgent.structured("When is the launch?", Event, yield* model.options()).pipe(
        Effect.flip
      )

      // The CLI told the model once more to call StructuredOutput, then ended the turn as a success.
      const reminder = (yield* model.mainRequests)[1]
      expect(reminder === undefined ? "" : ScriptedModel.lastUserText(reminder)).toContain(
        "You MUST call the StructuredOutput tool"
      )
      expect(error).toBeInstanceOf(StructuredOutputError)
      expect(error).toMatchObject({ value: undefined })
      expect(error.message).toContain("I would rather not say.")
    }).pipe(Effect.provide(AgentLive)))
})
