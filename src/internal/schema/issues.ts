// Parse failures in one short line, naming the fields: `decision: Expected "approve" | "block",
// actual "nonsense"`. For warnings and error messages that a person reads; the full tree report
// is for debug logs.
import { ParseResult } from "effect"

const MAX = 300
const EXPECTED = /^Expected (.*), actual (.*)$/s

/**
 * The issues of a parse failure as `path: message`, one per field (the members of a union that
 * each rejected the same field are merged into one `Expected A | B`), wrong values before missing
 * fields, at most `max` characters.
 */
export const describe = (error: ParseResult.ParseError | ParseResult.ParseIssue, max = MAX): string => {
  const issue = ParseResult.isParseError(error) ? error.issue : error
  const byPath = new Map<string, { expected: Array<string>; actual: string | undefined; other: Array<string> }>()
  for (const { message, path } of ParseResult.ArrayFormatter.formatIssueSync(issue)) {
    const key = path.length > 0 ? path.map(String).join(".") : "(value)"
    const entry = byPath.get(key) ?? { expected: [], actual: undefined, other: [] }
    byPath.set(key, entry)
    const text = message.replace(/\s+/g, " ")
    const match = EXPECTED.exec(text)
    if (match !== null && match[1] !== undefined) {
      for (const alternative of match[1].split(" | ")) {
        if (!entry.expected.includes(alternative)) entry.expected.push(alternative)
      }
      entry.actual = match[2]
    } else if (!entry.other.includes(text)) {
      entry.other.push(text)
    }
  }
  const wrong: Array<string> = []
  const missing: Array<string> = []
  for (const [path, { actual, expected, other }] of byPath) {
    if (expected.length > 0) wrong.push(`${path}: Expected ${expected.join(" | ")}, actual ${actual ?? "?"}`)
    for (const text of other) (text === "is missing" ? missing : wrong).push(`${path}: ${text}`)
  }
  const parts = [...wrong, ...missing]
  const shown = parts.slice(0, 3).join("; ") + (parts.length > 3 ? ` (and ${parts.length - 3} more)` : "")
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown
}
