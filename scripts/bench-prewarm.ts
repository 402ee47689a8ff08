// Warm start on the real CLI: time from asking to the first message, cold (`ClaudeAgent.query`
// spawns and initializes the CLI) against prewarmed (`ClaudeAgent.prewarm` did that before the
// prompt was known). Offline, against ScriptedModel. `npm run bench:prewarm [-- --rounds N]`.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Stream } from "effect"
import { ClaudeAgent } from "../src/index.js"
import { ScriptedModel } from "../src/testing/index.js"

const roundsArg = process.argv.indexOf("--rounds")
const rounds = roundsArg === -1 ? 7 : Number(process.argv[roundsArg + 1] ?? 7)

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? NaN
}

const firstMessage = <E, R>(stream: Stream.Stream<unknown, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    yield* stream.pipe(Stream.take(1), Stream.runDrain)
    return performance.now() - start
  })

const program = Effect.scoped(Effect.gen(function*() {
  const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("hi"), times: Infinity }])
  const options = yield* model.options()
  const cold: Array<number> = []
  const warm: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    cold.push(yield* Effect.scoped(firstMessage(ClaudeAgent.query("hello", options))))
    warm.push(yield* Effect.scoped(Effect.gen(function*() {
      const prewarmed = yield* ClaudeAgent.prewarm(options)
      return yield* firstMessage(prewarmed.query("hello"))
    })))
  }
  const c = median(cold)
  const w = median(warm)
  yield* Effect.sync(() => {
    process.stdout.write(`query() → first message, median of ${rounds} (ms): cold ${c.toFixed(1)}, prewarmed ${w.toFixed(1)}\n`)
    process.stdout.write(`prewarm saves ${(c - w).toFixed(1)} ms (${((1 - w / c) * 100).toFixed(0)}%)\n`)
  })
}))

Effect.runPromise(program.pipe(Effect.provide(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))), Effect.provide(NodeContext.layer)))
