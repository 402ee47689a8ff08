// Services captured when a session is built, provided to each callback call.
//
// The captured context also holds the span current where it was captured (the session's), and
// providing it would put every span a callback makes under the session. Spans a hook, permission
// callback, tool or elicitation handler makes belong under the request it answers: the caller's
// current span is kept as the parent.
import { Context, Effect, Option, Tracer } from "effect"

/** `Effect.provide(self, captured)`, keeping the current span as the parent of `self`'s spans. */
export const provideCaptured = <A, E, R>(self: Effect.Effect<A, E, R>, captured: Context.Context<R>): Effect.Effect<A, E> =>
  Effect.contextWithEffect((current: Context.Context<never>) => {
    const parent = Context.getOption(current, Tracer.ParentSpan)
    return Effect.provide(self, Option.isSome(parent) ? Context.add(captured, Tracer.ParentSpan, parent.value) : captured)
  })

/**
 * `Effect.provide(self, captured)` with `span` as the parent of `self`'s spans: a callback's own
 * span and its services in one change of context (each change costs two fiber-ref updates that
 * compare whole contexts), where `Effect.withSpan` around `provideCaptured` makes two.
 */
export const provideCapturedUnder = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  captured: Context.Context<R>,
  span: Tracer.Span
): Effect.Effect<A, E> => Effect.provide(self, Context.add(captured, Tracer.ParentSpan, span))
