// A failed `result` message as a `ResultError`: shared by `ClaudeAgent.failOnErrorResult` and
// `Structured.decode`, so that a failed run reads the same whichever way it is consumed.
import type * as Message from "../../schema/Message.js"
import { ResultError } from "../../SdkError.js"

export const fromResult = (m: Message.ResultMessage): ResultError => {
  const detail = "result" in m && typeof m.result === "string"
    ? m.result
    : "errors" in m && Array.isArray(m.errors)
    ? m.errors.join("; ")
    : m.subtype
  return new ResultError({
    subtype: m.subtype,
    ...(typeof m.terminal_reason === "string" ? { terminalReason: m.terminal_reason } : {}),
    ...(typeof m.api_error_status === "number" ? { apiErrorStatus: m.api_error_status } : {}),
    detail,
    raw: m
  })
}
