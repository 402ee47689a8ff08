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
