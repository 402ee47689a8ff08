/**
 * `Structured`: structured output typed by an Effect `Schema`.
 *
 * With the option `outputSchema`, the Schema's JSON Schema goes to the CLI (as `outputFormat`'s
 * would), the CLI offers the model a `StructuredOutput` tool with that input schema, checks the
 * model's call against it (asking the model again when it does not match), ends the turn, and
 * puts the value in the `result` as `structured_output`. `decode` turns that `result` into the
 * Schema's `Type`: decoded, not just validated (a `Schema.Date` field becomes a `Date`).
 * `ClaudeAgent.structured` does it all in one call.
 *
 * @since 0.1.0
 */
import { Effect, Schema, Stream } from "effect"
import { describe } from "./internal/schema/issues.js"
import * as ResultErrors from "./internal/session/resultError.js"
import * as Message from "./schema/Message.js"
import { OptionsError, type ResultError, StructuredOutputError } from "./SdkError.js"

/**
 * Decodes a `result`'s `structured_output` with `schema`.
 *
 * - A successful `result` whose value the Schema decodes: that value, as the Schema's `Type`.
 * - A value the Schema rejects: `StructuredOutputError`, with the value and a one-line report of
 *   what is wrong.
 * - No `structured_output` (the model answered in text and ignored the CLI's reminder to call
 *   the `StructuredOutput` tool; the CLI then ends the turn with `success` and no value):
 *   `StructuredOutputError` with `value: undefined` and the model's text in `issue`.
 * - `schema` not an Effect Schema (from untyped JavaScript): `OptionsError` naming `schema`.
 * - A failed `result` (`is_error`, or a subtype other than `success`: an API error, `maxTurns`
 *   reached, or `error_max_structured_output_retries` when the model never produced output the
 *   JSON Schema accepts): `ResultError`, as `ClaudeAgent.failOnErrorResult` reports it.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { ClaudeAgent, Structured } from "effect-claude-agent"
 *
 * const Answer = Schema.Struct({ city: Schema.String, population: Schema.Number })
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const session = yield* ClaudeAgent.session({ outputSchema: Answer })
 *   yield* session.send("Which is the largest city in Japan?")
 *   const answer = yield* session.receiveResponse.pipe(
 *     ClaudeAgent.lastResult,
 *     Effect.flatMap(Structured.decode(Answer))
 *   )
 *   return answer.population
 * }))
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = <A, I>(schema: Schema.Schema<A, I, never>) => {
  // From plain JavaScript anything may arrive here; Schema would throw on first use.
  if (!Schema.isSchema(schema)) {
    const error = new OptionsError({ field: "schema", detail: `expected an Effect Schema, got ${typeof schema}` })
    return (_result: Message.ResultMessage): Effect.Effect<A, StructuredOutputError | ResultError | OptionsError> =>
      Effect.fail(error)
  }
  const decodeValue = Schema.decodeUnknown(schema)
  return (result: Message.ResultMessage): Effect.Effect<A, StructuredOutputError | ResultError | OptionsError> => {
    if (result.subtype !== "success" || result.is_error) return Effect.fail(ResultErrors.fromResult(result))
    const value = result.structured_output
    // The CLI leaves `structured_output` out when the model never called its StructuredOutput
    // tool, even after being told to once more.
    if (value === undefined) {
      const text = result.result.length > 200 ? `${result.result.slice(0, 199)}…` : result.result
      return Effect.fail(
        new StructuredOutputError({
          value: undefined,
          issue: "the model answered without calling the StructuredOutput tool (or the run had no `outputSchema`); " +
            `its answer: ${JSON.stringify(text)}`,
          sessionId: result.session_id
        })
      )
    }
    return decodeValue(value, { errors: "all" }).pipe(
      Effect.mapError((error) =>
        new StructuredOutputError({ value, issue: describe(error), sessionId: result.session_id })
      )
    )
  }
}

/**
 * Keeps the `result` messages of a stream, each decoded with `decode`: one value per turn of a
 * run started with `outputSchema`. The stream fails at the first `result` that does not decode or
 * that reports a failed turn.
 *
 * @example
 * ```ts
 * import { Schema, Stream } from "effect"
 * import { ClaudeAgent, Structured } from "effect-claude-agent"
 *
 * const Verdict = Schema.Struct({ prime: Schema.Boolean, reason: Schema.String })
 * // One turn per prompt, one decoded verdict per turn.
 * const verdicts = ClaudeAgent.query(Stream.make("Is 7 prime?", "Is 9 prime?"), { outputSchema: Verdict }).pipe(
 *   Structured.outputs(Verdict),
 *   Stream.runCollect
 * )
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const outputs = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decodeResult = decode(schema)
  return <E, R>(
    self: Stream.Stream<Message.Message, E, R>
  ): Stream.Stream<A, E | StructuredOutputError | ResultError | OptionsError, R> =>
    self.pipe(Stream.filter(Message.isResult), Stream.mapEffect(decodeResult))
}
