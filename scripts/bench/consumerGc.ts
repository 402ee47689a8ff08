// How the way a stream is consumed changes what its elements cost the garbage collector, with no
// library code: chunks of 64 freshly parsed 1 KB objects (a flood's messages) through the same
// `Stream`, consumed by
//
//   runForEachChunk  `Stream.runForEachChunk(stream, f)`: a sink running an effect per chunk;
//   mapOutEffect     `Channel.mapOutEffect` + `Channel.runDrain`: an effect per chunk, no sink;
//   mapOut           `Channel.mapOut` + `Channel.runDrain`: the same work in a plain function;
//   toPull           `Stream.toPull` and a loop over the pull.
//
// and, with no stream and no consumer stage, the smallest case: a `Channel.suspend` loop that makes
// each chunk and continues with `Channel.zipRight(stage, loop)`, run by `Channel.runDrain`, where
// the stage is
//
//   fromEffectHolding  `Channel.fromEffect(Effect.succeed(chunk))`: an effect that holds the chunk;
//   channelHolding     `Channel.succeed(chunk)`: the same, as a channel.
//
//   npx tsx scripts/bench/consumerGc.ts [--count=40000] [--reps=3]
//
// Each consumer runs in a fresh process per repetition (one process per run: the figures are a
// cold process's), alternated. Printed per consumer: CPU ms for the run and the garbage
// collector's ms in it (the `gc` performance entries), medians. Found while reading the cold
// message rows (docs/performance.md, "The floor's messages"): with an effect per element in the
// consuming channel, about a third of what a run allocates outlives each young collection
// (`node --trace-gc-nvp`, a diagnostic only), and the run costs ~1.7× the pull loop's CPU.
import { Channel, Chunk, Effect, Option, Stream } from "effect"
import { execFileSync } from "node:child_process"
import { PerformanceObserver } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { arg } from "./library.js"

const CONSUMERS = [
  "runForEachChunk",
  "mapOutEffect",
  "mapOut",
  "toPull",
  "fromEffectHolding",
  "channelHolding"
] as const
type Consumer = typeof CONSUMERS[number]

const child = process.argv.find((a) => a.startsWith("--child="))?.slice(8)

const runChild = async (consumer: Consumer, count: number): Promise<void> => {
  let gcMs = 0
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration
  }).observe({ entryTypes: ["gc"] })
  const line = JSON.stringify({
    type: "assistant",
    message: { id: "msg_1", role: "assistant", content: [{ type: "text", text: "x".repeat(900) }] },
    parent_tool_use_id: null,
    uuid: "00000000-0000-4000-8000-000000000000"
  })
  let produced = 0
  const batch = (): Chunk.Chunk<unknown> => {
    const out: Array<unknown> = Array.of()
    for (let i = 0; i < 64; i++) out.push(JSON.parse(line))
    produced += 64
    return Chunk.unsafeFromArray(out)
  }
  const stream = Stream.repeatEffectChunkOption(
    Effect.suspend(() => produced >= count ? Effect.fail(Option.none()) : Effect.sync(batch))
  )
  let seen = 0
  const f = (chunk: Chunk.Chunk<unknown>) => Effect.sync(() => void (seen += chunk.length))
  const loopOf = (stage: (chunk: Chunk.Chunk<unknown>) => Channel.Channel<never, unknown, never, unknown, unknown>) => {
    const loop: Channel.Channel<never, unknown, never, unknown, unknown> = Channel.suspend(() => {
      if (produced >= count) return Channel.void
      const chunk = batch()
      seen += chunk.length
      return Channel.zipRight(stage(chunk), loop)
    })
    return Channel.runDrain(loop)
  }
  const programs: Record<Consumer, () => Effect.Effect<unknown>> = {
    runForEachChunk: () => Stream.runForEachChunk(stream, f),
    mapOutEffect: () => Channel.runDrain(Channel.mapOutEffect(Stream.toChannel(stream), f)),
    mapOut: () => Channel.runDrain(Channel.mapOut(Stream.toChannel(stream), (chunk) => (seen += chunk.length, chunk))),
    toPull: () =>
      Effect.scoped(Effect.flatMap(Stream.toPull(stream), (pull) => {
        const loop: Effect.Effect<void> = Effect.matchEffect(pull, {
          onFailure: () => Effect.void,
          onSuccess: (chunk) => (seen += chunk.length, loop)
        })
        return loop
      })),
    fromEffectHolding: () => loopOf((chunk) => Channel.fromEffect(Effect.succeed(chunk))),
    channelHolding: () => loopOf((chunk) => Channel.succeed(chunk))
  }
  const cpu0 = process.cpuUsage()
  await Effect.runPromise(programs[consumer]())
  const cpu = process.cpuUsage(cpu0)
  if (seen !== produced) throw new Error(`${consumer}: ${seen} of ${produced}`)
  // Let the observer see the last entries.
  await new Promise((resolve) => setTimeout(resolve, 10))
  process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, gcMs }))
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

if (child !== undefined) {
  await runChild(child as Consumer, arg("count", 40_000))
} else {
  const count = arg("count", 40_000)
  const reps = arg("reps", 3)
  const self = fileURLToPath(import.meta.url)
  const results = new Map<Consumer, Array<{ cpuMs: number; gcMs: number }>>()
  for (let rep = 0; rep < reps; rep++) {
    for (const consumer of CONSUMERS) {
      const out = execFileSync(process.execPath, ["--import", "tsx", self, `--child=${consumer}`, `--count=${count}`], {
        encoding: "utf8"
      })
      const sample: unknown = JSON.parse(out)
      if (typeof sample !== "object" || sample === null) throw new Error(`bad sample: ${out}`)
      const list = results.get(consumer) ?? []
      list.push({ cpuMs: Number(Reflect.get(sample, "cpuMs")), gcMs: Number(Reflect.get(sample, "gcMs")) })
      results.set(consumer, list)
    }
  }
  console.log(`${count} elements of ~1 KB in chunks of 64, ${reps} fresh processes each, medians:`)
  for (const consumer of CONSUMERS) {
    const list = results.get(consumer) ?? []
    console.log(
      `  ${consumer.padEnd(18)} CPU ${median(list.map((s) => s.cpuMs)).toFixed(1)} ms, GC ${
        median(list.map((s) => s.gcMs)).toFixed(1)
      } ms`
    )
  }
}
