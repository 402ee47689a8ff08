// The cluster layout itself, before any CLI: two runner processes and this process as a
// client-only node, on PostgreSQL. Shards spread over both runners; after `kill -9` of one, its
// shards move to the other once its heartbeat expires, and a persisted stream that was in flight
// there continues on the survivor from the last acknowledged item.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Stream } from "effect"
import { testTimings, type Tick } from "../../scripts/cluster/layers.js"
import { databaseUrl, eventually, startRunner, spreadClient } from "./harness.js"

// Eight ids, four on each runner, chosen among these once the shards have spread (eight fixed ids
// all land on one runner's shards about one run in a hundred).
const candidates = Array.from({ length: 32 }, (_, i) => `conversation-${i}`)

describe("cluster on PostgreSQL: two runner processes and a client", () => {
  it.scopedLive("placement over both runners; kill -9 one mid-stream: its streams finish on the other", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const prefix = `probe_${Date.now().toString(36)}`
      const env = { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test" }
      // One after the other: runners starting together on a fresh database race to create the same
      // tables (Postgres' CREATE TABLE IF NOT EXISTS is not safe against a concurrent one).
      const a = yield* startRunner({ env })
      const b = yield* startRunner({ env })

      const { placement, probe, where: before } = yield* spreadClient({ prefix, url, candidates })
      yield* Effect.log(`runner A ${a.address} (${a.logFile}), runner B ${b.address} (${b.logFile})`)
      const onA = candidates.filter((_, i) => before[i] === a.address).slice(0, 4)
      const onB = candidates.filter((_, i) => before[i] === b.address).slice(0, 4)
      expect([onA.length, onB.length]).toEqual([4, 4])
      const ids = [...onA, ...onB]

      // Eight persisted streams of 40 items, 100 ms apart; kill A once each has produced two.
      const streams = yield* Effect.forEach(ids, (id) =>
        Effect.gen(function*() {
          const seen: Array<Tick> = []
          const fiber = yield* probe(id).Ticks({ key: `ticks-${id}`, n: 40, delayMs: 100 }).pipe(
            Stream.tap((tick) => Effect.sync(() => seen.push(tick))),
            Stream.runCollect,
            Effect.map(Chunk.toReadonlyArray),
            Effect.fork
          )
          return { id, seen, fiber }
        }))
      yield* eventually(
        Effect.filterOrFail(Effect.sync(() => streams.every((s) => s.seen.length >= 2)), (ok) => ok),
        { within: "30 seconds", describe: () => streams.map((s) => `${s.id}: ${s.seen.length}`).join(", ") }
      )
      const killedAt = Date.now()
      yield* a.kill9

      const results = yield* Effect.forEach(streams, (s) => Fiber.join(s.fiber))
      const failover = Date.now() - killedAt
      yield* Effect.log(
        `all streams done ${failover} ms after the kill; ${onA.length} of 8 ids were on the killed runner`
      )
      for (const [i, ticks] of results.entries()) {
        // Every item arrives once, in order: the survivor resumes after the last acknowledged one.
        expect(ticks.map((t) => t.seq)).toEqual(Array.from({ length: 40 }, (_, k) => k))
        const id = ids[i] ?? ""
        if (onA.includes(id)) {
          expect(ticks[0]?.runner).toBe(a.address)
          expect(ticks[ticks.length - 1]?.runner).toBe(b.address)
        } else {
          expect(new Set(ticks.map((t) => t.runner))).toEqual(new Set([b.address]))
        }
      }
      // Takeover needs the dead runner's heartbeat to expire, and no more than a few polls after.
      expect(failover).toBeLessThan(Number(testTimings.shardLockExpiration) + 15_000)

      const after = yield* placement
      expect(new Set(after)).toEqual(new Set([b.address]))
    }))
})
