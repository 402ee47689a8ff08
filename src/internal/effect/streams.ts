/**
 * Stream helpers on the message path.
 *
 * @internal
 */
import { Channel, Effect, Scope, Stream } from "effect"

/**
 * `Stream.unwrap` as one channel stage: the stream is run in place of the effect's channel.
 * `Stream.unwrap` flattens a one-element stream of streams, which passes every chunk of the inner
 * stream through the flattening stage (a few runtime steps per chunk) and tears that stage down at
 * the end.
 *
 * @internal
 */
export const unwrap = <A, E, R, E2, R2>(
  effect: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | R2> => Stream.fromChannel(Channel.unwrap(Effect.map(effect, Stream.toChannel)))

/**
 * `Stream.unwrapScoped` as one channel stage: the stream the effect makes runs inside an
 * `ensuring` that closes the scope the effect ran in. `Stream.unwrapScoped` adds a scoped stage and
 * a flattening one, whose teardown costs some 200 runtime steps at the end of every query.
 *
 * @internal
 */
export const unwrapScoped = <A, E, R, E2, R2>(
  effect: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | Exclude<R2, Scope.Scope>> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Scope.make(), (scope) =>
    Channel.ensuringWith(
      Channel.unwrap(Effect.map(Scope.extend(effect, scope), Stream.toChannel)),
      (exit) => Scope.close(scope, exit)
    ))))
