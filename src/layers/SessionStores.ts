/**
 * `SessionStore` implementations: in memory (tests, one process), in files (one machine, or a
 * shared volume) and in SQL through `@effect/sql` (SQLite embedded, or PostgreSQL for many
 * machines).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Path from "@effect/platform/Path"
import { Clock, Effect, Layer, Option } from "effect"
import { parseJsonBoundary } from "../internal/protocol/json.js"
import * as ImportLocal from "../internal/session/importLocal.js"
import * as SqlStore from "../internal/session/sqlStore.js"
import * as Store from "../internal/session/store.js"
import type { SessionNotFoundError } from "../SdkError.js"
import {
  type Entry,
  type Listed,
  type SessionRef,
  SessionStore,
  SessionStoreError,
  type SessionStoreShape,
  type SessionSummary,
  type Write
} from "../services/SessionStore.js"

interface MemorySession {
  generation: number
  readonly transcripts: Map<string, { readonly entries: Array<Entry>; readonly seen: Set<string> }>
  summary: SessionSummary | undefined
}

/**
 * A store in this process's memory: for tests and for sessions that only need to survive their
 * CLI process, not this one.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore, SessionStores } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore.SessionStore
 *   yield* store.append({ projectKey: "p", sessionId: "s" }, [{ type: "user", uuid: "u1" }])
 * }).pipe(Effect.provide(SessionStores.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const makeMemory: Effect.Effect<SessionStoreShape> = Effect.sync(() => {
  const projects = new Map<string, Map<string, MemorySession>>()
  const tick = Store.clock()
  const find = (ref: SessionRef): MemorySession | undefined => projects.get(ref.projectKey)?.get(ref.sessionId)
  const open = (ref: SessionRef): MemorySession => {
    let sessions = projects.get(ref.projectKey)
    if (sessions === undefined) projects.set(ref.projectKey, sessions = new Map())
    let session = sessions.get(ref.sessionId)
    if (session === undefined) {
      sessions.set(ref.sessionId, session = { generation: 0, transcripts: new Map(), summary: undefined })
    }
    return session
  }
  const appendAll: SessionStoreShape["appendAll"] = (ref, writes, options) =>
    Effect.zipRight(
      Store.checkWrites("append", ref, writes),
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.suspend(() => {
          const session = open(ref)
          const given = options?.generation
          if (given !== undefined && given !== session.generation) {
            return Effect.fail(Store.stale(ref, given, session.generation))
          }
          for (const write of writes) {
            if (write.entries.length === 0) continue
            const subpath = write.subpath ?? Store.MAIN
            let transcript = session.transcripts.get(subpath)
            if (transcript === undefined) {
              session.transcripts.set(subpath, transcript = { entries: [], seen: new Set() })
            }
            // A copy per entry: the store must not see later changes to the caller's objects.
            const kept = Store.fresh(write.entries, transcript.seen).map((e) => structuredClone(e))
            for (const entry of kept) transcript.entries.push(entry)
            if (subpath === Store.MAIN) {
              session.summary = Store.foldSummary(session.summary, ref.sessionId, kept, tick(now))
            }
          }
          return Effect.void
        }))
    )
  const shape: SessionStoreShape = {
    acquire: (ref) => Effect.zipRight(Store.checkKey("acquire", ref), Effect.sync(() => ++open(ref).generation)),
    appendAll,
    append: (key, entries, options) => appendAll(key, [{ subpath: key.subpath, entries }], options),
    load: (key) =>
      Effect.zipRight(
        Store.checkKey("load", key),
        Effect.sync(() => {
          const transcript = find(key)?.transcripts.get(key.subpath ?? Store.MAIN)
          return transcript === undefined
            ? Option.none()
            : Option.some(transcript.entries.map((e) => structuredClone(e)))
        })
      ),
    listSummaries: (projectKey) =>
      Effect.sync(() => {
        const out: Array<SessionSummary> = []
        for (const session of projects.get(projectKey)?.values() ?? []) {
          if (session.summary !== undefined) out.push(session.summary)
        }
        return out
      }),
    listSessions: (projectKey) => Effect.map(shape.listSummaries(projectKey), toListed),
    listSubkeys: (ref) =>
      Effect.zipRight(
        Store.checkKey("listSubkeys", ref),
        Effect.sync(() => [...(find(ref)?.transcripts.keys() ?? [])].filter((s) => s !== Store.MAIN))
      ),
    delete: (key) =>
      Effect.zipRight(
        Store.checkKey("delete", key),
        Effect.sync(() => {
          const session = find(key)
          if (session === undefined) return
          if (key.subpath !== undefined) {
            session.transcripts.delete(key.subpath)
            return
          }
          // The generation stays: a writer fenced out before the delete stays fenced out.
          session.transcripts.clear()
          session.summary = undefined
        })
      )
  }
  return shape
})

const toListed = (summaries: ReadonlyArray<SessionSummary>): ReadonlyArray<Listed> =>
  summaries.map((s) => ({ sessionId: s.sessionId, mtime: s.mtime }))

/**
 * `makeMemory` as a layer: one store per layer build.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore, SessionStores } from "effect-claude-agent"
 *
 * const listed = Effect.flatMap(SessionStore.SessionStore, (s) => s.listSessions("p")).pipe(
 *   Effect.provide(SessionStores.layerMemory)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionStore> = Layer.effect(SessionStore, makeMemory)

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

// One line of a session's log: the writes of one `appendAll`, or a sub-agent transcript deleted.
interface LogRecord {
  readonly w?: ReadonlyArray<{ readonly s: string; readonly e: ReadonlyArray<Entry> }>
  readonly d?: string
}

// A session's log replayed: each transcript's entries and uuids.
interface Replayed {
  readonly bytes: number
  /** The log ends with a complete line. */
  readonly clean: boolean
  readonly transcripts: Map<string, { readonly entries: Array<Entry>; readonly seen: Set<string> }>
}

const isRecord = (u: unknown): u is LogRecord => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  if ("d" in u) return typeof u.d === "string"
  return "w" in u && Array.isArray(u.w) &&
    u.w.every((w: unknown) =>
      typeof w === "object" && w !== null && "s" in w && typeof w.s === "string" && "e" in w && Array.isArray(w.e) &&
      w.e.every(Store.isEntry)
    )
}

const replay = (text: string): Replayed => {
  const transcripts: Replayed["transcripts"] = new Map()
  // A last line without its newline is a write cut short: not part of the log.
  const complete = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1)
  for (const line of complete.split("\n")) {
    if (line.length === 0) continue
    let record: unknown
    try {
      record = parseJsonBoundary(line)
    } catch {
      continue
    }
    if (!isRecord(record)) continue
    if (record.d !== undefined) {
      transcripts.delete(record.d)
      continue
    }
    for (const write of record.w ?? []) {
      let t = transcripts.get(write.s)
      if (t === undefined) transcripts.set(write.s, t = { entries: [], seen: new Set() })
      for (const entry of Store.fresh(write.e, t.seen)) t.entries.push(entry)
    }
  }
  return { bytes: Buffer.byteLength(text), clean: complete.length === text.length, transcripts }
}

/**
 * A store in a directory: per project a folder, per session an append-only log of its appends
 * (one line per `appendAll`, so a batch is written with one `write` and a line cut short by a
 * crash is ignored), a summary file and a generation file. Writes from this process are
 * serialised; several processes sharing the directory are fenced by the generation file, read
 * before each append (a check, not a lock: use the SQL store where writers race across machines).
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { SessionStore, SessionStores } from "effect-claude-agent"
 *
 * const StoreLive = SessionStores.layerFiles("/var/lib/agents/sessions").pipe(Layer.provide(NodeContext.layer))
 * const listed = Effect.flatMap(SessionStore.SessionStore, (s) => s.listSessions("p")).pipe(Effect.provide(StoreLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const makeFiles = (
  dir: string
): Effect.Effect<SessionStoreShape, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const lock = yield* Effect.makeSemaphore(1)
    const tick = Store.clock()
    const cache = new Map<string, Replayed>()
    const files = (ref: SessionRef) => {
      const base = path.join(dir, ref.projectKey, ref.sessionId)
      return { log: `${base}.log`, gen: `${base}.gen`, summary: `${base}.summary.json` }
    }
    const fail = (operation: string, ref: SessionRef | undefined) => (cause: unknown) =>
      new SessionStoreError({
        reason: "Unavailable",
        operation,
        ...(ref === undefined ? {} : { sessionId: ref.sessionId }),
        detail: cause instanceof Error ? cause.message : String(cause),
        cause
      })
    const readOr = <A>(file: string, orElse: A, f: (text: string) => A) =>
      fs.readFileString(file).pipe(
        Effect.map(f),
        Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed(orElse))
      )
    const generation = (ref: SessionRef) => readOr(files(ref).gen, 0, (t) => Number.parseInt(t, 10) || 0)
    // The log replayed, from the cache when the file has not grown since.
    const replayed = (ref: SessionRef) =>
      Effect.gen(function*() {
        const log = files(ref).log
        const size = yield* fs.stat(log).pipe(Effect.map((s) => Number(s.size)), Effect.orElseSucceed(() => -1))
        if (size < 0) return undefined
        const cached = cache.get(log)
        if (cached !== undefined && cached.bytes === size) return cached
        const fresh = replay(yield* fs.readFileString(log))
        cache.set(log, fresh)
        return fresh
      })
    const readSummary = (file: string) =>
      readOr(file, undefined, (t): SessionSummary | undefined => {
        const parsed: unknown = parseJsonBoundary(t)
        return Store.isSummary(parsed) ? parsed : undefined
      })
    const writeLine = (ref: SessionRef, line: string) =>
      Effect.gen(function*() {
        const { log } = files(ref)
        yield* fs.makeDirectory(path.dirname(log), { recursive: true })
        // After a write cut short, the new line starts on a line of its own.
        const prefix = (yield* replayed(ref))?.clean === false ? "\n" : ""
        yield* fs.writeFileString(log, `${prefix}${line}\n`, { flag: "a" })
      })

    const appendAll: SessionStoreShape["appendAll"] = (ref, writes, options) =>
      Effect.zipRight(
        Store.checkWrites("append", ref, writes),
        lock.withPermits(1)(
          Effect.gen(function*() {
            const given = options?.generation
            if (given !== undefined) {
              const current = yield* generation(ref)
              if (given !== current) return yield* Effect.fail(Store.stale(ref, given, current))
            }
            const state = yield* replayed(ref)
            const record: Array<{ s: string; e: Array<Entry> }> = []
            let main: Array<Entry> = []
            for (const write of writes) {
              const s = write.subpath ?? Store.MAIN
              const seen = new Set(state?.transcripts.get(s)?.seen)
              for (const r of record) {
                if (r.s === s) {
                  for (const e of r.e) if (typeof e.uuid === "string") seen.add(e.uuid)
                }
              }
              const kept = Store.fresh(write.entries, seen)
              if (kept.length === 0) continue
              record.push({ s, e: kept })
              if (s === Store.MAIN) main = main.concat(kept)
            }
            if (record.length === 0) return
            yield* writeLine(ref, JSON.stringify({ w: record }))
            cache.delete(files(ref).log)
            if (main.length > 0) {
              const now = yield* Clock.currentTimeMillis
              const summary = Store.foldSummary(yield* readSummary(files(ref).summary), ref.sessionId, main, tick(now))
              yield* fs.writeFileString(files(ref).summary, JSON.stringify(summary))
            }
          }).pipe(Effect.mapError((e) => e._tag === "SessionStoreError" ? e : fail("append", ref)(e)))
        )
      )

    const listSummaries = (projectKey: string) =>
      Effect.gen(function*() {
        const folder = path.join(dir, projectKey)
        const names = yield* fs.readDirectory(folder).pipe(Effect.orElseSucceed((): Array<string> => []))
        const out: Array<SessionSummary> = []
        for (const name of names) {
          if (!name.endsWith(".summary.json")) continue
          const summary = yield* readSummary(path.join(folder, name))
          if (summary !== undefined) out.push(summary)
        }
        return out
      }).pipe(Effect.mapError(fail("listSummaries", undefined)))

    const shape: SessionStoreShape = {
      acquire: (ref) =>
        Effect.zipRight(
          Store.checkKey("acquire", ref),
          lock.withPermits(1)(Effect.gen(function*() {
            const next = (yield* generation(ref)) + 1
            yield* fs.makeDirectory(path.join(dir, ref.projectKey), { recursive: true })
            yield* fs.writeFileString(files(ref).gen, String(next))
            return next
          })).pipe(Effect.mapError(fail("acquire", ref)))
        ),
      appendAll,
      append: (key, entries, options) => appendAll(key, [{ subpath: key.subpath, entries }], options),
      load: (key) =>
        Effect.zipRight(
          Store.checkKey("load", key),
          lock.withPermits(1)(replayed(key)).pipe(
            Effect.map((state) => Option.fromNullable(state?.transcripts.get(key.subpath ?? Store.MAIN)?.entries)),
            Effect.map(Option.map((entries) => entries.map((e) => structuredClone(e)))),
            Effect.mapError(fail("load", key))
          )
        ),
      listSummaries,
      listSessions: (projectKey) => Effect.map(listSummaries(projectKey), toListed),
      listSubkeys: (ref) =>
        Effect.zipRight(
          Store.checkKey("listSubkeys", ref),
          lock.withPermits(1)(replayed(ref)).pipe(
            Effect.map((state) => [...(state?.transcripts.keys() ?? [])].filter((s) => s !== Store.MAIN)),
            Effect.mapError(fail("listSubkeys", ref))
          )
        ),
      delete: (key) =>
        Effect.zipRight(
          Store.checkKey("delete", key),
          lock.withPermits(1)(Effect.gen(function*() {
            const { log, summary } = files(key)
            cache.delete(log)
            if (key.subpath !== undefined) {
              if ((yield* replayed(key))?.transcripts.has(key.subpath) === true) {
                yield* writeLine(key, JSON.stringify({ d: key.subpath }))
              }
              return
            }
            // The generation file stays: a writer fenced out before the delete stays fenced out.
            yield* fs.remove(log, { force: true })
            yield* fs.remove(summary, { force: true })
          })).pipe(Effect.mapError(fail("delete", key)))
        )
    }
    return shape
  })

/**
 * `makeFiles` as a layer.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { SessionStores } from "effect-claude-agent"
 *
 * const StoreLive = SessionStores.layerFiles("./sessions").pipe(Layer.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFiles = (dir: string): Layer.Layer<SessionStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(SessionStore, makeFiles(dir))

/**
 * The writes of one `appendAll` for the given transcripts (a helper for building batches).
 *
 * @example
 * ```ts
 * import { SessionStores } from "effect-claude-agent"
 *
 * const writes = SessionStores.writes({ "": [{ type: "user", uuid: "u1" }], "subagents/agent-a": [{ type: "user" }] })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const writes = (bySubpath: { readonly [subpath: string]: ReadonlyArray<Entry> }): ReadonlyArray<Write> =>
  Object.entries(bySubpath).map(([s, entries]) => s === Store.MAIN ? { entries } : { subpath: s, entries })

// ---------------------------------------------------------------------------------------------
// SQL
// ---------------------------------------------------------------------------------------------

/**
 * Options of `makeSql` and `layerSql`.
 *
 * @example
 * ```ts
 * import { SessionStores } from "effect-claude-agent"
 *
 * const options: SessionStores.SqlOptions = { tablePrefix: "agents" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface SqlOptions {
  /** Table names' prefix: `<prefix>_sessions`, `<prefix>_entries`. Default `claude`. */
  readonly tablePrefix?: string | undefined
}

/**
 * A store in a SQL database, over an `@effect/sql` client: SQLite (`@effect/sql-sqlite-node`) or
 * PostgreSQL (`@effect/sql-pg`). Two tables, created if missing: `<prefix>_sessions` (generation,
 * mtime, summary per session) and `<prefix>_entries` (keyed by session, subpath and sequence). An
 * `appendAll` is one transaction; on PostgreSQL it locks the session's row, so appends racing
 * from several machines are serialised and a fenced-out writer is refused.
 *
 * @example
 * ```ts
 * import * as SqlClient from "@effect/sql/SqlClient"
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Effect } from "effect"
 * import { SessionStores } from "effect-claude-agent"
 *
 * const store = Effect.flatMap(SqlClient.SqlClient, (sql) => SessionStores.makeSql(sql)).pipe(
 *   Effect.provide(SqliteClient.layer({ filename: "sessions.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSql = (
  sql: SqlClient.SqlClient,
  options: SqlOptions = {}
): Effect.Effect<SessionStoreShape, SqlError> => SqlStore.make(sql, options)

/**
 * `makeSql` as a layer, for a client the caller has (the client is passed in rather than taken
 * from the context, so that the core entry does not load `@effect/sql`).
 *
 * @example
 * ```ts
 * import * as SqlClient from "@effect/sql/SqlClient"
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Effect, Layer } from "effect"
 * import { SessionStores } from "effect-claude-agent"
 *
 * const StoreLive = Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => SessionStores.layerSql(sql))).pipe(
 *   Layer.provide(SqliteClient.layer({ filename: "sessions.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (sql: SqlClient.SqlClient, options: SqlOptions = {}): Layer.Layer<SessionStore, SqlError> =>
  Layer.effect(SessionStore, makeSql(sql, options))

/**
 * Options of `importLocalSession`.
 *
 * @example
 * ```ts
 * import { SessionStores } from "effect-claude-agent"
 *
 * const options: SessionStores.ImportOptions = { dir: "/srv/app", batchSize: 200 }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface ImportOptions {
  /** The project directory the session ran in; without it every project is searched. */
  readonly dir?: string | undefined
  /** The CLI's config directory (default: `CLAUDE_CONFIG_DIR`, else `~/.claude`). */
  readonly configDir?: string | undefined
  /** The key to store it under (default: the CLI's project folder name, as the mirror uses). */
  readonly projectKey?: string | undefined
  /** Sub-agents' transcripts too (default `true`). */
  readonly includeSubagents?: boolean | undefined
  /** Entries per append (default 500). */
  readonly batchSize?: number | undefined
}

/**
 * Copies a session the CLI wrote locally into a store, sub-agents included, so that it can be
 * resumed from the store. Entries already stored (by uuid) are skipped, so importing twice
 * stores nothing twice. Returns the key it is stored under.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { SessionStore, SessionStores } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore.SessionStore
 *   const key = yield* SessionStores.importLocalSession(store, "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10", { dir: "/srv/app" })
 *   yield* Effect.log(`stored under ${key.projectKey}`)
 * }).pipe(Effect.provide(SessionStores.layerMemory), Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const importLocalSession = (
  store: SessionStoreShape,
  sessionId: string,
  options: ImportOptions = {}
): Effect.Effect<SessionRef, SessionNotFoundError | SessionStoreError, FileSystem.FileSystem | Path.Path> =>
  ImportLocal.importLocal(store, sessionId, options)
