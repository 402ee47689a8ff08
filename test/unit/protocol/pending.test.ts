// The pending-request table: ids, matching replies, deadlines as data, draining on close.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { PendingTable } from "../../../src/internal/protocol/pending.js"
import { route } from "../../../src/internal/protocol/router.js"

const success = (id: string, response?: unknown) =>
  route({
    type: "control_response",
    response: response === undefined
      ? { subtype: "success", request_id: id }
      : { subtype: "success", request_id: id, response }
  })

describe("PendingTable", () => {
  it("makes ids unique per table, with the counter first", () => {
    const table = new PendingTable<number>(() => 0.5)
    expect(table.nextId()).toBe("req_1_i")
    expect(table.nextId()).toBe("req_2_i")
    expect(new PendingTable<number>(() => 0.5).nextId()).toBe("req_1_i")
  })

  it("resolves a success, an error and an unreadable reply into their outcomes", () => {
    const table = new PendingTable<string>()
    table.add("a", "set_model", 100, "wa")
    table.add("b", "interrupt", undefined, "wb")
    table.add("c", "mcp_status", undefined, "wc")
    const ok = table.resolve(success("a", { model: "m" }))
    expect(ok).toMatchObject({
      _tag: "Succeeded",
      response: { model: "m" },
      entry: { subtype: "set_model", waiter: "wa" }
    })
    const failed = table.resolve(route({
      type: "control_response",
      response: { subtype: "error", request_id: "b", error: "no", error_code: "invalid_mode" }
    }))
    expect(failed).toMatchObject({ _tag: "Failed", error: "no", errorCode: "invalid_mode", entry: { waiter: "wb" } })
    const unreadable = table.resolve(
      route({ type: "control_response", response: { subtype: "what", request_id: "c" } })
    )
    expect(unreadable).toMatchObject({ _tag: "Unreadable", response: { subtype: "what", request_id: "c" } })
    expect(table.size).toBe(0)
  })

  it("ignores replies to unknown ids, replies without ids and frames that are not replies", () => {
    const table = new PendingTable<string>()
    table.add("a", "set_model", undefined, "wa")
    expect(table.resolve(success("zzz"))).toBeUndefined()
    expect(table.resolve(route({ type: "control_response", response: { subtype: "success" } }))).toBeUndefined()
    expect(table.resolve(route({ type: "control_cancel_request", request_id: "a" }))).toBeUndefined()
    expect(table.resolve(route({ type: "assistant" }))).toBeUndefined()
    expect(table.has("a")).toBe(true)
  })

  it("expires the requests whose deadline has come, and only those", () => {
    const table = new PendingTable<string>()
    table.add("early", "a", 10, "e")
    table.add("late", "b", 20, "l")
    table.add("never", "c", undefined, "n")
    expect(table.nextDeadline()).toBe(10)
    expect(table.expire(9)).toEqual([])
    expect(table.expire(10).map((e) => e.requestId)).toEqual(["early"])
    expect(table.nextDeadline()).toBe(20)
    expect(table.expire(1000).map((e) => e.requestId)).toEqual(["late"])
    expect(table.nextDeadline()).toBeUndefined()
    expect(table.drain().map((e) => e.requestId)).toEqual(["never"])
    expect(table.size).toBe(0)
  })

  it("drains every pending request once", () => {
    const table = new PendingTable<number>()
    table.add("a", "x", undefined, 1)
    table.add("b", "y", undefined, 2)
    expect(table.drain().map((e) => e.waiter)).toEqual([1, 2])
    expect(table.drain()).toEqual([])
  })

  // Replies in any order, repeated, to known and unknown ids.
  const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 10 })
  const replies = fc.array(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 30 })

  it.prop(
    "never resolves an id twice, nor one it does not hold; what is left drains",
    [ids, replies],
    ([sent, answered]) => {
      const table = new PendingTable<string>()
      for (const id of sent) table.add(id, "x", undefined, id)
      const resolved: Array<string> = []
      for (const id of answered) {
        const outcome = table.resolve(success(id))
        if (outcome !== undefined) resolved.push(outcome.entry.waiter)
      }
      expect(new Set(resolved).size).toBe(resolved.length)
      expect(resolved.every((id) => sent.includes(id))).toBe(true)
      expect(resolved.sort()).toEqual(sent.filter((id) => answered.includes(id)).sort())
      const left = table.drain().map((e) => e.requestId)
      expect(left.sort()).toEqual(sent.filter((id) => !answered.includes(id)).sort())
    }
  )
})
