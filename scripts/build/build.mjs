// Builds dist/ the way Effect's own packages ship: ES modules, CommonJS, and declarations for both.
//
//   dist/esm  tsc's output (.js + .d.ts + maps), "type": "module"
//   dist/cjs  the same modules converted to CommonJS by esbuild, one file per module (no bundling, so
//             `require("./x.js")` keeps the module graph), with the .d.ts copied next to them; its
//             package.json says "type": "commonjs", so TypeScript reads those .d.ts as CommonJS types
//
// Converting tsc's ES output, rather than compiling the TypeScript a second time, keeps tsc's
// semantics (class fields, target) for both formats; esbuild only rewrites import/export.
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
const esm = join(dist, "esm")
const cjs = join(dist, "cjs")

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]
  )

rmSync(dist, { recursive: true, force: true })

execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
  cwd: root,
  stdio: "inherit"
})
const typeIs = (dir, type) =>
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ type, sideEffects: false }, null, 2)}\n`)
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
    // Follows tsc's sourceMappingURL comments, so the CommonJS maps point at src/*.ts.
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "silent",
    ...extra
  })
  if (result.warnings.length > 0) {
    const text = await esbuild.formatMessages(result.warnings, { kind: "warning" })
    throw new Error(`build: esbuild warnings while converting to CommonJS:\n${text.join("\n")}`)
  }
}

await toCjs(modules.filter((file) => !usesImportMeta(file)), {})
await toCjs(modules.filter(usesImportMeta), {
  define: { "import.meta.url": "__importMetaUrl" },
  inject: [join(root, "scripts", "build", "import-meta-url.cjs.js")]
})

for (const file of walk(esm)) {
  if (!file.endsWith(".d.ts") && !file.endsWith(".d.ts.map")) continue
  const target = join(cjs, relative(esm, file))
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(file, target)
}
typeIs(esm, "module")
typeIs(cjs, "commonjs")

const leftover = walk(cjs).filter((file) => file.endsWith(".js") && readFileSync(file, "utf8").includes("import.meta"))
if (leftover.length > 0) throw new Error(`build: import.meta left in CommonJS output: ${leftover.join(", ")}`)

process.stdout.write(`build: ${modules.length} modules to dist/esm and dist/cjs\n`)
