// Sessions.fromStore: the recorded sessions of test/fixtures/sessions imported into each store
// through SessionStores.importLocalSession give the same answers as the local functions give for
// the same files (listing, info, messages, sub-agents, rename, tag, fork, delete).
import { FileSystem, Path } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Logger, Option, Predicate, type Scope, Stream, TestClock } from "effect"
import { fileURLToPath } from "node:url"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import { SessionStore } from "../../../src/services/SessionStore.js"
import * as Sessions from "../../../src/Sessions.js"

const FIXTURE = fileURLToPath(new URL("../../fixtures/sessions", import.meta.url))
const PROJECT = "/home/user/project"
const KEY = "-home-user-project"

const PLAIN = "b41a2cec-08c4-4a44-9644-78f8fb84711e"
const WITH_AGENT = "5d8605df-72f0-4819-8c39-8e65234b6432"
const AGENT = "a79dbecaa212a2d96"
const COMPACTED = "6af5ae5d-ef5b-4820-beef-1161cae8c9a2"
const PARALLEL = "d02e801d-cb3a-4448-89b1-cbd231f849fe"
const MISSING = "00000000-0000-4000-8000-000000000000"

// Oldest first: imported in this order, the store's clock orders them as the files' mtimes do.
const MTIMES: ReadonlyArray<readonly [string, number]> = [
  [WITH_AGENT, Date.parse("2026-11-23T12:00:00Z")],
  [COMPACTED, Date.parse("2026-11-23T13:00:00Z")],
  [PLAIN, Date.parse("2026-11-23T14:00:00Z")],
  [PARALLEL, Date.parse("2026-11-23T15:00:00Z")]
]
const NOW = Date.parse("2026-11-24T00:00:00Z")

const stores: ReadonlyArray<readonly [string, Layer.Layer<SessionStore, unknown>]> = [
  ["memory", SessionStores.layerMemory],
  [
    "files",
    Layer.unwrapScoped(
      Effect.map(
        Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "sessions-store-" })),
        (dir) => SessionStores.layerFiles(dir)
      )
    ).pipe(Layer.provide(NodeContext.layer))
  ],
  [
    "SQLite",
    Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => SessionStores.layerSql(sql))).pipe(
      Layer.provide(SqliteClient.layer({ filename: ":memory:" }))
    )
  ]
]

// A copy of the fixtures, every session imported into the store; `local` and `stored` address the
// same sessions.
const setup = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const configDir = yield* fs.makeTempDirectoryScoped({ prefix: "sessions-store-local-" })
  yield* fs.copy(FIXTURE, configDir)
  const project = path.join(configDir, "projects", KEY)
  yield* TestClock.setTime(NOW)
  const store = yield* SessionStore
  for (const [id, mtime] of MTIMES) {
    yield* fs.utimes(path.join(project, `${id}.jsonl`), new Date(mtime), new Date(mtime))
    expect(yield* SessionStores.importLocalSession(store, id, { configDir })).toEqual({
      projectKey: KEY,
      sessionId: id
    })
  }
  return { fs, path, project, local: { configDir, dir: PROJECT }, stored: Sessions.fromStore(store) }
})

// Where they differ by design: a file's mtime against the store's clock.
const withoutTime = (info: Sessions.SessionInfo) => {
  const { lastModified: _, ...rest } = info
  return rest
}

const textOf = (message: unknown): string => {
  const content = Predicate.isRecord(message) ? message.content : undefined
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((b) => Predicate.isRecord(b) ? String(b.text ?? b.name ?? b.type) : "").join("|")
}

for (const [name, layer] of stores) {
  describe(`Sessions.fromStore: ${name}`, () => {
    const run = <A, E>(self: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path | SessionStore | Scope.Scope>) =>
      self.pipe(Effect.provide(layer), Effect.provide(NodeContext.layer))

    it.scoped("listSessions and getSessionInfo: the local answers, newest first", () =>
      run(Effect.gen(function*() {
        const { local, stored } = yield* setup
        const want = yield* Sessions.listSessions(local)
        const got = yield* stored.listSessions({ dir: PROJECT })
        expect(got.map((s) => s.sessionId)).toEqual([PARALLEL, PLAIN, COMPACTED, WITH_AGENT])
        expect(got.map(withoutTime)).toEqual(want.map(withoutTime))
        expect(got.map((s) => s.summary)).toEqual(["write two files", "hello first", "after compact", "use agent now"])
        // The store's clock orders them; both answers page the same way.
        expect(got.map((s) => s.lastModified)).toEqual([...got.map((s) => s.lastModified)].sort((a, b) => b - a))
        const page = yield* stored.listSessions({ projectKey: KEY, offset: 1, limit: 2 })
        expect(page.map(withoutTime)).toEqual(
          (yield* Sessions.listSessions({ ...local, offset: 1, limit: 2 })).map(withoutTime)
        )
        expect(yield* stored.listSessions({ projectKey: KEY, includeProgrammatic: false })).toEqual(
          yield* Sessions.listSessions({ ...local, includeProgrammatic: false })
        )
        expect(yield* stored.listSessions({ dir: "/home/user/elsewhere" })).toEqual([])
        for (const [id] of MTIMES) {
          const info = yield* stored.getSessionInfo(id, { dir: PROJECT })
          expect(withoutTime(info)).toEqual(withoutTime(yield* Sessions.getSessionInfo(id, local)))
          expect(info.lastModified).toBe(got.find((s) => s.sessionId === id)?.lastModified)
        }
      })))

    it.scoped("getSessionMessages, transcript, listSubagents, getSubagentMessages: the local answers", () =>
      run(Effect.gen(function*() {
        const { local, stored } = yield* setup
        const where = { projectKey: KEY }
        for (const [id] of MTIMES) {
          for (const options of [{}, { includeSystemMessages: true }, { offset: 1, limit: 3 }]) {
            const want = yield* Sessions.getSessionMessages(id, { ...local, ...options })
            expect(want.length).toBeGreaterThan(0)
            expect(yield* stored.getSessionMessages(id, { ...where, ...options })).toEqual(want)
          }
          const entries = <E, R>(s: Stream.Stream<Sessions.TranscriptEntry, E, R>) =>
            Effect.map(Stream.runCollect(s), Chunk.toReadonlyArray)
          expect(yield* entries(stored.transcript(id, where))).toEqual(yield* entries(Sessions.transcript(id, local)))
          expect(yield* stored.listSubagents(id, where)).toEqual(yield* Sessions.listSubagents(id, local))
        }
        expect(yield* stored.listSubagents(WITH_AGENT, where)).toEqual([AGENT])
        const agentMessages = yield* stored.getSubagentMessages(WITH_AGENT, AGENT, where)
        expect(agentMessages).toEqual(yield* Sessions.getSubagentMessages(WITH_AGENT, AGENT, local))
        // The parent tool call comes from the stored agent_metadata entry, as locally from the .meta.json.
        expect(agentMessages[0]?.parent_tool_use_id).toMatch(/^toolu_/)
        expect(yield* stored.getSubagentMessages(WITH_AGENT, AGENT, { ...where, offset: 1, limit: 1 })).toEqual(
          yield* Sessions.getSubagentMessages(WITH_AGENT, AGENT, { ...local, offset: 1, limit: 1 })
        )
      })))

    it.scoped("renameSession and tagSession append the local entries; both listings then agree", () =>
      run(Effect.gen(function*() {
        const { local, stored } = yield* setup
        const where = { projectKey: KEY }
        yield* Sessions.renameSession(PLAIN, "  Renamed  ", local)
        yield* stored.renameSession(PLAIN, "  Renamed  ", where)
        yield* Sessions.tagSession(COMPACTED, "review", local)
        yield* stored.tagSession(COMPACTED, "review", where)
        const last = (id: string) => Effect.map(Stream.runLast(stored.transcript(id, where)), Option.getOrUndefined)
        expect(yield* last(PLAIN)).toEqual({ type: "custom-title", customTitle: "Renamed", sessionId: PLAIN })
        expect(yield* last(COMPACTED)).toEqual({ type: "tag", tag: "review", sessionId: COMPACTED })
        const info = yield* stored.getSessionInfo(PLAIN, where)
        expect(info).toMatchObject({ customTitle: "Renamed", summary: "Renamed" })
        expect(withoutTime(info)).toEqual(withoutTime(yield* Sessions.getSessionInfo(PLAIN, local)))
        expect(withoutTime(yield* stored.getSessionInfo(COMPACTED, where))).toEqual(
          withoutTime(yield* Sessions.getSessionInfo(COMPACTED, local))
        )
        yield* stored.tagSession(COMPACTED, null, where)
        expect((yield* stored.getSessionInfo(COMPACTED, where)).tag).toBeUndefined()
        // The same refusals as the local functions, and nothing appended for a session not stored.
        expect(yield* Effect.flip(stored.renameSession(PLAIN, "   ", where))).toMatchObject({
          _tag: "OptionsError",
          field: "title"
        })
        expect(yield* Effect.flip(stored.tagSession(MISSING, "x", where))).toMatchObject({
          _tag: "SessionNotFoundError",
          sessionId: MISSING
        })
        expect(yield* stored.findSessionInfo(MISSING, where)).toEqual(Option.none())
      })))

    it.scoped("forkSession: the fork is stored with fresh uuids and its own session id; it reads as the local fork", () =>
      run(Effect.gen(function*() {
        const { local, stored } = yield* setup
        const where = { projectKey: KEY }
        const upTo = (yield* Sessions.getSessionMessages(PLAIN, local))[3]?.uuid
        const localFork = yield* Sessions.forkSession(PLAIN, { ...local, upToMessageId: upTo })
        const storedFork = yield* stored.forkSession(PLAIN, { ...where, upToMessageId: upTo })
        expect(storedFork.sessionId).not.toBe(PLAIN)
        const want = yield* Sessions.getSessionMessages(localFork.sessionId, local)
        const got = yield* stored.getSessionMessages(storedFork.sessionId, where)
        expect(got.map((m) => `${m.type}: ${textOf(m.message)}`)).toEqual(
          want.map((m) => `${m.type}: ${textOf(m.message)}`)
        )
        expect(got.length).toBe(4)
        expect(got.every((m) => m.session_id === storedFork.sessionId)).toBe(true)
        const source = new Set((yield* stored.getSessionMessages(PLAIN, where)).map((m) => m.uuid))
        expect(got.some((m) => source.has(m.uuid))).toBe(false)
        const forkInfo = yield* stored.getSessionInfo(storedFork.sessionId, where)
        expect(forkInfo.customTitle).toBe("hello first (fork)")
        const { sessionId: __, ...localInfo } = withoutTime(
          yield* Sessions.getSessionInfo(localFork.sessionId, local)
        )
        expect(withoutTime(forkInfo)).toEqual({ ...localInfo, sessionId: storedFork.sessionId })
        // Each entry names its original.
        const entries = yield* Effect.map(
          Stream.runCollect(stored.transcript(storedFork.sessionId, where)),
          Chunk.toArray
        )
        expect(
          entries.filter((e) => e.type === "user" || e.type === "assistant").every((e) => {
            const from = e.forkedFrom
            return Predicate.isRecord(from) && from.sessionId === PLAIN
          })
        ).toBe(true)
        expect(yield* Effect.flip(stored.forkSession(PLAIN, { ...where, upToMessageId: "nope" }))).toMatchObject({
          _tag: "OptionsError",
          field: "upToMessageId"
        })
      })))

    it.scoped("a transcript over 64 KiB is described from its two ends, as the local listing describes the file", () =>
      run(Effect.gen(function*() {
        const { fs, local, path, project, stored } = yield* setup
        const file = path.join(project, `${PLAIN}.jsonl`)
        const lines = (yield* fs.readFileString(file)).split("\n").filter((l) => l.length > 0)
        const padding = (n: number) => JSON.stringify({ type: "file-history-snapshot", data: "x".repeat(n) })
        const grown = [
          ...lines.slice(0, 4),
          padding(100_000),
          JSON.stringify({ type: "custom-title", customTitle: "in the middle", sessionId: PLAIN }),
          padding(100_000),
          ...lines.slice(4),
          JSON.stringify({ type: "tag", tag: "at the end", sessionId: PLAIN })
        ]
        yield* fs.writeFileString(file, grown.join("\n") + "\n")
        const store = yield* SessionStore
        yield* store.delete({ projectKey: KEY, sessionId: PLAIN })
        yield* SessionStores.importLocalSession(store, PLAIN, local)
        const want = yield* Sessions.getSessionInfo(PLAIN, local)
        expect(want).toMatchObject({ tag: "at the end", summary: "hello first" })
        expect(want.customTitle).toBeUndefined()
        expect(withoutTime(yield* stored.getSessionInfo(PLAIN, { projectKey: KEY }))).toEqual(withoutTime(want))
      })))

    it.scoped("a session continued in another is left out of the listing, as locally; getSessionInfo still answers", () =>
      run(Effect.gen(function*() {
        const { stored } = yield* setup
        const store = yield* SessionStore
        const marker = { type: "continued-in", continuedInSessionId: PARALLEL, sessionId: PLAIN }
        yield* store.append({ projectKey: KEY, sessionId: PLAIN }, [marker])
        expect((yield* stored.listSessions({ projectKey: KEY })).map((s) => s.sessionId)).not.toContain(PLAIN)
        expect((yield* stored.getSessionInfo(PLAIN, { projectKey: KEY })).sessionId).toBe(PLAIN)
      })))

    it.scoped("a stored entry that is not a transcript entry is skipped with a warning; the rest stands", () =>
      run(Effect.gen(function*() {
        const { local, stored } = yield* setup
        const store = yield* SessionStore
        yield* store.append({ projectKey: KEY, sessionId: PLAIN }, [{ type: "user", uuid: "bad", isSidechain: "yes" }])
        const logs: Array<string> = []
        const messages = yield* stored.getSessionMessages(PLAIN, { projectKey: KEY }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message)))))
        )
        expect(messages).toEqual(yield* Sessions.getSessionMessages(PLAIN, local))
        expect(logs.filter((l) => l.includes("corrupt stored transcript entry")).length).toBe(1)
      })))

    it.scoped("deleteSession removes the session and its sub-agents; typed failures as the local functions'", () =>
      run(Effect.gen(function*() {
        const { stored } = yield* setup
        const where = { projectKey: KEY }
        yield* stored.deleteSession(WITH_AGENT, where)
        expect((yield* stored.listSessions(where)).map((s) => s.sessionId)).toEqual([PARALLEL, PLAIN, COMPACTED])
        const store = yield* SessionStore
        expect(yield* store.listSubkeys({ projectKey: KEY, sessionId: WITH_AGENT })).toEqual([])
        for (
          const failed of [
            stored.getSessionInfo(WITH_AGENT, where),
            stored.getSessionMessages(WITH_AGENT, where),
            stored.listSubagents(WITH_AGENT, where),
            stored.deleteSession(WITH_AGENT, where),
            stored.forkSession(WITH_AGENT, where)
          ]
        ) {
          expect(yield* Effect.flip(failed)).toMatchObject({ _tag: "SessionNotFoundError", sessionId: WITH_AGENT })
        }
        expect(yield* Effect.flip(stored.getSubagentMessages(PLAIN, AGENT, where))).toMatchObject({
          _tag: "SessionNotFoundError",
          agentId: AGENT
        })
        expect(yield* Effect.flip(stored.getSessionInfo("../etc/passwd", where))).toMatchObject({
          _tag: "OptionsError",
          field: "sessionId"
        })
        expect(yield* Effect.flip(stored.listSessions({ projectKey: KEY, limit: Number.NaN }))).toMatchObject({
          _tag: "OptionsError",
          field: "limit"
        })
      })))
  })
}
