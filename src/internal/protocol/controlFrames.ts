/**
 * The control frames the host writes, as the objects the transport serialises.
 * Plain TypeScript: no Effect, no I/O.
 *
 * @internal
 */

/**
 * `{type:"control_request", request_id, request:{subtype, ...fields}}`; `fields` that are not an
 * object add nothing.
 *
 * @internal
 */
export const request = (requestId: string, subtype: string, fields: unknown) => ({
  type: "control_request" as const,
  request_id: requestId,
  request: typeof fields === "object" && fields !== null && !Array.isArray(fields)
    ? { subtype, ...fields }
    : { subtype }
})

/**
 * A success answer; without `response` when the handler returned nothing.
 *
 * @internal
 */
export const success = (requestId: string, response: unknown) => ({
  type: "control_response" as const,
  response: response === undefined
    ? { subtype: "success" as const, request_id: requestId }
    : { subtype: "success" as const, request_id: requestId, response }
})

/**
 * An error answer.
 *
 * @internal
 */
export const error = (requestId: string, message: string) => ({
  type: "control_response" as const,
  response: { subtype: "error" as const, request_id: requestId, error: message }
})

/**
 * Withdraws one of the host's requests.
 *
 * @internal
 */
export const cancel = (requestId: string) => ({ type: "control_cancel_request" as const, request_id: requestId })
