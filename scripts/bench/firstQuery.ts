// A process's first query, builds side by side: `query()` → first message, and the process's CPU
// until then, each repetition a fresh Node process that has imported effect, the platform's
// NodeContext and the library (not timed), as `npm run bench`'s cold first-query row does but
// without its import timings, so more repetitions fit in the same time and the builds alternate
// within each round (A, B, A, B, …).
//
//   npx tsx scripts/bench/firstQuery.ts [--reps=N] [--spans] [--marks] [DIR…]
//
// DIR is a checkout with a build (DIR/dist/esm; default: this one), e.g. main's next to this
// branch's. --spans prints, for one more run per build, when each of the library's spans started and
// ended (ms after `query()`) and when each message arrived: where a first session's time goes, with
// no profiler to slow it down. --marks times, in every repetition, the process's side of the
// pipes (ms after `query()`): the spawn called and returned, the process spawned, each stdin write,
// the first and last stdout chunk before the first message, and the process's CPU until the spawn;
// with the medians of each mark per build.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { cell, quantile } from "./quartiles.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const CLI = fileURLToPath(new URL("../fixtures/bench-cli.mjs", import.meta.url))
const argv = process.argv.slice(2)
const reps = Number(argv.find((a) => a.startsWith("--reps="))?.slice("--reps=".length) ?? "15")
const spans = argv.includes("--spans")
const marks = argv.includes("--marks")
const dirs = argv.filter((a) => !a.startsWith("--"))
const checkouts = (dirs.length > 0 ? dirs : [root]).map((dir) => resolve(dir))

// argv: the library's URL, the fake CLI, "spans" or not, "marks" or not. Prints one JSON line.
const probe = `
const { performance } = await import("node:perf_hooks")
const marked = {}
let t0 = 0
let delivered = false
const mark = (name) => { if (!delivered && !(name in marked)) marked[name] = performance.now() - t0 }
if (process.argv[4] === "marks") {
  // The child's side, seen from outside the library: spawn() is wrapped, and the ESM bindings
  // (\`import { spawn } from "node:child_process"\`) follow the CommonJS export.
  const { createRequire, syncBuiltinESMExports } = await import("node:module")
  const childProcess = createRequire(import.meta.url)("node:child_process")
  const spawn = childProcess.spawn
  childProcess.spawn = function (...args) {
    mark("spawn called")
    marked["CPU until the spawn"] ??= cpu() - c0
    const child = spawn.apply(this, args)
    mark("spawn returned")
    child.once("spawn", () => mark("spawned"))
    const write = child.stdin.write
    let writes = 0
    child.stdin.write = function (...w) { mark("stdin write " + ++writes); return write.apply(this, w) }
    child.stdout.prependListener("data", () => { mark("stdout first data"); if (!delivered) marked["stdout last data"] = performance.now() - t0 })
    return child
  }
  syncBuiltinESMExports()
}
const { Effect, Layer, ManagedRuntime, Stream, Tracer } = await import("effect")
const NodeContext = await import("@effect/platform-node/NodeContext")
const lib = await import(process.argv[1])
const cli = process.argv[2]
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const log = []
const now = () => (performance.now() - t0).toFixed(1)
// A tracer that only notes when spans start and end (--spans).
const noting = Tracer.make({
  span: (name, parent, context, links, startTime, kind) => {
    log.push(now() + " start " + name)
    return {
      _tag: "Span", name, parent, context, links, kind, spanId: String(log.length), traceId: "t", sampled: true,
      status: { _tag: "Started", startTime }, attributes: new Map(), events: [],
      end: () => { log.push(now() + " end   " + name) },
      attribute() {}, event() {}, addLinks() {}
    }
  },
  context: (f) => f()
})
const layer = lib.ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))
const runtime = ManagedRuntime.make(process.argv[3] === "spans" ? Layer.merge(layer, Layer.setTracer(noting)) : layer)
const c0 = cpu()
t0 = performance.now()
let first
await runtime.runPromise(lib.ClaudeAgent.query('bench {"kind":"echo"}', { pathToClaudeCodeExecutable: cli }).pipe(
  Stream.runForEach((m) => Effect.sync(() => {
    if (first === undefined) { first = { first: performance.now() - t0, cpu: cpu() - c0 }; delivered = true }
    log.push(now() + " message " + m.type + ("subtype" in m ? "/" + m.subtype : ""))
  }))
))
await runtime.dispose()
process.stdout.write(JSON.stringify({ ...first, log, marks: marked }))
`

interface Target {
  readonly checkout: string
  readonly url: string
  readonly first: Array<number>
  readonly cpu: Array<number>
  readonly marks: Map<string, Array<number>>
}

const targets: Array<Target> = checkouts.map((checkout) => {
  const path = resolve(checkout, "dist", "esm", "index.js")
  if (!existsSync(path)) throw new Error(`firstQuery: no ${path} (npm run build there first)`)
  return { checkout, url: pathToFileURL(path).href, first: [], cpu: [], marks: new Map() }
})

interface Sample {
  readonly first: number
  readonly cpu: number
  readonly log: Array<string>
  readonly marks: Record<string, number>
}

const run = (target: Target, mode: string, marking: string): Sample =>
  JSON.parse(
    // From the checkout, so `effect` resolves to the packages that build imports.
    execFileSync(process.execPath, ["--input-type=module", "-e", probe, target.url, CLI, mode, marking], {
      cwd: target.checkout,
      encoding: "utf8"
    })
  )

for (let round = 0; round < reps; round++) {
  for (const target of targets) {
    const sample = run(target, "", marks ? "marks" : "")
    target.first.push(sample.first)
    target.cpu.push(sample.cpu)
    for (const [name, at] of Object.entries(sample.marks)) {
      const list = target.marks.get(name) ?? []
      list.push(at)
      target.marks.set(name, list)
    }
  }
}

process.stdout.write(`${reps} fresh processes per row, alternated; ms, median (quartiles)\n`)
process.stdout.write("| build | query() → first message | CPU until then |\n|---|---|---|\n")
for (const target of targets) {
  process.stdout.write(`| ${target.checkout} | ${cell(target.first)} | ${cell(target.cpu)} |\n`)
}
if (marks) {
  for (const target of targets) {
    process.stdout.write(`\n${target.checkout}, ms after query(), median (quartiles):\n`)
    const rows = [...target.marks].map(([name, at]) => ({ name, at, median: quantile(at, 0.5) }))
    rows.push({ name: "first message", at: target.first, median: quantile(target.first, 0.5) })
    for (const row of rows.sort((a, b) => a.median - b.median)) {
      process.stdout.write(`${cell(row.at).padEnd(24)} ${row.name}\n`)
    }
  }
}
if (spans) {
  for (const target of targets) {
    process.stdout.write(
      `\n${target.checkout}, one run, ms after query():\n${run(target, "spans", "").log.join("\n")}\n`
    )
  }
}
