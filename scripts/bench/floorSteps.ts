// The runtime steps and fibers of a session of the two Effect floors (scripts/bench/worker.ts's
// `floor` and `protocolFloor`), counted as scripts/bench/steps.ts counts the library's: a
// `Supervisor` counts fiber starts and, with `RuntimeFlags.OpSupervision`, runtime steps, here set
// on the runtime the floor runs its sessions (and callback fibers) on. One echo turn on the
// bench's fake CLI per session, split at the first delivered message (opening) and the `result`
// (the turn); what follows the `result` until the query's promise settles is the close. Also the
// CPU per session, unsupervised, as `steps.ts --cpu-reps` measures the library's.
//
//   npx tsx scripts/bench/floorSteps.ts [--sessions=40] [--warmup=10] [--cpu-reps=0] [--contenders=floor,protocolFloor]
import { FiberRef, Runtime, RuntimeFlags } from "effect"
import { fileURLToPath } from "node:url"
import { loadFloor, loadProtocolFloor, type RunQuery, useCli } from "./worker.js"
import { StepCounter } from "./stepCounter.js"

// Not library.ts's `arg`: importing it loads the library, which the floors' process must not hold.
const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
const sessions = arg("sessions", 40)
const warmup = arg("warmup", 10)
const cpuReps = arg("cpu-reps", 0)
const wanted = (process.argv.find((a) => a.startsWith("--contenders="))?.slice(13) ?? "floor,protocolFloor").split(",")
const prompt = `bench {"kind":"echo"}`
useCli(fileURLToPath(new URL("../fixtures/bench-cli.mjs", import.meta.url)))

const loaders: Record<string, (runtime?: Runtime.Runtime<never>) => Promise<RunQuery>> = {
  floor: loadFloor,
  protocolFloor: loadProtocolFloor
}

const cpuMicros = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const count = async (name: string, load: (runtime?: Runtime.Runtime<never>) => Promise<RunQuery>) => {
  const plain = await load()
  for (let i = 0; i < warmup; i++) await plain(prompt, {}, () => {})
  const counter = new StepCounter()
  const counting = await load(
    Runtime.defaultRuntime.pipe(
      Runtime.setFiberRef(FiberRef.currentSupervisor, counter),
      Runtime.enableRuntimeFlag(RuntimeFlags.OpSupervision)
    )
  )
  let open = 0
  let turn = 0
  let close = 0
  const fibers0 = counter.fibers
  for (let i = 0; i < sessions; i++) {
    const start = counter.steps
    let first = -1
    let result = -1
    await counting(prompt, {}, (m) => {
      if (first < 0) first = counter.steps
      if (m.type === "result") result = counter.steps
    })
    open += first - start
    turn += result - first
    close += counter.steps - result
  }
  const per = (x: number) => (x / sessions).toFixed(1)
  console.log(
    `${name}, ${sessions} sessions: ${per(counter.fibers - fibers0)} fibers and ${
      per(open + turn + close)
    } steps per session (opening ${per(open)}, turn ${per(turn)}, closing ${per(close)})`
  )
  const xs: Array<number> = []
  for (let r = 0; r < cpuReps; r++) {
    const t0 = cpuMicros()
    for (let i = 0; i < sessions; i++) await plain(prompt, {}, () => {})
    xs.push((cpuMicros() - t0) / sessions / 1000)
  }
  if (xs.length > 0) {
    const sorted = [...xs].sort((a, b) => a - b)
    console.log(
      `${name}: CPU ms per session: median ${sorted[sorted.length >> 1]?.toFixed(2)} [${xs.map((x) => x.toFixed(2))}]`
    )
  }
}

for (const name of wanted) {
  const load = loaders[name]
  if (load === undefined) throw new Error(`--contenders: unknown ${name} (known: floor, protocolFloor)`)
  await count(name, load)
}
