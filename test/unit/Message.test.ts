// Decoding of every message variant: frames recorded from the real CLI 2.1.330, hand-made
// variants for types the recordings lack, unknown types/subtypes/blocks, and schema violations.
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as ContentBlock from "../../src/schema/ContentBlock.js"
import * as Message from "../../src/schema/Message.js"
import { messageSamples } from "../support/messageSamples.js"

const recorded: Array<Record<string, unknown>> = fs
  .readFileSync(new URL("../fixtures/cli-2.1.330-stdout.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line.length > 0)
  .map((line) => JSON.parse(line))

const decodeOk = (raw: unknown): Message.Message => {
  const result = Message.decode(raw)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const label = (m: Message.Message) => ("subtype" in m ? `${m.type}/${m.subtype}` : m.type)

describe("Message.decode", () => {
  it("decodes every recorded CLI 2.1.330 stdout frame to a known variant, returning the CLI's object", () => {
    expect(recorded.length).toBeGreaterThan(40)
    for (const raw of recorded) {
      const m = decodeOk(raw)
      expect(m.type).not.toBe("unknown")
      // Zero-copy: unknown fields (e.g. `timestamp`, `request_id`) are still there.
      expect(m).toBe(raw)
    }
    const labels = new Set(recorded.map((raw) => label(decodeOk(raw))))
    for (
      const expected of [
        "assistant",
        "user",
        "result/success",
        "result/error_during_execution",
        "result/error_max_turns",
        "system/init",
        "system/status",
        "system/api_retry",
        "system/compact_boundary",
        "system/session_state_changed",
        "system/permission_denied",
        "system/thinking_tokens",
        "system/informational",
        "system/commands_changed",
        "system/session_title_changed",
        "stream_event",
        "command_lifecycle"
      ]
    ) expect(labels).toContain(expected)
  })

  it("keeps the wire field names", () => {
    const init = recorded.find((r) => r.type === "system" && r.subtype === "init")
    const m = decodeOk(init)
    expect(Message.isSystemInit(m)).toBe(true)
    if (Message.isSystemInit(m)) {
      expect(m.session_id).toBeTypeOf("string")
      expect(m.tools.length).toBeGreaterThan(0)
      expect(m.permissionMode).toBe("default")
    }
    const result = decodeOk(recorded.find((r) => r.type === "result" && r.subtype === "success"))
    expect(Message.isResult(result) && result.subtype === "success" ? typeof result.result : "none").toBe("string")
  })

  it("decodes variants the recordings lack", () => {
    const base = { session_id: "s", uuid: "u" }
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ type: "rate_limit_event", rate_limit_info: { status: "allowed" }, ...base }, "rate_limit_event"],
      [
        { type: "tool_progress", tool_use_id: "t", tool_name: "Bash", elapsed_time_seconds: 3, ...base },
        "tool_progress"
      ],
      [{ type: "tool_use_summary", summary: "ran ls", preceding_tool_use_ids: ["t"], ...base }, "tool_use_summary"],
      [{ type: "prompt_suggestion", suggestion: "run the tests", ...base }, "prompt_suggestion"],
      [{ type: "auth_status", isAuthenticating: false, output: [], ...base }, "auth_status"],
      [{
        type: "result",
        subtype: "error_max_budget_usd",
        is_error: true,
        num_turns: 2,
        duration_ms: 5,
        errors: ["over budget"],
        ...base
      }, "result/error_max_budget_usd"],
      [{
        type: "result",
        subtype: "error_max_structured_output_retries",
        is_error: true,
        num_turns: 2,
        duration_ms: 5,
        ...base
      }, "result/error_max_structured_output_retries"]
    ]
    for (const [raw, expected] of cases) expect(label(decodeOk(raw))).toBe(expected)
  })

  it("types every variant the official SDK declares, none left as UnknownMessage", () => {
    const labels = new Set<string>()
    for (const [expected, raw] of messageSamples) {
      const m = decodeOk(raw)
      expect(label(m)).toBe(expected)
      expect(m).toBe(raw)
      labels.add(expected)
    }
    // The 7 variants once decoded as unknown, and the 16 once typed by name only.
    for (
      const name of [
        "system/model_refusal_fallback",
        "system/model_refusal_no_fallback",
        "system/background_tasks_changed",
        "system/worker_shutting_down",
        "system/session_writes_lost",
        "system/control_request_progress",
        "conversation_reset",
        "active_goal",
        "system/local_command_output",
        "system/hook_started",
        "system/hook_progress",
        "system/hook_response",
        "system/plugin_install",
        "system/task_started",
        "system/task_progress",
        "system/task_updated",
        "system/task_notification",
        "system/commands_changed",
        "system/notification",
        "system/files_persisted",
        "system/memory_recall",
        "system/elicitation_complete",
        "system/mirror_error",
        "system/informational"
      ]
    ) expect(labels).toContain(name)
  })

  it("types their fields: a field of the wrong type is a MessageParseError naming it", () => {
    const [, fallback] = messageSamples.find(([name]) => name === "system/model_refusal_fallback") ?? []
    const m = decodeOk(fallback)
    expect(m.type === "system" && m.subtype === "model_refusal_fallback" ? m.retracted_message_uuids : []).toEqual([
      "a-1",
      "a-2"
    ])
    const broken = [
      [{ ...fallback, retracted_message_uuids: "a-1" }, "retracted_message_uuids"],
      [{
        type: "system",
        subtype: "task_progress",
        task_id: "t",
        description: "d",
        usage: { total_tokens: "1" },
        session_id: "s"
      }, "usage"],
      [{
        type: "system",
        subtype: "hook_response",
        hook_id: "h",
        hook_name: "n",
        hook_event: "Stop",
        outcome: "success"
      }, "output"],
      [{ type: "conversation_reset", trigger: "clear" }, "new_conversation_id"],
      [{ type: "active_goal", value: { condition: "x" } }, "iterations"],
      [{ type: "system", subtype: "session_writes_lost", error_code: "ENOSPC", lost: "transcript" }, "lost"]
    ] as const
    for (const [raw, field] of broken) {
      const result = Message.decode(raw)
      expect(Either.isLeft(result) ? result.left.detail : "decoded").toContain(field)
    }
  })

  it("open-ended values (status, level, outcome, …) a newer CLI may add still decode", () => {
    for (
      const raw of [
        {
          type: "system",
          subtype: "task_notification",
          task_id: "t",
          status: "abandoned",
          output_file: "f",
          summary: "s"
        },
        { type: "system", subtype: "informational", content: "c", level: "critical" },
        { type: "system", subtype: "control_request_progress", request_id: "r", status: "queued" },
        { type: "conversation_reset", new_conversation_id: "c", trigger: "rewind" }
      ]
    ) expect(Message.isUnknown(decodeOk(raw))).toBe(false)
  })

  it("decodes every content block type", () => {
    const blocks = [
      { type: "text", text: "a" },
      { type: "thinking", thinking: "b", signature: "s" },
      { type: "redacted_thinking", data: "xyz" },
      { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } },
      { type: "server_tool_use", id: "s1", name: "web_search", input: { query: "q" } },
      { type: "web_search_tool_result", tool_use_id: "s1", content: [] },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }
    ]
    const m = decodeOk({
      type: "assistant",
      message: { role: "assistant", content: blocks },
      parent_tool_use_id: null,
      session_id: "s"
    })
    expect(Message.isAssistant(m) ? m.message.content.map((b) => b.type) : []).toEqual(blocks.map((b) => b.type))
    const user = decodeOk({
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok", is_error: false }] },
      session_id: "s"
    })
    expect(Message.isUser(user) && typeof user.message.content !== "string" ? user.message.content[0]?.type : "")
      .toBe("tool_result")
  })

  it("delivers an unknown type or subtype as UnknownMessage carrying the raw object", () => {
    for (
      const raw of [
        { type: "hologram", depth: 3, session_id: "s" },
        { type: "system", subtype: "quantum_state", session_id: "s" },
        { type: "result", subtype: "error_new_kind", is_error: true, session_id: "s" }
      ]
    ) {
      const m = decodeOk(raw)
      expect(Message.isUnknown(m)).toBe(true)
      expect(Message.isUnknown(m) ? m.raw : undefined).toBe(raw)
      expect(Message.sessionIdOf(m)).toBe("s")
    }
  })

  it("wraps an unknown content block as UnknownContentBlock and keeps the others", () => {
    const hologram = { type: "hologram", depth: 3 }
    const raw = {
      type: "assistant",
      message: { role: "assistant", content: [{ type: "text", text: "hi" }, hologram] },
      session_id: "s",
      extra: 1
    }
    const m = decodeOk(raw)
    expect(Message.isAssistant(m)).toBe(true)
    if (!Message.isAssistant(m)) return
    expect(m.message.content[0]).toEqual({ type: "text", text: "hi" })
    expect(m.message.content[1]).toEqual({ type: "unknown", raw: hologram })
    expect(Message.assistantText(m)).toBe("hi")
    expect("extra" in m ? m.extra : undefined).toBe(1)
    // The CLI's object is not mutated.
    expect(raw.message.content[1]).toBe(hologram)
    expect(ContentBlock.isKnownType("hologram")).toBe(false)
  })

  it("fails with MessageParseError (carrying the raw value) when a known type breaks its schema", () => {
    for (
      const raw of [
        { type: "assistant", message: { content: "not an array" }, session_id: "s" },
        { type: "result", subtype: "success", is_error: "no", session_id: "s" },
        { type: "system", subtype: "init", session_id: "s" },
        { type: "assistant", message: { content: [{ type: "text" }] }, session_id: "s" }
      ]
    ) {
      const result = Message.decode(raw)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left._tag).toBe("MessageParseError")
        expect(result.left.raw).toBe(raw)
        expect(result.left.detail).toMatch(/^invalid (assistant|result\/success|system\/init) message/)
      }
    }
    expect(Either.isLeft(Message.decode([1, 2]))).toBe(true)
    expect(Either.isLeft(Message.decode({ noType: true }))).toBe(true)
  })

  it("dispatches every type and subtype of the Message union to its own schema", () => {
    let checked = 0
    for (const schema of Message.Message.members) {
      if (schema === Message.UnknownMessage) continue
      const subtypes: ReadonlyArray<string | undefined> = "subtype" in schema.fields
        ? schema.fields.subtype.literals
        : [undefined]
      for (const type of schema.fields.type.literals) {
        for (const subtype of subtypes) {
          // Only the discriminators: its own schema rejects that by name (or, with no required
          // field, accepts it); an undispatched one would come back as UnknownMessage.
          const raw = subtype === undefined ? { type } : { type, subtype }
          const name = subtype === undefined ? type : `${type}/${subtype}`
          const outcome = Either.match(Message.decode(raw), {
            onLeft: (error) => error.detail,
            onRight: (m) => `decoded ${label(m)}`
          })
          expect(outcome).toMatch(new RegExp(`^(invalid ${name} message|decoded ${name}$)`))
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(30)
    // The `unknown` type is this SDK's wrapper, not a wire type: it arrives wrapped like any other.
    const raw = { type: "unknown", raw: { type: "x" } }
    expect(decodeOk(raw)).toEqual({ type: "unknown", raw })
  })

  it("builds user message frames and reads text deltas", () => {
    expect(Message.userMessage("hi")).toEqual({
      type: "user",
      message: { role: "user", content: [{ type: "text", text: "hi" }] },
      parent_tool_use_id: null,
      session_id: ""
    })
    expect(Message.userMessage("x", { uuid: "u-1" }).uuid).toBe("u-1")
    expect(Message.userMessage("x", { clientComposed: true }).client_composed).toBe(true)
    expect(Message.userMessage("x")).not.toHaveProperty("client_composed")
    const delta = decodeOk({
      type: "stream_event",
      event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "He" } },
      session_id: "s"
    })
    expect(Message.isStreamEvent(delta) ? Message.textDelta(delta) : undefined).toBe("He")
  })

  it("types stream events as the Messages API's: a tool call's deltas, thinking, citations, usage", () => {
    const event = (e: Record<string, unknown>) => {
      const m = decodeOk({ type: "stream_event", event: e, session_id: "s", parent_tool_use_id: null, ttft_ms: 40 })
      return m.type === "stream_event" ? m.event : expect.fail(m.type)
    }
    const start = event({
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "t1", name: "Read", input: {} }
    })
    expect(start.type === "content_block_start" ? start.content_block.type : undefined).toBe("tool_use")
    const parts = ["{\"path\":", " \"README.md\"}"].map((partial_json) =>
      event({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } })
    )
    const json = parts.map((e) =>
      e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? e.delta.partial_json : ""
    )
    expect(JSON.parse(json.join(""))).toEqual({ path: "README.md" })
    const citation = event({
      type: "content_block_delta",
      index: 0,
      delta: { type: "citations_delta", citation: { type: "char_location", cited_text: "x" } }
    })
    expect(citation.type === "content_block_delta" ? citation.delta.type : undefined).toBe("citations_delta")
    const delta = event({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 12 }
    })
    expect(delta.type === "message_delta" ? [delta.delta.stop_reason, delta.usage?.output_tokens] : []).toEqual([
      "tool_use",
      12
    ])
    expect(event({ type: "message_stop" }).type).toBe("message_stop")
  })

  it("a known stream event that breaks its schema is a MessageParseError naming the field", () => {
    const broken = [
      [{ type: "content_block_delta", delta: { type: "text_delta", text: "x" } }, "index"],
      [{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: 3 } }, "text"],
      [{ type: "content_block_start", index: 0 }, "content_block"],
      [{ type: "message_delta", delta: { stop_reason: 1 } }, "stop_reason"],
      [{ type: "message_start" }, "message"]
    ] as const
    for (const [event, field] of broken) {
      const result = Message.decode({ type: "stream_event", event, session_id: "s" })
      expect(Either.isLeft(result) ? result.left.detail : "decoded").toContain(field)
    }
  })

  it("types rate_limit_info, deferred_tool_use, and a user message's priority and origin", () => {
    const limit = decodeOk({
      type: "rate_limit_event",
      rate_limit_info: {
        status: "allowed_warning",
        rateLimitType: "five_hour",
        utilization: 0.91,
        resetsAt: 1_800_000_000,
        isUsingOverage: false
      },
      session_id: "s",
      uuid: "u"
    })
    expect(limit.type === "rate_limit_event" ? limit.rate_limit_info.utilization : undefined).toBe(0.91)
    const badLimit = Message.decode({
      type: "rate_limit_event",
      rate_limit_info: { status: "allowed", utilization: "high" }
    })
    expect(Either.isLeft(badLimit) ? badLimit.left.detail : "decoded").toContain("utilization")
    const deferred = decodeOk({
      type: "result",
      subtype: "success",
      is_error: false,
      num_turns: 1,
      duration_ms: 5,
      result: "",
      terminal_reason: "tool_deferred",
      deferred_tool_use: { id: "toolu_1", name: "Bash", input: { command: "rm -rf build" } },
      session_id: "s"
    })
    expect(deferred.type === "result" && deferred.subtype === "success" ? deferred.deferred_tool_use?.input : undefined)
      .toEqual({ command: "rm -rf build" })
    const badDeferred = Message.decode({ ...deferred, deferred_tool_use: { id: "toolu_1", input: {} } })
    expect(Either.isLeft(badDeferred) ? badDeferred.left.detail : "decoded").toContain("name")
    const user = decodeOk({
      type: "user",
      message: { role: "user", content: "hi" },
      parent_tool_use_id: null,
      session_id: "s",
      priority: "now",
      origin: { kind: "peer", from: "uds:/tmp/a.sock", name: "A", fromMode: "bypass" }
    })
    expect(user.type === "user" ? [user.priority, user.origin?.kind, user.origin?.fromMode] : []).toEqual([
      "now",
      "peer",
      "bypass"
    ])
    const badOrigin = Message.decode({ ...user, origin: { from: "x" } })
    expect(Either.isLeft(badOrigin) ? badOrigin.left.detail : "decoded").toContain("kind")
  })

  it("builds user message frames with priority and origin, and leaves them out otherwise", () => {
    expect(Message.userMessage("steer", { priority: "now", origin: { kind: "human" } })).toMatchObject({
      priority: "now",
      origin: { kind: "human" }
    })
    const plain = Message.userMessage("x")
    expect("priority" in plain || "origin" in plain).toBe(false)
  })
})
