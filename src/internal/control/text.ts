/**
 * Error text for answers and logs.
 *
 * @internal
 */
import { Predicate } from "effect"

/**
 * The readable text of a failure: its `message`, the string itself, or its JSON.
 *
 * @internal
 */
export const errorText = (e: unknown): string => {
  if (Predicate.hasProperty(e, "message") && typeof e.message === "string" && e.message.length > 0) return e.message
  if (typeof e === "string") return e
  try {
    return JSON.stringify(e) ?? String(e)
  } catch {
    return String(e)
  }
}

// One line for the warning; the whole cause goes to the debug log.
const MAX_WARNING = 500

/**
 * The first line of `text`, cut at 500 characters.
 *
 * @internal
 */
export const oneLine = (text: string): string => {
  const first = text.split("\n", 1)[0] ?? ""
  return first.length > MAX_WARNING ? `${first.slice(0, MAX_WARNING - 1)}…` : first
}
