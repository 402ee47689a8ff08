import { readFileSync } from "node:fs"
const which = process.argv[2]
const M = which === "A" ? await import("/tmp/stream-base/src/schema/Message.ts") : await import("./src/schema/Message.ts")
const lines = readFileSync("test/fixtures/cli-2.1.330-stdout.jsonl", "utf8").split("\n").filter((l) => l.includes('"stream_event"'))
const run = (n: number) => { const t = process.cpuUsage(); let k = 0; for (let i = 0; i < n; i++) { const r = M.decode(JSON.parse(lines[i % lines.length]!)); if (r._tag === "Right") k++ } const d = process.cpuUsage(t); return ((d.user + d.system) * 1000) / n }
run(200000)
const xs = [run(2e6), run(5e5), run(5e5), run(5e5), run(5e5)].sort((a, b) => a - b)
console.log(which, "parse+decode of a stream_event line", xs[2]!.toFixed(0), "ns", lines.length, "lines, avg bytes", Math.round(lines.reduce((a, l) => a + l.length, 0) / lines.length))
