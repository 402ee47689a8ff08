/**
 * Running a few effects in order without `Effect.all` / `Effect.forEach`, whose set-up (the
 * fiber's runtime read, the loop, its scope check) costs more steps than the two or three
 * effects the reader and the session state run per chunk.
 *
 * @internal
 */
import { Effect } from "effect"

/**
 * The effects one after the other, their results discarded.
 *
 * @internal
 */
export const sequence = (effects: ReadonlyArray<Effect.Effect<unknown>>): Effect.Effect<void> => {
  if (effects.length === 0) return Effect.void
  let out: Effect.Effect<unknown> = effects[0]!
  for (let i = 1; i < effects.length; i++) out = Effect.zipRight(out, effects[i]!)
  return Effect.asVoid(out)
}

/**
 * `f` on each item, one after the other, its results discarded.
 *
 * @internal
 */
export const each = <A>(items: ReadonlyArray<A>, f: (a: A) => Effect.Effect<unknown>): Effect.Effect<void> =>
  items.length === 1 ? Effect.asVoid(f(items[0]!)) : sequence(items.map(f))
