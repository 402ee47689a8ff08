// Schemas shared by the public schema modules, defined once so that the wire shapes they describe
// cannot drift apart between modules.
import { Schema } from "effect"

/**
 * A JSON object whose fields are not modelled: what the CLI sent, kept as it is (`raw` of the
 * unknown variants, `updatedInput`, `modelUsage`, …).
 *
 * @internal
 */
export const RawObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * `Schema.Array(Schema.String)`, shared.
 *
 * @internal
 */
export const Strings = Schema.Array(Schema.String)

// The optional fields of the wire schemas, built once: each `Schema.optional(X)` makes a union with
// `Undefined` and two classes, and the schemas have ~300 of them, most of these four.

/**
 * `Schema.optional(Schema.String)`, shared.
 *
 * @internal
 */
export const optionalString = Schema.optional(Schema.String)

/**
 * `Schema.optional(Schema.Boolean)`, shared.
 *
 * @internal
 */
export const optionalBoolean = Schema.optional(Schema.Boolean)

/**
 * `Schema.optional(Schema.Number)`, shared.
 *
 * @internal
 */
export const optionalNumber = Schema.optional(Schema.Number)

/**
 * `Schema.optional(Schema.Unknown)`, shared.
 *
 * @internal
 */
export const optionalUnknown = Schema.optional(Schema.Unknown)

/**
 * `Schema.optional(Schema.Array(Schema.String))`, shared.
 *
 * @internal
 */
export const optionalStrings = Schema.optional(Strings)

/**
 * `Schema.optional(Schema.Array(Schema.Unknown))`, shared.
 *
 * @internal
 */
export const optionalUnknowns = Schema.optional(Schema.Array(Schema.Unknown))

/**
 * `Schema.NullOr(Schema.String)`, shared.
 *
 * @internal
 */
export const NullOrString = Schema.NullOr(Schema.String)

/**
 * `Schema.optional(Schema.NullOr(Schema.Number))`, shared.
 *
 * @internal
 */
export const optionalNullOrNumber = Schema.optional(Schema.NullOr(Schema.Number))

/**
 * `Schema.optional(RawObject)`, shared.
 *
 * @internal
 */
export const optionalRawObject = Schema.optional(RawObject)
