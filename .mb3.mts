import { readFileSync } from "node:fs"
import { Schema } from "effect"
import * as Guard from "./src/internal/schema/guard.ts"
import * as M from "./src/schema/Message.ts"
const frames = readFileSync("test/fixtures/cli-2.1.330-stdout.jsonl", "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
const ev = frames.filter((f) => f.type === "stream_event" && f.event.type === "content_block_delta")
const S5 = Schema.Struct({ type: Schema.Literal("stream_event"), event: M.RawStreamEvent, parent_tool_use_id: Schema.optional(Schema.NullOr(Schema.String)), session_id: Schema.String, uuid: Schema.optional(Schema.String) })
const S5old = Schema.Struct({ type: Schema.Literal("stream_event"), event: Schema.Struct({ type: Schema.String }), parent_tool_use_id: Schema.optional(Schema.NullOr(Schema.String)), session_id: Schema.String, uuid: Schema.optional(Schema.String) })
const pick: Record<string, (u: unknown) => unknown> = { s8: Guard.compile(M.StreamEvent), s5: Guard.compile(S5), s5old: Guard.compile(S5old) }
const f = pick[process.argv[2]!]!
const run = (n: number) => { const t = process.cpuUsage(); for (let i = 0; i < n; i++) f(ev[i % ev.length]); const d = process.cpuUsage(t); return ((d.user + d.system) * 1000) / n }
run(300000)
const xs = [run(1e6), run(1e6), run(1e6)].sort((a, b) => a - b)
console.log(process.argv[2], xs[1]!.toFixed(0), "ns")
