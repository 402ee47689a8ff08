import { Effect, Layer, ManagedRuntime, Stream, Supervisor, RuntimeFlags, RuntimeFlagsPatch } from "effect"
let ops = 0, fibers = 0
class Count extends Supervisor.AbstractSupervisor { value = Effect.succeed(0); onStart() { fibers++ }; onEffect(f, effect) { ops++; if (tallyOn) { const fn = [effect.effect_instruction_i0, effect.effect_instruction_i1, effect.effect_instruction_i2].find((x) => typeof x === "function"); const k = effect._op + " " + (fn ? fn.toString().replace(/\s+/g, " ").slice(0, 110) : ""); tally.set(k, (tally.get(k) ?? 0) + 1) } } }
const tally = new Map(); const tallyOn = process.env.TALLY === "1"
const sup = new Count()
const counting = process.env.COUNT === "1"
const wrap = (e) => counting ? e.pipe(Effect.supervised(sup), Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))) : e
import { NodeContext } from "@effect/platform-node"
const lib = await import((process.env.LIB ?? process.cwd()) + "/dist/esm/index.js")
const CLI = "/work/wt-perf/scripts/fixtures/bench-cli.mjs"
const ARGS = [CLI, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system }
const init = { type: "control_request", request_id: "i", request: { subtype: "initialize" } }
const user = { type: "user", message: { role: "user", content: [{ type: "text", text: 'bench {"kind":"echo"}' }] }, parent_tool_use_id: null, session_id: "" }
const env = { ...process.env }
const transportOnly = Effect.scoped(Effect.gen(function* () {
  const t = yield* lib.Transport.Transport.makeSubprocess({ command: process.execPath, args: ARGS, env, maxBufferSize: 1 << 20 })
  yield* t.send(init); yield* t.send(user)
  yield* t.frames.pipe(Stream.takeUntil((f) => f.value?.type === "result"), Stream.runDrain)
  yield* t.endInput
}))
const channel = Effect.scoped(Effect.gen(function* () {
  const t = yield* lib.Transport.Transport.makeSubprocess({ command: process.execPath, args: ARGS, env, maxBufferSize: 1 << 20 })
  const c = yield* lib.ControlChannel.ControlChannel.make({}).pipe(Effect.provideService(lib.Transport.Transport, t))
  yield* c.request(lib.Control.Initialize, {})
  yield* t.send(user)
  yield* c.messages.pipe(Stream.takeUntil((f) => f?.type === "result"), Stream.runDrain)
  yield* t.endInput
}))
const rt = ManagedRuntime.make(lib.ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)))
const full = lib.ClaudeAgent.query(`bench {"kind":"echo"}`, { pathToClaudeCodeExecutable: CLI }).pipe(Stream.runDrain)
const cases = { transportOnly, channel, full }
for (const name of process.argv.slice(2)) {
  const eff = wrap(cases[name])
  for (let i = 0; i < 10; i++) await rt.runPromise(eff)
  if (globalThis.__profStart) await globalThis.__profStart()
  const n = 40, c0 = cpu(); ops = 0; fibers = 0
  for (let i = 0; i < n; i++) await rt.runPromise(eff)
  if (globalThis.__profStop) await globalThis.__profStop()
  console.log(`${name}: cpu/session ${((cpu() - c0) / n / 1000).toFixed(2)} ms; ops ${ops / n}; fibers ${fibers / n}`)
  for (const [k, v] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, 50)) console.log((v / (n + 10)).toFixed(1), k)
  tally.clear()
}
await rt.dispose()
