// A tool's arguments reach its handler as `Schema.decodeUnknownEither(parameters)` decodes them,
// whether they take the flat-parameters fast path (valid, no other property, in order) or not.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import * as Tool from "../../src/Tool.js"

const Flat = Schema.Struct({
  a: Schema.String,
  b: Schema.optional(Schema.Number),
  c: Schema.Literal("x", "y"),
  d: Schema.Union(Schema.Boolean, Schema.Null)
})
const Nested = Schema.Struct({ a: Schema.String, inner: Schema.Struct({ n: Schema.Number }) })

// The handler answers the input it got, as JSON: key order included.
const echoing = <A, I extends { readonly [key: string]: unknown }>(parameters: Schema.Schema<A, I>) =>
  Tool.make("echo", {
    description: "echoes its input",
    parameters,
    handler: (input) => Effect.succeed(JSON.stringify(input))
  })

const expected = <A, I>(parameters: Schema.Schema<A, I>, args: unknown): string | undefined => {
  const decoded = Schema.decodeUnknownEither(parameters, { errors: "all", onExcessProperty: "ignore" })(args)
  return Either.isRight(decoded) ? JSON.stringify(decoded.right) : undefined
}

const answered = (tool: Tool.Tool, args: unknown) =>
  Effect.map(tool.call(args, undefined), (result) => {
    const block = result.content[0]
    return result.isError === true || block?.type !== "text" ? undefined : block.text
  })

// Records over the named keys and one more, in any order, with values of any JSON kind.
const value = fc.oneof(
  fc.string(),
  fc.double({ noNaN: true }),
  fc.constantFrom("x", "y", true, false, null),
  fc.constant({ n: 1 }),
  fc.constant({ n: "1", extra: 2 })
)
const args = fc.uniqueArray(fc.tuple(fc.constantFrom("a", "b", "c", "d", "inner", "other"), value), {
  selector: ([key]) => key
}).map((entries) => Object.fromEntries(entries))
// Mostly valid flat arguments, perhaps with another property, in any order.
const flatArgs = fc.tuple(
  fc.string(),
  fc.option(fc.double({ noNaN: true }), { nil: undefined }),
  fc.constantFrom("x", "y"),
  fc.constantFrom(true, false, null),
  fc.option(value, { nil: undefined })
).chain(([a, b, c, d, other]) => {
  const entries: Array<readonly [string, unknown]> = [["a", a], ["c", c], ["d", d]]
  if (b !== undefined) entries.push(["b", b])
  if (other !== undefined) entries.push(["other", other])
  return fc.shuffledSubarray(entries, { minLength: entries.length }).map((shuffled) => Object.fromEntries(shuffled))
})

describe("Tool arguments", () => {
  const flat = echoing(Flat)
  const nested = echoing(Nested)

  it.prop("flat parameters: the handler gets what the Schema decodes", [fc.oneof(flatArgs, args)], ([input]) => {
    expect(Effect.runSync(answered(flat, input))).toEqual(expected(Flat, input))
  })

  it.prop("nested parameters: the handler gets what the Schema decodes", [args], ([input]) => {
    expect(Effect.runSync(answered(nested, input))).toEqual(expected(Nested, input))
  })

  it.effect("a valid value with another property, or out of order, gets a copy without it, in order", () =>
    Effect.gen(function*() {
      const tool = echoing(Flat)
      expect(yield* answered(tool, { a: "s", c: "x", d: null, other: 1 })).toBe("{\"a\":\"s\",\"c\":\"x\",\"d\":null}")
      expect(yield* answered(tool, { d: true, c: "y", a: "s" })).toBe("{\"a\":\"s\",\"c\":\"y\",\"d\":true}")
      expect(yield* answered(tool, { a: "s", b: 1, c: "x", d: false })).toBe(
        "{\"a\":\"s\",\"b\":1,\"c\":\"x\",\"d\":false}"
      )
      expect(yield* answered(tool, { a: "s", c: "z", d: false })).toBeUndefined()
    }))
})
