// The compiled guards must answer exactly what Schema.is answers: every recorded CLI frame and
// thousands of mutations of them, against every message and content-block schema.
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as fs from "node:fs"
import * as Guard from "../../src/internal/guard.js"
import * as ContentBlock from "../../src/schema/ContentBlock.js"
import * as Control from "../../src/schema/Control.js"
import * as Message from "../../src/schema/Message.js"

const recorded: Array<unknown> = fs
  .readFileSync(new URL("../fixtures/cli-2.1.330-stdout.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line.length > 0)
  .map((line) => JSON.parse(line))

const replacements: ReadonlyArray<unknown> = [undefined, null, 1, "x", true, [], {}, [{ type: "text" }], NaN]

// Every value obtained by deleting or replacing one field, down to depth 4.
function* mutations(value: unknown, depth = 0): Generator<unknown> {
  if (depth > 4 || typeof value !== "object" || value === null) return
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value)
  for (const [key, child] of entries) {
    const withChild = (next: unknown) => {
      if (Array.isArray(value)) {
        const copy = value.slice()
        copy[Number(key)] = next
        return copy
      }
      return { ...value, [key]: next }
    }
    if (!Array.isArray(value)) {
      yield Object.fromEntries(Object.entries(value).filter(([k]) => k !== key))
    }
    for (const r of replacements) yield withChild(r)
    for (const deeper of mutations(child, depth + 1)) yield withChild(deeper)
  }
}

const schemas: ReadonlyArray<readonly [string, Schema.Schema.Any]> = [
  ["Message", Message.Message],
  ["AssistantMessage", Message.AssistantMessage],
  ["UserMessage", Message.UserMessage],
  ["ResultSuccess", Message.ResultSuccess],
  ["ResultFailure", Message.ResultFailure],
  ["SystemInit", Message.SystemInit],
  ["SystemEvent", Message.SystemEvent],
  ["StreamEvent", Message.StreamEvent],
  ["ContentBlock", ContentBlock.ContentBlock],
  ["UserMessageInput", Message.UserMessageInput],
  ["InitializeResponse", Control.InitializeResponse],
  ["ControlRequest", Control.ControlRequest]
]

describe("compiled guards", () => {
  it("agree with Schema.is on recorded frames and their mutations", () => {
    let compared = 0
    let accepted = 0
    for (const [name, schema] of schemas) {
      const slow = Schema.is(schema)
      const fast = Guard.compile(schema)
      for (const frame of recorded) {
        const values = [frame, ...mutations(frame)]
        for (const value of values) {
          const expected = slow(value)
          if (fast(value) !== expected) {
            throw new Error(`${name} disagrees with Schema.is on ${JSON.stringify(value).slice(0, 300)}`)
          }
          compared++
          if (expected) accepted++
        }
      }
    }
    expect(compared).toBeGreaterThan(100_000)
    // Both outcomes are exercised.
    expect(accepted).toBeGreaterThan(1_000)
    expect(compared - accepted).toBeGreaterThan(1_000)
  })

  it("agree on refinements, unions without a discriminator and non-objects", () => {
    const cases: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Struct({ n: Schema.Int.pipe(Schema.positive()) }),
      Schema.Union(Schema.String, Schema.Number, Schema.Struct({ a: Schema.Boolean })),
      Schema.Array(Schema.NullOr(Schema.String)),
      Schema.Record({ key: Schema.String, value: Schema.Number }),
      Schema.Struct({})
    ]
    const values = [0, 1, -1, 1.5, "a", null, undefined, [], {}, { n: 2 }, { n: -2 }, { n: 1.5 }, { a: true }, ["x", null], [1], { k: 1 }, { k: "1" }]
    for (const schema of cases) {
      const slow = Schema.is(schema)
      const fast = Guard.compile(schema)
      for (const value of values) expect(fast(value)).toBe(slow(value))
    }
  })
})
