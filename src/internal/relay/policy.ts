/**
 * What the relay lets a host ask for: the token, the working directory (inside an allowed root,
 * symbolic links resolved), the environment (keys from an allow-list only). The executable is
 * never the host's to choose: it is the relay's configuration.
 *
 * @internal
 */
import { realpathSync } from "node:fs"
import * as path from "node:path"
import { timingSafeEqual } from "node:crypto"
import { Either } from "effect"
import { type ErrorCode, type Hello, sdkEnvKeys } from "./frames.js"

/**
 * The checks' inputs.
 *
 * @internal
 */
export interface Policy {
  readonly token: string
  readonly allowedRoots: ReadonlyArray<string>
  readonly allowedEnv: ReadonlyArray<string>
  readonly maxArgs: number
}

/**
 * A refusal: the `error` frame's code and message.
 *
 * @internal
 */
export interface Refusal {
  readonly code: ErrorCode
  readonly message: string
}

/**
 * What the relay starts after the checks.
 *
 * @internal
 */
export interface Accepted {
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

const encoder = new TextEncoder()

/**
 * Compares tokens in time that does not depend on where they differ (both are hashed to the same
 * length first, so the length is not told either).
 *
 * @internal
 */
export const tokenMatches = (expected: string, given: string): boolean => {
  const a = encoder.encode(expected)
  const b = encoder.encode(given)
  const padded = new Uint8Array(Math.max(a.length, b.length))
  padded.set(b)
  const candidate = padded.subarray(0, a.length)
  // Compare equal-length buffers always; the length check comes after, not before.
  const same = a.length === 0 ? false : timingSafeEqual(a, candidate)
  return same && a.length === b.length
}

const resolved = (dir: string): string | undefined => {
  try {
    return realpathSync(dir)
  } catch {
    return undefined
  }
}

/**
 * Whether `dir` (resolved) is one of the roots or below one.
 *
 * @internal
 */
export const withinRoots = (dir: string, roots: ReadonlyArray<string>): string | undefined => {
  if (!path.isAbsolute(dir)) return undefined
  const real = resolved(dir)
  if (real === undefined) return undefined
  for (const root of roots) {
    const realRoot = resolved(root)
    if (realRoot === undefined) continue
    if (real === realRoot || real.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep)) {
      return real
    }
  }
  return undefined
}

/**
 * The hello checked against the policy: the session to start, or the refusal.
 *
 * @internal
 */
export const check = (policy: Policy, hello: Hello): Either.Either<Accepted, Refusal> => {
  if (!tokenMatches(policy.token, hello.token)) {
    return Either.left({ code: "unauthorized", message: "wrong or missing token" })
  }
  if (hello.args.length > policy.maxArgs) {
    return Either.left({ code: "bad_request", message: `more than ${policy.maxArgs} arguments` })
  }
  const wanted = hello.cwd ?? policy.allowedRoots[0]
  const cwd = wanted === undefined ? undefined : withinRoots(wanted, policy.allowedRoots)
  if (cwd === undefined) {
    return Either.left({
      code: "forbidden",
      message: `the working directory ${wanted ?? "(none)"} is not within the relay's allowed roots`
    })
  }
  const refused = Object.keys(hello.env).filter((key) => !sdkEnvKeys.includes(key) && !policy.allowedEnv.includes(key))
  if (refused.length > 0) {
    return Either.left({ code: "forbidden", message: `environment keys not allowed: ${refused.join(", ")}` })
  }
  return Either.right({ args: hello.args, cwd, env: hello.env })
}
