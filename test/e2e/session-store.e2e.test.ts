// A conversation kept in a SessionStore (SQLite) on the real claude CLI against ScriptedModel: the
// transcript is mirrored as the CLI writes it (`--session-mirror`), the local copy is deleted, and
// a new session resumes from the store alone. See docs/protocol-session-mirror.md.
import { NodeContext } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Predicate, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionStores from "../../src/layers/SessionStores.js"
import * as Message from "../../src/schema/Message.js"
import type { Options } from "../../src/schema/Options.js"
import { SessionStore, type SessionStoreShape } from "../../src/services/SessionStore.js"
import * as Sessions from "../../src/Sessions.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))
const StoreLive = Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => SessionStores.layerSql(sql))).pipe(
  Layer.provide(SqliteClient.layer({ filename: ":memory:" }))
)

// The texts of a request's messages, in order: string content or text blocks.
const texts = (messages: ReadonlyArray<unknown>): Array<string> =>
  messages.flatMap((m) => {
    const content = Predicate.isRecord(m) ? m.content : undefined
    if (typeof content === "string") return [content]
    if (!Array.isArray(content)) return []
    return content.flatMap((b) =>
      Predicate.isRecord(b) && b.type === "text" && typeof b.text === "string" ? [b.text] : []
    )
  })

const countOf = (all: ReadonlyArray<string>, needle: string) => all.filter((t) => t.includes(needle)).length

// One session: every prompt in turn; the session id and every message.
const run = (options: Options, prompts: ReadonlyArray<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(options)
    const seen: Array<Message.Message> = []
    for (const prompt of prompts) {
      yield* session.send(prompt)
      yield* session.receiveResponse.pipe(Stream.runForEach((m) => Effect.sync(() => void seen.push(m))))
    }
    return { sessionId: yield* session.sessionId, messages: seen }
  }))

const projectsOf = (configDir: string | undefined) => path.join(configDir ?? "", "projects")

describe("e2e: a conversation in a SessionStore on the real claude CLI", () => {
  it.scopedLive(
    "mirrored as it runs, resumed from the store alone: the model sees the earlier turns exactly once",
    () =>
      Effect.gen(function*() {
        const store: SessionStoreShape = yield* SessionStore
        // The second turn delegates to a sub-agent, whose transcript is stored under its subpath.
        const model = yield* ScriptedModel.make([
          { match: (r) => ScriptedModel.lastUserText(r).includes("sub task"), reply: ScriptedModel.text("sub answer") },
          {
            match: (r) => ScriptedModel.lastUserText(r).includes("first question"),
            reply: ScriptedModel.text("first answer")
          },
          {
            match: (r) => ScriptedModel.lastUserText(r).includes("after resume"),
            reply: ScriptedModel.text("resumed answer")
          },
          {
            match: (r) =>
              ScriptedModel.lastUserText(r).includes("second question") && ScriptedModel.toolResultCount(r) === 0,
            reply: ScriptedModel.toolUse("Task", {
              description: "sub",
              prompt: "sub task please",
              subagent_type: "general-purpose"
            })
          },
          { match: (r) => ScriptedModel.toolResultCount(r) === 1, reply: ScriptedModel.text("second answer") }
        ])
        const options = yield* model.options()
        const first = yield* run({ ...options, sessionStore: store }, ["first question", "second question"])
        // The frames are the store's, never the user's messages.
        expect(first.messages.some((m) => m.type === "unknown")).toBe(false)
        expect(first.messages.filter(Message.isResult).length).toBe(2)

        const projects = projectsOf(options.env.CLAUDE_CONFIG_DIR)
        const projectKey = fs.readdirSync(projects).find((d) =>
          fs.existsSync(path.join(projects, d, `${first.sessionId}.jsonl`))
        ) ?? ""
        const local = path.join(projects, projectKey, `${first.sessionId}.jsonl`)
        expect((yield* store.listSessions(projectKey)).map((s) => s.sessionId)).toEqual([first.sessionId])
        const stored = Option.getOrElse(yield* store.load({ projectKey, sessionId: first.sessionId }), () => [])
        // The conversation as the CLI wrote it locally: every entry with a uuid, in order and
        // deep-equal. (Its bookkeeping lines without one are not all mirrored, see the doc.)
        const written: Array<unknown> = fs.readFileSync(local, "utf8").split("\n").filter((l) => l.length > 0)
          .map((l) => JSON.parse(l))
        const withUuid = (entries: ReadonlyArray<unknown>) =>
          entries.filter((e) => Predicate.isRecord(e) && typeof e.uuid === "string")
        expect(withUuid(stored)).toEqual(withUuid(written))
        expect(withUuid(stored).length).toBeGreaterThanOrEqual(4)
        const [subpath, ...others] = yield* store.listSubkeys({ projectKey, sessionId: first.sessionId })
        expect(others).toEqual([])
        expect(subpath).toMatch(/^subagents\/agent-[0-9a-f]+$/)
        const agentStored = Option.getOrElse(
          yield* store.load({ projectKey, sessionId: first.sessionId, subpath }),
          () => []
        )
        const agentWritten: Array<unknown> = fs.readFileSync(
          path.join(projects, projectKey, first.sessionId, `${subpath}.jsonl`),
          "utf8"
        )
          .split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
        expect(withUuid(agentStored)).toEqual(withUuid(agentWritten))
        expect(agentStored.filter((e) => e.type === "agent_metadata").length).toBeGreaterThanOrEqual(1)
        const [summary] = yield* store.listSummaries(projectKey)
        expect(summary).toMatchObject({ sessionId: first.sessionId, firstPrompt: "first question" })

        // Sessions.fromStore reads the mirrored session as Sessions reads the CLI's local files.
        const sessions = Sessions.fromStore(store)
        const where = { configDir: options.env.CLAUDE_CONFIG_DIR }
        const agentId = subpath?.slice("subagents/agent-".length) ?? ""
        const [fromStore, fromFiles] = yield* Effect.all([
          Effect.all([
            sessions.getSessionMessages(first.sessionId, { projectKey }),
            sessions.getSubagentMessages(first.sessionId, agentId, { projectKey }),
            sessions.getSessionInfo(first.sessionId, { projectKey })
          ]),
          Effect.all([
            Sessions.getSessionMessages(first.sessionId, where),
            Sessions.getSubagentMessages(first.sessionId, agentId, where),
            Sessions.getSessionInfo(first.sessionId, where)
          ]).pipe(Effect.provide(NodeContext.layer))
        ])
        expect(fromStore[0].length).toBeGreaterThanOrEqual(4)
        expect(fromStore.slice(0, 2)).toEqual(fromFiles.slice(0, 2))
        // Not the size: the local file also has lines the CLI does not mirror (api-request records).
        // Nor, for a session whose CLI has exited, the summary: its last `last-prompt` line is
        // written at exit, locally only, so the store's listing shows the turn before's prompt.
        const { fileSize: _s, lastModified: _m, summary: storedSummary, ...storedInfo } = fromStore[2]
        const { fileSize: _fs, lastModified: _fm, summary: localSummary, ...localInfo } = fromFiles[2]
        expect(storedInfo).toEqual(localInfo)
        expect([storedSummary, localSummary]).toEqual(["first question", "second question"])

        // The local copy is gone: only the store has the conversation.
        fs.rmSync(projects, { recursive: true, force: true })
        const resumed = yield* run({ ...options, sessionStore: store, resume: first.sessionId }, ["after resume"])
        expect(resumed.sessionId).toBe(first.sessionId)
        const request = (yield* model.mainRequests).find((r) => ScriptedModel.lastUserText(r).includes("after resume"))
        const sent = texts(request?.messages ?? [])
        for (const earlier of ["first question", "first answer", "second question", "second answer"]) {
          expect(countOf(sent, earlier)).toBe(1)
        }
        expect(resumed.messages.filter(Message.isResult).map((r) => r.subtype === "success" && r.result)).toEqual([
          "resumed answer"
        ])
        // The resumed turn is appended after the earlier ones, and nothing is stored twice.
        const after = Option.getOrElse(yield* store.load({ projectKey, sessionId: first.sessionId }), () => [])
        expect(after.slice(0, stored.length)).toEqual(stored)
        const uuids = after.flatMap((e) => typeof e.uuid === "string" ? [e.uuid] : [])
        expect(new Set(uuids).size).toBe(uuids.length)
        expect(
          texts(after.flatMap((e) => Predicate.isRecord(e.message) ? [e.message] : [])).filter((t) =>
            t.includes("after resume")
          ).length
        ).toBe(1)
      }).pipe(Effect.provide(Layer.merge(AgentLive, StoreLive))),
    { timeout: 180_000 }
  )

  it.scopedLive(
    "a resume target the store does not have: SessionNotFoundError, or a new conversation by option",
    () =>
      Effect.gen(function*() {
        const store: SessionStoreShape = yield* SessionStore
        const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("fresh start"), times: Infinity }])
        const options = yield* model.options()
        const missing = "0b9a7f3e-2c51-4e8a-9d4f-6a1b2c3d4e5f"
        const refused = yield* Effect.either(run({ ...options, sessionStore: store, resume: missing }, ["hello"]))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("SessionNotFoundError")
        const started = yield* run({ ...options, sessionStore: store, resume: missing, resumeMissing: "new" }, [
          "hello"
        ])
        expect(started.sessionId).not.toBe(missing)
        expect(started.messages.filter(Message.isResult).length).toBe(1)
      }).pipe(Effect.provide(Layer.merge(AgentLive, StoreLive))),
    { timeout: 180_000 }
  )
})
