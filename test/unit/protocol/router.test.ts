// The router over the frame shapes the real CLI writes (shapes from the recorded transcripts),
// and its agreement with the envelope Schemas on arbitrary frames.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import { isControl, route } from "../../../src/internal/protocol/router.js"
import * as Control from "../../../src/schema/Control.js"

const hook = {
  type: "control_request",
  request_id: "963c2eba-23f8-49bc-92b1-78e0bd101552",
  request: {
    subtype: "hook_callback",
    callback_id: "hook_2",
    input: { hook_event_name: "UserPromptSubmit", prompt: "run the bash tool" },
    tool_use_id: "8605b8ad-dfb7-4e80-a064-041d8d3d21f9"
  }
}

describe("router", () => {
  const table: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ["an assistant message", { type: "assistant", message: { content: [] } }, { _tag: "Message" }],
    ["a system/init message", { type: "system", subtype: "init", session_id: "s" }, { _tag: "Message" }],
    ["a frame that is not an object", [1, 2], { _tag: "Message" }],
    ["a string frame", "hello", { _tag: "Message" }],
    ["null", null, { _tag: "Message" }],
    [
      "a success reply with a response",
      {
        type: "control_response",
        response: { subtype: "success", request_id: "req_1", response: { still_queued: [] } }
      },
      {
        _tag: "Success",
        requestId: "req_1",
        response: { still_queued: [] },
        envelope: { subtype: "success", request_id: "req_1", response: { still_queued: [] } }
      }
    ],
    [
      "a success reply without a response",
      { type: "control_response", response: { subtype: "success", request_id: "req_2" } },
      {
        _tag: "Success",
        requestId: "req_2",
        response: undefined,
        envelope: { subtype: "success", request_id: "req_2" }
      }
    ],
    [
      "an error reply",
      {
        type: "control_response",
        response: { subtype: "error", request_id: "req_19", error: "SDK servers should be handled in print.ts" }
      },
      { _tag: "Failure", requestId: "req_19", error: "SDK servers should be handled in print.ts", errorCode: undefined }
    ],
    [
      "an error reply with an error code",
      {
        type: "control_response",
        response: { subtype: "error", request_id: "r", error: "bad", error_code: "invalid_mode" }
      },
      { _tag: "Failure", requestId: "r", error: "bad", errorCode: "invalid_mode" }
    ],
    [
      "an error reply without its text, naming its request",
      { type: "control_response", response: { subtype: "error", request_id: "r" } },
      { _tag: "MalformedResponse", requestId: "r", response: { subtype: "error", request_id: "r" } }
    ],
    [
      "a reply of an unknown subtype, naming its request",
      { type: "control_response", response: { subtype: "maybe", request_id: "r" } },
      { _tag: "MalformedResponse", requestId: "r", response: { subtype: "maybe", request_id: "r" } }
    ],
    [
      "a reply naming no request",
      { type: "control_response", response: { subtype: "success" } },
      { _tag: "MalformedResponse", requestId: undefined, response: { subtype: "success" } }
    ],
    [
      "a reply without a response",
      { type: "control_response" },
      { _tag: "MalformedResponse", requestId: undefined, response: undefined }
    ],
    ["a hook_callback request", hook, { _tag: "Request", requestId: hook.request_id, request: hook.request }],
    [
      "a request without subtype",
      { type: "control_request", request_id: "x", request: { tool_name: "Bash" } },
      { _tag: "MalformedRequest" }
    ],
    ["a request without id", { type: "control_request", request: { subtype: "can_use_tool" } }, {
      _tag: "MalformedRequest"
    }],
    [
      "a cancel",
      { type: "control_cancel_request", request_id: "1eb48ffc-4ebc-49b4-8ec2-e1990cef1b63" },
      { _tag: "Cancel", requestId: "1eb48ffc-4ebc-49b4-8ec2-e1990cef1b63" }
    ],
    ["a cancel without id", { type: "control_cancel_request" }, { _tag: "Ignored" }]
  ]
  for (const [name, frame, expected] of table) {
    it(`routes ${name}`, () => {
      expect(route(frame)).toEqual(expected)
    })
  }

  it("hands the request body over as it came, without copying it", () => {
    const routed = route(hook)
    expect(routed._tag === "Request" && routed.request).toBe(hook.request)
  })

  it("tells control traffic by its type alone", () => {
    expect(["control_response", "control_request", "control_cancel_request"].every(isControl)).toBe(true)
    expect(["assistant", "result", "control", undefined, 1].some(isControl)).toBe(false)
  })

  // Frames built from the pieces the envelopes are made of, well-formed or not.
  const piece = fc.oneof(fc.string(), fc.integer(), fc.constant(undefined), fc.constant(null), fc.boolean())
  const envelope = fc.record(
    {
      subtype: fc.oneof(fc.constantFrom("success", "error", "other"), piece),
      request_id: fc.oneof(fc.string(), piece),
      error: piece,
      error_code: piece,
      response: fc.oneof(piece, fc.dictionary(fc.string(), piece))
    },
    { requiredKeys: [] }
  )
  const frame = fc.record(
    {
      type: fc.oneof(
        fc.constantFrom("control_response", "control_request", "control_cancel_request", "assistant"),
        piece
      ),
      request_id: fc.oneof(fc.string(), piece),
      response: fc.oneof(envelope, piece),
      request: fc.oneof(envelope, piece)
    },
    { requiredKeys: [] }
  )
  const isResponse = Schema.is(Control.ControlResponse)
  const isRequest = Schema.is(Control.ControlRequest)
  const isCancel = Schema.is(Control.ControlCancelRequest)

  it.prop("agrees with the envelope Schemas on which frames are readable", [frame], ([f]) => {
    const routed = route(f)
    expect(routed._tag === "Success" || routed._tag === "Failure").toBe(isResponse(f))
    expect(routed._tag === "Request").toBe(isRequest(f))
    expect(routed._tag === "Cancel").toBe(isCancel(f))
    expect(routed._tag === "Message").toBe(!isControl(f.type))
  })
})
