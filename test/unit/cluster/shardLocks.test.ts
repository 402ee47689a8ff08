// The socket layout's runner storage with lease rows: releases that arrive together are written as
// one statement per runner, and a runner's release never frees a shard another runner holds.
import { RunnerAddress, ShardId, ShardingConfig } from "@effect/cluster"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ShardLocks from "../../../src/cluster/internal/shardLocks.js"

describe("cluster shard leases", () => {
  it.scoped("many releases at once free the releasing runner's shards and no other's", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shard-locks-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const database = yield* Layer.build(Layer.mergeAll(
        SqliteClient.layer({ filename: path.join(dir, "cluster.db") }),
        ShardingConfig.layer({ shardLockDisableAdvisory: true })
      ))
      const storage = yield* ShardLocks.make({ prefix: "leases" }).pipe(Effect.provide(database))
      const a = RunnerAddress.make("10.0.0.1", 34431)
      const b = RunnerAddress.make("10.0.0.2", 34431)
      const shards = Array.from({ length: 100 }, (_, i) => ShardId.make("default", i + 1))
      const ofA = shards.slice(0, 60)
      const ofB = shards.slice(60)

      expect((yield* storage.acquire(a, ofA)).length).toBe(60)
      expect((yield* storage.acquire(b, ofB)).length).toBe(40)
      expect(yield* storage.acquire(b, ofA)).toEqual([])

      // A hands over all of its shards at once, and "releases" ten of B's, which it does not hold.
      yield* Effect.forEach([...ofA, ...ofB.slice(0, 10)], (shard) => storage.release(a, shard), {
        concurrency: "unbounded",
        discard: true
      })
      expect((yield* storage.refresh(b, ofB)).length).toBe(40)
      expect((yield* storage.refresh(a, ofA)).length).toBe(0)
      expect((yield* storage.acquire(b, shards)).length).toBe(100)
    }))
})
