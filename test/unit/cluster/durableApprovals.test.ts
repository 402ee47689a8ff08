// The cluster entity's durable wait (an approval store with `askClient`), in memory: what the
// conversation's CLI session is opened with, and the RPCs that read and decide the store
// (`Status`, `AnswerPermission`, `Continue`) on a TestRunner. The continuation on the real CLI is
// test/cluster-pg/approvals.pgtest.ts.
import { TestRunner } from "@effect/cluster"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  ApprovalStore,
  ApprovalStores,
  ClaudeAgent,
  Hook,
  type Options,
  SessionServices,
  SessionStore,
  SessionStores,
  Transport
} from "effect-claude-agent"
import { AgentEntity } from "effect-claude-agent/cluster"
import * as Durable from "../../../src/cluster/internal/approvals.js"
import * as TurnStore from "../../../src/cluster/internal/turnStore.js"

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "durable-approvals-")))
const projectKey = (cwd: string) => cwd.replace(/[^a-zA-Z0-9]/g, "-")

// A ClaudeAgent whose sessions record the options they were opened with and never start.
const recordingAgent = (opened: Array<Options.Options<unknown>>) =>
  ClaudeAgent.make({
    transport: Layer.scoped(
      Transport.Transport,
      Effect.flatMap(SessionServices.SessionLaunch, ({ options }) => {
        opened.push(options)
        return Effect.dieMessage("no CLI in this test")
      })
    )
  })

const pending = (
  conversationId: string,
  cwd: string,
  toolUseId: string,
  times: { readonly createdAt: number; readonly expiresAt: number }
): ApprovalStore.Approval => {
  const sessionId = AgentEntity.sessionIdFor(conversationId)
  return {
    id: `${sessionId}:${toolUseId}`,
    projectKey: projectKey(cwd),
    sessionId,
    cwd,
    toolUseId,
    toolName: "Bash",
    input: { command: "rm -rf build" },
    ...times,
    state: "pending"
  }
}

// The entity on a TestRunner, with a memory approval store given as a layer option, or as the
// service in context (`viaContext`).
const setup = (options: { readonly viaContext?: boolean; readonly withStore?: boolean } = {}) =>
  Effect.gen(function*() {
    const cwd = tempDir()
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(cwd, { recursive: true, force: true })))
    const approvals = yield* ApprovalStores.makeMemory
    const sessions = yield* SessionStores.makeMemory
    const opened: Array<Options.Options<unknown>> = []
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const withStore = options.withStore ?? true
    const context = yield* Layer.buildWithScope(
      AgentEntity.layer({
        options: { cwd },
        askClient: (toolName) => toolName === "Bash",
        permissionTimeout: "10 minutes",
        ...(withStore && options.viaContext !== true ? { approvalStore: approvals } : {})
      }).pipe(
        Layer.provide(
          withStore && options.viaContext === true ? Layer.succeed(ApprovalStore.ApprovalStore, approvals) : Layer.empty
        ),
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, recordingAgent(opened))),
        Layer.provide(Layer.succeed(SessionStore.SessionStore, sessions)),
        Layer.provide(NodeContext.layer),
        Layer.provideMerge(TestRunner.layer)
      ),
      scope
    )
    const client = yield* Effect.provide(AgentEntity.AgentEntity.client, context)
    return { cwd, approvals, sessions, opened, client }
  })

describe("AgentEntity: the durable wait's pieces", () => {
  it.effect("the deferral hook defers the tools the client decides, and only those; the caller's hooks follow", () =>
    Effect.gen(function*() {
      const own = Hook.on("PreToolUse", () => Effect.succeed(Hook.allow("own")))
      const hooks = Durable.withDeferral({ PreToolUse: [{ matcher: "Read", hooks: [own] }] }, (tool) => tool === "Bash")
      expect(hooks.PreToolUse?.map((m) => m.matcher)).toEqual([undefined, "Read"])
      const deferral = hooks.PreToolUse?.[0]?.hooks[0]
      const input = (tool_name: string): Hook.HookInput => ({
        hook_event_name: "PreToolUse",
        session_id: "s",
        transcript_path: "/t",
        cwd: "/w",
        tool_name,
        tool_input: { command: "ls" },
        tool_use_id: "toolu_1"
      })
      expect(yield* deferral!(input("Bash"), "toolu_1")).toEqual(Hook.defer("waiting for the client's decision"))
      expect(yield* deferral!(input("Read"), "toolu_2")).toEqual({})
    }))

  it("the client's answer as a stored decision", () => {
    expect(Durable.decisionOf({ behavior: "allow" })).toEqual({ state: "approved" })
    expect(Durable.decisionOf({ behavior: "allow", updatedInput: { command: "ls" } })).toEqual({
      state: "edited",
      updatedInput: { command: "ls" }
    })
    expect(Durable.decisionOf({ behavior: "deny", message: "no" })).toEqual({ state: "denied", message: "no" })
  })
})

describe("AgentEntity with an approval store", () => {
  it.scopedLive("its CLI session defers the client's tools and records them in the store, expiring after permissionTimeout", () =>
    Effect.gen(function*() {
      const { approvals, client, opened } = yield* setup()
      const failed = yield* Effect.flip(client("user-1").Send({ turnId: "t1", prompt: "hi" }).pipe(Stream.runDrain))
      expect(failed._tag).toBe("AgentError")
      expect(opened).toHaveLength(1)
      expect(opened[0]?.approvalStore).toBe(approvals)
      expect(opened[0]?.approvalTimeout).toBe("10 minutes")
      expect(opened[0]?.hooks?.PreToolUse).toHaveLength(1)
    }))

  it.scopedLive("Status lists the conversation's calls waiting in the store; AnswerPermission decides each once", () =>
    Effect.gen(function*() {
      const { approvals, client, cwd } = yield* setup()
      const now = Date.now()
      const mine = pending("user-2", cwd, "toolu_a", { createdAt: now, expiresAt: now + 60_000 })
      yield* approvals.create(mine)
      yield* approvals.create(pending("someone-else", cwd, "toolu_b", { createdAt: now, expiresAt: now + 60_000 }))
      const conversation = client("user-2")

      const status = yield* conversation.Status()
      expect(status.pendingPermissions).toEqual([{
        toolUseId: "toolu_a",
        toolName: "Bash",
        input: { command: "rm -rf build" },
        decisionReason: null,
        blockedPath: null,
        suggestions: [],
        since: now,
        approvalId: mine.id,
        expiresAt: now + 60_000
      }])
      // Not decided yet: there is no turn to finish.
      const early = yield* Effect.flip(conversation.Continue({ toolUseId: "toolu_a" }).pipe(Stream.runDrain))
      expect(early._tag).toBe("OptionsError")

      expect(yield* conversation.AnswerPermission({ toolUseId: "toolu_b", result: { behavior: "allow" } })).toBe(false)
      expect(
        yield* conversation.AnswerPermission({
          toolUseId: "toolu_a",
          result: { behavior: "allow", updatedInput: { command: "rm -rf build/tmp" } }
        })
      ).toBe(true)
      expect(Option.map(yield* approvals.get(mine.id), (a) => a.decision)).toEqual(
        Option.some({ state: "edited", updatedInput: { command: "rm -rf build/tmp" } })
      )
      const again = yield* Effect.flip(
        conversation.AnswerPermission({ toolUseId: "toolu_a", result: { behavior: "deny", message: "no" } })
      )
      expect(again._tag === "ApprovalAlreadyDecided" ? again.approval.state : again._tag).toBe("edited")
      expect((yield* conversation.Status()).pendingPermissions).toEqual([])
    }))

  it.scopedLive("a turn sent while a call waits (decided or not) is not run; once it is continued, turns run", () =>
    Effect.gen(function*() {
      const { client, cwd, opened, sessions } = yield* setup()
      // As the turn that stopped at the call records it (the continuation's end is not recorded yet).
      const key = (id: string) => ({
        projectKey: projectKey(cwd),
        sessionId: AgentEntity.sessionIdFor(id),
        subpath: TurnStore.APPROVALS
      })
      yield* sessions.append(key("user-6"), [TurnStore.approvalEntry("awaiting", "toolu_e")])
      const refused = yield* Effect.flip(
        client("user-6").Send({ turnId: "t2", prompt: "and then?" }).pipe(Stream.runDrain)
      )
      expect(refused._tag === "AwaitingApprovalError" ? refused.toolUseIds : refused._tag).toEqual(["toolu_e"])
      expect(opened).toEqual([])
      // A call whose continuation is recorded holds nothing up.
      yield* sessions.append(key("user-7"), [
        TurnStore.approvalEntry("awaiting", "toolu_f"),
        TurnStore.approvalEntry("continued", "toolu_f")
      ])
      const ran = yield* Effect.flip(client("user-7").Send({ turnId: "t3", prompt: "and then?" }).pipe(Stream.runDrain))
      expect(ran._tag).toBe("AgentError")
      expect(opened).toHaveLength(1)
    }))

  it.scopedLive("an answer after permissionTimeout is refused as expired, and the store records the expiry", () =>
    Effect.gen(function*() {
      const { approvals, client, cwd } = yield* setup({ viaContext: true })
      const now = Date.now()
      const late = pending("user-3", cwd, "toolu_c", { createdAt: now - 60_000, expiresAt: now - 1 })
      yield* approvals.create(late)
      const refused = yield* Effect.flip(
        client("user-3").AnswerPermission({ toolUseId: "toolu_c", result: { behavior: "allow" } })
      )
      expect(refused._tag === "ApprovalAlreadyDecided" ? refused.approval.state : refused._tag).toBe("expired")
      expect(Option.map(yield* approvals.get(late.id), (a) => a.state)).toEqual(Option.some("expired"))
    }))

  it.scopedLive("Continue names no call the store has: ApprovalNotFound", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const missing = yield* Effect.flip(client("user-4").Continue({ toolUseId: "toolu_x" }).pipe(Stream.runDrain))
      expect(missing._tag).toBe("ApprovalNotFound")
    }))

  it.scopedLive("without a store, the wait stays in memory: nothing is deferred, nothing is looked up", () =>
    Effect.gen(function*() {
      const { approvals, client, cwd, opened } = yield* setup({ withStore: false })
      const now = Date.now()
      yield* approvals.create(pending("user-5", cwd, "toolu_d", { createdAt: now, expiresAt: now + 60_000 }))
      expect((yield* client("user-5").Status()).pendingPermissions).toEqual([])
      expect(yield* client("user-5").AnswerPermission({ toolUseId: "toolu_d", result: { behavior: "allow" } })).toBe(
        false
      )
      yield* Effect.flip(client("user-5").Send({ turnId: "t1", prompt: "hi" }).pipe(Stream.runDrain))
      expect(opened[0]?.approvalStore).toBeUndefined()
      expect(opened[0]?.hooks).toBeUndefined()
    }))
})
