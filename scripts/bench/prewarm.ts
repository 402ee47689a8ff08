// Warm starts on the real CLI, offline against ScriptedModel: from asking to the first message and
// to the result, for
//   cold      `ClaudeAgent.query` spawns and initializes the CLI;
//   prewarmed `ClaudeAgent.prewarm` did that before the prompt was known (same folder and options);
//   claimed   `ClaudeAgent.park` did it in a neutral folder before the folder was known, and
//             `claim(prompt, { cwd, model })` binds it to the project folder (the claim is timed).
//
//   npm run bench:prewarm [-- --rounds N]
//
// Rounds interleave the three, so that the machine's noise falls on all of them alike; prints
// medians (min–max) in ms.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message } from "../../src/index.js"
import { ScriptedModel } from "../../src/testing/index.js"

const roundsArg = process.argv.indexOf("--rounds")
const rounds = roundsArg === -1 ? 7 : Number(process.argv[roundsArg + 1] ?? 7)

const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)
const summary = (xs: ReadonlyArray<number>) => {
  const s = sorted(xs)
  const median = s[Math.floor(s.length / 2)] ?? NaN
  return `${median.toFixed(1).padStart(7)} (${(s[0] ?? NaN).toFixed(1)}–${(s[s.length - 1] ?? NaN).toFixed(1)})`
}

interface Timing {
  readonly first: number
  readonly result: number
}

// From `start` to the first message and to the result of `stream`.
const timed = <E, R>(start: number, stream: Stream.Stream<Message.Message, E, R>) =>
  Effect.gen(function*() {
    let first = NaN
    let result = NaN
    yield* stream.pipe(
      Stream.tap((m) =>
        Effect.sync(() => {
          const now = performance.now() - start
          if (Number.isNaN(first)) first = now
          if (m.type === "result") result = now
        })
      ),
      Stream.takeUntil(Message.isResult),
      Stream.runDrain
    )
    const timing: Timing = { first, result }
    return timing
  })

const program = Effect.scoped(Effect.gen(function*() {
  const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("hi"), times: Infinity }])
  const base = yield* model.options()
  const root = path.dirname(base.cwd)
  const parking = path.join(root, "spares")
  fs.mkdirSync(parking, { recursive: true })
  const project = { ...base, model: "claude-haiku-4-5" }
  const rows: Record<"cold" | "prewarmed" | "claimed", Array<Timing>> = { cold: [], prewarmed: [], claimed: [] }
  for (let i = 0; i < rounds; i++) {
    rows.cold.push(
      yield* Effect.scoped(Effect.suspend(() => timed(performance.now(), ClaudeAgent.query("hello", project))))
    )
    rows.prewarmed.push(
      yield* Effect.scoped(Effect.gen(function*() {
        const prewarmed = yield* ClaudeAgent.prewarm(project)
        return yield* timed(performance.now(), prewarmed.query("hello"))
      }))
    )
    rows.claimed.push(
      yield* Effect.scoped(Effect.gen(function*() {
        const spare = yield* ClaudeAgent.park({ ...base, cwd: parking })
        const start = performance.now()
        const claimed = yield* spare.claim("hello", { cwd: base.cwd, model: project.model })
        return yield* timed(start, claimed.session.receiveResponse)
      }))
    )
  }
  yield* Effect.sync(() => {
    process.stdout.write(`median (min–max) of ${rounds} rounds, ms        first message        result\n`)
    for (const [name, timings] of Object.entries(rows)) {
      process.stdout.write(
        `${name.padEnd(38)} ${summary(timings.map((t) => t.first))}   ${summary(timings.map((t) => t.result))}\n`
      )
    }
  })
}))

Effect.runPromise(
  program.pipe(
    Effect.provide(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))),
    Effect.provide(NodeContext.layer)
  )
)
