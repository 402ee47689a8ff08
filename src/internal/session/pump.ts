/**
 * The messages of a query fed by a stream of prompts, ended early by the feed's failure: one fiber
 * takes the session's messages and hands each chunk over, and the feed's failure overtakes what
 * is waiting. `Stream.merge` would fork a fiber for every chunk pulled from either side; here the
 * cost is one fiber per query and a latch's wake per chunk.
 *
 * @internal
 */
import { Cause, type Chunk, Effect, Exit, Option, type Scope, Stream } from "effect"

type Pull<A, E> = Effect.Effect<Chunk.Chunk<A>, Option.Option<E>>

/**
 * The chunks `pull` takes, read on a fiber of the current scope, as a single-consumer stream
 * that ends with `pull` (its failure with `None`) and fails as soon as `failed` is called (a failure or a defect of the
 * feed). The fiber takes the next chunk only once the consumer has taken the last one.
 *
 * @internal
 */
export const make = <A, E, E2>(
  pull: Pull<A, E>
): Effect.Effect<
  { readonly stream: Stream.Stream<A, E | E2>; readonly failed: (cause: Cause.Cause<E2>) => void },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    // What the consumer takes next: a chunk, or the end (a failure of `None` is a clean end).
    let slot: Exit.Exit<Chunk.Chunk<A>, Option.Option<E | E2>> | undefined
    let overtaken: Cause.Cause<Option.Option<E2>> | undefined
    const filled = yield* Effect.makeLatch(false)
    const taken = yield* Effect.makeLatch(false)

    // Ends after handing over the end of `messages`; interrupted with the scope.
    const pump: Effect.Effect<void> = Effect.flatMap(Effect.exit(pull), (exit) => {
      slot = exit
      taken.unsafeClose()
      filled.unsafeOpen()
      return Exit.isSuccess(exit) ? Effect.zipRight(taken.await, pump) : Effect.void
    })
    yield* Effect.forkScoped(pump)

    const take: Pull<A, E | E2> = Effect.suspend(() => {
      if (overtaken !== undefined) return Effect.failCause(overtaken)
      const next = slot
      if (next === undefined) return Effect.zipRight(filled.await, take)
      if (Exit.isSuccess(next)) {
        slot = undefined
        filled.unsafeClose()
        taken.unsafeOpen()
      }
      return next
    })
    return {
      stream: Stream.repeatEffectChunkOption(take),
      failed: (cause) => {
        overtaken ??= Cause.map(cause, Option.some)
        filled.unsafeOpen()
      }
    }
  })
