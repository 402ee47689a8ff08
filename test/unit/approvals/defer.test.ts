// The deferring side over the fake CLI: a session with `approvalStore` records the call a turn
// stopped at (`terminal_reason: "tool_deferred"`) as a pending approval and delivers
// `system/awaiting_approval` just before the turn's result; other turns record nothing.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import * as os from "node:os"
import * as Approvals from "../../../src/Approvals.js"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import { projectKeyOf } from "../../../src/internal/session/storedSession.js"
import * as ApprovalStores from "../../../src/layers/ApprovalStores.js"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import * as Options from "../../../src/schema/Options.js"
import { ApprovalStoreError, type ApprovalStoreShape } from "../../../src/services/ApprovalStore.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"

const SESSION = "11111111-2222-4333-8444-555555555555"
const CALL = { id: "toolu_w1", name: "Write", input: { file_path: "/srv/out.txt", content: "hi" } }

// Each prompt: a turn that stops at a deferred Write when the prompt says "defer".
const deferringCli = FakeCli.layerClaudeAgent({
  onUserMessage: (message, cli) => {
    const defers = JSON.stringify(message).includes("defer")
    return Effect.forEach(
      [
        { ...cli.frames.systemInit(), session_id: SESSION },
        {
          ...cli.frames.result(""),
          session_id: SESSION,
          ...(defers ? { stop_reason: "tool_deferred", terminal_reason: "tool_deferred", deferred_tool_use: CALL } : {})
        }
      ],
      cli.emit,
      { discard: true }
    )
  }
})

const run = (prompt: string, approvalStore: ApprovalStoreShape, extra: Partial<Options.Options> = {}) =>
  Effect.gen(function*() {
    const sessionStore = yield* SessionStores.makeMemory
    const messages = yield* ClaudeAgent.query(prompt, { sessionStore, approvalStore, cwd: os.tmpdir(), ...extra }).pipe(
      Stream.runCollect
    )
    return Chunk.toArray(messages)
  }).pipe(Effect.provide(deferringCli))

describe("deferring a tool call to an approval store", () => {
  it.effect("a tool_deferred turn is recorded as pending, announced just before its result", () =>
    Effect.gen(function*() {
      const store = yield* ApprovalStores.makeMemory
      const messages = yield* run("please defer", store, { approvalTimeout: "1 hour" })
      expect(messages.map((m) => m.type === "system" ? `system/${m.subtype}` : m.type)).toEqual([
        "system/init",
        "system/awaiting_approval",
        "result"
      ])
      const announced = Option.getOrThrow(Approvals.awaitingApproval(messages[1]!))
      const projectKey = yield* projectKeyOf(os.tmpdir())
      expect(announced).toMatchObject({
        projectKey,
        sessionId: SESSION,
        toolUseId: CALL.id,
        toolName: CALL.name,
        input: CALL.input,
        createdAt: 0,
        expiresAt: 3_600_000,
        state: "pending"
      })
      expect(yield* store.listPending({ projectKey, sessionId: SESSION })).toEqual([announced])
    }))

  it.effect("a turn that ends otherwise records nothing", () =>
    Effect.gen(function*() {
      const store = yield* ApprovalStores.makeMemory
      const messages = yield* run("just answer", store)
      expect(messages.some((m) => Option.isSome(Approvals.awaitingApproval(m)))).toBe(false)
      expect(yield* store.listPending({ projectKey: yield* projectKeyOf(os.tmpdir()) })).toEqual([])
    }))

  it.effect("a store that refuses the record: the message says so, and the turn still ends", () =>
    Effect.gen(function*() {
      const inner = yield* ApprovalStores.makeMemory
      const store: ApprovalStoreShape = {
        ...inner,
        create: () =>
          Effect.fail(new ApprovalStoreError({ reason: "Corrupt", operation: "create", detail: "disk on fire" }))
      }
      const messages = yield* run("please defer", store)
      const notice = messages.find((m) => m.type === "system" && m.subtype === "awaiting_approval")
      expect(notice?.type === "system" && notice.subtype === "awaiting_approval" ? notice.error : undefined)
        .toContain("disk on fire")
      expect(Option.isNone(Approvals.awaitingApproval(notice!))).toBe(true)
      expect(messages.at(-1)?.type).toBe("result")
    }))

  it.effect("the options: approvalStore needs sessionStore, approvalTimeout needs approvalStore", () =>
    Effect.gen(function*() {
      const store = yield* ApprovalStores.makeMemory
      const withoutSessions = yield* Effect.flip(Options.validate({ approvalStore: store }))
      expect(withoutSessions.field).toBe("approvalStore")
      const orphan = yield* Effect.flip(Options.validate({ approvalTimeout: "1 hour" }))
      expect(orphan.field).toBe("approvalTimeout")
      const notAStore = yield* Effect.flip(Options.validate({ approvalStore: {} as never }))
      expect(notAStore._tag).toBe("OptionsError")
    }))
})
