// Durations given by callers (options, per-call `{ timeout }`) are checked here, so that every
// place that takes one rejects the same values with the same words.
//
// A zero or negative duration is always a mistake: `Duration.decode` turns -5 (and NaN) into
// zero, and a zero deadline fails every request at once. Infinity is accepted where it has a
// meaning ("no deadline") and rejected where the wait must end (closing a process).
import { Duration, Either, Option, Predicate } from "effect"
import { OptionsError } from "../../SdkError.js"

export interface PositiveDurationOptions {
  /** Whether `Infinity` / `Duration.infinity` is allowed. Default `true` ("no deadline"). */
  readonly allowInfinite?: boolean | undefined
}

const accepted = "a Duration, a number of milliseconds or a string like \"30 seconds\""

const show = (u: unknown): string => {
  if (Duration.isDuration(u)) return Duration.format(u)
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "number" || typeof u === "bigint" || typeof u === "boolean") return String(u)
  if (u === null || u === undefined) return String(u)
  if (Predicate.isFunction(u)) return "a function"
  return Array.isArray(u) ? `[${u.map(show).join(", ")}]` : "an object"
}

const decode = (input: unknown, options?: PositiveDurationOptions): Either.Either<Duration.Duration, string> => {
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left(`expected ${accepted}; got ${show(input)}`)
  const duration = decoded.value
  if (Duration.isZero(duration)) return Either.left(`expected a positive duration; got ${show(input)}`)
  if (!Duration.isFinite(duration) && options?.allowInfinite === false) {
    return Either.left(`expected a finite duration; got ${show(input)}`)
  }
  return Either.right(duration)
}

/**
 * What is wrong with `input` as a strictly positive duration, or `undefined` when nothing is.
 * The text follows a field name: "expected a positive duration; got 0".
 */
export const positiveDurationProblem = (input: unknown, options?: PositiveDurationOptions): string | undefined =>
  Either.getLeft(decode(input, options)).pipe(Option.getOrUndefined)

/**
 * Decodes a strictly positive duration, failing with an `OptionsError` on `field`. For per-call
 * `{ timeout }` values, which no Schema has checked.
 *
 * ```ts
 * decodePositiveDuration("timeout", "banana")
 * // Either.left(OptionsError: Invalid option `timeout`: expected a Duration, …; got "banana")
 * decodePositiveDuration("timeout", "5 seconds") // Either.right(Duration.seconds(5))
 * ```
 */
export const decodePositiveDuration = (
  field: string,
  input: unknown,
  options?: PositiveDurationOptions
): Either.Either<Duration.Duration, OptionsError> =>
  Either.mapLeft(decode(input, options), (detail) => new OptionsError({ field, detail }))
