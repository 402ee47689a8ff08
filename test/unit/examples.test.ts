// Every ```ts block under `@example` in src/ type-checks as its own module, as a user would copy it.
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import {
  allowlistProblems,
  checkExamples,
  type ExamplesReport,
  extractFromMarkdown,
  extractFromSource,
  formatFailures,
  readAllowlist
} from "../support/examples.js"

// A source with one good example and one of each kind of broken one; it exists only in the
// checker's program, so the checker is tested in the same (single, ~4 s) run as src/.
const FIXTURE_FILE = "src/__examples_fixture__.ts"
const FIXTURE = `/**
 * @example
 * \`\`\`ts
 * import { Message } from "effect-claude-agent"
 * declare const message: Message.Message
 * const isAssistant: boolean = Message.isAssistant(message)
 * \`\`\`
 */
export const good = 1

/**
 * @example
 * \`\`\`ts
 * import { ScriptedModel } from "effect-claude-agent/testing"
 *
 * const rule: ScriptedModel.Rule = { reply: 42 }
 * \`\`\`
 */
export const wrongType = 1

/**
 * @example
 * \`\`\`ts
 * const answer = Message.isAssistant
 * \`\`\`
 */
export const noImport = 1

/**
 * @example
 * \`\`\`ts
 * import { Effect } from "effect"
 * import { Options } from "effect-claude-agent"
 * const ok = Options.validate({ maxTurns: 3 })
 * \`\`\`
 */
export const unusedImport = 1
`

const README = "README.md"
const readme = fs.readFileSync(new URL("../../README.md", import.meta.url), "utf8")

// One program for src/'s examples, the fixture's and the README's marked snippets: the library
// and effect's declarations are parsed once.
let report: ExamplesReport
beforeAll(() => {
  report = checkExamples({
    extraSources: [{ file: FIXTURE_FILE, text: FIXTURE }],
    extraExamples: extractFromMarkdown(README, readme)
  })
})
const inSrc = (e: { readonly file: string }) => e.file !== FIXTURE_FILE && e.file !== README

describe("TSDoc examples", () => {
  it("extracts each ```ts block under @example with its source line and name", () => {
    const source = [
      "class A {",
      "  /**",
      "   * Doc.",
      "   *",
      "   * @example",
      "   * ```ts",
      "   * import { Effect } from \"effect\"",
      "   *",
      "   * const a = Effect.void",
      "   * ```",
      "   *",
      "   * @example",
      "   * @since 0.1.0",
      "   */",
      "  m = 1",
      "  /** @example */",
      "  n = 1",
      "}"
    ].join("\n")
    const { examples, failures } = extractFromSource("src/A.ts", source)
    expect(examples).toEqual([{
      file: "src/A.ts",
      line: 7,
      firstLine: "const a = Effect.void",
      code: "import { Effect } from \"effect\"\n\nconst a = Effect.void",
      prefixes: [5, 4, 5]
    }])
    expect(failures.map((f) => `${f.location} ${f.message}`)).toEqual([
      "src/A.ts:12:1 @example has no ```ts block",
      "src/A.ts:16:1 @example has no ```ts block"
    ])
    const unclosed = extractFromSource(
      "src/B.ts",
      "/**\n * @example\n * ```ts\n * const b = 1\n */\nexport const b = 1"
    )
    expect(unclosed.examples).toEqual([])
    expect(unclosed.failures.map((f) => `${f.location} ${f.message}`)).toEqual([
      "src/B.ts:3:1 ```ts block under @example is not closed before the comment ends"
    ])
  })

  it("reports each broken example at its source file:line, with the import convention", () => {
    const fixture = report.failures.filter((f) => f.example.file === FIXTURE_FILE)
    expect(fixture.map((f) => f.location)).toEqual([
      `${FIXTURE_FILE}:16:39`,
      `${FIXTURE_FILE}:24:19`,
      `${FIXTURE_FILE}:32:4`
    ])
    expect(fixture[0]?.message).toMatch(/^TS2322: Type 'number' is not assignable to type/)
    expect(fixture[1]?.message).toMatch(/^TS2304: Cannot find name 'Message'\. \(examples must import what they use/)
    expect(fixture[2]?.message).toMatch(/^TS6133: 'Effect' .* \(examples import only what they use\)$/)
  })

  it("lets allowlisted examples fail, and only those, until they pass", () => {
    const example = (firstLine: string, line: number) => ({
      file: "src/A.ts",
      line,
      firstLine,
      code: "x",
      prefixes: []
    })
    const broken = example("const a = 1", 3)
    const fixed = example("const b = 2", 9)
    const twin = example("const b = 2", 19)
    const fresh = example("const c = 3", 29)
    const fail = (e: typeof broken) => ({ example: e, location: `src/A.ts:${e.line}:1`, message: "TS2322: no" })
    const sample: ExamplesReport = { examples: [broken, fixed, twin, fresh], failures: [fail(broken), fail(fresh)] }
    expect(allowlistProblems(sample, ["src/A.ts: const a = 1", "src/A.ts: const c = 3"])).toEqual([])
    expect(allowlistProblems(sample, ["src/A.ts: const a = 1", "src/A.ts: const b = 2", "src/A.ts: gone"])).toEqual([
      "src/A.ts:29:1 TS2322: no",
      "allowlist entry names 2 examples (src/A.ts:9, src/A.ts:19); make their first statements differ: src/A.ts: const b = 2",
      "allowlist entry names no example (remove it): src/A.ts: gone"
    ])
    const passing: ExamplesReport = { examples: [broken], failures: [] }
    expect(allowlistProblems(passing, ["src/A.ts: const a = 1"])).toEqual([
      "src/A.ts:3 now type-checks: remove it from the allowlist: src/A.ts: const a = 1"
    ])
  })

  it("finds one example per @example tag in src/", () => {
    const root = fileURLToPath(new URL("../../", import.meta.url))
    const tags = (dir: string): number =>
      fs.readdirSync(dir, { withFileTypes: true }).reduce(
        (n, e) =>
          n + (e.isDirectory()
            ? tags(`${dir}/${e.name}`)
            : e.name.endsWith(".ts")
            ? (fs.readFileSync(`${dir}/${e.name}`, "utf8").match(/@example\b/g) ?? []).length
            : 0),
        0
      )
    const found = report.examples.filter(inSrc).length
    const untyped = report.failures.filter((f) => f.example.code === "" && inSrc(f.example)).length
    expect(found).toBeGreaterThan(200)
    expect(found + untyped).toBe(tags(`${root}src`))
  })

  it("every example in src/ type-checks, but for test/unit/examples.allowlist.txt (which only shrinks)", () => {
    const allowlist = readAllowlist(fileURLToPath(new URL("./examples.allowlist.txt", import.meta.url)))
    const src: ExamplesReport = {
      examples: report.examples.filter(inSrc),
      failures: report.failures.filter((f) => inSrc(f.example))
    }
    expect(allowlistProblems(src, allowlist).join("\n")).toBe("")
  })
})

// The README's snippets marked `<!-- typecheck -->` compile as users copy them, by the same rules.
describe("README snippets marked <!-- typecheck -->", () => {
  it("are found: the OTLP exporter, SpanTree, allowing in-process tools, the migration's two sides", () => {
    const code = report.examples.filter((e) => e.file === README).map((e) => e.code)
    expect(code.length).toBeGreaterThanOrEqual(5)
    for (
      const needle of [
        "Otlp.layerJson",
        "SpanTree.print()",
        "McpServer.toolNames(calc)",
        "@anthropic-ai/claude-agent-sdk"
      ]
    ) {
      expect(code.some((c) => c.includes(needle))).toBe(true)
    }
  })

  it("type-check", () => {
    expect(formatFailures(report.failures.filter((f) => f.example.file === README))).toBe("")
  })

  it("the marker takes only the ```ts block right after it", () => {
    const text = ["<!-- typecheck -->", "", "```ts", "const a = 1", "```", "", "```ts", "const b = 2", "```"].join("\n")
    expect(extractFromMarkdown("X.md", text).map((e) => [e.line, e.code])).toEqual([[4, "const a = 1"]])
  })
})
