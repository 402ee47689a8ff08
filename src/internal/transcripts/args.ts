/**
 * The checks the `Sessions` functions run on their arguments, for the local files and for a
 * store alike: plain JavaScript may pass anything, and a wrong type is an `OptionsError` naming the
 * field rather than a defect from deep inside a read.
 *
 * @internal
 */
import { Effect, ParseResult, Schema } from "effect"
import { OptionsError } from "../../SdkError.js"
import * as T from "./transcript.js"
import { lazily } from "../schema/guard.js"
import { optionalBoolean, optionalString } from "../schema/schemas.js"

type Check = (options: unknown) => Effect.Effect<void, OptionsError>

// Each check's Struct and parser are built on its first call: the barrel imports these with
// `Sessions`, and most processes never list or read a session.
const checkArgs = <A, I>(schema: () => Schema.Schema<A, I, never>): Check => {
  const decode = lazily(() => Schema.decodeUnknownEither(schema()))
  return (options) => {
    const decoded = decode(options)
    if (decoded._tag === "Right") return Effect.void
    const first = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const field = first === undefined || first.path.length === 0 ? "options" : first.path.map(String).join(".")
    return Effect.fail(new OptionsError({ field, detail: first?.message ?? "invalid" }))
  }
}

/**
 * The checks of each function's options, for one kind of location.
 *
 * @internal
 */
export interface Checks {
  readonly location: Check
  readonly page: Check
  readonly list: Check
  readonly messages: Check
  readonly fork: Check
}

const checks = (location: Record<string, Schema.optional<typeof Schema.String>>): Checks => {
  const page = () => ({ ...location, limit: Schema.optional(Schema.Int), offset: Schema.optional(Schema.Int) })
  return {
    location: checkArgs(() => Schema.Struct(location)),
    page: checkArgs(() => Schema.Struct(page())),
    list: checkArgs(() =>
      Schema.Struct({
        ...page(),
        includeWorktrees: optionalBoolean,
        includeProgrammatic: optionalBoolean
      })
    ),
    messages: checkArgs(() => Schema.Struct({ ...page(), includeSystemMessages: optionalBoolean })),
    fork: checkArgs(() =>
      Schema.Struct({
        ...location,
        upToMessageId: optionalString,
        title: optionalString
      })
    )
  }
}

/**
 * The checks of the local functions (`dir`, `configDir`).
 *
 * @internal
 */
export const local: Checks = checks({
  dir: optionalString,
  configDir: optionalString
})

/**
 * The checks of the store-backed functions (`dir`, `projectKey`).
 *
 * @internal
 */
export const stored: Checks = checks({
  dir: optionalString,
  projectKey: optionalString
})

/**
 * Fails with `OptionsError` unless `sessionId` is a UUID and `options` pass `check`.
 *
 * @internal
 */
export const checkId = (sessionId: string, options: unknown, check: Check): Effect.Effect<void, OptionsError> =>
  typeof sessionId === "string" && T.isUuid(sessionId)
    ? check(options ?? {})
    : Effect.fail(new OptionsError({ field: "sessionId", detail: `must be a UUID, got ${JSON.stringify(sessionId)}` }))

const utf8 = new TextEncoder()

/**
 * A title as its `custom-title` line carries it (trimmed); refused when it is not a string or
 * would not fit where listings look.
 *
 * @internal
 */
export const checkTitle = (field: string, title: unknown, sessionId: string): Effect.Effect<string, OptionsError> => {
  if (typeof title !== "string") {
    return Effect.fail(new OptionsError({ field, detail: `must be a string, got ${typeof title}` }))
  }
  const customTitle = title.trim()
  // Listings find a title in the transcript's last 64 KiB (as the official SDK's do):
  // a longer line would be written and never shown.
  const line = JSON.stringify({ type: "custom-title", customTitle, sessionId })
  const bytes = utf8.encode(line).length + 2
  return bytes > T.LITE_BYTES
    ? Effect.fail(
      new OptionsError({
        field,
        detail: `is ${bytes} bytes as a transcript line; listings read only the last ${T.LITE_BYTES} bytes ` +
          "of a transcript, so it would never be shown"
      })
    )
    : Effect.succeed(customTitle)
}

/**
 * The `custom-title` entry of a rename, or `OptionsError` for a title that is empty, not a string
 * or too long.
 *
 * @internal
 */
export const renameEntry = (
  sessionId: string,
  title: unknown
): Effect.Effect<
  { readonly type: "custom-title"; readonly customTitle: string; readonly sessionId: string },
  OptionsError
> =>
  Effect.flatMap(checkTitle("title", title, sessionId), (customTitle) =>
    customTitle.length === 0
      ? Effect.fail(new OptionsError({ field: "title", detail: "must be non-empty" }))
      : Effect.succeed({ type: "custom-title" as const, customTitle, sessionId }))

/**
 * The `tag` entry of a tag (`""` clears it), or `OptionsError` for a tag that is empty or not a
 * string.
 *
 * @internal
 */
export const tagEntry = (
  sessionId: string,
  tag: unknown
): Effect.Effect<{ readonly type: "tag"; readonly tag: string; readonly sessionId: string }, OptionsError> => {
  if (tag !== null && typeof tag !== "string") {
    return Effect.fail(new OptionsError({ field: "tag", detail: `must be a string or null, got ${typeof tag}` }))
  }
  const cleaned = tag === null ? "" : tag.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, " ").trim()
  if (tag !== null && cleaned.length === 0) {
    return Effect.fail(new OptionsError({ field: "tag", detail: "must be non-empty (use null to clear it)" }))
  }
  return Effect.succeed({ type: "tag" as const, tag: cleaned, sessionId })
}
