/**
 * What a parsed stdout frame is, decided on the raw object before any Schema work: a message for
 * the user, a reply to one of our requests, a request of the CLI, or the CLI withdrawing one.
 * Plain TypeScript: no Effect, no I/O.
 *
 * @internal
 */

/**
 * A JSON object as parsed: a plain record, not an array.
 *
 * @internal
 */
export type RawObject = { readonly [key: string]: unknown }

/**
 * `true` for a JSON object (not an array, not `null`).
 *
 * @internal
 */
export const isObject = (u: unknown): u is RawObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * An inbound request's body: its `subtype` and the fields that come with it.
 *
 * @internal
 */
export interface RequestBody {
  readonly subtype: string
  readonly [key: string]: unknown
}

/**
 * The route of one frame.
 *
 * - `Message`: not control traffic (also anything that is not an object): it goes to the user.
 * - `Success` / `Failure`: a readable reply to the request `requestId`; `envelope` is the reply's
 *   `response` object as sent (an `initialize` reply carries more than `response` in it).
 * - `MalformedResponse`: a `control_response` this version cannot read; `requestId` when it names one.
 * - `Request` / `MalformedRequest`: a CLI→SDK request, readable or not.
 * - `Cancel`: the CLI withdraws its request `requestId`.
 * - `Ignored`: a `control_cancel_request` without a request id.
 *
 * @internal
 */
export type Route =
  | { readonly _tag: "Message" }
  | { readonly _tag: "Success"; readonly requestId: string; readonly response: unknown; readonly envelope: RawObject }
  | {
    readonly _tag: "Failure"
    readonly requestId: string
    readonly error: string
    readonly errorCode: string | undefined
  }
  | { readonly _tag: "MalformedResponse"; readonly requestId: string | undefined; readonly response: unknown }
  | { readonly _tag: "Request"; readonly requestId: string; readonly request: RequestBody }
  | { readonly _tag: "MalformedRequest" }
  | { readonly _tag: "Cancel"; readonly requestId: string }
  | { readonly _tag: "Ignored" }

/**
 * The route of every message: one shared object, so the per-message path allocates nothing.
 *
 * @internal
 */
export const message: Route = { _tag: "Message" }
const malformedRequest: Route = { _tag: "MalformedRequest" }
const ignored: Route = { _tag: "Ignored" }

/**
 * `true` when the frame is control traffic (a `type` of `control_response`, `control_request` or
 * `control_cancel_request`); the reader's per-message test.
 *
 * @internal
 */
export const isControl = (type: unknown): boolean =>
  type === "control_response" || type === "control_request" || type === "control_cancel_request"

const response = (envelope: unknown): Route => {
  if (!isObject(envelope)) return { _tag: "MalformedResponse", requestId: undefined, response: envelope }
  const requestId = envelope.request_id
  if (typeof requestId !== "string") return { _tag: "MalformedResponse", requestId: undefined, response: envelope }
  if (envelope.subtype === "success") {
    return { _tag: "Success", requestId, response: envelope.response, envelope }
  }
  const error = envelope.error
  const errorCode = envelope.error_code
  if (
    envelope.subtype === "error" && typeof error === "string" &&
    (errorCode === undefined || typeof errorCode === "string")
  ) {
    return { _tag: "Failure", requestId, error, errorCode }
  }
  return { _tag: "MalformedResponse", requestId, response: envelope }
}

const isRequestBody = (u: unknown): u is RequestBody => isObject(u) && typeof u.subtype === "string"

const request = (frame: RawObject): Route => {
  const requestId = frame.request_id
  const body = frame.request
  if (typeof requestId !== "string" || !isRequestBody(body)) return malformedRequest
  return { _tag: "Request", requestId, request: body }
}

/**
 * Routes one parsed frame.
 *
 * @internal
 */
export const route = (frame: unknown): Route => {
  if (!isObject(frame)) return message
  switch (frame.type) {
    case "control_response":
      return response(frame.response)
    case "control_request":
      return request(frame)
    case "control_cancel_request":
      return typeof frame.request_id === "string" ? { _tag: "Cancel", requestId: frame.request_id } : ignored
    default:
      return message
  }
}
