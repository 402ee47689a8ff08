import { Effect, Exit, Layer, ManagedRuntime, Scope, Stream, Supervisor, RuntimeFlags, RuntimeFlagsPatch } from "effect"
import { NodeContext } from "@effect/platform-node"
const lib = await import((process.env.LIB ?? process.cwd()) + "/dist/esm/index.js")
const CLI = "/work/wt-perf/scripts/fixtures/bench-cli.mjs"
let ops = 0
let phase = ""; const tallies = {}
class Count extends Supervisor.AbstractSupervisor { value = Effect.succeed(0); onEffect(f, effect) { ops++; if (!process.env.PHASE || phase !== process.env.PHASE) return; const fn = [effect.effect_instruction_i0, effect.effect_instruction_i1, effect.effect_instruction_i2].find((x) => typeof x === "function"); const k = effect._op + " " + (fn ? fn.toString().replace(/\s+/g, " ").slice(0, 150) : ""); tallies[k] = (tallies[k] ?? 0) + 1 } }
const sup = new Count()
const wrap = (e) => e.pipe(Effect.supervised(sup), Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)))
const rt = ManagedRuntime.make(lib.ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)))
const phases = { open: 0, send: 0, drain: 0, close: 0 }
const one = Effect.gen(function* () {
  const scope = yield* Scope.make()
  let o = ops; phase = "open"
  const s = yield* wrap(lib.ClaudeAgent.ClaudeAgent.pipe(Effect.flatMap((a) => a.session({ pathToClaudeCodeExecutable: CLI })), Scope.extend(scope)))
  phases.open += ops - o; o = ops; phase = "send"
  yield* wrap(s.send('bench {"kind":"echo"}'))
  phases.send += ops - o; o = ops; phase = "drain"
  yield* wrap(Stream.runDrain(s.receiveResponse))
  phases.drain += ops - o; o = ops; phase = "close"
  yield* wrap(Scope.close(scope, Exit.void))
  phases.close += ops - o
})
for (let i = 0; i < 5; i++) await rt.runPromise(one)
for (const k in phases) phases[k] = 0
for (let i = 0; i < 10; i++) await rt.runPromise(one)
for (const k in phases) phases[k] /= 10
console.log(phases)
for (const [k, v] of Object.entries(tallies).sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log((v / 15).toFixed(1), k)
await rt.dispose()
