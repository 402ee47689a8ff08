/**
 * Reading the CLI's raw frames: records, numbers and strings, anything else ignored.
 *
 * @internal
 */

/** @internal */
export type Raw = { readonly [key: string]: unknown }

/** @internal */
export const isObject = (u: unknown): u is Raw => typeof u === "object" && u !== null && !Array.isArray(u)

/** A finite number, or 0. @internal */
export const num = (u: unknown): number => (typeof u === "number" && Number.isFinite(u) ? u : 0)

/** @internal */
export const optionalNum = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isFinite(u) ? u : undefined

/** A non-empty string. @internal */
export const str = (u: unknown): string | undefined => (typeof u === "string" && u.length > 0 ? u : undefined)
