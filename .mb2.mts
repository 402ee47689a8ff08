import { readFileSync } from "node:fs"
import * as Guard from "./src/internal/schema/guard.ts"
import * as M from "./src/schema/Message.ts"
const frames = readFileSync("test/fixtures/cli-2.1.330-stdout.jsonl", "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
const ev = frames.filter((f) => f.type === "stream_event" && f.event.type === "content_block_delta")
const pick: Record<string, [(u: unknown) => unknown, Array<unknown>]> = {
  decode: [M.decode, ev],
  streamEvent: [Guard.compile(M.StreamEvent), ev],
  rawEvent: [Guard.compile(M.RawStreamEvent), ev.map((e) => e.event)],
  cbDelta: [Guard.compile(M.ContentBlockDeltaEvent), ev.map((e) => e.event)],
  delta: [Guard.compile(M.ContentBlockDelta), ev.map((e) => e.event.delta)],
  textDelta: [Guard.compile(M.TextDelta), ev.map((e) => e.event.delta)],
}
const [f, arg] = pick[process.argv[2]!]!
const run = (n: number) => { const t = process.cpuUsage(); for (let i = 0; i < n; i++) f(arg[i % arg.length]); const d = process.cpuUsage(t); return ((d.user + d.system) * 1000) / n }
run(300000)
const xs = [run(1e6), run(1e6), run(1e6)].sort((a, b) => a - b)
console.log(process.argv[2], xs[1]!.toFixed(0), "ns", arg.length)
