// A tool call waiting for a person survives its runner: conversations as cluster entities on the
// real `claude` CLI, on PostgreSQL, with `askClient` for Bash and the approval store on the
// cluster's database (scripts/cluster/runner.ts: AGENT_ASK_CLIENT, AGENT_PERMISSION_TIMEOUT).
//
// 1. A turn stops at a Bash call (awaiting approval, recorded in the store); its runner is stopped
//    while the client approves and asks for the rest of the turn; the other runner, the new owner,
//    finishes it: the command ran exactly once (a line appended to a file), the model saw its
//    output. A second answer is refused (`ApprovalAlreadyDecided`), also by a restarted runner.
// 2. The owning runner is killed (kill -9) after the approved command ran, before the turn's end:
//    the next owner finds the command's result in the store and does not run it again
//    (`ApprovalAlreadyApplied`); the conversation's next turn goes on from the stored result.
// 3. Deny through the cluster: nothing runs, the model sees the reason.
// 4. Expiry: an answer after `permissionTimeout` is refused as expired, and the turn finishes
//    with the model told so.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Chunk, Context, Effect, Fiber, Layer, Option, Schedule, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { clientLayer, pgLayer, testTimings } from "../../scripts/cluster/layers.js"
import * as Approvals from "../../src/Approvals.js"
import * as ApprovalStores from "../../src/layers/ApprovalStores.js"
import * as Permission from "../../src/Permission.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"
import { AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import { databaseUrl, eventually, spreadClient, startRunner } from "./harness.js"

const candidates = Array.from({ length: 24 }, (_, i) => `approval-${i}`)

const promptFor = (id: string) => `run the counter for [${id}]`
const doneFor = (id: string) => `counted for [${id}]`
const nextFor = (id: string) => `and now [${id}]`
const nextDoneFor = (id: string) => `next for [${id}]`
const callIdFor = (id: string) => `toolu_${id.replace(/[^a-zA-Z0-9]/g, "_")}`
const counterFile = (id: string) => `ran-${id}.txt`

// Each conversation: a Bash call appending a line to its counter file, then a text once the
// call's result (or refusal) is back.
const rules = (ids: ReadonlyArray<string>, options: { readonly slow?: boolean } = {}): Array<ScriptedModel.Rule> =>
  ids.flatMap((id) => [
    {
      match: (r: ScriptedModel.RecordedRequest) => ScriptedModel.lastUserText(r).includes(nextFor(id)),
      reply: ScriptedModel.text(nextDoneFor(id)),
      times: Infinity
    },
    {
      match: (r: ScriptedModel.RecordedRequest) =>
        JSON.stringify(r.messages).includes(promptFor(id)) && ScriptedModel.toolResultCount(r) === 0,
      reply: ScriptedModel.toolUse(
        "Bash",
        { command: `echo ran >> ${counterFile(id)}`, description: "count" },
        { id: callIdFor(id) }
      ),
      times: Infinity
    },
    {
      match: (r: ScriptedModel.RecordedRequest) =>
        JSON.stringify(r.messages).includes(promptFor(id)) && ScriptedModel.toolResultCount(r) === 1,
      // Slow (about 4 s), for a kill to land between the command and the turn's end.
      reply: options.slow === true
        ? ScriptedModel.slowText(doneFor(id).padEnd(160, "~"), { chunkSize: 4, delayMs: 100 })
        : ScriptedModel.text(doneFor(id)),
      times: Infinity
    }
  ])

const lines = (cwd: string, id: string): number => {
  const file = path.join(cwd, counterFile(id))
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).length : 0
}

const resultTexts = (messages: ReadonlyArray<Message.Message>) =>
  messages.filter(Message.isResult).map((m) => ("result" in m ? m.result : m.subtype))

// The tool results the model was sent for a conversation's call, in the request that finished it.
const seenResults = (requests: ReadonlyArray<ScriptedModel.RecordedRequest>, id: string) => {
  const last = requests.filter((r) =>
    JSON.stringify(r.messages).includes(promptFor(id)) && ScriptedModel.toolResultCount(r) === 1
  ).at(-1)
  return last === undefined ? [] : ScriptedModel.toolResults(last).filter((r) => r.tool_use_id === callIdFor(id))
}

const collect = <E, R>(stream: Stream.Stream<Message.Message, E, R>) =>
  stream.pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))

// The approval store the runners share, read directly.
const approvalStore = (url: string, prefix: string) =>
  Effect.flatMap(
    Layer.build(pgLayer(url)),
    (context) => ApprovalStores.makeSql(Context.get(context, SqlClient.SqlClient), { tablePrefix: prefix })
  ).pipe(Effect.orDie)

// Two runners on one database, each with a CLI home of its own, one working directory, Bash
// decided by the client.
const twoRunners = (model: ScriptedModel.ScriptedModelShape, url: string, prefix: string) =>
  Effect.gen(function*() {
    const forA = yield* model.options()
    const forB = yield* model.options()
    const cwd = forA.cwd
    const common = {
      DATABASE_URL: url,
      CLUSTER_PREFIX: prefix,
      CLUSTER_TIMINGS: "test",
      AGENT_CWD: cwd,
      AGENT_ASK_CLIENT: "Bash"
    }
    const envA = { ...forA.env, ...common }
    const a = yield* startRunner({ env: envA })
    const b = yield* startRunner({ env: { ...forB.env, ...common } })
    return { a, b, cwd, envA, forA, forB }
  })

// The deferring turn: its reply says it awaits approval, then ends with the deferred call.
const deferTurn = (id: string) =>
  Effect.gen(function*() {
    const reply = yield* collect(AgentEntity.send(id, promptFor(id)))
    const awaiting = reply.flatMap((m) => Option.toArray(Approvals.awaitingApproval(m)))
    expect(awaiting.map((a) => [a.toolUseId, a.toolName, a.state])).toEqual([[callIdFor(id), "Bash", "pending"]])
    const result = reply.find(Message.isResult)
    expect(result?.terminal_reason).toBe("tool_deferred")
    return awaiting[0]!
  })

describe("cluster on PostgreSQL: tool calls waiting for a person survive their runner", () => {
  it.scopedLive("approved while the owning runner is replaced: the new owner finishes the turn, the tool runs once", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make(rules(candidates))
      const prefix = `approvals_${Date.now().toString(36)}`
      const { a, b, cwd, envA, forA, forB } = yield* twoRunners(model, url, prefix)
      const { client, where } = yield* spreadClient({ prefix, url, candidates })
      const id = candidates.find((_, i) => where[i] === a.address)!
      const store = yield* approvalStore(url, prefix)
      const conversation = (yield* Effect.provide(AgentEntity.AgentEntity.client, client))(id)

      const approval = yield* Effect.provide(deferTurn(id), client)
      expect(lines(cwd, id)).toBe(0)
      // Pending in the store, and listed by the conversation's runner from there.
      expect((yield* store.listPending({ projectKey: approval.projectKey })).map((p) => p.id)).toEqual([approval.id])
      const status = yield* conversation.Status()
      expect(status.pendingPermissions.map((p) => [p.toolUseId, p.approvalId])).toEqual([[callIdFor(id), approval.id]])
      // No other turn runs meanwhile.
      const early = yield* Effect.flip(Effect.provide(collect(AgentEntity.send(id, nextFor(id))), client))
      expect(early._tag === "AwaitingApprovalError" ? early.toolUseIds : early._tag).toEqual([callIdFor(id)])

      // The owner stops while the client decides and asks for the rest of the turn. The answer is
      // volatile: one that reaches no runner (A stopping, its shards not yet taken) is sent again;
      // one whose reply was lost after the store recorded it is refused as decided, by this client.
      const decide = conversation.AnswerPermission({ toolUseId: callIdFor(id), result: Permission.allow() }).pipe(
        Effect.catchTag("ApprovalAlreadyDecided", (e) => Effect.succeed(e.approval.state === "approved")),
        Effect.retry({
          schedule: Schedule.spaced("200 millis").pipe(Schedule.upTo("30 seconds")),
          while: (e) => e._tag !== "ApprovalStoreError"
        })
      )
      const stopping = yield* Effect.fork(a.stop)
      const answered = yield* decide
      const rest = yield* collect(conversation.Continue({ toolUseId: callIdFor(id) }))
      yield* Fiber.join(stopping)

      expect(answered).toBe(true)
      expect(resultTexts(rest)).toEqual([doneFor(id)])
      // The new owner, B, finished it.
      expect(b.output()).toContain("AgentEntity: continuing a decided call")
      // Exactly once, and the model saw the command's (empty) output, not an error.
      expect(lines(cwd, id)).toBe(1)
      const seen = seenResults(yield* model.mainRequests, id)
      expect(seen).toHaveLength(1)
      expect(seen[0]?.is_error ?? false).toBe(false)
      expect(Option.map(yield* store.get(approval.id), (a) => a.state)).toEqual(Option.some("approved"))
      expect(yield* store.listPending({ projectKey: approval.projectKey })).toEqual([])
      expect((yield* conversation.Status()).pendingPermissions).toEqual([])

      // A restarted A takes shards again; the decision stays taken whoever owns the conversation.
      const a2 = yield* startRunner({ env: envA })
      const again = yield* Effect.flip(
        conversation.AnswerPermission({ toolUseId: callIdFor(id), result: Permission.deny("too late") })
      )
      expect(again._tag === "ApprovalAlreadyDecided" ? again.approval.state : again._tag).toBe("approved")
      // Sent again, the continuation is the same request, completed: nothing runs again.
      const replayed = yield* collect(conversation.Continue({ toolUseId: callIdFor(id) }))
      expect(resultTexts(replayed)).toEqual([])
      expect(lines(cwd, id)).toBe(1)
      // The conversation goes on: the next turn is answered on its own, and its request has the
      // approved turn once.
      const next = yield* Effect.provide(collect(AgentEntity.send(id, nextFor(id))), client)
      expect(resultTexts(next)).toEqual([nextDoneFor(id)])
      const nextRequest = (yield* model.mainRequests).filter((r) => ScriptedModel.lastUserText(r).includes(nextFor(id)))
        .at(-1)
      expect(JSON.stringify(nextRequest?.messages).split(doneFor(id)).length - 1).toBe(1)
      yield* a2.stop
      yield* b.stop
      expect(claudePids(forA.env.HOME)).toEqual([])
      expect(claudePids(forB.env.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("killed after the approved command ran: the next owner does not run it again, the conversation goes on", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const ids = candidates.map((id) => `killed-${id}`)
      const model = yield* ScriptedModel.make(rules(ids, { slow: true }))
      const prefix = `approvals_kill_${Date.now().toString(36)}`
      const { a, b, cwd, forA, forB } = yield* twoRunners(model, url, prefix)
      const { client, where } = yield* spreadClient({ prefix, url, candidates: ids })
      const id = ids.find((_, i) => where[i] === a.address)!
      const conversation = (yield* Effect.provide(AgentEntity.AgentEntity.client, client))(id)
      yield* Effect.provide(deferTurn(id), client)

      expect(yield* conversation.AnswerPermission({ toolUseId: callIdFor(id), result: Permission.allow() })).toBe(true)
      const rest = yield* Effect.fork(collect(conversation.Continue({ toolUseId: callIdFor(id) })))
      // The command ran (the model has its result) and the session store has its result.
      yield* model.waitForRequests(
        1,
        (r) => JSON.stringify(r.messages).includes(promptFor(id)) && ScriptedModel.toolResultCount(r) === 1
      )
      const ref = yield* AgentEntity.sessionRefFor(id, { cwd })
      const storedResult = Effect.gen(function*() {
        const store = yield* SessionStore
        const entries = Option.getOrElse(yield* store.load(ref), () => [])
        return JSON.stringify(entries).includes(`"tool_use_id":"${callIdFor(id)}"`)
      }).pipe(
        Effect.provide(AgentCluster.layerSessionStore({ tablePrefix: prefix })),
        Effect.provide(pgLayer(url))
      )
      yield* eventually(Effect.filterOrFail(storedResult, (stored) => stored), {
        within: "10 seconds",
        describe: () => "the command's result never reached the session store"
      })
      expect(lines(cwd, id)).toBe(1)
      yield* a.kill9

      // The next owner finds the command's result in the store: it refuses to continue the call
      // (the command would run a second time), and the conversation goes on from the stored result.
      const cut = yield* Effect.flip(Fiber.join(rest))
      expect(cut._tag).toBe("ApprovalAlreadyApplied")
      expect(lines(cwd, id)).toBe(1)
      const next = yield* Effect.provide(collect(AgentEntity.send(id, nextFor(id))), client)
      expect(resultTexts(next)).toEqual([nextDoneFor(id)])
      expect(lines(cwd, id)).toBe(1)
      const nextRequest = (yield* model.mainRequests).filter((r) => ScriptedModel.lastUserText(r).includes(nextFor(id)))
        .at(-1)
      // The one result of the one run, in the conversation the model is sent.
      expect(nextRequest === undefined ? -1 : ScriptedModel.toolResultCount(nextRequest)).toBe(1)
      expect(JSON.stringify(nextRequest?.messages).split(`"tool_use_id":"${callIdFor(id)}"`).length - 1).toBe(1)
      yield* b.stop
      yield* eventually(Effect.filterOrFail(Effect.sync(() => claudePids(forA.env.HOME)), (p) => p.length === 0), {
        within: "10 seconds",
        describe: () => "a CLI of the killed runner is still alive"
      })
      expect(claudePids(forB.env.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("deny and expiry through the cluster: nothing runs, the model is told why", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const model = yield* ScriptedModel.make(rules(["denied", "expired"]))
      const options = yield* model.options()
      const cwd = options.cwd
      const runner = (prefix: string, extra: Record<string, string>) =>
        Effect.gen(function*() {
          const process = yield* startRunner({
            env: {
              ...options.env,
              DATABASE_URL: url,
              CLUSTER_PREFIX: prefix,
              CLUSTER_TIMINGS: "test",
              AGENT_CWD: cwd,
              AGENT_ASK_CLIENT: "Bash",
              ...extra
            }
          })
          const client = yield* Layer.build(
            clientLayer({ prefix, shardingConfig: testTimings }).pipe(Layer.provide(pgLayer(url)))
          )
          return { process, client, store: yield* approvalStore(url, prefix) }
        })

      // Deny.
      const denying = yield* runner(`approvals_deny_${Date.now().toString(36)}`, {})
      const denied = yield* Effect.provide(
        Effect.gen(function*() {
          yield* deferTurn("denied")
          return yield* collect(AgentEntity.answer("denied", callIdFor("denied"), Permission.deny("not today")))
        }),
        denying.client
      )
      expect(resultTexts(denied)).toEqual([doneFor("denied")])
      expect(lines(cwd, "denied")).toBe(0)
      const refused = seenResults(yield* model.mainRequests, "denied")
      expect(refused.map((r) => r.is_error)).toEqual([true])
      expect(JSON.stringify(refused[0]?.content)).toContain("not today")
      yield* denying.process.stop

      // Expiry: the approval is past its deadline as soon as it is recorded.
      const expiring = yield* runner(`approvals_expiry_${Date.now().toString(36)}`, {
        AGENT_PERMISSION_TIMEOUT: "1 millis"
      })
      const expired = yield* Effect.provide(
        Effect.gen(function*() {
          const approval = yield* deferTurn("expired")
          const late = yield* Effect.flip(
            AgentEntity.answer("expired", callIdFor("expired"), Permission.allow()).pipe(
              Stream.runDrain
            )
          )
          expect(late._tag === "ApprovalAlreadyDecided" ? late.approval.state : late._tag).toBe("expired")
          expect(Option.map(yield* expiring.store.get(approval.id), (a) => a.state)).toEqual(Option.some("expired"))
          return yield* collect(AgentEntity.continueTurn("expired", callIdFor("expired")))
        }),
        expiring.client
      )
      expect(resultTexts(expired)).toEqual([doneFor("expired")])
      expect(lines(cwd, "expired")).toBe(0)
      const told = seenResults(yield* model.mainRequests, "expired")
      expect(told.map((r) => r.is_error)).toEqual([true])
      expect(JSON.stringify(told[0]?.content)).toContain("expired")
      yield* expiring.process.stop
      expect(claudePids(options.env.HOME)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
