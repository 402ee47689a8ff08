// package.json's entry points must agree with each other, with src/ and with the node10 stubs; the
// built package itself is checked by `.ci/run` (attw, publint, scripts/build/check-package.mjs).
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

const Target = Schema.Struct({ types: Schema.String, default: Schema.String })
const Entry = Schema.Struct({ import: Target, require: Target })
const PackageJson = Schema.Struct({
  main: Schema.String,
  module: Schema.String,
  types: Schema.String,
  files: Schema.Array(Schema.String),
  exports: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Entry) }),
  typesVersions: Schema.Struct({ "*": Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }) })
})
const Stub = Schema.Struct({ main: Schema.String, module: Schema.String, types: Schema.String })

const readJson = <A, I>(schema: Schema.Schema<A, I>, file: string): A =>
  Schema.decodeUnknownSync(Schema.parseJson(schema))(fs.readFileSync(path.join(root, file), "utf8"))

const pkg = readJson(PackageJson, "package.json")
const entries = Object.entries(pkg.exports).flatMap(([subpath, entry]) =>
  typeof entry === "string" ? [] : [{ subpath, entry }]
)
const folders = [".", "./testing", "./cluster", "./relay"]
// The barrel's `export * as Name from "./path.js"` lines: one sub-path per public module.
const publicModules = [
  ...fs.readFileSync(path.join(root, "src", "index.ts"), "utf8").matchAll(/export \* as (\w+) from "\.\/(.+)\.js"/g)
].map(([, name, file]) => ({ subpath: `./${name}`, file }))

describe("package.json", () => {
  it("exports the root, one sub-path per module of the barrel, and testing, cluster and relay", () => {
    expect(publicModules.length).toBeGreaterThan(20)
    expect(entries.map((e) => e.subpath)).toEqual([
      ".",
      ...publicModules.map((m) => m.subpath),
      "./testing",
      "./cluster",
      "./relay"
    ])
  })

  it.each(publicModules)(
    "$subpath: the module's files, with types under node10 through typesVersions",
    ({ file, subpath }) => {
      const entry = entries.find((e) => e.subpath === subpath)?.entry
      expect(entry?.import).toEqual({ types: `./dist/esm/${file}.d.ts`, default: `./dist/esm/${file}.js` })
      expect(entry?.require).toEqual({ types: `./dist/cjs/${file}.d.ts`, default: `./dist/cjs/${file}.js` })
      expect(fs.existsSync(path.join(root, "src", `${file}.ts`))).toBe(true)
      expect(pkg.typesVersions["*"][subpath.slice(2)]).toEqual([`./dist/cjs/${file}.d.ts`])
    }
  )

  it.each(entries.filter((e) => folders.includes(e.subpath)))(
    "$subpath: import gets dist/esm, require gets dist/cjs, each with its types",
    ({ entry, subpath }) => {
      const base = subpath === "." ? "index" : `${subpath.slice(2)}/index`
      expect(entry.import).toEqual({ types: `./dist/esm/${base}.d.ts`, default: `./dist/esm/${base}.js` })
      expect(entry.require).toEqual({ types: `./dist/cjs/${base}.d.ts`, default: `./dist/cjs/${base}.js` })
      expect(fs.existsSync(path.join(root, "src", `${base}.ts`))).toBe(true)
    }
  )

  it("main, module and types (node10 and bundlers without exports) are the root entry", () => {
    const rootEntry = entries.find((e) => e.subpath === ".")?.entry
    expect({ main: pkg.main, module: pkg.module, types: pkg.types }).toEqual({
      main: rootEntry?.require.default,
      module: rootEntry?.import.default,
      types: rootEntry?.require.types
    })
  })

  it.each(entries.filter((e) => e.subpath !== "." && folders.includes(e.subpath)))(
    "$subpath: a published package.json stub resolves it under node10",
    ({ entry, subpath }) => {
      const dir = subpath.slice(2)
      const stub = readJson(Stub, `${dir}/package.json`)
      const fromRoot = (file: string) => `./${path.posix.join(dir, file)}`
      expect({ main: fromRoot(stub.main), module: fromRoot(stub.module), types: fromRoot(stub.types) }).toEqual({
        main: entry.require.default,
        module: entry.import.default,
        types: entry.require.types
      })
      expect(pkg.files).toContain(`${dir}/package.json`)
    }
  )
})

// `npm install` on a fresh clone rewrites a lockfile that is not as npm itself would write it.
describe("package-lock.json", () => {
  const Lock = Schema.Struct({
    packages: Schema.Record({
      key: Schema.String,
      value: Schema.Struct({
        devDependencies: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
        peerDependencies: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
      })
    })
  })
  const Manifest = Schema.Struct({
    devDependencies: Schema.Record({ key: Schema.String, value: Schema.String }),
    peerDependencies: Schema.Record({ key: Schema.String, value: Schema.String })
  })
  const lock = readJson(Lock, "package-lock.json")

  it("lists its packages in npm's order (Intl.Collator \"en\", as npm sorts them)", () => {
    const keys = Object.keys(lock.packages)
    expect(keys.length).toBeGreaterThan(100)
    expect(keys).toEqual([...keys].sort(new Intl.Collator("en").compare))
  })

  it("records package.json's dev and peer dependencies as they are", () => {
    const manifest = readJson(Manifest, "package.json")
    expect(lock.packages[""]?.devDependencies).toEqual(manifest.devDependencies)
    expect(lock.packages[""]?.peerDependencies).toEqual(manifest.peerDependencies)
  })
})
