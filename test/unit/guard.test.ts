// The compiled guards must answer exactly what Schema.is answers: every recorded CLI frame and
// thousands of mutations of them, against every message and content-block schema; hook inputs and
// outputs and permission answers likewise, from samples. `Guard.member` adds the slow path.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as Guard from "../../src/internal/schema/guard.js"
import * as Permission from "../../src/Permission.js"
import * as ContentBlock from "../../src/schema/ContentBlock.js"
import * as Control from "../../src/schema/Control.js"
import * as Hook from "../../src/schema/Hook.js"
import * as Message from "../../src/schema/Message.js"
import * as Options from "../../src/schema/Options.js"
import { messageSamples } from "../support/messageSamples.js"

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

const hookBase = { session_id: "s", transcript_path: "/tmp/t.jsonl", cwd: "/w", permission_mode: "default" }
const hookTool = { tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "toolu_1" }

// Hook inputs, hook answers and permission answers: the shapes the CLI sends and callbacks return.
const samples: ReadonlyArray<readonly [string, Schema.Schema.Any, ReadonlyArray<unknown>]> = [
  ["HookInput", Hook.HookInput, [
    { ...hookBase, hook_event_name: "PreToolUse", ...hookTool, effort: { level: "medium" } },
    { ...hookBase, hook_event_name: "PostToolUse", ...hookTool, tool_response: { stdout: "a" }, duration_ms: 3 },
    { ...hookBase, hook_event_name: "PostToolBatch", tool_calls: [{ ...hookTool, tool_response: "ok" }] },
    { ...hookBase, hook_event_name: "PreCompact", trigger: "manual", custom_instructions: null },
    { ...hookBase, hook_event_name: "SessionStart", source: "startup", context_tokens: 10 },
    { ...hookBase, hook_event_name: "Stop", stop_hook_active: false, background_tasks: [] },
    {
      ...hookBase,
      hook_event_name: "InstructionsLoaded",
      file_path: "/w/CLAUDE.md",
      memory_type: "Project",
      load_reason: "x",
      globs: ["*.ts"]
    },
    {
      ...hookBase,
      hook_event_name: "MessageDisplay",
      turn_id: "t",
      message_id: "m",
      index: 0,
      final: true,
      delta: "d"
    },
    { hook_event_name: "Unknown", raw: { hook_event_name: "Later" } }
  ]],
  ["Message (variants the recordings lack)", Message.Message, messageSamples.map(([, raw]) => raw)],
  [
    "SystemEvent",
    Message.SystemEvent,
    messageSamples.filter(([name]) => name.startsWith("system/")).map(([, raw]) => raw)
  ],
  ["HookOutput", Hook.HookOutput, [
    { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" } },
    {
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls" } }
    },
    {
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "allow", updatedPermissions: [{ type: "setMode" }] }
      }
    },
    { hookSpecificOutput: { hookEventName: "SessionStart", watchPaths: ["/w/a"], reloadSkills: true } },
    { continue: false, stopReason: "done", decision: "block" },
    { async: true, asyncTimeout: 30000 }
  ]],
  ["PermissionUpdate", Permission.PermissionUpdate, [
    {
      type: "addRules",
      rules: [{ toolName: "Bash", ruleContent: "npm test" }],
      behavior: "allow",
      destination: "session"
    },
    { type: "setMode", mode: "acceptEdits", destination: "session" },
    { type: "removeDirectories", directories: ["/tmp"], destination: "localSettings" }
  ]],
  ["PermissionResult", Permission.PermissionResult, [
    {
      behavior: "allow",
      updatedInput: { a: 1 },
      updatedPermissions: [{ type: "setMode", mode: "plan", destination: "session" }]
    },
    { behavior: "deny", message: "no", interrupt: true }
  ]]
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

  it("agree with Schema.is on hook inputs and outputs, permission answers and their mutations", () => {
    for (const [name, schema, values] of samples) {
      const slow = Schema.is(schema)
      const fast = Guard.compile(schema)
      let accepted = 0
      let rejected = 0
      for (const sample of values) {
        expect(slow(sample)).toBe(true)
        for (const value of [sample, ...mutations(sample)]) {
          const expected = slow(value)
          if (fast(value) !== expected) {
            throw new Error(`${name} disagrees with Schema.is on ${JSON.stringify(value).slice(0, 300)}`)
          }
          if (expected) accepted++
          else rejected++
        }
      }
      expect(accepted).toBeGreaterThan(values.length)
      expect(rejected).toBeGreaterThan(values.length)
    }
  })

  it("agree on refinements, unions without a discriminator and non-objects", () => {
    const cases: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Struct({ n: Schema.Int.pipe(Schema.positive()) }),
      Schema.Union(Schema.String, Schema.Number, Schema.Struct({ a: Schema.Boolean })),
      Schema.Array(Schema.NullOr(Schema.String)),
      Schema.Record({ key: Schema.String, value: Schema.Number }),
      Schema.Struct({})
    ]
    const values = [
      0,
      1,
      -1,
      1.5,
      "a",
      null,
      undefined,
      [],
      {},
      { n: 2 },
      { n: -2 },
      { n: 1.5 },
      { a: true },
      ["x", null],
      [1],
      { k: 1 },
      { k: "1" }
    ]
    for (const schema of cases) {
      const slow = Schema.is(schema)
      const fast = Guard.compile(schema)
      for (const value of values) expect(fast(value)).toBe(slow(value))
    }
  })
})

describe("compiled guards read a property once only where that is exact", () => {
  // Values whose own properties differ from what a read finds: inherited names, prototypes with
  // getters, `undefined` set or missing, a null prototype.
  class WithGetter {
    get a(): string {
      return "from the prototype"
    }
  }
  const values: ReadonlyArray<unknown> = [
    {},
    { a: "x" },
    { a: undefined },
    { a: null },
    { a: 1 },
    { type: "t", a: "x" },
    { type: "u", a: "x" },
    { constructor: "c" },
    { toString: "s", a: "x" },
    new WithGetter(),
    Object.create({ a: "inherited" }),
    Object.create({ type: "t" }, { a: { value: "x", enumerable: true } }),
    Object.assign(Object.create(null), { a: "x", type: "t" }),
    Object.assign(Object.create(null), { type: "t" })
  ]
  const cases: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext]> = [
    ["required string", Schema.Struct({ a: Schema.String })],
    ["optional string", Schema.Struct({ a: Schema.optional(Schema.String) })],
    ["required string | undefined", Schema.Struct({ a: Schema.UndefinedOr(Schema.String) })],
    ["optional exact string", Schema.Struct({ a: Schema.optionalWith(Schema.String, { exact: true }) })],
    ["nullable number", Schema.Struct({ a: Schema.NullOr(Schema.Number) })],
    ["a literal", Schema.Struct({ a: Schema.Literal("x") })],
    ["inherited names", Schema.Struct({ constructor: Schema.String, toString: Schema.optional(Schema.String) })],
    [
      "a discriminated union",
      Schema.Union(
        Schema.Struct({ type: Schema.Literal("t"), a: Schema.String }),
        Schema.Struct({ type: Schema.Literal("u") })
      )
    ],
    ["a union of kinds", Schema.Union(Schema.String, Schema.Null, Schema.Boolean)]
  ]

  it.each(cases)("%s: as Schema.is answers", (_, schema) => {
    const slow = Schema.is(schema)
    const fast = Guard.compile(schema)
    for (const value of values) expect(fast(value)).toBe(slow(value))
  })
})

describe("Guard.member", () => {
  const Point = Schema.Struct({ x: Schema.Number, y: Schema.Number })
  const point = Guard.member(Point)

  it("accepts the value itself, extra fields included", () => {
    const value = { x: 1, y: 2, label: "origin" }
    expect(point.is(value)).toBe(true)
    const result = point.validate(value)
    expect(Either.isRight(result) ? result.right : undefined).toBe(value)
  })

  it("explains a rejected value in one line naming the field, as Schema.validateEither reports it", () => {
    const value = { x: 1, y: "2" }
    expect(point.is(value)).toBe(false)
    const expected = Schema.validateEither(Point)(value)
    const actual = point.validate(value)
    expect(Either.isLeft(actual) && Either.isLeft(expected)).toBe(true)
    if (Either.isLeft(actual) && Either.isLeft(expected)) {
      expect(actual.left.message).toBe(expected.left.message)
      expect(point.explain(value)).toBe("y: Expected number, actual \"2\"")
      expect(point.explain(value)).not.toContain("\n")
    }
  })
})

describe("Guard.fastPath", () => {
  const Open = Schema.Struct(
    { id: Schema.String, n: Schema.optional(Schema.Number) },
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  )
  const Closed = Schema.Struct({ id: Schema.String })

  it("a valid value of a Schema without transformations is its own result, and agrees with the parser", () => {
    const preserve = { onExcessProperty: "preserve" } as const
    const decode = Guard.fastPath(Closed, Schema.decodeUnknownEither(Closed, preserve), { excessKept: true })
    const value = { id: "a", extra: 1 }
    const result = decode(value)
    expect(Either.isRight(result) && result.right).toBe(value)
    expect(result).toEqual(Schema.decodeUnknownEither(Closed, preserve)(value))
    const open = Guard.fastPath(Open, Schema.decodeUnknownEither(Open), { excessKept: false })
    const openValue = { id: "b", n: 2, other: true }
    expect(Either.isRight(open(openValue)) && Either.getOrThrow(open(openValue))).toBe(openValue)
  })

  it("defers to the parser where the shortcut would differ: dropped properties, transformations, invalid values", () => {
    const strip = Guard.fastPath(Closed, Schema.decodeUnknownEither(Closed), { excessKept: false })
    expect(strip({ id: "a", extra: 1 })).toEqual(Either.right({ id: "a" }))
    const Transformed = Schema.Struct({ n: Schema.NumberFromString })
    const decodeTransformed = Guard.fastPath(Transformed, Schema.decodeUnknownEither(Transformed), { excessKept: true })
    expect(decodeTransformed({ n: "2" })).toEqual(Either.right({ n: 2 }))
    const invalid = Guard.fastPath(Closed, Schema.decodeUnknownEither(Closed), { excessKept: true })({ id: 7 })
    expect(Either.isLeft(invalid) && ParseResult.TreeFormatter.formatErrorSync(invalid.left)).toContain(
      "Expected string"
    )
  })
})

describe("Guard.lazily", () => {
  it("builds the function on its first call, once, and answers as the function built then", () => {
    let built = 0
    const isPerson = Guard.lazily(() => {
      built++
      return Schema.is(Schema.Struct({ name: Schema.String }))
    })
    expect(built).toBe(0)
    expect([isPerson({ name: "Ada" }), isPerson({ name: 1 }), isPerson(null)]).toEqual([true, false, false])
    expect(built).toBe(1)
  })
})

describe("Guard.flatStructAccepts", () => {
  // The options Schema parsed as `Options.check` parses it: excess properties refused.
  const parsesAsOptions = (u: unknown) =>
    Either.isRight(ParseResult.decodeUnknownEither(Options.Options, { onExcessProperty: "error" })(u))
  const accepts = Guard.flatStructAccepts(Options.Options.ast)
  const fields = Options.Options.ast._tag === "TypeLiteral"
    ? Options.Options.ast.propertySignatures.map((ps) => String(ps.name))
    : []
  const key = fc.oneof(fc.constantFrom(...fields), fc.constantFrom("maxTurn", "modle", "__proto__x", "0"))
  const value = fc.oneof(
    fc.constantFrom<unknown>(undefined, null, true, false, "", "x", "plan", "default", -1, 0, 1, 2.5, NaN, [], {}),
    fc.string(),
    fc.integer(),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 })
  )

  it.prop("accepts only options the parser accepts", [fc.dictionary(key, value, { maxKeys: 5 })], ([input]) => {
    if (accepts(input)) expect(parsesAsOptions(input)).toBe(true)
    // `Options.check` answers what the parser answers, shortcut or not.
    const checked = Effect.runSync(Effect.either(Options.check(input)))
    expect(Either.isRight(checked)).toBe(parsesAsOptions(input))
  })

  it("takes the shortcut for options of plain fields, and not for anything else", () => {
    expect(accepts({})).toBe(true)
    expect(accepts({ pathToClaudeCodeExecutable: "/bin/claude", model: "m", maxTurns: 3, cwd: "/w" })).toBe(true)
    expect(accepts({ model: undefined })).toBe(true)
    // Refused by a refinement, an unknown key, a symbol key, a field that is not flat, not a plain object.
    expect(accepts({ maxTurns: -1 })).toBe(false)
    expect(accepts({ maxTurn: 3 })).toBe(false)
    expect(accepts({ [Symbol("s")]: 1 })).toBe(false)
    expect(accepts({ env: { A: "1" } })).toBe(false)
    expect(accepts([])).toBe(false)
    expect(accepts(
      new (class {
        model = "m"
      })()
    )).toBe(false)
    expect(accepts(null)).toBe(false)
    // Required fields must be there; a struct with an index signature is never shortcut.
    const required = Guard.flatStructAccepts(Schema.Struct({ a: Schema.String, b: Schema.optional(Schema.Number) }).ast)
    expect(required({ a: "x" })).toBe(true)
    expect(required({ b: 1 })).toBe(false)
    expect(Guard.flatStructAccepts(Schema.Record({ key: Schema.String, value: Schema.String }).ast)({})).toBe(false)
  })
})
