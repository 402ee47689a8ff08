/**
 * Draining a stream chunk by chunk from a pull loop.
 *
 * `Stream.runForEachChunk` hands each chunk to the callback through a sink channel, and the
 * chunks it hands over outlive the young generation's collections: on the stdout reader (20k ×
 * 1 KB messages in 4 KB reads) about 0.9 KB per message is promoted to the old generation,
 * against none when the same chunks are taken with `Stream.toPull` and handled in a loop
 * (docs/performance.md has the measurement). Promoted garbage is paid again by the mark-compact
 * collector, and it makes the reader's CPU per message high when reads are small.
 *
 * @internal
 */
import { Channel, Effect, Option, Stream } from "effect"
import type { Chunk } from "effect"

/**
 * Runs `f` on every chunk of `self`, in order, one after the other; ends with the stream, fails
 * with its failure or `f`'s. The stream runs in a scope of its own, closed when this ends or is
 * interrupted (as `Stream.runForEachChunk` does); a stream made by `fromPull` is taken from directly.
 *
 * @internal
 */
export const forEachChunk = <A, E, R, E2, R2>(
  self: Stream.Stream<A, E, R> & { readonly [PullKey]?: Effect.Effect<Chunk.Chunk<A>, Option.Option<E>, R> },
  f: (chunk: Chunk.Chunk<A>) => Effect.Effect<unknown, E2, R2>
): Effect.Effect<void, E | E2, R | R2> => {
  const pull = self[PullKey]
  return pull !== undefined
    ? forEachPulled(pull, f)
    : Effect.scoped(Effect.flatMap(Stream.toPull(self), (pull) => forEachPulled(pull, f)))
}

const PullKey: unique symbol = Symbol.for("effect-claude-agent/internal/control/drain/pull")

/**
 * The stream of `pull`'s chunks (ended by its `None`), carrying `pull` for `forEachChunk`, which
 * then takes from it directly, with no stream to run and no scope of its own.
 *
 * @internal
 */
export const fromPull = <A, E>(
  pull: Effect.Effect<Chunk.Chunk<A>, Option.Option<E>>
): Stream.Stream<A, E> & { readonly [PullKey]: Effect.Effect<Chunk.Chunk<A>, Option.Option<E>> } =>
  Object.assign(Stream.repeatEffectChunkOption(pull), { [PullKey]: pull })

/**
 * Runs `f` on every chunk `pull` gives until it fails with `None` (the end); fails with its
 * other failures or `f`'s. For a source that is a pull already (no stream around it to run).
 *
 * @internal
 */
export const forEachPulled = <A, E, R, E2, R2>(
  pull: Effect.Effect<Chunk.Chunk<A>, Option.Option<E>, R>,
  f: (chunk: Chunk.Chunk<A>) => Effect.Effect<unknown, E2, R2>
): Effect.Effect<void, E | E2, R | R2> => {
  // Failures of `f` are kept apart from the pull's `Option` so they are not mistaken for the end.
  const body = Effect.flatMap(pull, (chunk) => Effect.mapError(f(chunk), Option.some))
  return Effect.whileLoop({ while: () => true, body: () => body, step: () => {} }).pipe(
    Effect.catchAll((error: Option.Option<E | E2>) => Option.isNone(error) ? Effect.void : Effect.fail(error.value))
  )
}

/**
 * The stream of `next`'s chunks, ended by its `undefined`: a channel that runs `next` and writes
 * what it gives, with no `Option` to wrap each chunk in and no failure to catch at the end (what
 * `Stream.repeatEffectChunkOption` does per chunk). The chunk the user reads is `next`'s own.
 *
 * @internal
 */
export const streamOf = <A, E>(next: Effect.Effect<Chunk.Chunk<A> | undefined, E>): Stream.Stream<A, E> => {
  const loop: Channel.Channel<Chunk.Chunk<A>, unknown, E, unknown, void, unknown> = Channel.flatMap(
    Channel.fromEffect(next),
    (chunk) => chunk === undefined ? Channel.void : Channel.zipRight(Channel.write(chunk), loop)
  )
  return Stream.fromChannel(loop)
}

/**
 * Runs `f` on every chunk `next` gives until it gives `undefined` (the end); fails with `next`'s
 * or `f`'s failure, as they are: nothing to map per chunk, where `forEachPulled` keeps `f`'s
 * failures apart from the pull's `Option`.
 *
 * @internal
 */
export const forEachNext = <A, E, R, E2, R2>(
  next: Effect.Effect<Chunk.Chunk<A> | undefined, E, R>,
  f: (chunk: Chunk.Chunk<A>) => Effect.Effect<unknown, E2, R2>
): Effect.Effect<void, E | E2, R | R2> =>
  Effect.suspend(() => {
    let more = true
    const body = Effect.flatMap(next, (chunk): Effect.Effect<unknown, E2, R2> => {
      if (chunk !== undefined) return f(chunk)
      more = false
      return Effect.void
    })
    return Effect.whileLoop({ while: () => more, body: () => body, step: () => {} })
  })
