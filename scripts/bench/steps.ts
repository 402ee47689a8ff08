// Where a session's set-up goes, counted rather than timed: a `Supervisor` counts the fibers
// started and, with `RuntimeFlags.OpSupervision`, the runtime steps of a trivial query (one echo
// turn), split at the first delivered message (opening) and the `result` (the turn); what follows
// the `result` until the stream ends is the close. Also the CPU per session, unsupervised.
//
//   npx tsx scripts/bench/steps.ts [--sessions=40] [--warmup=10] [--fake=process|memory] [--prompt=string|stream]
//                                  [--dist[=DIR]] [--cpu-reps=0]
//   npx tsx scripts/bench/steps.ts --flood=20000 [--size=1024] [--chunk=4096] [--sessions=3] [--warmup=2]
//
// --flood=N counts per message instead: each session is the bench's flood workload (N assistant
// messages of --size bytes, written in --chunk-byte pieces when given), and the steps and fibers
// from the first delivered message to the result are divided by N. --prompt=stream sends the
// prompt as a one-element Stream (the multi-turn input path) instead of a string.
//
// --fake=process (default) drives the bench's fake CLI (scripts/fixtures/bench-cli.mjs) through
// `ClaudeAgent.layer`, as `npm run bench`'s set-up row does; --fake=memory uses
// `FakeCli.layerClaudeAgent` (no process). --dist (or --dist=DIR, relative to the repository, e.g.
// a build of main) runs a built library instead of src/ through tsx. --cpu-reps=N adds N
// repetitions of `sessions` unsupervised sessions, timed by `process.cpuUsage`. --prompt=stream
// feeds the query a `Stream` of one prompt (multi-turn input, the official SDK's main mode) instead
// of a string.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, RuntimeFlags, RuntimeFlagsPatch, Stream } from "effect"
import { fileURLToPath } from "node:url"
import { arg, ClaudeAgent, FakeCli } from "./library.js"
import { StepCounter } from "./stepCounter.js"

const sessions = arg("sessions", 40)
const warmup = arg("warmup", 10)
const cpuReps = arg("cpu-reps", 0)
const fake = process.argv.find((a) => a.startsWith("--fake="))?.slice(7) ?? "process"
const promptKind = process.argv.find((a) => a.startsWith("--prompt="))?.slice(9) ?? "string"
const flood = arg("flood", 0)
const size = arg("size", 1024)
const chunk = arg("chunk", 0)
const prompt = flood > 0
  ? `bench ${JSON.stringify({ kind: "flood", count: flood, size, ...(chunk > 0 ? { chunk } : {}) })}`
  : `bench {"kind":"echo"}`
const CLI = fileURLToPath(new URL("../fixtures/bench-cli.mjs", import.meta.url))

const layer = fake === "memory"
  ? FakeCli.layerClaudeAgent()
  : ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

interface Phases {
  open: number
  turn: number
  close: number
  fibers: number
}

// One session; with a counter, the steps at its first message and at its result.
const session = (counter: StepCounter | undefined, phases: Phases | undefined) =>
  Effect.suspend(() => {
    let first = -1
    let result = -1
    const start = counter?.steps ?? 0
    const fibers = counter?.fibers ?? 0
    const query = ClaudeAgent.query(
      promptKind === "stream" ? Stream.make(prompt) : prompt,
      fake === "memory" ? {} : { pathToClaudeCodeExecutable: CLI }
    ).pipe(
      Stream.runForEach((message) =>
        Effect.sync(() => {
          if (counter === undefined) return
          if (first < 0) first = counter.steps
          if (message.type === "result") result = counter.steps
        })
      )
    )
    return query.pipe(Effect.tap(() =>
      Effect.sync(() => {
        if (counter === undefined || phases === undefined) return
        phases.open += first - start
        phases.turn += result - first
        phases.close += counter.steps - result
        phases.fibers += counter.fibers - fibers
      })
    ))
  })

const cpuMicros = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const program = Effect.gen(function*() {
  for (let i = 0; i < warmup; i++) yield* session(undefined, undefined)
  const counter = new StepCounter()
  const phases: Phases = { open: 0, turn: 0, close: 0, fibers: 0 }
  const counted = Effect.gen(function*() {
    for (let i = 0; i < sessions; i++) yield* session(counter, phases)
  }).pipe(
    Effect.supervised(counter),
    Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
  )
  yield* counted
  const per = (x: number) => (x / sessions).toFixed(1)
  if (flood > 0) {
    const perMessage = (x: number) => (x / sessions / flood).toFixed(3)
    console.log(
      `${fake} fake, ${promptKind} prompt, ${sessions} floods of ${flood} × ${size} B${
        chunk > 0 ? ` in ${chunk} B writes` : ""
      }: ` +
        `${perMessage(phases.turn)} steps per message (first message → result), ` +
        `${per(phases.fibers)} fibers and ${per(phases.open + phases.close)} steps per session outside the flood`
    )
  } else {
    console.log(
      `${fake} fake, ${promptKind} prompt, ${sessions} sessions: ${per(phases.fibers)} fibers and ${
        per(phases.open + phases.turn + phases.close)
      } steps per session (opening ${per(phases.open)}, turn ${per(phases.turn)}, closing ${per(phases.close)})`
    )
  }
  const xs: Array<number> = []
  for (let r = 0; r < cpuReps; r++) {
    const t0 = cpuMicros()
    for (let i = 0; i < sessions; i++) yield* session(undefined, undefined)
    xs.push((cpuMicros() - t0) / sessions / 1000)
  }
  if (xs.length > 0) {
    const sorted = [...xs].sort((a, b) => a - b)
    console.log(`CPU ms per session: median ${sorted[sorted.length >> 1]!.toFixed(2)} [${xs.map((x) => x.toFixed(2))}]`)
  }
})

Effect.runPromise(Effect.provide(program, layer)).catch((e) => {
  console.error(e)
  process.exit(1)
})
