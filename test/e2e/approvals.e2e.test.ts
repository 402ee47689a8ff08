// Human approval that survives a restart, on the real claude CLI (docs/protocol-defer.md): a turn
// defers a Write, its process exits, and a new session decides it from the shared stores.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { Chunk, Context, Effect, Layer, Option, type Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Approvals from "../../src/Approvals.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Hook from "../../src/Hook.js"
import * as ApprovalStores from "../../src/layers/ApprovalStores.js"
import * as SessionStores from "../../src/layers/SessionStores.js"
import * as Message from "../../src/schema/Message.js"
import type * as Options from "../../src/schema/Options.js"
import { ApprovalStore, type ApprovalStoreShape } from "../../src/services/ApprovalStore.js"
import type * as SessionStore from "../../src/services/SessionStore.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const CALL_ID = "toolu_deferred_write"

// One Write call, then a text reply once its result is back.
const writesAFile = ScriptedModel.make([
  {
    match: (r) => ScriptedModel.toolResultCount(r) === 0,
    reply: ScriptedModel.toolUse("Write", { file_path: "out.txt", content: "original\n" }, { id: CALL_ID })
  },
  { match: (r) => ScriptedModel.toolResultCount(r) === 1, reply: ScriptedModel.text("written"), times: Infinity }
])

// Every Write waits for a person.
const deferWrites: Hook.Hooks = {
  PreToolUse: [{
    matcher: "Write",
    hooks: [() => Effect.succeed(Hook.defer("a person reviews writes"))]
  }]
}

const readOut = (cwd: string): string | undefined => {
  const file = path.join(cwd, "out.txt")
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
}

// The set-up every test shares: the model, its options with both stores, and the deferring run,
// whose session (and CLI process) is over when this returns.
// Both stores in this process's memory, or both in one SQLite file (as separate processes would share them).
const inMemory = Effect.all({ sessionStore: SessionStores.makeMemory, approvalStore: ApprovalStores.makeMemory })
const inSqlite = Effect.gen(function*() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "approvals-sqlite-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const sql = yield* Layer.build(SqliteClient.layer({ filename: path.join(dir, "stores.db") })).pipe(
    Effect.map(Context.get(SqlClient.SqlClient))
  )
  return { sessionStore: yield* SessionStores.makeSql(sql), approvalStore: yield* ApprovalStores.makeSql(sql) }
})

const deferred = (
  approvalTimeout?: Options.Options["approvalTimeout"],
  stores: Effect.Effect<
    { sessionStore: SessionStore.SessionStoreShape; approvalStore: ApprovalStoreShape },
    unknown,
    Scope.Scope
  > = inMemory
) =>
  Effect.gen(function*() {
    const model = yield* writesAFile
    const base = yield* model.options()
    const { approvalStore, sessionStore } = yield* Effect.orDie(stores)
    const options: Options.Options = { ...base, hooks: deferWrites, sessionStore }
    const messages = Chunk.toArray(
      yield* ClaudeAgent.query("write the file", {
        ...options,
        approvalStore,
        ...(approvalTimeout === undefined ? {} : { approvalTimeout })
      }).pipe(Stream.runCollect)
    )
    const approvals = messages.flatMap((m) => Option.toArray(Approvals.awaitingApproval(m)))
    const result = messages.find(Message.isResult)
    return { model, options, approvalStore, approvals, messages, result, cwd: base.cwd ?? "." }
  })

// The tool results the model was sent for the deferred call, in the request that finished the turn.
const resultsForCall = (requests: ReadonlyArray<ScriptedModel.RecordedRequest>) =>
  (requests.at(-1) === undefined ? [] : ScriptedModel.toolResults(requests.at(-1)!)).filter((r) =>
    r.tool_use_id === CALL_ID
  )

describe("e2e: approvals that survive a restart (Hook.defer + approvalStore) on the real claude CLI", () => {
  it.scopedLive("approve from a new session: written exactly once, the model sees the real result", () =>
    Effect.gen(function*() {
      const run = yield* deferred()
      // The deferring turn: awaiting approval, delivered before its result; nothing written.
      expect(run.approvals).toHaveLength(1)
      const approval = run.approvals[0]!
      expect(approval).toMatchObject({ toolUseId: CALL_ID, toolName: "Write", state: "pending" })
      expect(approval.input).toEqual({
        file_path: path.join(fs.realpathSync(run.cwd), "out.txt"),
        content: "original\n"
      })
      const at = run.messages.findIndex((m) => Option.isSome(Approvals.awaitingApproval(m)))
      expect(at).toBe(run.messages.findIndex(Message.isResult) - 1)
      expect(run.result?.terminal_reason).toBe("tool_deferred")
      expect(readOut(run.cwd)).toBeUndefined()
      expect((yield* run.approvalStore.listPending({ projectKey: approval.projectKey })).map((a) => a.id))
        .toEqual([approval.id])

      const continued = Chunk.toArray(
        yield* Approvals.approve(approval.id, run.options, { decidedBy: "ada" }).pipe(
          Stream.runCollect,
          Effect.provideService(ApprovalStore, run.approvalStore)
        )
      )
      const result = continued.find(Message.isResult)
      expect(result?.subtype === "success" ? result.result : undefined).toBe("written")
      expect(readOut(run.cwd)).toBe("original\n")
      const requests = yield* run.model.mainRequests
      const seen = resultsForCall(requests)
      expect(seen).toHaveLength(1)
      expect(seen[0]?.is_error ?? false).toBe(false)
      expect(JSON.stringify(seen[0]?.content)).toMatch(/created|written/i)
      expect(Option.map(yield* run.approvalStore.get(approval.id), (a) => [a.state, a.decidedBy]))
        .toEqual(Option.some(["approved", "ada"]))

      // A second approval is refused by the store before any CLI starts.
      const again = yield* Effect.flip(
        Approvals.approve(approval.id, run.options).pipe(
          Stream.runDrain,
          Effect.provideService(ApprovalStore, run.approvalStore)
        )
      )
      expect(again._tag).toBe("ApprovalAlreadyDecided")
      // Continuing it again is refused too: the stored transcript has the call's result.
      const rerun = yield* Effect.flip(
        Approvals.resume(approval.id, run.options).pipe(
          Stream.runDrain,
          Effect.provideService(ApprovalStore, run.approvalStore)
        )
      )
      expect(rerun._tag).toBe("ApprovalAlreadyApplied")
      expect((yield* run.model.mainRequests).length).toBe(requests.length)
      expect(readOut(run.cwd)).toBe("original\n")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("deny: nothing is written and the model sees the reason", () =>
    Effect.gen(function*() {
      const run = yield* deferred()
      const approval = run.approvals[0]!
      const continued = Chunk.toArray(
        yield* Approvals.deny(approval.id, "refused by a reviewer", run.options).pipe(
          Stream.runCollect,
          Effect.provideService(ApprovalStore, run.approvalStore)
        )
      )
      expect(continued.find(Message.isResult)?.subtype).toBe("success")
      expect(readOut(run.cwd)).toBeUndefined()
      const seen = resultsForCall(yield* run.model.mainRequests)
      expect(seen).toHaveLength(1)
      expect(seen[0]?.is_error).toBe(true)
      expect(JSON.stringify(seen[0]?.content)).toContain("refused by a reviewer")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("edit, with both stores in SQLite: the file has the edited content", () =>
    Effect.gen(function*() {
      const run = yield* deferred(undefined, inSqlite)
      const approval = run.approvals[0]!
      yield* Approvals.edit(approval.id, { ...approval.input, content: "reviewed\n" }, run.options).pipe(
        Stream.runDrain,
        Effect.provideService(ApprovalStore, run.approvalStore)
      )
      expect(readOut(run.cwd)).toBe("reviewed\n")
      expect(resultsForCall(yield* run.model.mainRequests)).toHaveLength(1)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("expiry: a late approval is refused as expired, and the session is told it expired", () =>
    Effect.gen(function*() {
      const run = yield* deferred("1 millis")
      const approval = run.approvals[0]!
      const late = yield* Effect.flip(
        Approvals.approve(approval.id, run.options).pipe(
          Stream.runDrain,
          Effect.provideService(ApprovalStore, run.approvalStore)
        )
      )
      expect(late._tag === "ApprovalAlreadyDecided" ? late.approval.state : late._tag).toBe("expired")
      yield* Approvals.resume(approval.id, run.options).pipe(
        Stream.runDrain,
        Effect.provideService(ApprovalStore, run.approvalStore)
      )
      expect(readOut(run.cwd)).toBeUndefined()
      const seen = resultsForCall(yield* run.model.mainRequests)
      expect(seen[0]?.is_error).toBe(true)
      expect(JSON.stringify(seen[0]?.content)).toContain("expired")
    }).pipe(Effect.provide(AgentLive)))
})
