// Builds dist/ as ES modules, CommonJS, and declarations for both.
//
//   dist/esm  one file per entry point of package.json's `exports` (and the `bin`), "type": "module";
//             the code they share is in dist/esm/chunks/, each module's code in exactly one file
//   dist/cjs  the same files converted to CommonJS by esbuild, one to one (`require("./chunks/x.js")`
//             keeps the graph), its package.json says "type": "commonjs", so TypeScript reads the
//             .d.ts there as CommonJS types
//   .d.ts     tsc's declarations, one per source module, copied to both
//
// Why bundled: Node's ES loader costs about 0.3 ms per module file (resolve, read, compile, link,
// more with each bare import specifier) before any of its code runs; as ~115 files that was half
// of what `import "effect-claude-agent"` cost on top of effect. esbuild bundles tsc's output (not
// the TypeScript again, so class fields and target stay tsc's), with code splitting, so an entry
// loads only the chunks it needs and nothing is in two files; npm packages stay imports.
//
// CommonJS has no `import.meta` and no top-level await. esbuild refuses top-level await in CJS output;
// `import.meta.url` (used by src/internal/cli/discovery.ts to search node_modules above the package) is
// replaced by the URL of the CommonJS file itself, which is what `import.meta.url` is in the ES build.
// Any other `import.meta` use makes esbuild warn, and any warning fails the build.
//
// Run with `npm run build`.
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const root = fileURLToPath(new URL("../..", import.meta.url))
const dist = join(root, "dist")
const tsc = join(dist, "tsc")
const esm = join(dist, "esm")
const cjs = join(dist, "cjs")
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]
  )

const failOnWarnings = async (result, what) => {
  if (result.warnings.length > 0) {
    const text = await esbuild.formatMessages(result.warnings, { kind: "warning" })
    throw new Error(`build: esbuild warnings while ${what}:\n${text.join("\n")}`)
  }
}

rmSync(dist, { recursive: true, force: true })

execFileSync(
  process.execPath,
  [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--outDir", tsc],
  { cwd: root, stdio: "inherit" }
)

// The entry points: every ES file package.json exports, the bin, and the one internal module that
// scripts/fixtures/cjs-consumer.cjs loads to compare CLI discovery between the two builds (wrapped
// like the exported ones: alone it would keep the modules it reaches out of the core's chunk, a
// chunk more for every import).
const inDist = (file) => {
  if (!file.startsWith("./dist/esm/")) throw new Error(`build: ${file} is not in dist/esm`)
  return file.slice("./dist/esm/".length, -".js".length)
}
const exported = [
  ...Object.entries(pkg.exports).flatMap(([subpath, entry]) =>
    typeof entry === "string" ? [] : [{ subpath, out: inDist(entry.import.default) }]
  ),
  { subpath: "./internal/cli/discovery", out: "internal/cli/discovery" }
]
const standalone = Object.values(pkg.bin).map(inDist)

// esbuild puts the modules that the same set of entry points reach in one chunk. With an entry per
// public module, the modules `ClaudeAgent` needs would be cut into dozens of chunks (a file each,
// ~0.3 ms each to load), so every exported entry also imports `ClaudeAgent`: they all reach its
// modules, which land in one chunk, and a feature outside it (the pool, approvals, the cluster, ...)
// in chunks of its own. The relay server and the bin do not load the agent, so they do not import it.
// The small public modules whose top-level work is small (a few KB, a Schema or two) ride along with
// `ClaudeAgent` the same way: alone, each would be a chunk of its own that the barrel loads, a file
// for a few hundred bytes; in the core's chunk they cost `effect-claude-agent/ClaudeAgent` a few KB.
const core = ["ClaudeAgent", "Tool", "McpServer", "SpanTree", "Usage", "layers/SessionStores"]
const wrappers = join(tsc, "__entries")
const wrapped = exported.map(({ out, subpath }) => {
  const file = join(wrappers, `${out}.js`)
  const from = (target) => {
    const rel = relative(dirname(file), join(tsc, `${target}.js`))
    return rel.startsWith(".") ? rel : `./${rel}`
  }
  mkdirSync(dirname(file), { recursive: true })
  const anchor = subpath.startsWith("./relay") ? "" : core.map((m) => `import ${JSON.stringify(from(m))}\n`).join("")
  writeFileSync(file, `${anchor}export * from ${JSON.stringify(from(out))}\n`)
  return { in: file, out }
})
const entries = [...wrapped, ...standalone.map((out) => ({ in: join(tsc, `${out}.js`), out }))]

const typeIs = (dir, type) =>
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ type, sideEffects: false }, null, 2)}\n`)
// Not side-effect free here, or esbuild would drop the wrappers' `import "../ClaudeAgent.js"`.
writeFileSync(join(tsc, "package.json"), `${JSON.stringify({ type: "module" })}\n`)

const bundled = await esbuild.build({
  entryPoints: entries,
  outdir: esm,
  chunkNames: "chunks/[name]-[hash]",
  format: "esm",
  platform: "node",
  target: "node20",
  bundle: true,
  splitting: true,
  packages: "external",
  // Follows tsc's sourceMappingURL comments, so the maps point at src/*.ts.
  // Whitespace and comments out (names kept): V8 pre-parses every byte of a file it loads, and the
  // doc comments and indentation were a quarter of them; the maps still point at src/*.ts.
  minifyWhitespace: true,
  sourcemap: "linked",
  sourcesContent: false,
  metafile: true,
  logLevel: "silent"
})
await failOnWarnings(bundled, "bundling")
// Each module's code in one file only: two copies would be two sets of Schemas, Tags and classes.
const copies = new Map()
for (const output of Object.values(bundled.metafile.outputs)) {
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    if (bytesInOutput > 0) copies.set(input, (copies.get(input) ?? 0) + 1)
  }
}
const twice = [...copies].filter(([, n]) => n > 1).map(([input]) => input)
if (twice.length > 0) throw new Error(`build: bundled more than once: ${twice.join(", ")}`)

// While esbuild reads dist/esm, its package.json says "commonjs": for files in a "module" package
// esbuild emits Node's interop (`__toESM(require(x), 1)`), which adds a `default` key to every
// `export * as Name` namespace; Effect's CommonJS has none, and neither has our ES build.
typeIs(esm, "commonjs")

const modules = walk(esm).filter((file) => file.endsWith(".js"))
const usesImportMeta = (file) => readFileSync(file, "utf8").includes("import.meta")

const toCjs = async (entryPoints, extra) => {
  if (entryPoints.length === 0) return
  const result = await esbuild.build({
    entryPoints,
    outbase: esm,
    outdir: cjs,
    format: "cjs",
    platform: "node",
    target: "node20",
    bundle: false,
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "silent",
    ...extra
  })
  await failOnWarnings(result, "converting to CommonJS")
}

await toCjs(modules.filter((file) => !usesImportMeta(file)), {})
await toCjs(modules.filter(usesImportMeta), {
  define: { "import.meta.url": "__importMetaUrl" },
  inject: [join(root, "scripts", "build", "import-meta-url.cjs.js")]
})

for (const file of walk(tsc)) {
  if (!file.endsWith(".d.ts") && !file.endsWith(".d.ts.map")) continue
  for (const dir of [esm, cjs]) {
    const target = join(dir, relative(tsc, file))
    mkdirSync(dirname(target), { recursive: true })
    copyFileSync(file, target)
  }
}
rmSync(tsc, { recursive: true, force: true })
typeIs(esm, "module")
typeIs(cjs, "commonjs")

const leftover = walk(cjs).filter((file) => file.endsWith(".js") && readFileSync(file, "utf8").includes("import.meta"))
if (leftover.length > 0) throw new Error(`build: import.meta left in CommonJS output: ${leftover.join(", ")}`)

// How many files an import loads (each costs Node's loader ~0.3 ms before any code runs): the
// entry and the chunks it reaches through static imports.
const filesLoaded = (entry) => {
  const seen = new Set()
  const visit = (file) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:^|[;}\s])(?:import|export)[^"']*?["'](\.[^"']+)["']/g)) {
      visit(join(dirname(file), spec))
    }
  }
  visit(join(esm, entry))
  return seen.size
}

process.stdout.write(
  `build: ${entries.length} entry points, ${modules.length} files (with the shared chunks) to dist/esm and dist/cjs; ` +
    `the barrel loads ${filesLoaded("index.js")} files, ClaudeAgent ${filesLoaded("ClaudeAgent.js")}\n`
)
