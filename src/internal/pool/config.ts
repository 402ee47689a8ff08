/**
 * The pool's settings, checked before anything starts: a wrong value (`Number(process.env.X)`
 * with X unset, `"2"` from a configuration file, a negative duration) fails with an
 * `OptionsError` naming the field and what it allows, as `Options` do.
 *
 * @internal
 */
import { Duration, Effect, Either, Option, Predicate } from "effect"
import type { PoolConfig } from "../../AgentPool.js"
import * as Options from "../../schema/Options.js"
import { OptionsError } from "../../SdkError.js"
import { positiveDurationProblem } from "../schema/duration.js"

/**
 * The settings with their defaults applied.
 *
 * @internal
 */
export interface PoolSettings {
  readonly name: string
  readonly maxConcurrent: number
  readonly maxPending: number
  readonly pendingTimeout: Duration.Duration | undefined
  readonly warm: number
  readonly warmOptions: Options.Options
  readonly park: boolean
  readonly idleTimeToLive: Duration.Duration
  readonly shutdownTimeout: Duration.Duration
}

/**
 * How long running requests may take to finish once the pool closes (`shutdownTimeout`).
 *
 * @internal
 */
export const defaultShutdownTimeout: Duration.Duration = Duration.seconds(2)

const fields = [
  "name",
  "maxConcurrent",
  "maxPending",
  "pendingTimeout",
  "warm",
  "warmOptions",
  "park",
  "idleTimeToLive",
  "shutdownTimeout"
] as const

const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (Duration.isDuration(u)) return Duration.format(u)
  if (Predicate.isFunction(u)) return "a function"
  return typeof u === "object" && u !== null ? "an object" : String(u)
}

const integer = (field: string, value: unknown, min: number): Either.Either<number, OptionsError> =>
  typeof value === "number" && Number.isInteger(value) && value >= min
    ? Either.right(value)
    : Either.left(
      new OptionsError({
        field,
        detail: `expected ${min === 0 ? "a non-negative" : "a positive"} integer; got ${show(value)}`
      })
    )

// Zero has a meaning here (no idle time, no grace); a negative number or NaN does not, though
// `Duration.decode` would quietly make them zero.
const nonNegativeDuration = (
  field: string,
  value: unknown,
  allowInfinite: boolean
): Either.Either<Duration.Duration, OptionsError> => {
  const fail = (expected: string) =>
    Either.left(new OptionsError({ field, detail: `expected ${expected}; got ${show(value)}` }))
  const accepted = "a Duration, a number of milliseconds or a string like \"30 seconds\""
  if (typeof value === "number" && !(value >= 0)) return fail(`zero or a positive duration (${accepted})`)
  const decoded = Duration.decodeUnknown(value)
  if (Option.isNone(decoded)) return fail(accepted)
  if (!allowInfinite && !Duration.isFinite(decoded.value)) return fail("a finite duration")
  return Either.right(decoded.value)
}

const unknownField = (config: object): OptionsError | undefined => {
  const known: ReadonlyArray<string> = fields
  const key = Object.keys(config).find((k) => !known.includes(k))
  return key === undefined
    ? undefined
    : new OptionsError({ field: key, detail: `unknown pool setting; expected one of ${fields.join(", ")}` })
}

const duration = (field: string, value: unknown): Either.Either<Duration.Duration, OptionsError> => {
  const problem = positiveDurationProblem(value)
  const decoded = Duration.decodeUnknown(value)
  return problem === undefined && Option.isSome(decoded)
    ? Either.right(decoded.value)
    : Either.left(new OptionsError({ field, detail: problem ?? "expected a positive duration" }))
}

/**
 * Checks the settings a caller gave (their values may come from plain JavaScript or a
 * configuration file, whatever their type says) and applies the defaults.
 *
 * @internal
 */
export const validate = (
  config: PoolConfig,
  defaultMaxConcurrent: number
): Effect.Effect<PoolSettings, OptionsError> =>
  Effect.gen(function*() {
    const asUnknown: unknown = config
    if (typeof asUnknown !== "object" || asUnknown === null) {
      return yield* new OptionsError({ field: "(pool settings)", detail: `expected an object; got ${show(asUnknown)}` })
    }
    const unknown = unknownField(config)
    if (unknown !== undefined) return yield* unknown
    const given = <A>(value: unknown, orElse: A, check: (value: unknown) => Either.Either<A, OptionsError>) =>
      value === undefined ? Either.right(orElse) : check(value)
    return {
      name: yield* given(config.name, "default", (v) =>
        typeof v === "string" && v.length > 0
          ? Either.right(v)
          : Either.left(new OptionsError({ field: "name", detail: `expected a non-empty string; got ${show(v)}` }))),
      maxConcurrent: yield* given(config.maxConcurrent, defaultMaxConcurrent, (v) => integer("maxConcurrent", v, 1)),
      maxPending: yield* given(config.maxPending, 1000, (v) => integer("maxPending", v, 0)),
      pendingTimeout: yield* given(config.pendingTimeout, undefined, (v) => duration("pendingTimeout", v)),
      warm: yield* given(config.warm, 0, (v) => integer("warm", v, 0)),
      park: yield* given(config.park, false, (v) =>
        typeof v === "boolean"
          ? Either.right(v)
          : Either.left(new OptionsError({ field: "park", detail: `expected true or false; got ${show(v)}` }))),
      idleTimeToLive: yield* given(
        config.idleTimeToLive,
        Duration.minutes(5),
        (v) => nonNegativeDuration("idleTimeToLive", v, true)
      ),
      shutdownTimeout: yield* given(
        config.shutdownTimeout,
        defaultShutdownTimeout,
        (v) => nonNegativeDuration("shutdownTimeout", v, false)
      ),
      warmOptions: config.warmOptions === undefined ? {} : yield* Options.validate(config.warmOptions).pipe(
        Effect.mapError((e) => new OptionsError({ field: `warmOptions.${e.field}`, detail: e.detail }))
      )
    }
  })
