/**
 * `SqlRunnerStorage` whose lease rows are released in batches.
 *
 * With lease rows (`shardLockDisableAdvisory`), `@effect/cluster` releases each shard it hands
 * over with a `DELETE` of its own, every one on the runner's single lock connection, each under the
 * lock-operation deadline. A runner handing half of its 300 shards to a runner that joins queues
 * 150 statements there: the last ones, and the lease renewal queued behind them, miss the
 * deadline, the connection is rebuilt, the runner declares its lock storage unhealthy and drops
 * every shard, over and over (the shards never spread over two runners within 30 s on a loaded
 * machine). Here the releases that arrive together go out as one `DELETE` per runner address,
 * through the pool: a lease row is guarded by its address, not by a session.
 *
 * @internal
 */
import { RunnerStorage, ShardingConfig, SqlRunnerStorage } from "@effect/cluster"
import { PersistenceError } from "@effect/cluster/ClusterError"
import { SqlClient } from "@effect/sql"
import { type Chunk, Deferred, Effect, Exit, Queue } from "effect"

interface Release {
  readonly address: string
  readonly shardId: string
  readonly done: Deferred.Deferred<void, PersistenceError>
}

/** @internal The runner storage of the socket layout (needs `SqlClient`, `ShardingConfig`, a scope). */
export const make = (options: { readonly prefix?: string | undefined }) =>
  Effect.gen(function*() {
    const inner = yield* SqlRunnerStorage.make(options)
    const config = yield* ShardingConfig.ShardingConfig
    if (!config.shardLockDisableAdvisory) return inner
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const locks = sql(`${options.prefix ?? "cluster"}_locks`)
    const pending = yield* Queue.unbounded<Release>()

    const releaseBatch = (batch: Chunk.Chunk<Release>) => {
      const byAddress = new Map<string, Array<Release>>()
      for (const release of batch) {
        const group = byAddress.get(release.address)
        if (group === undefined) byAddress.set(release.address, [release])
        else group.push(release)
      }
      return Effect.forEach(byAddress, ([address, releases]) =>
        sql`DELETE FROM ${locks} WHERE address = ${address} AND ${
          sql.in(
            "shard_id",
            releases.map((r) =>
              r.shardId
            )
          )
        }`.pipe(
          PersistenceError.refail,
          Effect.exit,
          Effect.flatMap((exit) => Effect.forEach(releases, (r) => Deferred.done(r.done, Exit.asVoid(exit))))
        ), { discard: true })
    }
    yield* Queue.takeBetween(pending, 1, 500).pipe(Effect.flatMap(releaseBatch), Effect.forever, Effect.forkScoped)

    return RunnerStorage.RunnerStorage.of({
      ...inner,
      release: (address, shardId) =>
        Effect.flatMap(Deferred.make<void, PersistenceError>(), (done) =>
          Queue.offer(pending, { address: `${address.host}:${address.port}`, shardId: shardId.toString(), done }).pipe(
            Effect.zipRight(Deferred.await(done))
          ))
    })
  })
