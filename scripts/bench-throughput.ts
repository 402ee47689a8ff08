// Throughput benchmark: the SDK against a hand-written Node consumer, on the same fake CLI
// (scripts/fixtures/flood-cli.mjs) in the same run. Absolute numbers depend on the machine, so
// every SDK figure is reported as a ratio to the raw baseline measured moments before it.
//
//   npm run bench              100k messages, 5 rounds after a warm-up (medians)
//   npm run bench -- --quick   20k messages, 2 rounds (for smoke tests)
//
// Targets (from the issue): SDK throughput ≥ 0.8× raw, control round trips ≤ 1.2× raw, memory
// bounded when the consumer is slow. Missing a target is reported, not a failure: exit code 0.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { type ChildProcessByStdio, spawn } from "node:child_process"
import { once } from "node:events"
import { performance } from "node:perf_hooks"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { ClaudeAgent } from "../src/index.js"

const QUICK = process.argv.includes("--quick")
const MESSAGES = QUICK ? 20_000 : 100_000
const ROUNDS = QUICK ? 2 : 5
const WARMUPS = 1
const ROUND_TRIPS = QUICK ? 500 : 2_000
const SLOW_EVERY = 1_000

const FLOOD_CLI = fileURLToPath(new URL("./fixtures/flood-cli.mjs", import.meta.url))
// The SDK passes these; the raw child gets the same so both fixtures behave identically.
const CLI_ARGS = ["--output-format", "stream-json", "--input-format", "stream-json"]

const sdkOptions = {
  pathToClaudeCodeExecutable: FLOOD_CLI,
  env: { CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK: "1" }
}

const userLine = (text: string): string =>
  JSON.stringify({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" }) +
  "\n"

const controlLine = (id: string, subtype: string): string =>
  JSON.stringify({ type: "control_request", request_id: id, request: { subtype } }) + "\n"

const field = (u: unknown, key: string): unknown =>
  typeof u === "object" && u !== null && key in u ? Reflect.get(u, key) : undefined

// A GC before each memory phase makes "growth" mean this phase's growth, not leftover garbage.
// `--expose-gc` set at runtime is picked up by a fresh context; if that fails we just skip it.
const gc: (() => void) | undefined = (() => {
  try {
    v8.setFlagsFromString("--expose-gc")
    const fn: unknown = vm.runInNewContext("gc")
    if (typeof fn === "function") return () => void Reflect.apply(fn, undefined, [])
  } catch {
    // fall through
  }
  return undefined
})()

// ---------------------------------------------------------------------------------------------
// Raw baseline: spawn + chunk → string buffer → split("\n") → JSON.parse, untyped.

interface RawChild {
  readonly child: ChildProcessByStdio<Writable, Readable, null>
  onMessage: (message: unknown) => void
  readonly close: () => Promise<void>
}

const spawnRaw = (): RawChild => {
  const child = spawn(process.execPath, [FLOOD_CLI, ...CLI_ARGS], { stdio: ["pipe", "pipe", "inherit"] })
  const raw: RawChild = {
    child,
    onMessage: () => {},
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, "exit")
      child.stdin.end()
      await exited
    }
  }
  let buffer = ""
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk
    const lines = buffer.split("\n")
    buffer = lines.pop() ?? ""
    for (const line of lines) {
      if (line !== "") raw.onMessage(JSON.parse(line))
    }
  })
  return raw
}

const rawFlood = async (n: number, slow: boolean): Promise<{ readonly count: number; readonly ms: number }> => {
  const t0 = performance.now()
  const raw = spawnRaw()
  let count = 0
  const ms = await new Promise<number>((resolve) => {
    raw.onMessage = (message) => {
      count++
      if (field(message, "type") === "result") {
        resolve(performance.now() - t0)
        return
      }
      // The raw equivalent of a consumer that sleeps: stop reading, so the pipe pushes back.
      if (slow && count % SLOW_EVERY === 0) {
        raw.child.stdout.pause()
        setTimeout(() => raw.child.stdout.resume(), 1)
      }
    }
    raw.child.stdin.write(userLine(`flood ${n}`))
  })
  await raw.close()
  return { count, ms }
}

const rawRoundTrips = async (n: number): Promise<number> => {
  const raw = spawnRaw()
  const waiting = new Map<string, () => void>()
  raw.onMessage = (message) => {
    if (field(message, "type") !== "control_response") return
    const id = field(field(message, "response"), "request_id")
    if (typeof id !== "string") return
    const done = waiting.get(id)
    waiting.delete(id)
    done?.()
  }
  let next = 0
  const request = (subtype: string) =>
    new Promise<void>((resolve) => {
      const id = `req_${next++}`
      waiting.set(id, resolve)
      raw.child.stdin.write(controlLine(id, subtype))
    })
  await request("initialize")
  for (let i = 0; i < 50; i++) await request("mcp_status")
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await request("mcp_status")
  const ms = performance.now() - t0
  await raw.close()
  return (ms * 1000) / n
}

// ---------------------------------------------------------------------------------------------
// SDK: the same work through ClaudeAgent, messages decoded and validated by Schema.

const runtime = ManagedRuntime.make(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)))

const sdkFlood = (n: number, slow: boolean): Promise<{ readonly count: number; readonly ms: number }> => {
  const t0 = performance.now()
  let count = 0
  let ms = Number.NaN
  return runtime.runPromise(
    ClaudeAgent.query(`flood ${n}`, sdkOptions).pipe(
      Stream.runForEach((m) => {
        count++
        if (m.type === "result") ms = performance.now() - t0
        return slow && count % SLOW_EVERY === 0 ? Effect.sleep("1 millis") : Effect.void
      }),
      Effect.map(() => ({ count, ms }))
    )
  )
}

const sdkRoundTrips = (n: number): Promise<number> =>
  runtime.runPromise(Effect.scoped(Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(sdkOptions)
    yield* session.initializationResult
    for (let i = 0; i < 50; i++) yield* session.mcpServerStatus()
    const t0 = performance.now()
    for (let i = 0; i < n; i++) yield* session.mcpServerStatus()
    return ((performance.now() - t0) * 1000) / n
  })))

// ---------------------------------------------------------------------------------------------
// Harness

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] ?? Number.NaN : ((s[mid - 1] ?? Number.NaN) + (s[mid] ?? Number.NaN)) / 2
}

// Raw and SDK alternate within each round so drift (thermal, other load) hits both alike.
const rounds = async (
  label: string,
  raw: () => Promise<number>,
  sdk: () => Promise<number>
): Promise<{ readonly raw: number; readonly sdk: number }> => {
  const rs: Array<number> = []
  const ss: Array<number> = []
  for (let i = 0; i < WARMUPS + ROUNDS; i++) {
    const r = await raw()
    const s = await sdk()
    if (i >= WARMUPS) {
      rs.push(r)
      ss.push(s)
    }
    process.stderr.write(`  ${label} ${i < WARMUPS ? "warm-up" : `round ${i - WARMUPS + 1}`}: raw ${fmt(r)}  sdk ${fmt(s)}\n`)
  }
  return { raw: median(rs), sdk: median(ss) }
}

const fmt = (x: number): string =>
  x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1)

const rate = (expected: number) => (result: { readonly count: number; readonly ms: number }): number => {
  if (result.count !== expected) throw new Error(`expected ${expected} messages, got ${result.count}`)
  return result.count / (result.ms / 1000)
}

// Peak RSS, and peak live memory (heap + external right after a forced GC), above the level at
// the start, sampled while `run` is in flight. Plain peak heap would mostly measure how lazily
// V8 collects garbage; the live peak is what a slow consumer actually makes the process hold.
const peakGrowth = async (run: () => Promise<unknown>): Promise<{ readonly rss: number; readonly live: number }> => {
  const js = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external
  gc?.()
  const base = process.memoryUsage()
  let rss = base.rss
  let live = js(base)
  const sampleRss = () => {
    const r = process.memoryUsage.rss()
    if (r > rss) rss = r
  }
  const sampleLive = () => {
    gc?.()
    const m = process.memoryUsage()
    if (m.rss > rss) rss = m.rss
    if (js(m) > live) live = js(m)
  }
  const rssTimer = setInterval(sampleRss, 5)
  const liveTimer = setInterval(sampleLive, 50)
  try {
    await run()
  } finally {
    clearInterval(rssTimer)
    clearInterval(liveTimer)
  }
  return { rss: (rss - base.rss) / 2 ** 20, live: (live - js(base)) / 2 ** 20 }
}

interface Row {
  readonly metric: string
  readonly raw: string
  readonly sdk: string
  readonly ratio: string
  readonly target: string
}

const printTable = (rows: ReadonlyArray<Row>): void => {
  const header: Row = { metric: "metric", raw: "raw", sdk: "sdk", ratio: "ratio", target: "target" }
  const all = [header, ...rows]
  const keys = ["metric", "raw", "sdk", "ratio", "target"] as const
  const widths = keys.map((k) => Math.max(...all.map((r) => r[k].length)))
  const line = (r: Row) => keys.map((k, i) => r[k].padEnd(widths[i] ?? 0)).join(" | ")
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"))
  for (const r of rows) console.log(line(r))
}

const verdict = (ok: boolean): string => (ok ? "ok" : "MISSED")

const main = async (): Promise<void> => {
  console.log(
    `bench-throughput: ${MESSAGES.toLocaleString("en-US")} × ~1.2 KB messages, ${ROUNDS} rounds + ${WARMUPS} warm-up` +
      ` (medians), ${ROUND_TRIPS} control round trips; node ${process.version}${QUICK ? ", --quick" : ""}`
  )
  if (gc === undefined) console.log("note: no forced GC available: \"live\" memory includes uncollected garbage")
  const rows: Array<Row> = []
  const memRows: Array<Row> = []

  // Memory first, while the process is fresh: RSS rarely shrinks, so after the throughput rounds
  // it would hide growth. One run each: peak memory is not a rate.
  const rawMem = await peakGrowth(() => rawFlood(MESSAGES, true))
  const sdkMem = await peakGrowth(() => sdkFlood(MESSAGES, true))
  // A 4× longer flood too: memory that is bounded does not grow with the length of the flood,
  // whereas a pipeline without backpressure holds all of it. Heap+external (after a GC) is used
  // for this, measured live, since RSS rarely shrinks between phases.
  const sdkMemLarge = await peakGrowth(() => sdkFlood(4 * MESSAGES, true))
  const floodedMb = (MESSAGES * 1.2) / 1024
  const scaling = sdkMemLarge.live / Math.max(sdkMem.live, 1)
  memRows.push({
    metric: `slow consumer peak RSS growth (MB, flood ≈ ${Math.round(floodedMb)} MB)`,
    raw: rawMem.rss.toFixed(1),
    sdk: sdkMem.rss.toFixed(1),
    ratio: rawMem.rss > 1 ? `${(sdkMem.rss / rawMem.rss).toFixed(2)}×` : "n/a",
    target: "(info)"
  })
  memRows.push({
    metric: "slow consumer peak live heap+external (MB)",
    raw: rawMem.live.toFixed(1),
    sdk: sdkMem.live.toFixed(1),
    ratio: rawMem.live > 1 ? `${(sdkMem.live / rawMem.live).toFixed(2)}×` : "n/a",
    target: "(info)"
  })
  memRows.push({
    metric: `sdk slow consumer live memory, ${MESSAGES} → ${4 * MESSAGES} msgs (MB)`,
    raw: "",
    sdk: `${sdkMem.live.toFixed(1)} → ${sdkMemLarge.live.toFixed(1)}`,
    ratio: `${scaling.toFixed(2)}×`,
    target: `< 2× (bounded; 4× if unbounded) ${verdict(scaling < 2)}`
  })

  const flood = await rounds(
    "throughput msg/s",
    () => rawFlood(MESSAGES, false).then(rate(MESSAGES + 1)),
    () => sdkFlood(MESSAGES, false).then(rate(MESSAGES + 1))
  )
  const floodRatio = flood.sdk / flood.raw
  rows.push({
    metric: "throughput (msg/s, spawn→result)",
    raw: fmt(flood.raw),
    sdk: fmt(flood.sdk),
    ratio: `${floodRatio.toFixed(2)}×`,
    target: `≥ 0.80× ${verdict(floodRatio >= 0.8)}`
  })

  const rt = await rounds("round trip µs", () => rawRoundTrips(ROUND_TRIPS), () => sdkRoundTrips(ROUND_TRIPS))
  const rtRatio = rt.sdk / rt.raw
  rows.push({
    metric: "control round trip (µs, mean)",
    raw: fmt(rt.raw),
    sdk: fmt(rt.sdk),
    ratio: `${rtRatio.toFixed(2)}×`,
    target: `≤ 1.20× ${verdict(rtRatio <= 1.2)}`
  })

  console.log("")
  printTable([...rows, ...memRows])
}

main()
  .catch((e: unknown) => {
    console.error("bench-throughput failed:", e)
    process.exitCode = 1
  })
  .finally(() => runtime.dispose())
