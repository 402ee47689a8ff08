import { readFileSync } from "node:fs"
const which = process.argv[2]
const M = which === "A" ? await import("/tmp/stream-base/src/schema/Message.ts") : await import("./src/schema/Message.ts")
const frames = readFileSync("test/fixtures/cli-2.1.330-stdout.jsonl", "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
const sets: Record<string, Array<unknown>> = {
  assistant: frames.filter((f) => f.type === "assistant"),
  stream_event: frames.filter((f) => f.type === "stream_event"),
  text_delta: frames.filter((f) => f.type === "stream_event" && f.event.type === "content_block_delta"),
  mix: frames.filter((f) => !String(f.type).startsWith("control_"))
}
const run = (set: Array<unknown>, n: number) => {
  const t = process.cpuUsage()
  let k = 0
  for (let i = 0; i < n; i++) { const r = M.decode(set[i % set.length]); if (r._tag === "Right") k++ }
  const d = process.cpuUsage(t); return ((d.user + d.system) * 1000) / n
}
const out: Record<string, string> = {}
for (const [name, set] of Object.entries(sets)) {
  run(set, 300_000)
  const xs: number[] = []
  for (let r = 0; r < 5; r++) xs.push(run(set, 300_000))
  out[name] = xs.sort((p, q) => p - q)[2]!.toFixed(0)
}
console.log(which, JSON.stringify(out))
