// Services captured when a session is built, provided to each callback call.
//
// The captured context also holds the span current where it was captured (the session's), and
// providing it would put every span a callback makes under the session. Spans a hook, permission
// callback, tool or elicitation handler makes belong under the request it answers: the caller's
// current span is kept as the parent.
import { Context, Effect, type Exit, Option, Predicate, Tracer } from "effect"
import { OptionsError } from "../../SdkError.js"

/** `Effect.provide(self, captured)`, keeping the current span as the parent of `self`'s spans. */
export const provideCaptured = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  captured: Context.Context<R>
): Effect.Effect<A, E> =>
  Effect.contextWithEffect((current: Context.Context<never>) => {
    const parent = Context.getOption(current, Tracer.ParentSpan)
    return Effect.provide(
      self,
      Option.isSome(parent) ? Context.add(captured, Tracer.ParentSpan, parent.value) : captured
    )
  })

/**
 * What a `providing` handler's call returned, seen from inside: the effect before the services
 * were provided, and those services.
 *
 * @internal
 */
export interface Unprovided {
  readonly _tag: "Unprovided"
  readonly provided: Effect.Effect<unknown, unknown>
  readonly effect: Effect.Effect<unknown, unknown, unknown>
  readonly services: Context.Context<never>
}

/**
 * What a `spanning` handler's call returned, seen from inside: a call that runs under a span of
 * its own (an MCP tool's), with services of its own. The control channel makes that span as the
 * request's one span (`span.name`, the request's attributes and `span.attributes`), starts the
 * answer's fiber with the services and that span as the parent of its spans, and runs `run(end)`;
 * the call ends the span with its own exit (`end`), and the fiber's end ends it if it is still
 * open (an interruption).
 *
 * @internal
 */
export interface Spanned {
  readonly _tag: "Spanned"
  readonly provided: Effect.Effect<unknown, unknown>
  readonly services: Context.Context<never>
  readonly span: { readonly name: string; readonly attributes: Record<string, unknown> }
  readonly run: (end: (exit: Exit.Exit<unknown, unknown>) => void) => Effect.Effect<unknown, unknown, unknown>
}

// The last call of a `providing` or `spanning` handler, until `unprovided` takes it: the control
// channel calls a handler and looks here on the same stack, before anything else can run.
let last: Unprovided | Spanned | undefined

/**
 * `run` with `captured` provided to every call, as `provideCaptured` does; the control channel,
 * which runs each call in a fiber of its own, takes the call back with `unprovided` and starts the
 * fiber with the services in its context instead: one context for the fiber, where
 * `provideCaptured` sets the fiber's context around the call and restores it after (an
 * `acquireUseRelease`, about a fifth of a hook round trip's CPU).
 *
 * @internal
 */
export const providing = <Args extends ReadonlyArray<unknown>, A, E, R>(
  run: (...args: Args) => Effect.Effect<A, E, R>,
  captured: Context.Context<R>
) =>
(...args: Args): Effect.Effect<A, E> => {
  const effect = run(...args)
  const provided = provideCaptured(effect, captured)
  last = { _tag: "Unprovided", provided, effect, services: captured }
  return provided
}

/**
 * Returns `spanned.provided` (what a direct caller runs) and keeps `spanned` for the control
 * channel: what the same call is when its answer's fiber starts with `services` and a span of its
 * own (see `Spanned`). The record is the caller's, kept as it is: one object per call.
 *
 * @internal
 */
export const spanning = <A, E>(spanned: Spanned & { readonly provided: Effect.Effect<A, E> }): Effect.Effect<A, E> => {
  last = spanned
  return spanned.provided
}

/**
 * The effect and services behind `handled` when a `providing` or `spanning` handler returned it
 * just now; `undefined` otherwise (any other handler).
 *
 * @internal
 */
export const unprovided = (handled: Effect.Effect<unknown, unknown>): Unprovided | Spanned | undefined => {
  const found = last
  last = undefined
  return found !== undefined && found.provided === handled ? found : undefined
}

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

/**
 * Why a callback's return value is not an Effect, as an `OptionsError` naming the callback. Code
 * written for the official SDK returns a Promise (an `async` callback); the message says how to
 * wrap it, since the types that would have said so are gone in plain JavaScript.
 *
 * @internal
 */
export const notAnEffect = (callback: string, value: unknown): OptionsError => {
  // The Promise runs on; its rejection, already answered by this error, must not end the process
  // as an unhandled rejection.
  if (Predicate.isPromiseLike(value)) value.then(undefined, () => undefined)
  return new OptionsError({
    field: callback,
    detail: Predicate.isPromiseLike(value)
      ? "returned a Promise, where an Effect is expected (an async function, as the official SDK takes?); " +
        "wrap it: (...args) => Effect.promise(() => yourFunction(...args)), or Effect.tryPromise to keep a " +
        "rejection as a typed error"
      : `returned ${value === null ? "null" : typeof value}, where an Effect is expected`
  })
}

/**
 * A callback's return value as the Effect its type promises: one property check (this runs for
 * every hook, permission prompt and tool call); anything else fails with `notAnEffect`.
 *
 * @internal
 */
export const callbackEffect = <A, E, R>(
  value: Effect.Effect<A, E, R>,
  callback: string
): Effect.Effect<A, E | OptionsError, R> => Effect.isEffect(value) ? value : Effect.fail(notAnEffect(callback, value))
