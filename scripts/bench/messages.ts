// CPU per message in memory: a flood of 1 KB assistant messages through `FakeCli.layerClaudeAgent`
// (the in-memory transport feeds the same stdout reader as a process) and `ClaudeAgent.query`,
// and the same bytes through the Effect floor's path (TextDecoder + split + JSON.parse, one
// `Stream.asyncPush` emit per read, `Stream.runForEach`). No process and no pipe, so the figures
// move less with the machine's load than the process bench's rows; use it to compare builds.
//
//   npx tsx scripts/bench/messages.ts [--count=20000] [--size=1024] [--chunk=65536] [--reps=7] [--only=library|floor] [--dist[=DIR]]
//
// Each read is written on its own turn of the event loop (`setImmediate`), as a pipe delivers
// them. Prints medians (min–max) of CPU µs per message (`process.cpuUsage`, user + system), and
// with OpSupervision on (`--steps`) the runtime steps per message instead.
import { Effect, RuntimeFlags, RuntimeFlagsPatch, Stream } from "effect"
import { arg, ClaudeAgent, FakeCli } from "./library.js"
import { StepCounter } from "./stepCounter.js"

const count = arg("count", 20_000)
const size = arg("size", 1024)
const chunkBytes = arg("chunk", 65_536)
const reps = arg("reps", 7)
const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7)
const countSteps = process.argv.includes("--steps")

// The reads: `count` assistant messages of `size` bytes, cut at line ends into pieces of at most
// `chunkBytes` (at least one line each).
const reads = (() => {
  const session = "00000000-0000-4000-8000-000000000000"
  const base = {
    type: "assistant",
    message: {
      id: "msg_flood",
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [{ type: "text", text: "" }],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 2609, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
    },
    parent_tool_use_id: null,
    session_id: session,
    uuid: ""
  }
  const fixed = JSON.stringify(base).length + 36
  const text = "lorem ipsum dolor sit amet, ".repeat(Math.ceil(size / 28)).slice(0, Math.max(0, size - fixed - 1))
  const out: Array<string> = []
  let piece = ""
  for (let i = 0; i < count; i++) {
    const uuid = `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`
    const line = JSON.stringify({ ...base, message: { ...base.message, content: [{ type: "text", text }] }, uuid })
    if (piece.length > 0 && piece.length + line.length + 1 > chunkBytes) {
      out.push(piece)
      piece = ""
    }
    piece += (piece.length > 0 ? "\n" : "") + line
  }
  if (piece.length > 0) out.push(piece)
  return out
})()

// The fake CLI's `emitRaw` encodes each read to bytes; the floor does the same, so that both pay it.
const encoder = new TextEncoder()
const nextTurn = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

const cpuMicros = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

// The library: the fake writes each read (a string of whole lines) on its own turn, then the result.
const libraryLayer = FakeCli.layerClaudeAgent({
  onUserMessage: (_message, cli) =>
    Effect.gen(function*() {
      for (const read of reads) {
        yield* nextTurn
        yield* cli.emitRaw(read)
      }
      yield* nextTurn
      yield* cli.emit(cli.frames.result("done"))
    })
})
const libraryRun = ClaudeAgent.query("flood").pipe(
  Stream.runForEach(() => Effect.void),
  Effect.provide(libraryLayer)
)

// The floor: the same bytes, one read per turn, delivered as the bench's Effect floor does.
const floorRun = Stream.runForEach(
  Stream.asyncPush<unknown>((emit) =>
    Effect.sync(() => {
      const decoder = new TextDecoder()
      let buffer = ""
      let i = 0
      const next = () => {
        const read = reads[i++]
        if (read === undefined) return emit.end()
        buffer += decoder.decode(encoder.encode(read + "\n"), { stream: true })
        const lines = buffer.split("\n")
        buffer = lines.pop() ?? ""
        const parsed: Array<unknown> = []
        for (const line of lines) if (line !== "") parsed.push(JSON.parse(line))
        emit.array(parsed)
        setImmediate(next)
      }
      setImmediate(next)
    }), { bufferSize: "unbounded" }),
  () => Effect.void
)

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

const measure = (label: string, run: Effect.Effect<void, unknown>) =>
  Effect.gen(function*() {
    for (let w = 0; w < 3; w++) yield* run
    const xs: Array<number> = []
    for (let r = 0; r < reps; r++) {
      if (countSteps) {
        const counter = new StepCounter()
        yield* run.pipe(
          Effect.supervised(counter),
          Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
        )
        xs.push(counter.steps / count)
      } else {
        const start = cpuMicros()
        yield* run
        xs.push((cpuMicros() - start) / count)
      }
    }
    const digits = countSteps ? 3 : 2
    console.log(
      `${label} (${reps} × ${count} × ${size} B in ${reads.length} reads): ${median(xs).toFixed(digits)} ${
        countSteps ? "steps" : "CPU µs"
      } per message (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`
    )
  })

const program = Effect.gen(function*() {
  if (only === undefined || only === "library") yield* measure("library", libraryRun)
  if (only === undefined || only === "floor") yield* measure("floor", floorRun)
})

Effect.runPromise(program).catch((e) => {
  console.error(e)
  process.exit(1)
})
