/**
 * What a failed start of the CLI means: a missing command, a missing or unusable working
 * directory, or anything else, told apart from Node's error codes.
 *
 * @internal
 */
import { accessSync } from "node:fs"
import { Predicate } from "effect"
import { CLIConnectionError, CLINotFoundError } from "../../SdkError.js"
import type { SubprocessConfig } from "../../services/Transport.js"

/**
 * The message of an error-like value, else its string form.
 *
 * @internal
 */
export const messageOf = (u: unknown): string =>
  Predicate.hasProperty(u, "message") && typeof u.message === "string" ? u.message : String(u)

/**
 * A failed read of the CLI's output (a pipe, a byte stream).
 *
 * @internal
 */
export const readFailed = (what: string, error: unknown): CLIConnectionError =>
  new CLIConnectionError({
    reason: "ReadFailed",
    description: `Reading the CLI's ${what} failed: ${messageOf(error)}`,
    cause: error
  })

/**
 * A failed write to the CLI's input.
 *
 * @internal
 */
export const writeFailed = (error: unknown): CLIConnectionError =>
  new CLIConnectionError({
    reason: "WriteFailed",
    description: `Cannot write to the Claude Code CLI: ${messageOf(error)}`,
    cause: error
  })

/**
 * A send after the CLI's input was ended.
 *
 * @internal
 */
export const inputClosed = (): CLIConnectionError =>
  new CLIConnectionError({
    reason: "InputClosed",
    description: "Cannot write to the Claude Code CLI: its input was already closed"
  })

const codeOf = (u: unknown): string | undefined =>
  Predicate.hasProperty(u, "code") && typeof u.code === "string" ? u.code : undefined

const accessible = (dir: string): string | undefined => {
  try {
    accessSync(dir)
    return undefined
  } catch (error) {
    return messageOf(error)
  }
}

/**
 * The error for a start that failed. Node reports a missing working directory as ENOENT of the
 * command itself: the directory is checked only then, off the path of every successful start.
 *
 * @internal
 */
export const startError = (
  config: Pick<SubprocessConfig, "command" | "cwd">,
  error: unknown
): CLINotFoundError | CLIConnectionError => {
  const code = codeOf(error)
  if (code === "ENOENT" && config.cwd !== undefined) {
    const problem = accessible(config.cwd)
    if (problem !== undefined) {
      return new CLIConnectionError({
        reason: "SpawnFailed",
        description: `The working directory ${config.cwd} is not accessible: ${problem}`,
        cause: error
      })
    }
  }
  if (code === "ENOENT") return new CLINotFoundError({ searched: [config.command], reason: messageOf(error) })
  if (code === "ENOTDIR" && config.cwd !== undefined) {
    return new CLIConnectionError({
      reason: "SpawnFailed",
      description: `The working directory ${config.cwd} is not a directory (ENOTDIR): set \`cwd\` to a directory`,
      cause: error
    })
  }
  return new CLIConnectionError({
    reason: "SpawnFailed",
    description: `Could not start ${config.command}${config.cwd === undefined ? "" : ` in ${config.cwd}`}: ${
      code ?? messageOf(error)
    }`,
    cause: error
  })
}
