/**
 * The one place where JSON enters the library, and the encoding of the frames it writes.
 *
 * @internal
 */

/**
 * The one place where JSON enters the library (stdout lines, and in the testing kit request
 * bodies and recordings): `JSON.parse` is typed `any`, and this narrows it to `unknown` so
 * nothing downstream can use it without decoding.
 *
 * @internal
 */
export const parseJsonBoundary = (line: string): unknown => JSON.parse(line)

/**
 * Serialises one outbound frame, newline included. U+2028/U+2029 are escaped because some JSON
 * line readers treat them as line terminators; `JSON.stringify` leaves them raw.
 *
 * @internal
 */
export const encodeFrame = (frame: unknown): string => {
  const json = JSON.stringify(frame)
  const safe = json.indexOf("\u2028") === -1 && json.indexOf("\u2029") === -1
    ? json
    : json.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")
  return safe + "\n"
}
