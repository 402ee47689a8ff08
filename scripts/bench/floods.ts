// Flood after flood in one process: the CPU per message and the garbage collector's time of each
// flood of 1 KB assistant messages through `ClaudeAgent.query` and the bench's fake CLI (a real
// process and pipe), from the first to the last. The bench's warm rows measure floods 2 to 4 of a
// process (after one warm-up); this shows how a process gets there and where it settles.
//
//   npx tsx scripts/bench/floods.ts [--floods=8] [--count=20000] [--size=1024] [--chunk=4096] [--dist[=DIR]] [--floor]
//                                   [--cpu-prof=DIR]
//
// --floor runs the bench's Effect floor instead (spawn, `split("\n")` + `JSON.parse`, one
// `Stream.asyncPush` emit per read, `Stream.runForEach`; the fake CLI's initialize is not answered).
//
// --cpu-prof=DIR writes one V8 CPU profile per flood (DIR/flood-N.cpuprofile, through `node:inspector`
// in this process: the main thread only), to compare the first floods with the settled ones
// (`scripts/bench/profile.ts`).
//
// CPU is the whole query's (`process.cpuUsage`, spawn and set-up included) ÷ messages; GC is the
// sum of the `gc` performance entries during the query.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { PerformanceObserver } from "node:perf_hooks"
import { arg, ClaudeAgent } from "./library.js"

const CLI = fileURLToPath(new URL("../fixtures/bench-cli.mjs", import.meta.url))
const chunk = arg("chunk", 0)
const floods = arg("floods", 8)
const count = arg("count", 20_000)
const size = arg("size", 1024)
const prompt = `bench ${JSON.stringify({ kind: "flood", count, size, ...(chunk > 0 ? { chunk } : {}) })}`

let gcMs = 0
let gcs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMs += entry.duration
    gcs++
  }
}).observe({ entryTypes: ["gc"] })

const cpuMicros = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const runtime = ManagedRuntime.make(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)))

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined

// The bench's Effect floor (scripts/bench/worker.ts `loadFloor`), messages only.
const floor = Stream.asyncPush<unknown, Error>((emit) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [CLI, "--output-format", "stream-json", "--verbose"], {
        stdio: ["pipe", "pipe", "inherit"]
      })
      const write = (value: unknown) => child.stdin.write(JSON.stringify(value) + "\n")
      let buffer = ""
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        buffer += chunk
        const lines = buffer.split("\n")
        buffer = lines.pop() ?? ""
        const out: Array<unknown> = []
        for (const line of lines) {
          if (line === "") continue
          const m: unknown = JSON.parse(line)
          const type = field(m, "type")
          if (type === "control_response" || type === "control_request") continue
          out.push(m)
          if (type === "result") child.stdin.end()
        }
        if (out.length > 0) emit.array(out)
      })
      child.on("exit", () => emit.end())
      write({ type: "control_request", request_id: "init_1", request: { subtype: "initialize" } })
      write({ type: "user", message: { role: "user", content: [{ type: "text", text: prompt }] }, session_id: "" })
      return child
    }),
    (child) => Effect.sync(() => child.kill())
  ), { bufferSize: "unbounded" })
const useFloor = process.argv.includes("--floor")
const profileDir = process.argv.find((a) => a.startsWith("--cpu-prof="))?.slice(11)
const inspector = profileDir === undefined ? undefined : new Session()
const post = (method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) => {
    inspector?.post(method, params, (error, result) => error === null ? resolve(result) : reject(error))
  })
if (inspector !== undefined && profileDir !== undefined) {
  mkdirSync(profileDir, { recursive: true })
  inspector.connect()
  await post("Profiler.enable")
  await post("Profiler.setSamplingInterval", { interval: 100 })
}
const main = async () => {
  const xs: Array<string> = []
  for (let i = 0; i < floods; i++) {
    const gc0 = gcMs
    const gcs0 = gcs
    let delivered = 0
    if (inspector !== undefined) await post("Profiler.start")
    const cpu0 = cpuMicros()
    const messages = useFloor ? floor : ClaudeAgent.query(prompt, { pathToClaudeCodeExecutable: CLI })
    await runtime.runPromise(Stream.runForEach(messages, () => Effect.sync(() => delivered++)))
    const cpu = cpuMicros() - cpu0
    if (inspector !== undefined) {
      const result = await post("Profiler.stop")
      const profile = typeof result === "object" && result !== null ? Reflect.get(result, "profile") : undefined
      writeFileSync(`${profileDir}/flood-${i}.cpuprofile`, JSON.stringify(profile))
    }
    if (delivered < count) throw new Error(`flood ${i}: ${delivered} messages`)
    xs.push(`${(cpu / count).toFixed(2)} (gc ${(gcMs - gc0).toFixed(0)} ms/${gcs - gcs0})`)
    if (process.argv.includes("--mark")) console.log(`=== flood ${i} done: ${xs[xs.length - 1]}`)
  }
  console.log(
    `${useFloor ? "floor" : "library"}: ${floods} floods of ${count} × ${size} B${
      chunk > 0 ? ` in ${chunk} B writes` : ""
    }, CPU µs per message:`
  )
  console.log(xs.join(", "))
  await runtime.dispose()
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
