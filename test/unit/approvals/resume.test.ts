// The deciding side: a decided approval resumes its session, the CLI's start-up permission
// requests for the deferred call get the decision (the same however often asked), the stream is
// the interrupted turn up to its result, and nothing runs for an approval decided before.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Ref, Stream, TestClock } from "effect"
import * as os from "node:os"
import * as Approvals from "../../../src/Approvals.js"
import * as Resume from "../../../src/internal/approvals/resume.js"
import { projectKeyOf } from "../../../src/internal/session/storedSession.js"
import * as ApprovalStores from "../../../src/layers/ApprovalStores.js"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import * as Control from "../../../src/schema/Control.js"
import type * as Options from "../../../src/schema/Options.js"
import type * as Permission from "../../../src/Permission.js"
import { type Approval, ApprovalStore, type Decision } from "../../../src/services/ApprovalStore.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"

const SESSION = "11111111-2222-4333-8444-555555555555"
const CALL_ID = "toolu_w1"
const INPUT = { file_path: "/srv/out.txt", content: "hi" }

const approvalIn = (projectKey: string, overrides: Partial<Approval> = {}): Approval => ({
  id: "approval-1",
  projectKey,
  sessionId: SESSION,
  cwd: os.tmpdir(),
  toolUseId: CALL_ID,
  toolName: "Write",
  input: INPUT,
  createdAt: 0,
  expiresAt: 60_000,
  state: "pending",
  ...overrides
})

const context = (toolUseID: string): Permission.CanUseToolContext => ({
  suggestions: [],
  blockedPath: undefined,
  decisionReason: undefined,
  toolUseID,
  agentID: undefined,
  displayName: undefined,
  description: undefined,
  mcpServer: undefined,
  requestId: "r1",
  raw: {}
})

// A resumed CLI as 2.1.330 is: at start-up it asks for the deferred call (twice), then finishes
// the interrupted turn. `starts` counts the CLIs started; `answers` what they were told.
const NEXT_CALL = { id: "toolu_w2", name: "Write", input: { file_path: "/srv/next.txt", content: "more" } }

const resumedCli = (starts: Ref.Ref<number>, answers: Ref.Ref<ReadonlyArray<unknown>>, defersAgain = false) =>
  FakeCli.layerClaudeAgent({
    onControlRequest: (request, cli) =>
      request.subtype !== "initialize" ? Effect.succeedNone : Ref.update(starts, (n) => n + 1).pipe(
        Effect.zipRight(
          Effect.forkDaemon(Effect.gen(function*() {
            for (let i = 0; i < 2; i++) {
              const answer = yield* cli.request(Control.CanUseTool, {
                tool_name: "Write",
                input: INPUT,
                tool_use_id: CALL_ID
              })
              yield* Ref.update(answers, (all) => [...all, answer])
            }
            yield* cli.emit({
              type: "user",
              message: { role: "user", content: [{ type: "tool_result", tool_use_id: CALL_ID, content: "ok" }] },
              parent_tool_use_id: null,
              session_id: SESSION
            })
            yield* cli.emit({ ...cli.frames.assistantText("written"), session_id: SESSION })
            yield* cli.emit({
              ...cli.frames.result("written"),
              session_id: SESSION,
              ...(defersAgain ? { terminal_reason: "tool_deferred", deferred_tool_use: NEXT_CALL } : {})
            })
          }))
        ),
        Effect.as(Option.none())
      )
  })

const setUp = (defersAgain = false) =>
  Effect.gen(function*() {
    const projectKey = yield* projectKeyOf(os.tmpdir())
    const sessionStore = yield* SessionStores.makeMemory
    yield* sessionStore.append({ projectKey, sessionId: SESSION }, [{ type: "user", uuid: "u1" }])
    const approvals = yield* ApprovalStores.makeMemory
    yield* approvals.create(approvalIn(projectKey))
    const starts = yield* Ref.make(0)
    const answers = yield* Ref.make<ReadonlyArray<unknown>>([])
    return { projectKey, sessionStore, approvals, starts, answers, cli: resumedCli(starts, answers, defersAgain) }
  })

describe("continuing a decided approval", () => {
  it("answers each decision as the CLI expects it", () => {
    expect(Resume.answerFor({ state: "approved" })).toEqual({ behavior: "allow" })
    expect(Resume.answerFor({ state: "edited", updatedInput: { a: 1 } })).toEqual({
      behavior: "allow",
      updatedInput: { a: 1 }
    })
    expect(Resume.answerFor({ state: "denied", message: "no" })).toEqual({ behavior: "deny", message: "no" })
    expect(Resume.answerFor({ state: "expired", message: "too late" })).toEqual({
      behavior: "deny",
      message: "too late"
    })
  })

  it.effect("the resumed session's options: the decision for the call, nothing that would skip asking", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make(0)
      const decision: Decision = { state: "denied", message: "no" }
      const hookCalls = yield* Ref.make(0)
      const options = Resume.sessionOptions(approvalIn("-tmp"), decision, {
        permissionMode: "acceptEdits",
        allowedTools: ["Write", "Write(/srv/**)", "Read"],
        continue: true,
        hooks: {
          PreToolUse: [{ hooks: [() => Effect.as(Ref.update(hookCalls, (n) => n + 1), {})] }],
          PermissionRequest: [{ hooks: [() => Effect.as(Ref.update(hookCalls, (n) => n + 1), {})] }]
        }
      }, asked)
      expect(options).toMatchObject({
        resume: SESSION,
        cwd: os.tmpdir(),
        permissionMode: "default",
        allowedTools: ["Read"],
        env: Resume.resumeEnv
      })
      expect(options.continue).toBeUndefined()
      const canUseTool = options.canUseTool!
      // Asked twice for the call: the same answer.
      expect(yield* canUseTool("Write", INPUT, context(CALL_ID))).toEqual({ behavior: "deny", message: "no" })
      expect(yield* canUseTool("Write", INPUT, context(CALL_ID))).toEqual({ behavior: "deny", message: "no" })
      expect(yield* Ref.get(asked)).toBe(2)
      // Another call, with no canUseTool of the caller's: denied, saying why.
      const other = yield* canUseTool("Bash", { command: "ls" }, context("toolu_other"))
      expect(other.behavior).toBe("deny")
      // The caller's PreToolUse hooks keep out of the decided call only.
      const hook = options.hooks?.PreToolUse?.[0]?.hooks[0]
      const input = { hook_event_name: "PreToolUse", tool_name: "Write", tool_input: INPUT } as never
      yield* hook!(input, CALL_ID)
      expect(yield* Ref.get(hookCalls)).toBe(0)
      yield* hook!(input, "toolu_other")
      expect(yield* Ref.get(hookCalls)).toBe(1)
      const permissionHook = options.hooks?.PermissionRequest?.[0]?.hooks[0]
      yield* permissionHook!(input, CALL_ID)
      expect(yield* Ref.get(hookCalls)).toBe(1)
    }))

  it.effect("approve: decided once, the CLI's start-up requests get the decision, the turn is streamed to its result", () =>
    Effect.gen(function*() {
      const { answers, approvals, cli, sessionStore, starts } = yield* setUp()
      const messages = Chunk.toArray(
        yield* Approvals.edit("approval-1", { ...INPUT, content: "edited" }, { sessionStore }, { decidedBy: "ada" })
          .pipe(Stream.runCollect, Effect.provideService(ApprovalStore, approvals), Effect.provide(cli))
      )
      expect(messages.map((m) => m.type)).toEqual(["user", "assistant", "result"])
      const edited = { behavior: "allow", updatedInput: { ...INPUT, content: "edited" }, toolUseID: CALL_ID }
      expect(yield* Ref.get(answers)).toEqual([edited, edited])
      expect(yield* Ref.get(starts)).toBe(1)
      expect(Option.map(yield* approvals.get("approval-1"), (a) => [a.state, a.decidedBy]))
        .toEqual(Option.some(["edited", "ada"]))

      // A second decision is refused before any CLI starts.
      const again = yield* Effect.flip(
        Approvals.approve("approval-1", { sessionStore }).pipe(
          Stream.runDrain,
          Effect.provideService(ApprovalStore, approvals),
          Effect.provide(cli)
        )
      )
      expect(again._tag === "ApprovalAlreadyDecided" ? again.approval.state : again._tag).toBe("edited")
      expect(yield* Ref.get(starts)).toBe(1)
    }))

  it.effect("a continuation that stops at another call records it in the same store", () =>
    Effect.gen(function*() {
      const { approvals, cli, projectKey, sessionStore } = yield* setUp(true)
      const messages = Chunk.toArray(
        yield* Approvals.approve("approval-1", { sessionStore }).pipe(
          Stream.runCollect,
          Effect.provideService(ApprovalStore, approvals),
          Effect.provide(cli)
        )
      )
      const next = messages.flatMap((m) => Option.toArray(Approvals.awaitingApproval(m)))
      expect(next.map((a) => [a.toolUseId, a.sessionId])).toEqual([[NEXT_CALL.id, SESSION]])
      expect((yield* approvals.listPending({ projectKey })).map((a) => a.id)).toEqual([next[0]?.id])
    }))

  it.effect("resume: refused for a pending approval and without a session store; continues an expired one as a denial", () =>
    Effect.gen(function*() {
      const { answers, approvals, cli, projectKey, sessionStore, starts } = yield* setUp()
      const resume = (options: Options.Options) =>
        Approvals.resume("approval-1", options).pipe(
          Stream.runCollect,
          Effect.provideService(ApprovalStore, approvals),
          Effect.provide(cli)
        )
      const pending = yield* Effect.flip(resume({ sessionStore }))
      expect(pending._tag === "OptionsError" ? pending.field : pending._tag).toBe("approval")
      const expireDue = Approvals.expireDue.pipe(Effect.provideService(ApprovalStore, approvals))
      expect(yield* expireDue).toEqual([])
      yield* TestClock.adjust("1 minute")
      expect((yield* expireDue).map((a) => a.state)).toEqual(["expired"])
      expect(yield* Ref.get(starts)).toBe(0)
      const noStore = yield* Effect.flip(resume({}))
      expect(noStore._tag === "OptionsError" ? noStore.field : noStore._tag).toBe("sessionStore")
      yield* resume({ sessionStore })
      const [answer] = yield* Ref.get(answers)
      expect(answer).toMatchObject({ behavior: "deny" })
      expect(JSON.stringify(answer)).toContain("expired")
      expect(yield* Ref.get(starts)).toBe(1)

      // Once the stored transcript holds the call's answer, there is no turn left to finish.
      yield* sessionStore.append({ projectKey, sessionId: SESSION }, [{
        type: "user",
        uuid: "u2",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: CALL_ID, content: "refused" }] }
      }])
      const again = yield* Effect.flip(resume({ sessionStore }))
      expect(again._tag).toBe("ApprovalAlreadyApplied")
      expect(yield* Ref.get(starts)).toBe(1)
    }))
})
