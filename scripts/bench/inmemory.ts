// The in-memory rows of the README's Performance section: hook round trips and session set-up over
// `FakeCli.layerClaudeAgent` (no process, no pipe: only the library's and the fake's own CPU).
//
//   npx tsx scripts/bench/inmemory.ts [--hooks=5000] [--sessions=500] [--reps=5] [--only=hooks|sessions] [--dist]
//
// --dist runs the built library (dist/esm, or --dist=DIR relative to the repository, `npm run build` first) instead of src/ through tsx:
// what users run, and what `node --import tsx --cpu-prof … --dist` profiles map back to src/ lines.
//
// Each row: a warm-up (3 runs of each), then `reps` measured repetitions; prints medians (min–max) of CPU time
// (`process.cpuUsage`, user + system) per unit.
import { Effect, Stream } from "effect"
import { arg, ClaudeAgent, FakeCli } from "./library.js"

const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7)
const hooks = arg("hooks", 5000)
const sessions = arg("sessions", 500)
const reps = arg("reps", 5)

const stopInput = { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }

const cpuMicros = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

// One query whose turn makes `n` sequential hook_callback requests; returns the CPU µs they took.
const hookRun = (n: number) =>
  Effect.suspend(() => {
    let elapsed = 0
    const layer = FakeCli.layerClaudeAgent({
      onUserMessage: (message, cli) =>
        Effect.gen(function*() {
          const start = cpuMicros()
          for (let i = 0; i < n; i++) {
            yield* cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stopInput })
          }
          elapsed = cpuMicros() - start
          yield* FakeCli.echoTurn(message, cli)
        })
    })
    return ClaudeAgent.query("hello", { hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] } }).pipe(
      Stream.runDrain,
      Effect.provide(layer),
      Effect.map(() => elapsed)
    )
  })

const sessionLayer = FakeCli.layerClaudeAgent()
const sessionRun = (n: number) =>
  Effect.suspend(() => {
    const start = cpuMicros()
    return Effect.repeatN(Stream.runDrain(ClaudeAgent.query("hi")), n - 1).pipe(
      Effect.provide(sessionLayer),
      Effect.map(() => cpuMicros() - start)
    )
  })

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const report = (label: string, unit: string, xs: ReadonlyArray<number>, digits: number) =>
  console.log(
    `${label}: ${median(xs).toFixed(digits)} ${unit} (${Math.min(...xs).toFixed(digits)}–${
      Math.max(...xs).toFixed(digits)
    }) [${xs.map((x) => x.toFixed(digits)).join(", ")}]`
  )

const program = Effect.gen(function*() {
  if (only === undefined || only === "hooks") {
    for (let w = 0; w < 3; w++) yield* hookRun(hooks)
    const xs: Array<number> = []
    for (let r = 0; r < reps; r++) xs.push((yield* hookRun(hooks)) / hooks)
    report(`hook round trip (${reps} × ${hooks})`, "CPU µs per round trip", xs, 1)
  }
  if (only === undefined || only === "sessions") {
    for (let w = 0; w < 3; w++) yield* sessionRun(sessions)
    const xs: Array<number> = []
    for (let r = 0; r < reps; r++) xs.push((yield* sessionRun(sessions)) / sessions / 1000)
    report(`session set-up (${reps} × ${sessions})`, "CPU ms per session", xs, 2)
  }
})

Effect.runPromise(program).catch((e) => {
  console.error(e)
  process.exit(1)
})
