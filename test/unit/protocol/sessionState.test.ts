// The session bookkeeping reducer: session id, run state, results and tool names, and what it
// reports as changed per chunk.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as fs from "node:fs"
import { initialRun, SessionState } from "../../../src/internal/protocol/sessionState.js"

const recorded: ReadonlyArray<{ readonly [key: string]: unknown }> = fs
  .readFileSync(new URL("../../fixtures/cli-2.1.330-stdout.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line.length > 0)
  .map((line) => JSON.parse(line))

const assistant = (...tools: Array<string>) => ({
  type: "assistant",
  session_id: "s1",
  message: { content: [{ type: "text", text: "hi" }, ...tools.map((name) => ({ type: "tool_use", id: name, name }))] }
})

describe("SessionState", () => {
  it("reports nothing when nothing changed", () => {
    const state = new SessionState()
    state.observe({ type: "user", message: {} })
    expect(state.takeChanges()).toBeUndefined()
  })

  const table: ReadonlyArray<readonly [string, ReadonlyArray<{ readonly [key: string]: unknown }>, unknown]> = [
    ["a session id", [{ type: "system", subtype: "init", session_id: "s1" }], {
      sessionId: "s1",
      run: undefined,
      results: undefined,
      tools: undefined
    }],
    ["the same session id twice: once", [{ type: "user", session_id: "s1" }, { type: "user", session_id: "s1" }], {
      sessionId: "s1",
      run: undefined,
      results: undefined,
      tools: undefined
    }],
    ["an empty session id: nothing", [{ type: "user", session_id: "" }], undefined],
    ["a run state", [{ type: "system", subtype: "session_state_changed", state: "running" }], {
      sessionId: undefined,
      run: { state: "running", afterResult: false, results: 0 },
      results: undefined,
      tools: undefined
    }],
    [
      "a run state that is not a string: nothing",
      [{ type: "system", subtype: "session_state_changed", state: 1 }],
      undefined
    ],
    ["an assistant message's tools", [assistant("Bash", "Read")], {
      sessionId: "s1",
      run: undefined,
      results: undefined,
      tools: ["Bash", "Read"]
    }],
    ["a result, then assistant output", [{ type: "result", is_error: false }, assistant()], {
      sessionId: "s1",
      run: { state: undefined, afterResult: false, results: 1 },
      results: [{ type: "result", is_error: false }],
      tools: undefined
    }],
    ["a stream event after a result", [{ type: "result" }, { type: "stream_event" }], {
      sessionId: undefined,
      run: { state: undefined, afterResult: false, results: 1 },
      results: [{ type: "result" }],
      tools: undefined
    }]
  ]
  for (const [name, frames, expected] of table) {
    it(`reports ${name}`, () => {
      const state = new SessionState()
      for (const frame of frames) state.observe(frame)
      expect(state.takeChanges()).toEqual(expected)
      expect(state.takeChanges()).toBeUndefined()
    })
  }

  it("reports a session id once: a chunk that goes to another id and back reports nothing", () => {
    const state = new SessionState()
    state.observe({ type: "user", session_id: "a" })
    expect(state.takeChanges()?.sessionId).toBe("a")
    state.observe({ type: "user", session_id: "b" })
    state.observe({ type: "user", session_id: "a" })
    expect(state.takeChanges()).toBeUndefined()
    expect(state.sessionId).toBe("a")
  })

  it("follows the recorded session: its id, one result after the assistant's output", () => {
    const state = new SessionState()
    for (const frame of recorded) state.observe(frame)
    const last = recorded.filter((f) => typeof f.session_id === "string").at(-1)
    expect(state.sessionId).toBe(last?.session_id)
    expect(state.run.results).toBe(recorded.filter((f) => f.type === "result").length)
    const turnFrames = recorded.filter((f) =>
      f.type === "result" || f.type === "assistant" || f.type === "stream_event"
    )
    expect(state.run.afterResult).toBe(true)
    expect(turnFrames.at(-1)?.type).toBe("result")
    expect(state.lastResult).toBe(recorded.filter((f) => f.type === "result").at(-1))
  })

  const frame = fc.oneof(
    fc.record({ type: fc.constant("result"), is_error: fc.boolean(), session_id: fc.string({ maxLength: 2 }) }),
    fc.record({ type: fc.constantFrom("assistant", "stream_event", "user"), session_id: fc.string({ maxLength: 2 }) }),
    fc.record({
      type: fc.constant("system"),
      subtype: fc.constant("session_state_changed"),
      state: fc.constantFrom("running", "idle", "requires_action")
    })
  )
  const chunks = fc.array(fc.array(frame, { maxLength: 6 }), { maxLength: 8 })

  it.prop("over any chunks: the id is the last non-empty one, results count the result frames, changes add up", [
    chunks
  ], ([all]) => {
    const state = new SessionState()
    let published: string | undefined
    let run = initialRun
    let results = 0
    for (const chunk of all) {
      for (const f of chunk) state.observe(f)
      const changes = state.takeChanges()
      if (changes?.sessionId !== undefined) {
        expect(changes.sessionId).not.toBe(published)
        published = changes.sessionId
      }
      if (changes?.run !== undefined) run = changes.run
      results += changes?.results?.length ?? 0
    }
    const flat = all.flat()
    const ids = flat.map((f) => ("session_id" in f ? f.session_id : undefined)).filter((id): id is string =>
      typeof id === "string" && id.length > 0
    )
    expect(published).toBe(ids.at(-1))
    expect(state.sessionId).toBe(ids.at(-1))
    const resultCount = flat.filter((f) => f.type === "result").length
    expect(results).toBe(resultCount)
    expect(run).toEqual(state.run)
    expect(state.run.results).toBe(resultCount)
    const lastTurnFrame = flat.filter((f) => f.type === "result" || f.type === "assistant" || f.type === "stream_event")
      .at(-1)
    expect(state.run.afterResult).toBe(lastTurnFrame?.type === "result")
  }, { fastCheck: { numRuns: 500 } })
})
