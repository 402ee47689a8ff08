// Summarises V8 CPU profiles written by `npm run bench -- --cpu-prof=DIR`: where the time went,
// by function (self time, and inclusive time) and by file. Positions in dist/esm (or any file
// with a linked source map) are mapped back to the source (src/*.ts), so the lines cited are the
// ones to edit.
//
//   npx tsx scripts/bench/profile.ts [--top=N] [--focus=src/] [--after=MS] [--owners] FILE.cpuprofile…
//
// --focus=PREFIX adds the inclusive times of the frames whose file starts with PREFIX (the
// library's entry points: which of its functions the time is spent under). --after=MS leaves out
// the samples of each profile's first MS milliseconds (the imports, a warm-up). --owners adds the
// time of each sample by the innermost frame of the library (src/) on its stack: what library
// code the time is spent in or under, the runtime's work included when a library frame called it.
//
// Several files are merged (e.g. the warm repetitions of one workload). `(idle)` is left out of
// the percentages (the process waiting); `(program)` is native work V8 does not attribute.
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { dirname, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly startTime?: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const root = fileURLToPath(new URL("../..", import.meta.url))
const args = process.argv.slice(2)
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 30)
const focus = args.find((a) => a.startsWith("--focus="))?.slice(8)
const after = Number(args.find((a) => a.startsWith("--after="))?.slice(8) ?? 0)
const owners = args.includes("--owners")
const files = args.filter((a) => !a.startsWith("--"))
if (files.length === 0) {
  console.error("usage: tsx scripts/bench/profile.ts [--top=N] [--focus=src/] FILE.cpuprofile…")
  process.exit(2)
}

const isProfile = (u: unknown): u is Profile =>
  typeof u === "object" && u !== null && Array.isArray(Reflect.get(u, "nodes")) &&
  Array.isArray(Reflect.get(u, "samples"))

// --- source maps: dist/esm/x.js → src/x.ts
const maps = new Map<string, SourceMap | undefined>()
const mapFor = (path: string): SourceMap | undefined => {
  if (maps.has(path)) return maps.get(path)
  let map: SourceMap | undefined
  const mapPath = `${path}.map`
  if (existsSync(mapPath)) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(mapPath, "utf8")))
    } catch {
      map = undefined
    }
  }
  maps.set(path, map)
  return map
}

const where = (frame: CallFrame): string => {
  if (frame.url === "") return ""
  let path = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url
  let line = frame.lineNumber + 1
  const map = path.startsWith("/") ? mapFor(path) : undefined
  if (map !== undefined) {
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber)
    if ("originalSource" in entry && typeof entry.originalSource === "string") {
      const source = entry.originalSource.startsWith("file://")
        ? fileURLToPath(entry.originalSource)
        : resolve(dirname(path), entry.originalSource)
      path = source
      line = entry.originalLine + 1
    }
  }
  const rel = relative(root, path)
  return `${rel.startsWith("..") ? path : rel}:${line}`
}

// Coarse buckets, to say what a gap is made of: this library's files one by one, Effect split
// into its fiber runtime and its stream machinery, Node's internals, the GC, the official SDK.
const effectRuntime =
  /node_modules\/effect\/src\/(internal\/(fiberRuntime|core|core-effect|fiberRefs|fiberRefs\/patch|fiberScope|runtimeFlags|tracer|scheduler|context|effect\/circular|cause|option|either)|Scheduler|Function|Utils|Predicate|Context|Option|Either|Cause|Equal|Hash|Pipeable)\.ts$/
const effectStreams =
  /node_modules\/effect\/src\/internal\/(channel|stream|sink|take|mailbox|queue|pubsub|channel\/.*|stream\/.*)\.ts$/
const area = (file: string): string => {
  if (file.startsWith("src/")) return `library ${file}`
  if (effectRuntime.test(file)) return "effect: fiber runtime (fiberRuntime, core, Scheduler, Function, …)"
  if (effectStreams.test(file)) return "effect: streams, channels, queues, mailbox"
  if (file.includes("node_modules/effect/")) return "effect: other (Schema, Array, …)"
  if (file.includes("node_modules/@effect/")) return "@effect/platform*"
  if (file.includes("claude-agent-sdk/")) return "official SDK (sdk.mjs)"
  if (file.startsWith("node:")) return "node internals (streams, events, ticks)"
  if (file.includes(".cache/effect-claude-agent-bench/")) return "benchmark harness (worker)"
  return file
}

// --- aggregate
const byArea = new Map<string, number>()
const self = new Map<string, number>()
const inclusive = new Map<string, number>()
const byFile = new Map<string, number>()
const byOwner = new Map<string, number>()
let busy = 0
let idle = 0

for (const file of files) {
  const profile: unknown = JSON.parse(readFileSync(file, "utf8"))
  if (!isProfile(profile)) throw new Error(`${file}: not a .cpuprofile`)
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const label = new Map<number, string>()
  const labelOf = (n: ProfileNode): string => {
    let l = label.get(n.id)
    if (l === undefined) {
      const at = where(n.callFrame)
      l = `${n.callFrame.functionName === "" ? "(anonymous)" : n.callFrame.functionName}${at === "" ? "" : ` ${at}`}`
      label.set(n.id, l)
    }
    return l
  }
  let elapsed = 0
  profile.samples.forEach((id, i) => {
    elapsed += (profile.timeDeltas[i] ?? 0) / 1000
    // A sample's weight is the time until the next one (V8's own convention).
    const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000
    const node = byId.get(id)
    if (node === undefined || elapsed < after) return
    const name = node.callFrame.functionName
    if (name === "(idle)") {
      idle += dt
      return
    }
    busy += dt
    const l = labelOf(node)
    self.set(l, (self.get(l) ?? 0) + dt)
    const fileName = node.callFrame.url === "" ? name : where(node.callFrame).replace(/:\d+$/, "")
    byFile.set(fileName, (byFile.get(fileName) ?? 0) + dt)
    const a = area(fileName)
    byArea.set(a, (byArea.get(a) ?? 0) + dt)
    if (owners) {
      let owner = "(no library frame)"
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const n = byId.get(at)
        if (n !== undefined && where(n.callFrame).startsWith("src/")) {
          owner = labelOf(n)
          break
        }
      }
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + dt)
    }
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)
      if (n === undefined || n.callFrame.functionName === "(root)") continue
      const k = labelOf(n)
      if (seen.has(k)) continue
      seen.add(k)
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt)
    }
  })
}

const show = (title: string, m: Map<string, number>, n: number) => {
  console.log(`\n${title}`)
  const rows = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
  for (const [k, ms] of rows) {
    console.log(`${ms.toFixed(1).padStart(9)} ms ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${k}`)
  }
}

console.log(`${files.length} profile(s): ${busy.toFixed(0)} ms busy, ${idle.toFixed(0)} ms idle (excluded)`)
show("self time by area", byArea, 20)
show("self time by function", self, top)
show("self time by file", byFile, Math.min(top, 20))
show("inclusive time by function", inclusive, top)
if (focus !== undefined) {
  show(
    `inclusive time, frames under ${focus} only`,
    new Map([...inclusive].filter(([k]) => k.includes(` ${focus}`))),
    top
  )
}
if (owners) show("time by the innermost library frame on the stack", byOwner, top)
