/**
 * The `Sessions` functions over a `SessionStore` (`Sessions.fromStore`): the store holds the same
 * entries as the CLI's `.jsonl` files, so every answer is computed by the same `Read` and
 * `transcript` functions as the local one; only where the entries come from differs.
 *
 * @internal
 */
import { Chunk, Clock, Effect, Either, Option, Schema, Stream } from "effect"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import { SessionNotFoundError } from "../../SdkError.js"
import type { SessionInfo, StoredSessions, StoreLocation } from "../../Sessions.js"
import type { Entry, SessionRef, SessionStoreError, SessionStoreShape } from "../../services/SessionStore.js"
import * as Issues from "../schema/issues.js"
import * as Guard from "../schema/guard.js"
import * as Args from "./args.js"
import * as Read from "./read.js"
import * as T from "./transcript.js"

const decodeEntry = Guard.lazily(() => Schema.decodeUnknownEither(T.Entry))

// The store's entries as the local reader decodes a file's lines: one that is not a transcript
// entry is logged (with its position) and skipped.
const decoded = (ref: SessionRef & { readonly subpath?: string | undefined }, entries: ReadonlyArray<Entry>) =>
  Effect.suspend(() => {
    const out: Array<T.Entry> = []
    const corrupt: Array<{ index: number; reason: string }> = []
    entries.forEach((entry, index) => {
      const result = decodeEntry(entry)
      if (Either.isRight(result)) out.push(result.right)
      else corrupt.push({ index, reason: Issues.describe(result.left) })
    })
    if (corrupt.length === 0) return Effect.succeed(out)
    return Effect.as(
      Effect.forEach(
        corrupt,
        ({ index, reason }) =>
          Effect.logWarning("effect-claude-agent: skipped a corrupt stored transcript entry").pipe(
            Effect.annotateLogs({ ...ref, index, reason })
          ),
        { discard: true }
      ),
      out
    )
  })

interface Where {
  readonly ref: SessionRef
  /** The project directory (symbolic links resolved) when the caller named one. */
  readonly projectPath: string | undefined
}

// The project's key: `projectKey`, else the CLI's folder name for `dir` (default: this process's
// working directory), as the mirror stores sessions.
const project = (options: StoreLocation) =>
  Effect.gen(function*() {
    if (options.projectKey !== undefined && options.dir === undefined) {
      return { projectKey: options.projectKey, projectPath: undefined }
    }
    const dir = options.dir ?? "."
    const real = yield* Effect.promise(() => Fs.realpath(dir).catch(() => NodePath.resolve(dir)))
    return {
      projectKey: options.projectKey ?? T.projectDirName(real.normalize("NFC")),
      projectPath: options.dir === undefined ? undefined : real
    }
  })

const where = (sessionId: string, options: StoreLocation) =>
  Effect.map(project(options), ({ projectKey, projectPath }): Where => ({
    ref: { projectKey, sessionId },
    projectPath
  }))

const notFound = (w: Where, extra: { readonly agentId?: string } = {}) =>
  new SessionNotFoundError({
    sessionId: w.ref.sessionId,
    ...extra,
    reason: `not in the session store (project ${w.ref.projectKey})`
  })

type Store = SessionStoreShape
type Fn<K extends keyof StoredSessions> = (store: Store) => StoredSessions[K]

// The session's main transcript, decoded; `SessionNotFoundError` when the store has none.
const mainEntries = (store: Store, w: Where) =>
  Effect.flatMap(
    store.load(w.ref),
    (loaded): Effect.Effect<ReadonlyArray<T.Entry>, SessionNotFoundError> =>
      Option.isNone(loaded) || loaded.value.length === 0
        ? Effect.fail(notFound(w))
        : decoded(w.ref, loaded.value)
  )

// When the store last wrote the session; `SessionNotFoundError` when it does not list it.
const mtimeOf = (store: Store, w: Where) =>
  Effect.flatMap(store.listSessions(w.ref.projectKey), (listed) => {
    const found = listed.find((s) => s.sessionId === w.ref.sessionId)
    return found === undefined ? Effect.fail(notFound(w)) : Effect.succeed(found.mtime)
  })

// A session's listing from its entries, as the local functions make it from its file.
const infoOf = (w: Where, lite: T.Lite): Option.Option<SessionInfo> =>
  Option.fromNullable(T.info(w.ref.sessionId, lite, w.projectPath, undefined, undefined))

// A session's line in `listSessions`: none for an SDK-started one when those are left out, and
// none for one continued in another session that holds a conversation.
const listedInfo = (
  store: Store,
  w: Where,
  entries: ReadonlyArray<T.Entry>,
  mtime: number,
  includeProgrammatic: boolean
): Effect.Effect<Option.Option<SessionInfo>, SessionStoreError> =>
  Effect.gen(function*() {
    const lite = Read.liteOf(entries, mtime)
    if (!includeProgrammatic && T.isProgrammatic(lite)) return Option.none()
    const next = T.continuedIn(lite.tail)
    if (next !== undefined) {
      const continued = yield* store.load({ projectKey: w.ref.projectKey, sessionId: next })
      if (Option.isSome(continued) && Read.holdsConversation(continued.value)) return Option.none()
    }
    return infoOf(w, lite)
  })

// The sub-agents stored under a session, in the order the local listing finds their files.
const subkeys = (store: Store, w: Where) =>
  Effect.map(
    store.listSubkeys(w.ref),
    (keys) =>
      keys.flatMap((subpath) => {
        const name = subpath.split("/").at(-1) ?? ""
        return subpath.startsWith("subagents/") && name.startsWith("agent-")
          ? [{ agentId: name.slice(6), subpath }]
          : []
      }).sort((a, b) => a.subpath < b.subpath ? -1 : a.subpath > b.subpath ? 1 : 0)
  )

// Appends one entry to a session the store has.
const appendTo = (store: Store, sessionId: string, options: StoreLocation, entry: Entry) =>
  Effect.gen(function*() {
    const w = yield* where(sessionId, options)
    yield* mtimeOf(store, w)
    yield* store.append(w.ref, [entry])
  })

const listSessions: Fn<"listSessions"> = (store) => (options = {}) =>
  Effect.gen(function*() {
    yield* Args.stored.list(options)
    const { projectKey, projectPath } = yield* project(options)
    const listed = [...(yield* store.listSessions(projectKey))].sort((a, b) =>
      a.mtime !== b.mtime ? b.mtime - a.mtime : a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0
    )
    const includeProgrammatic = options.includeProgrammatic ?? true
    const infos = Stream.fromIterable(listed).pipe(
      Stream.mapEffect((s) => {
        const w: Where = { ref: { projectKey, sessionId: s.sessionId }, projectPath }
        return store.load(w.ref).pipe(
          Effect.flatMap((loaded) =>
            Option.isNone(loaded) || loaded.value.length === 0
              ? Effect.succeed(Option.none<SessionInfo>())
              : Effect.flatMap(
                decoded(w.ref, loaded.value),
                (entries) => listedInfo(store, w, entries, s.mtime, includeProgrammatic)
              )
          ),
          Effect.map(Option.map((info): SessionInfo => ({ ...info, lastModified: s.mtime })))
        )
      }, { concurrency: 8 }),
      Stream.filterMap((o) => o),
      Stream.drop(options.offset !== undefined && options.offset > 0 ? options.offset : 0)
    )
    const page = options.limit !== undefined && options.limit > 0 ? Stream.take(infos, options.limit) : infos
    return Chunk.toReadonlyArray(yield* Stream.runCollect(page))
  })

const getSessionInfo: Fn<"getSessionInfo"> = (store) => (sessionId, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.location)
    const w = yield* where(sessionId, options)
    const [entries, mtime] = yield* Effect.all([mainEntries(store, w), mtimeOf(store, w)], { concurrency: 2 })
    const info = infoOf(w, Read.liteOf(entries, mtime))
    if (Option.isNone(info)) {
      return yield* new SessionNotFoundError({
        sessionId,
        reason: "its transcript holds no listable session (a sub-agent's, or one with no prompt)"
      })
    }
    return info.value
  })

const findSessionInfo: Fn<"findSessionInfo"> = (store) => (sessionId, options = {}) =>
  getSessionInfo(store)(sessionId, options).pipe(
    Effect.map(Option.some),
    Effect.catchTag("SessionNotFoundError", () => Effect.succeed(Option.none<SessionInfo>()))
  )

const transcript: Fn<"transcript"> = (store) => (sessionId, options = {}) =>
  Stream.unwrap(Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.location)
    return Stream.fromIterable(yield* mainEntries(store, yield* where(sessionId, options)))
  }))

const getSessionMessages: Fn<"getSessionMessages"> = (store) => (sessionId, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.messages)
    const entries = yield* mainEntries(store, yield* where(sessionId, options))
    return Read.sessionMessages(entries.flatMap((e) => Read.mainNode(e) ?? []), options)
  })

const listSubagents: Fn<"listSubagents"> = (store) => (sessionId, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.location)
    const w = yield* where(sessionId, options)
    const [agents] = yield* Effect.all([subkeys(store, w), mtimeOf(store, w)], { concurrency: 2 })
    return agents.map((a) => a.agentId)
  })

const getSubagentMessages: Fn<"getSubagentMessages"> = (store) => (sessionId, agentId, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.page)
    const w = yield* where(sessionId, options)
    const agent = (yield* subkeys(store, w)).find((a) => a.agentId === agentId)
    const loaded = agent === undefined ? Option.none() : yield* store.load({ ...w.ref, subpath: agent.subpath })
    if (agent === undefined || Option.isNone(loaded)) return yield* notFound(w, { agentId })
    const entries = yield* decoded({ ...w.ref, subpath: agent.subpath }, loaded.value)
    // The last `agent_metadata` entry is what the CLI keeps in `agent-<id>.meta.json`.
    const last = entries.filter((e) => e.type === "agent_metadata").at(-1)
    const meta = last === undefined ? undefined : { toolUseId: last.toolUseId, parentAgentId: last.parentAgentId }
    return Read.subagentMessages(entries.flatMap((e) => Read.subagentNode(e) ?? []), meta, options)
  })

const renameSession: Fn<"renameSession"> = (store) => (sessionId, title, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.location)
    yield* appendTo(store, sessionId, options, yield* Args.renameEntry(sessionId, title))
  })

const tagSession: Fn<"tagSession"> = (store) => (sessionId, tag, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.location)
    yield* appendTo(store, sessionId, options, yield* Args.tagEntry(sessionId, tag))
  })

const deleteSession: Fn<"deleteSession"> = (store) => (sessionId, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.location)
    const w = yield* where(sessionId, options)
    yield* mtimeOf(store, w)
    yield* store.delete(w.ref)
  })

const forkSession: Fn<"forkSession"> = (store) => (sessionId, options = {}) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.stored.fork)
    const w = yield* where(sessionId, options)
    const entries = yield* mainEntries(store, w)
    const forkId = crypto.randomUUID()
    const lines = yield* Read.forkLines(entries, {
      sessionId,
      upToMessageId: options.upToMessageId,
      title: options.title,
      forkId,
      now: new Date(yield* Clock.currentTimeMillis).toISOString(),
      newUuid: () => crypto.randomUUID()
    })
    yield* store.append({ projectKey: w.ref.projectKey, sessionId: forkId }, lines.flatMap(toEntry))
    return { sessionId: forkId }
  })

/**
 * The store-backed `Sessions` functions over `store`.
 *
 * @internal
 */
export const make = (store: SessionStoreShape): StoredSessions => ({
  listSessions: listSessions(store),
  getSessionInfo: getSessionInfo(store),
  findSessionInfo: findSessionInfo(store),
  transcript: transcript(store),
  getSessionMessages: getSessionMessages(store),
  listSubagents: listSubagents(store),
  getSubagentMessages: getSubagentMessages(store),
  renameSession: renameSession(store),
  tagSession: tagSession(store),
  deleteSession: deleteSession(store),
  forkSession: forkSession(store)
})

// A fork's line as a store entry (every line has a string `type`).
const toEntry = (line: Record<string, unknown>): Array<Entry> => {
  const type = line.type
  return typeof type === "string" ? [{ ...line, type }] : []
}
