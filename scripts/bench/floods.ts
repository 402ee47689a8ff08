// Flood after flood in one process: the CPU per message and the garbage collector's time of each
// flood of 1 KB assistant messages through `ClaudeAgent.query` and the bench's fake CLI (a real
// process and pipe), from the first to the last. The bench's warm rows measure floods 2 to 4 of a
// process (after one warm-up); this shows how a process gets there and where it settles.
//
//   npx tsx scripts/bench/floods.ts [--floods=8] [--count=20000] [--chunk=4096] [--dist[=DIR]]
//
// CPU is the whole query's (`process.cpuUsage`, spawn and set-up included) ÷ messages; GC is the
// sum of the `gc` performance entries during the query.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { fileURLToPath } from "node:url"
import { PerformanceObserver } from "node:perf_hooks"
import { arg, ClaudeAgent } from "./library.js"

const CLI = fileURLToPath(new URL("../fixtures/bench-cli.mjs", import.meta.url))
const chunk = arg("chunk", 0)
const floods = arg("floods", 8)
const count = arg("count", 20_000)
const prompt = `bench ${JSON.stringify({ kind: "flood", count, size: 1024, ...(chunk > 0 ? { chunk } : {}) })}`

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
const main = async () => {
  const xs: Array<string> = []
  for (let i = 0; i < floods; i++) {
    const cpu0 = cpuMicros()
    const gc0 = gcMs
    const gcs0 = gcs
    let delivered = 0
    await runtime.runPromise(
      ClaudeAgent.query(prompt, { pathToClaudeCodeExecutable: CLI }).pipe(
        Stream.runForEach(() => Effect.sync(() => delivered++))
      )
    )
    if (delivered < count) throw new Error(`flood ${i}: ${delivered} messages`)
    xs.push(`${((cpuMicros() - cpu0) / count).toFixed(2)} (gc ${(gcMs - gc0).toFixed(0)} ms/${gcs - gcs0})`)
  }
  console.log(`${floods} floods of ${count} × 1 KB${chunk > 0 ? ` in ${chunk} B writes` : ""}, CPU µs per message:`)
  console.log(xs.join(", "))
  await runtime.dispose()
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
