/**
 * Comparing and deriving the options of the pool's sessions.
 *
 * @internal
 */
import type * as Message from "../../schema/Message.js"
import type * as Options from "../../schema/Options.js"

/**
 * Options are the same when their data is, and their callbacks are the same functions.
 *
 * @internal
 */
export const sameOptions = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a).filter((k) => Reflect.get(a, k) !== undefined)
  const keysB = Object.keys(b).filter((k) => Reflect.get(b, k) !== undefined)
  if (keysA.length !== keysB.length) return false
  return keysA.every((k) => sameOptions(Reflect.get(a, k), Reflect.get(b, k)))
}

/**
 * `sameOptions`, where no options and empty options are the same.
 *
 * @internal
 */
export const sameKeyedOptions = (a: object | undefined, b: object | undefined): boolean => sameOptions(a ?? {}, b ?? {})

/**
 * The options that reopen a keyed conversation: its own session id resumed, without what
 * started (or forked) it the first time.
 *
 * @internal
 */
export const resumeOptions = <R>(options: Options.Options<R> | undefined, sessionId: string): Options.Options<R> => ({
  ...options,
  resume: sessionId,
  sessionId: undefined,
  continue: undefined,
  forkSession: undefined,
  resumeSessionAt: undefined
})

/**
 * The CLI's answer to a prompt for a `resume` whose conversation it cannot find: an error result,
 * "No conversation found with session ID: <id>".
 *
 * @internal
 */
export const isNoConversation = (message: Message.Message): boolean =>
  message.type === "result" && message.is_error && "errors" in message &&
  (message.errors ?? []).some((error) => error.startsWith("No conversation found"))
