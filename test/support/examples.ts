// Type-checks every ```ts block under `@example` in src/**/*.ts, and the README's blocks marked
// `<!-- typecheck -->`, as users would copy them.
//
// Each snippet becomes its own module (a virtual file next to its source, so module resolution
// is the project's: "effect-claude-agent" and "effect-claude-agent/testing" go through
// tsconfig.json's `paths` to src/). All snippets share ONE program with the project's compiler
// options, so the library and effect's declarations are parsed once.
//
// Convention: an example imports everything it uses, from "effect-claude-agent",
// "effect-claude-agent/testing" or other packages, never from the module's own scope, and
// imports nothing it does not use; things it assumes (a layer, an input) it states with
// `declare const`. A user copying it then gets code that compiles as it stands.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

/** One ```ts block under an `@example` tag. */
export interface Example {
  /** Source file, relative to the project root, with `/` separators. */
  readonly file: string
  /** 1-based line in `file` of the snippet's first code line. */
  readonly line: number
  /**
   * The first line of the snippet's first statement after its imports, trimmed (or its first
   * line if it is all imports): with `file`, the example's name in the allowlist.
   */
  readonly firstLine: string
  readonly code: string
  /** Per snippet line: how many characters of the source line precede it (indent and ` * `). */
  readonly prefixes: ReadonlyArray<number>
}

/** A problem with one example: an extraction error or a TypeScript diagnostic. */
export interface ExampleFailure {
  readonly example: Example
  /** `file:line:column` in the source file. */
  readonly location: string
  readonly message: string
}

/** The checker's verdict: every example found, and what is wrong with which. */
export interface ExamplesReport {
  readonly examples: ReadonlyArray<Example>
  readonly failures: ReadonlyArray<ExampleFailure>
}

const MISSING_IMPORT_HINT =
  "examples must import what they use (from \"effect-claude-agent\", \"effect-claude-agent/testing\", " +
  "\"effect\", ...), as a user copying them would, and `declare const` what they assume"

const UNUSED_IMPORT_HINT = "examples import only what they use"

// "Cannot find name", "Cannot find namespace", and their "did you mean" variants.
const MISSING_NAME_CODES = new Set([2304, 2503, 2552, 2580, 2833])

// "'X' is declared but never read/used" and "All imports in import declaration are unused".
const UNUSED_CODES = new Set([6133, 6192, 6196, 6198])

const projectRoot = (): string => path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

const listSources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return listSources(full)
    return entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

// A doc-comment line's text and how many characters precede it: `   * text` → ["text", 5].
const stripCommentLine = (line: string): readonly [string, number] => {
  const match = /^(\s*\*\s?)/.exec(line)
  if (match === null || match[1] === undefined) return [line, 0]
  return [line.slice(match[1].length), match[1].length]
}

// Imports are nearly always the same few lines; the first statement after them tells examples apart.
const firstStatementLine = (code: string): string => {
  const source = ts.createSourceFile("example.ts", code, ts.ScriptTarget.Latest, true)
  const statement = source.statements.find((s) => !ts.isImportDeclaration(s)) ?? source.statements[0]
  const text = statement === undefined ? code : code.slice(statement.getStart(source))
  return (text.split("\n").map((l) => l.trim()).find((l) => l.length > 0) ?? "")
}

/**
 * Finds the ```ts blocks under `@example` tags in one file's doc comments. An `@example` without
 * a ```ts block, or a block never closed, is returned as an extraction failure.
 */
export const extractFromSource = (
  file: string,
  text: string
): { readonly examples: Array<Example>; readonly failures: Array<ExampleFailure> } => {
  const lines = text.split(/\r?\n/)
  const examples: Array<Example> = []
  const failures: Array<ExampleFailure> = []
  let inDoc = false
  let exampleTagLine: number | undefined
  let fence: { readonly line: number; readonly body: Array<string>; readonly prefixes: Array<number> } | undefined

  const fail = (line: number, message: string) => {
    const example: Example = { file, line, firstLine: "", code: "", prefixes: [] }
    failures.push({ example, location: `${file}:${line}:1`, message })
  }

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? ""
    if (!inDoc) {
      const opens = raw.indexOf("/**")
      if (opens < 0) continue
      if (!raw.includes("*/", opens + 3)) inDoc = true
      else if (/@example\b/.test(raw)) fail(i + 1, "@example has no ```ts block")
      continue
    }
    const closes = raw.includes("*/")
    const [content, prefix] = stripCommentLine(raw)
    if (fence !== undefined) {
      if (closes) {
        fail(fence.line, "```ts block under @example is not closed before the comment ends")
        fence = undefined
        exampleTagLine = undefined
      } else if (/^```\s*$/.test(content)) {
        const code = fence.body.join("\n")
        const firstLine = firstStatementLine(code)
        examples.push({ file, line: fence.line + 1, firstLine, code, prefixes: fence.prefixes })
        fence = undefined
        exampleTagLine = undefined
        continue
      } else {
        fence.body.push(content)
        fence.prefixes.push(prefix)
        continue
      }
    }
    if (closes) {
      if (exampleTagLine !== undefined) fail(exampleTagLine, "@example has no ```ts block")
      inDoc = false
      exampleTagLine = undefined
      continue
    }
    if (/^@example\b/.test(content.trim())) {
      if (exampleTagLine !== undefined) fail(exampleTagLine, "@example has no ```ts block")
      exampleTagLine = i + 1
    } else if (exampleTagLine !== undefined && /^```(ts|typescript)\s*$/.test(content.trim())) {
      fence = { line: i + 1, body: [], prefixes: [] }
    } else if (exampleTagLine !== undefined && /^@\w/.test(content.trim())) {
      fail(exampleTagLine, "@example has no ```ts block")
      exampleTagLine = undefined
    }
  }
  return { examples, failures }
}

/**
 * The ```ts blocks of a Markdown file that follow a `<!-- typecheck -->` line (blank lines
 * between are allowed): the README's snippets that must compile as users copy them. Markdown
 * renders the marker as nothing.
 */
export const extractFromMarkdown = (file: string, text: string): Array<Example> => {
  const lines = text.split(/\r?\n/)
  const examples: Array<Example> = []
  let marked = false
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim()
    if (line === "<!-- typecheck -->") {
      marked = true
      continue
    }
    if (line === "") continue
    if (marked && /^```(ts|typescript)$/.test(line)) {
      const body: Array<string> = []
      let j = i + 1
      while (j < lines.length && !/^```\s*$/.test((lines[j] ?? "").trim())) body.push(lines[j++] ?? "")
      const code = body.join("\n")
      examples.push({ file, line: i + 2, firstLine: firstStatementLine(code), code, prefixes: body.map(() => 0) })
      i = j
    }
    marked = false
  }
  return examples
}

const inImport = (source: ts.SourceFile, position: number | undefined): boolean =>
  position !== undefined &&
  source.statements.some((s) => ts.isImportDeclaration(s) && s.getStart(source) <= position && position < s.end)

const loadCompilerOptions = (root: string): ts.CompilerOptions => {
  const configPath = path.join(root, "tsconfig.json")
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })
  if (parsed === undefined) throw new Error(`cannot read ${configPath}`)
  return {
    ...parsed.options,
    noEmit: true,
    // Snippets without imports or exports are modules too: top-level names must not leak between them.
    moduleDetection: ts.ModuleDetectionKind.Force,
    // Only to find unused imports: an example's unused `const x = ...` is how it shows a value.
    noUnusedLocals: true
  }
}

/** A source file given as text rather than read from src/ (the checker's own tests use them). */
export interface ExtraSource {
  /** Relative to the project root, e.g. `src/Fixture.ts`; it need not exist on disk. */
  readonly file: string
  readonly text: string
}

/**
 * Extracts every example under `<root>/src` (and from `extraSources`) and type-checks them all in
 * one program.
 */
export const checkExamples = (
  options: {
    readonly root?: string
    readonly extraSources?: ReadonlyArray<ExtraSource>
    /** Examples found elsewhere (the README's, by `extractFromMarkdown`), checked in the same program. */
    readonly extraExamples?: ReadonlyArray<Example>
  } = {}
): ExamplesReport => {
  const root = options.root ?? projectRoot()
  const sources: Array<ExtraSource> = listSources(path.join(root, "src")).sort().map((source) => ({
    file: path.relative(root, source).split(path.sep).join("/"),
    text: fs.readFileSync(source, "utf8")
  }))
  const examples: Array<Example> = []
  const failures: Array<ExampleFailure> = []
  for (const { file, text } of [...sources, ...(options.extraSources ?? [])]) {
    const found = extractFromSource(file, text)
    examples.push(...found.examples)
    failures.push(...found.failures)
  }
  examples.push(...(options.extraExamples ?? []))

  const compilerOptions = loadCompilerOptions(root)
  // Virtual files sit next to their source so that relative lookups (package.json scope,
  // node_modules) are what the source itself gets.
  const virtual = new Map<string, Example>()
  for (const example of examples) {
    const base = path.join(root, example.file)
    virtual.set(`${base}.example-L${example.line}.ts`, example)
  }
  const host = ts.createCompilerHost(compilerOptions, true)
  const getSourceFile = host.getSourceFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  const readFile = host.readFile.bind(host)
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const example = virtual.get(path.resolve(fileName))
    return example !== undefined
      ? ts.createSourceFile(fileName, example.code, languageVersion, true)
      : getSourceFile(fileName, languageVersion, onError, shouldCreate)
  }
  host.fileExists = (fileName) => virtual.has(path.resolve(fileName)) || fileExists(fileName)
  host.readFile = (fileName) => virtual.get(path.resolve(fileName))?.code ?? readFile(fileName)

  const program = ts.createProgram({ rootNames: [...virtual.keys()], options: compilerOptions, host })
  for (const d of program.getOptionsDiagnostics()) {
    throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`)
  }
  for (const [fileName, example] of virtual) {
    const sourceFile = program.getSourceFile(fileName)
    if (sourceFile === undefined) throw new Error(`example module ${fileName} is missing from the program`)
    const diagnostics = [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)]
    for (const d of diagnostics) {
      const unused = UNUSED_CODES.has(d.code)
      if (unused && !inImport(sourceFile, d.start)) continue
      const at = d.file !== undefined && d.start !== undefined
        ? d.file.getLineAndCharacterOfPosition(d.start)
        : { line: 0, character: 0 }
      const column = at.character + 1 + (example.prefixes[at.line] ?? 0)
      const text = ts.flattenDiagnosticMessageText(d.messageText, "\n")
      const hint = MISSING_NAME_CODES.has(d.code)
        ? ` (${MISSING_IMPORT_HINT})`
        : unused
        ? ` (${UNUSED_IMPORT_HINT})`
        : ""
      failures.push({
        example,
        location: `${example.file}:${example.line + at.line}:${column}`,
        message: `TS${d.code}: ${text}${hint}`
      })
    }
  }
  return { examples, failures }
}

/** How the allowlist names an example: its file and its snippet's first non-blank line. */
export const exampleKey = (example: Pick<Example, "file" | "firstLine">): string =>
  `${example.file}: ${example.firstLine}`

/** Renders failures one per line, `file:line:column message`. */
export const formatFailures = (failures: ReadonlyArray<ExampleFailure>): string =>
  failures.map((f) => `${f.location} ${f.message}`).join("\n")

/**
 * Reads an allowlist of examples known to fail: one `file: first statement line` per line (see
 * `exampleKey`); blank lines and lines starting with `#` are ignored.
 */
export const readAllowlist = (file: string): Array<string> =>
  fs.readFileSync(file, "utf8").split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith("#"))

/**
 * Everything wrong with a report given an allowlist, one message per problem: a failing example
 * not on the list, and a list entry that names no example, several, or one that now passes (the
 * list only shrinks).
 */
export const allowlistProblems = (report: ExamplesReport, allowlist: ReadonlyArray<string>): Array<string> => {
  const allowed = new Set(allowlist)
  const failing = new Map<Example, Array<ExampleFailure>>()
  for (const failure of report.failures) {
    failing.set(failure.example, [...(failing.get(failure.example) ?? []), failure])
  }
  const problems: Array<string> = []
  for (const [example, failures] of failing) {
    if (example.firstLine !== "" && allowed.has(exampleKey(example))) continue
    problems.push(formatFailures(failures))
  }
  for (const entry of allowlist) {
    const named = report.examples.filter((e) => exampleKey(e) === entry)
    if (named.length === 0) {
      problems.push(`allowlist entry names no example (remove it): ${entry}`)
    } else if (named.length > 1) {
      const where = named.map((e) => `${e.file}:${e.line}`).join(", ")
      problems.push(
        `allowlist entry names ${named.length} examples (${where}); make their first statements differ: ${entry}`
      )
    } else if (named[0] !== undefined && !failing.has(named[0])) {
      problems.push(`${named[0].file}:${named[0].line} now type-checks: remove it from the allowlist: ${entry}`)
    }
  }
  return problems
}
