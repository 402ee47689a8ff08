// `npm run bench`: this library against the Effect floor (the least Effect code doing the
// library's job, issue #18), the official `@anthropic-ai/claude-agent-sdk` (pinned in
// devDependencies) and a raw Node consumer, all driving the same fake CLI
// (scripts/fixtures/bench-cli.mjs), on the workloads of issue #10 (scripts/bench/workloads.ts);
// with --baseline=DIR, also the library built in another checkout (DIR/dist/esm/index.js), so a
// change is measured back to back against main.
//
//   npm run bench                      full: 5 cold repetitions + 1 warm-up and 5 warm ones (~6 min)
//   npm run bench -- --quick           counts ÷ 5, 2 cold + 2 warm repetitions (~1.5 min)
//   npm run bench -- --smoke           counts ÷ 50, warm only, 1 repetition, library from src/
//
// Options: --reps=N (cold), --warm-reps=N, --warmups=N, --scale=X, --only=flood1k,hooks,…,
// --contenders=library,official (--contenders=library,floor,protocolFloor adds the protocol floor: the
// Effect floor plus the protocol work every session needs, request table, deadlines, close, process
// group, spans; docs/performance.md), --cold-only, --warm-only, --library=dist|src, --no-build,
// --baseline=DIR (adds the "baseline" contender: DIR/dist/esm/index.js, e.g. main's build),
// --markdown=FILE (the table and its notes as Markdown, for the README),
// --out=FILE (JSON; default bench-results.json), --cpu-prof=DIR (one V8 CPU profile per job, of
// the job alone; summarise with `tsx scripts/bench/profile.ts DIR/library-flood1k-warm-*.cpuprofile`).
//
// Cold: every repetition is a fresh process (node start and imports are not timed except where
// the metric says so). Warm: one long-lived process per contender, a warm-up round first. Within
// each repetition the contenders run back to back in a rotating order, so drift on the machine
// hits them alike. Reported: medians with min–max, and the ratios library / floor, floor /
// official, library / official (and library / baseline), with issue #18's targets. The library is measured from dist/esm (what users import: tsc's output, no
// loader), built first unless --no-build; --library=src runs src/ through tsx instead (smoke
// runs and tests, where dist may not exist).
import * as esbuild from "esbuild"
import { type ChildProcess, execFileSync, fork } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"
import {
  type Contender,
  contenders as allContenders,
  defaultContenders,
  type FromWorker,
  type Job,
  type Metric,
  type Mode,
  type Sample,
  type ToWorker,
  type Workload,
  type WorkloadId,
  workloads as allWorkloads
} from "./workloads.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const CLI = join(root, "scripts", "fixtures", "bench-cli.mjs")

// ---------------------------------------------------------------------------------------------
// options

const argv = process.argv.slice(2)
const flag = (name: string): boolean => argv.includes(`--${name}`)
const option = (name: string): string | undefined =>
  argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const numberOption = (name: string, fallback: number): number => {
  const value = option(name)
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: not a number: ${value}`)
  return n
}

const QUICK = flag("quick")
const SMOKE = flag("smoke")
const preset = SMOKE
  ? { reps: 0, warmReps: 1, warmups: 0, scale: 0.02 }
  : QUICK
  ? { reps: 2, warmReps: 2, warmups: 1, scale: 0.2 }
  : { reps: 5, warmReps: 5, warmups: 1, scale: 1 }
const settings = {
  reps: flag("warm-only") ? 0 : numberOption("reps", preset.reps),
  warmReps: flag("cold-only") ? 0 : numberOption("warm-reps", preset.warmReps),
  warmups: numberOption("warmups", preset.warmups),
  scale: numberOption("scale", preset.scale),
  library: option("library") ?? (SMOKE ? "src" : "dist"),
  build: !flag("no-build"),
  out: option("out") ?? join(root, "bench-results.json"),
  markdown: ((file) => (file === undefined ? undefined : resolve(file)))(option("markdown")),
  baseline: ((dir) => (dir === undefined ? undefined : resolve(dir)))(option("baseline")),
  cpuProf: ((dir) => (dir === undefined ? undefined : resolve(dir)))(option("cpu-prof"))
}
if (settings.library !== "dist" && settings.library !== "src") throw new Error("--library must be dist or src")

const pick = <A extends string>(name: string, all: ReadonlyArray<A>): ReadonlyArray<A> => {
  const value = option(name)
  if (value === undefined) return all
  const wanted = value.split(",")
  const unknown = wanted.filter((w) => !all.some((a) => a === w))
  if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(", ")} (known: ${all.join(", ")})`)
  return all.filter((a) => wanted.includes(a))
}
const contenders = option("contenders") === undefined
  ? allContenders.filter((c) => defaultContenders.includes(c) || (c === "baseline" && settings.baseline !== undefined))
  : pick("contenders", allContenders)
if (contenders.includes("baseline") && settings.baseline === undefined) {
  throw new Error("the baseline contender needs --baseline=DIR (a checkout whose dist/esm/index.js it loads)")
}
const baselineEntry = settings.baseline === undefined ? undefined : join(settings.baseline, "dist", "esm", "index.js")
if (baselineEntry !== undefined && !existsSync(baselineEntry)) throw new Error(`--baseline: no ${baselineEntry}`)
const selected = pick<WorkloadId>("only", allWorkloads.map((w) => w.id))
const workloads = allWorkloads.filter((w) => selected.includes(w.id))

// ---------------------------------------------------------------------------------------------
// workers

const cacheDir = join(root, "node_modules", ".cache", "effect-claude-agent-bench")
// One file per run: node_modules may be shared by several checkouts benchmarking at once.
const workerFile = join(cacheDir, `worker-${process.pid}.mjs`)

// The worker runs as plain JavaScript: bundled from worker.ts with its npm imports left as
// imports, so each contender loads its packages from node_modules exactly as an app would.
const buildWorker = async (): Promise<void> => {
  mkdirSync(cacheDir, { recursive: true })
  await esbuild.build({
    entryPoints: [join(root, "scripts", "bench", "worker.ts")],
    outfile: workerFile,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning"
  })
}

const libraryUrl = pathToFileURL(join(root, settings.library === "dist" ? "dist/esm/index.js" : "src/index.ts")).href
// The floors, official and raw contenders ignore the URL.
const urlOf = (contender: Contender): string =>
  contender === "baseline" && baselineEntry !== undefined ? pathToFileURL(baselineEntry).href : libraryUrl

interface Worker {
  readonly contender: Contender
  readonly run: (job: Job) => Promise<Sample>
  readonly close: () => Promise<void>
}

const JOB_TIMEOUT_MS = 180_000

const startWorker = (contender: Contender): Promise<Worker> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = fork(workerFile, [contender, urlOf(contender), CLI], {
      execArgv: contender === "library" && settings.library === "src" ? ["--import", "tsx"] : [],
      env: settings.cpuProf === undefined ? process.env : { ...process.env, BENCH_CPU_PROF_DIR: settings.cpuProf },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json"
    })
    let waiting: { resolve: (s: Sample) => void; reject: (e: Error) => void } | undefined
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    child.on("message", (message: FromWorker) => {
      if (message.type === "ready") {
        resolve({
          contender,
          run: (job) =>
            new Promise<Sample>((ok, fail) => {
              const timer = setTimeout(() => {
                child.kill("SIGKILL")
                fail(new Error(`${contender} ${job.workload} (${job.mode}) timed out after ${JOB_TIMEOUT_MS / 1000} s`))
              }, JOB_TIMEOUT_MS)
              waiting = {
                resolve: (s) => (clearTimeout(timer), ok(s)),
                reject: (e) => (clearTimeout(timer), fail(e))
              }
              const toWorker: ToWorker = { type: "job", job }
              child.send(toWorker)
            }),
          close: async () => {
            if (child.connected) child.disconnect()
            await exited
          }
        })
      } else if (message.type === "result") {
        waiting?.resolve(message.sample)
      } else {
        const error = new Error(`${contender}: ${message.message}`)
        if (waiting === undefined) reject(error)
        else waiting.reject(error)
      }
    })
    child.once("exit", (code, signal) => {
      const error = new Error(`${contender} worker exited (${signal ?? code})`)
      reject(error)
      waiting?.reject(error)
    })
  })

// ---------------------------------------------------------------------------------------------
// schedule

type Samples = Map<string, Array<Sample>>
const key = (workload: WorkloadId, mode: Mode, contender: Contender) => `${workload}/${mode}/${contender}`
const samples: Samples = new Map()
const record = (workload: WorkloadId, mode: Mode, contender: Contender, sample: Sample) => {
  const k = key(workload, mode, contender)
  const list = samples.get(k) ?? []
  list.push(sample)
  samples.set(k, list)
}

// Rotating the start each time: no contender always runs first (on a cooler or busier machine).
const rotate = <A>(xs: ReadonlyArray<A>, by: number): ReadonlyArray<A> => {
  const k = by % Math.max(1, xs.length)
  return [...xs.slice(k), ...xs.slice(0, k)]
}

const brief = (sample: Sample): string =>
  Object.entries(sample).map(([k, v]) => `${k}=${v >= 100 ? Math.round(v) : v.toFixed(2)}`).join(" ")

const progress = (text: string) => process.stderr.write(`${text}\n`)

const runCold = async (): Promise<void> => {
  let turn = 0
  for (let rep = 0; rep < settings.reps; rep++) {
    for (const w of workloads) {
      if (!w.modes.includes("cold")) continue
      for (const contender of rotate(contenders, turn++)) {
        const worker = await startWorker(contender)
        try {
          const sample = await worker.run({ workload: w.id, mode: "cold", scale: settings.scale })
          record(w.id, "cold", contender, sample)
          progress(`  cold ${rep + 1}/${settings.reps} ${w.id} ${contender}: ${brief(sample)}`)
        } finally {
          await worker.close()
        }
      }
    }
  }
}

const runWarm = async (): Promise<void> => {
  if (settings.warmReps === 0) return
  const warm = new Map<Contender, Worker>()
  const worker = (contender: Contender): Worker => {
    const w = warm.get(contender)
    if (w === undefined) throw new Error(`no warm worker for ${contender}`)
    return w
  }
  try {
    for (const contender of contenders) warm.set(contender, await startWorker(contender))
    let turn = 0
    for (const w of workloads) {
      if (!w.modes.includes("warm")) continue
      const job: Job = { workload: w.id, mode: "warm", scale: settings.scale }
      for (let i = 0; i < settings.warmups; i++) {
        for (const contender of rotate(contenders, turn++)) await worker(contender).run(job)
      }
      for (let rep = 0; rep < settings.warmReps; rep++) {
        for (const contender of rotate(contenders, turn++)) {
          const sample = await worker(contender).run(job)
          record(w.id, "warm", contender, sample)
          progress(`  warm ${rep + 1}/${settings.warmReps} ${w.id} ${contender}: ${brief(sample)}`)
        }
      }
    }
  } finally {
    for (const w of warm.values()) await w.close()
  }
}

// ---------------------------------------------------------------------------------------------
// report

interface Stat {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly n: number
}

const stat = (xs: ReadonlyArray<number>): Stat | undefined => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (s.length === 0) return undefined
  const at = (i: number) => s[i] ?? Number.NaN
  const mid = Math.floor(s.length / 2)
  const median = s.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2
  return { median, min: at(0), max: at(s.length - 1), n: s.length }
}

interface Row {
  readonly workload: WorkloadId
  readonly title: string
  readonly metric: string
  readonly label: string
  readonly mode: Mode
  readonly better: Metric["better"]
  readonly stats: Partial<Record<Contender, Stat>>
  readonly libraryVsFloor: number | undefined
  readonly libraryVsProtocolFloor: number | undefined
  readonly floorVsOfficial: number | undefined
  readonly libraryVsOfficial: number | undefined
  readonly libraryVsRaw: number | undefined
  readonly libraryVsBaseline: number | undefined
  readonly target: string
  readonly met: boolean | undefined
}

// A change counts as no worse than the baseline within this much: two builds of the same code
// differ by a few percent from run to run on a quiet machine.
const BASELINE_NOISE = 1.05

const rows = (): Array<Row> =>
  workloads.flatMap((w: Workload) =>
    (["cold", "warm"] as const).flatMap((mode) =>
      w.metrics.flatMap((m): Array<Row> => {
        if (!(m.modes ?? w.modes).includes(mode)) return []
        const stats: Partial<Record<Contender, Stat>> = {}
        for (const c of contenders) {
          const s = stat((samples.get(key(w.id, mode, c)) ?? []).map((x) => x[m.key] ?? Number.NaN))
          if (s !== undefined) stats[c] = s
        }
        if (Object.keys(stats).length === 0) return []
        const ratio = (top: Contender, bottom: Contender) => {
          const a = stats[top]?.median
          const b = stats[bottom]?.median
          return a === undefined || b === undefined || b === 0 ? undefined : a / b
        }
        const vsFloor = ratio("library", "floor")
        const vsOfficial = ratio("library", "official")
        const vsRaw = ratio("library", "raw")
        const vsBaseline = ratio("library", "baseline")
        const op = m.better === "higher" ? "≥" : "≤"
        const ok = (r: number | undefined, t: number) =>
          r === undefined ? undefined : m.better === "higher" ? r >= t : r <= t
        const checks: Array<{ text: string; met: boolean | undefined }> = []
        if (m.targetVsFloor !== undefined && stats.floor !== undefined) {
          checks.push({ text: `${op} ${m.targetVsFloor.toFixed(2)}× floor`, met: ok(vsFloor, m.targetVsFloor) })
        }
        if (m.targetVsOfficial !== undefined && stats.official !== undefined) {
          checks.push({
            text: `${op} ${m.targetVsOfficial.toFixed(1)}× official`,
            met: ok(vsOfficial, m.targetVsOfficial)
          })
        }
        if (m.targetVsRawWarm !== undefined && mode === "warm" && stats.raw !== undefined) {
          checks.push({ text: `${op} ${m.targetVsRawWarm.toFixed(2)}× raw`, met: ok(vsRaw, m.targetVsRawWarm) })
        }
        if (m.key === "ownImportMs" && stats.library !== undefined) {
          checks.push({ text: "≤ 50 ms", met: stats.library.median <= 50 })
        }
        if (stats.baseline !== undefined && m.key !== "importMs") {
          const limit = m.better === "higher" ? 1 / BASELINE_NOISE : BASELINE_NOISE
          checks.push({ text: `${op} ${limit.toFixed(2)}× baseline`, met: ok(vsBaseline, limit) })
        }
        const known = checks.filter((c) => c.met !== undefined)
        return [{
          workload: w.id,
          title: w.title,
          metric: m.key,
          label: m.label,
          mode,
          better: m.better,
          stats,
          libraryVsFloor: vsFloor,
          libraryVsProtocolFloor: ratio("library", "protocolFloor"),
          floorVsOfficial: ratio("floor", "official"),
          libraryVsOfficial: vsOfficial,
          libraryVsRaw: vsRaw,
          libraryVsBaseline: vsBaseline,
          target: checks.map((c) => `${c.text}${c.met === undefined ? "" : c.met ? " ✓" : " ✗"}`).join("; "),
          met: known.length === 0 ? undefined : known.every((c) => c.met === true)
        }]
      })
    )
  )

const digitsOf = (row: Row) =>
  allWorkloads.find((w) => w.id === row.workload)?.metrics.find((m) => m.key === row.metric)?.digits ?? 1
const fmt = (x: number, digits: number) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
const cell = (s: Stat | undefined, digits: number) =>
  s === undefined
    ? "–"
    : s.n === 1
    ? fmt(s.median, digits)
    : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`
const ratioCell = (r: number | undefined) => (r === undefined ? "–" : `${r.toFixed(2)}×`)

const names: Record<Contender, string> = {
  library: "library",
  floor: "Effect floor",
  protocolFloor: "protocol floor",
  official: "official SDK",
  raw: "raw Node",
  baseline: "baseline"
}

// Columns: the contenders' medians, then the ratios issue #18 reads (library ÷ floor, library ÷
// protocol floor when it runs, floor ÷
// official, library ÷ official, and library ÷ baseline when there is one), then the targets.
const table = (all: ReadonlyArray<Row>): string => {
  const columns: ReadonlyArray<
    { readonly title: string; readonly of: (r: Row) => number | undefined; readonly shown: boolean }
  > = [
    { title: "lib / floor", of: (r) => r.libraryVsFloor, shown: contenders.includes("floor") },
    {
      title: "lib / protocol floor",
      of: (r) => r.libraryVsProtocolFloor,
      shown: contenders.includes("protocolFloor")
    },
    {
      title: "floor / official",
      of: (r) => r.floorVsOfficial,
      shown: contenders.includes("floor") && contenders.includes("official")
    },
    { title: "lib / official", of: (r) => r.libraryVsOfficial, shown: contenders.includes("official") },
    {
      title: "lib / raw",
      of: (r) => r.libraryVsRaw,
      shown: contenders.includes("raw") && !contenders.includes("floor")
    },
    { title: "lib / baseline", of: (r) => r.libraryVsBaseline, shown: contenders.includes("baseline") }
  ]
  const ratios = columns.filter((c) => c.shown)
  const header = [
    "workload",
    "metric",
    "mode",
    ...contenders.map((c) => names[c]),
    ...ratios.map((c) => c.title),
    "target"
  ]
  const lines = [
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...all.map((r) =>
      `| ${
        [
          r.title,
          `${r.label} ${r.better === "higher" ? "↑" : "↓"}`,
          r.mode,
          ...contenders.map((c) => cell(r.stats[c], digitsOf(r))),
          ...ratios.map((c) => ratioCell(c.of(r))),
          r.target
        ].join(" | ")
      } |`
    )
  ]
  return lines.join("\n")
}

const machine = () => {
  const cpus = os.cpus()
  const version = (pkg: string) => {
    try {
      const json: unknown = JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8"))
      const v = typeof json === "object" && json !== null ? Reflect.get(json, "version") : undefined
      return typeof v === "string" ? v : "?"
    } catch {
      return "?"
    }
  }
  const own: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  const ownVersion = typeof own === "object" && own !== null ? Reflect.get(own, "version") : undefined
  return {
    cpu: cpus[0]?.model ?? "?",
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    versions: {
      "effect-claude-agent": typeof ownVersion === "string" ? ownVersion : "?",
      "@anthropic-ai/claude-agent-sdk": version("@anthropic-ai/claude-agent-sdk"),
      effect: version("effect"),
      "@effect/platform-node": version("@effect/platform-node")
    }
  }
}

// The checkout the baseline was built from, when its directory records it (a COMMIT file).
const baselineCommit = (): string => {
  if (settings.baseline === undefined) return ""
  try {
    return ` (commit ${readFileSync(join(settings.baseline, "COMMIT"), "utf8").trim().slice(0, 12)})`
  } catch {
    return ""
  }
}

const main = async (): Promise<void> => {
  const started = performance.now()
  const loadBefore = os.loadavg()
  if (settings.library === "dist" && settings.build) {
    progress("building dist/ (npm run build; --no-build to skip)…")
    execFileSync(process.execPath, [join(root, "scripts", "build", "build.mjs")], {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"]
    })
  }
  await buildWorker()
  const info = machine()
  progress(
    `bench: ${contenders.join(", ")} × ${workloads.map((w) => w.id).join(", ")}; ` +
      `${settings.reps} cold + ${settings.warmReps} warm repetitions (${settings.warmups} warm-up), scale ${settings.scale}, ` +
      `library from ${settings.library}${settings.baseline === undefined ? "" : `, baseline from ${settings.baseline}`}`
  )
  try {
    await runCold()
    await runWarm()
  } finally {
    rmSync(workerFile, { force: true })
  }
  const all = rows()
  const seconds = (performance.now() - started) / 1000
  const chunk = stat(
    (samples.get(key("chunked4k", "warm", "raw")) ?? samples.get(key("chunked4k", "cold", "raw")) ?? []).map((s) =>
      s.meanChunkBytes ?? Number.NaN
    )
  )
  const notes = [
    `${info.cpu}, ${info.cores} cores, ${info.memoryGb} GB, ${info.os}; node ${info.node}; ` +
    Object.entries(info.versions).map(([k, v]) => `${k} ${v}`).join(", "),
    `${settings.reps} cold repetitions (a fresh process each) and ${settings.warmReps} warm ones after ${settings.warmups} warm-up; ` +
    `counts × ${settings.scale}; library from ${settings.library === "dist" ? "dist/esm" : "src (tsx)"}; ` +
    `load average before ${loadBefore.map((l) => l.toFixed(2)).join(" ")}; ${Math.round(seconds)} s in all`,
    ...(chunk === undefined
      ? []
      : [`4 KB chunks: the raw consumer's reads averaged ${Math.round(chunk.median)} bytes`]),
    ...(baselineEntry === undefined ? [] : [`baseline: ${baselineEntry}${baselineCommit()}`]),
    "cells: median (min–max); ↑ higher is better, ↓ lower is better; ratios are of the medians " +
    "(lib / floor is library ÷ Effect floor, and so on); targets: issue #18 (floor), issue #10 (official, raw)" +
    (baselineEntry === undefined
      ? ""
      : `, and no worse than the baseline by more than ${Math.round((BASELINE_NOISE - 1) * 100)}% (noise)`)
  ]
  const report = `${table(all)}\n\n${notes.map((n) => `- ${n}`).join("\n")}\n`
  process.stdout.write(report)
  if (settings.markdown !== undefined) {
    writeFileSync(settings.markdown, report)
    progress(`wrote ${settings.markdown}`)
  }
  const json = {
    date: new Date().toISOString(),
    machine: info,
    settings: {
      ...settings,
      contenders,
      workloads: workloads.map((w) => w.id),
      loadBefore,
      loadAfter: os.loadavg(),
      seconds
    },
    rows: all,
    samples: Object.fromEntries(samples)
  }
  writeFileSync(settings.out, `${JSON.stringify(json, null, 2)}\n`)
  progress(`\nwrote ${settings.out}`)
}

main().catch((e: unknown) => {
  console.error("bench failed:", e)
  process.exitCode = 1
})
