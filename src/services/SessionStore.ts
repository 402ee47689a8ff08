/**
 * `SessionStore`: conversations kept outside the machine's disk, so that a session can be resumed
 * by another process or on another host.
 *
 * The CLI, started with `--session-mirror`, sends each line it adds to a transcript as a
 * `transcript_mirror` frame; a session with the `sessionStore` option appends those lines here as
 * they come, and a session that resumes with the option loads them back before the CLI starts.
 * The store is append-only: entries are kept in the order appended under (session, subpath,
 * sequence), an entry whose `uuid` is already stored under the same key is skipped (a retried or
 * replayed batch does not duplicate a turn), and one `appendAll` is recorded whole or not at all.
 *
 * Writers are fenced: `acquire` hands out a generation number higher than any before for that
 * session, and an append made with an older generation fails with `StaleWriter` and changes
 * nothing, so a process that lost the session (an old runner, a zombie) cannot add to it.
 *
 * Implementations, as static constructors of the tag (`SessionStores.*` names the same ones):
 * `SessionStore.layerMemory`, `SessionStore.layerFiles(dir)` and `SessionStore.layerSql(client)`
 * (SQLite or PostgreSQL through `@effect/sql`), and their `make…` effects.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, type Effect, Layer, type Option } from "effect"
import * as FileStore from "../internal/session/fileStore.js"
import * as MemoryStore from "../internal/session/memoryStore.js"
import * as SqlStore from "../internal/session/sqlStore.js"
import * as Errors from "../internal/session/storeError.js"

/**
 * The key of one transcript: the session's main transcript (no `subpath`), or one of its
 * sub-agents' (`subpath` as the CLI lays it out under the session's folder, e.g.
 * `subagents/agent-a1b2c3`). `projectKey` scopes sessions: by default the CLI's project folder
 * name for the working directory (the sanitised cwd).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const main: SessionStore.SessionKey = { projectKey: "-srv-app", sessionId: "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10" }
 * const agent: SessionStore.SessionKey = { ...main, subpath: "subagents/agent-a1b2c3" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionKey {
  readonly projectKey: string
  readonly sessionId: string
  /** Absent for the main transcript; never empty. */
  readonly subpath?: string | undefined
}

/**
 * A session, without a subpath.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const session: SessionStore.SessionRef = { projectKey: "-srv-app", sessionId: "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionRef {
  readonly projectKey: string
  readonly sessionId: string
}

/**
 * One transcript line as the CLI writes it: a JSON object with a string `type`, usually a `uuid`
 * and a `timestamp`; the rest is the CLI's and is kept as is (loaded back deep-equal).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const entry: SessionStore.Entry = { type: "custom-title", customTitle: "Quarterly report", sessionId: "6f1c0c5e" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly type: string
  readonly uuid?: string | undefined
  readonly timestamp?: string | undefined
  readonly [key: string]: unknown
}

/**
 * The entries for one transcript of a session, in an `appendAll`.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const write: SessionStore.Write = { subpath: "subagents/agent-a1", entries: [{ type: "user", uuid: "u1" }] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Write {
  readonly subpath?: string | undefined
  readonly entries: ReadonlyArray<Entry>
}

/**
 * How an append is fenced: the generation `acquire` returned to this writer. Without it the
 * append is not fenced (an import, a tool).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const fence: SessionStore.AppendOptions = { generation: 3 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendOptions {
  readonly generation?: number | undefined
}

/**
 * A session as listed: its id and when it was last written (Unix epoch milliseconds, the store's
 * clock).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const listed: SessionStore.Listed = { sessionId: "6f1c0c5e", mtime: 1764120000000 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Listed {
  readonly sessionId: string
  readonly mtime: number
}

/**
 * What a session's main transcript says about it, kept up to date on every append by
 * `Summary.fold` (never by re-reading the transcript). Set once: `createdAt`, `cwd`,
 * `firstPrompt`; last one wins: `customTitle`, `aiTitle`, `lastPrompt`, `gitBranch`, `tag`.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const title = (s: SessionStore.SessionSummary) => s.customTitle ?? s.aiTitle ?? s.firstPrompt ?? s.sessionId
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionSummary {
  readonly sessionId: string
  readonly mtime: number
  /** Entries stored in the main transcript. */
  readonly entries: number
  readonly createdAt?: string | undefined
  readonly cwd?: string | undefined
  readonly firstPrompt?: string | undefined
  readonly lastPrompt?: string | undefined
  readonly customTitle?: string | undefined
  readonly aiTitle?: string | undefined
  readonly gitBranch?: string | undefined
  readonly tag?: string | undefined
}

/**
 * Why a store operation failed:
 *
 * - `StaleWriter`: the append's generation is not the session's current one (another writer
 *   acquired the session since); nothing was written.
 * - `InvalidKey`: an empty or malformed key part (`subpath` empty, a path that leaves the store).
 * - `Corrupt`: stored data could not be read back.
 * - `Unavailable`: the backend failed (I/O, database).
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const retryable = (reason: SessionStore.SessionStoreErrorReason) => reason === "Unavailable"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export type SessionStoreErrorReason = typeof SessionStoreErrorReason.Type

/**
 * The schema of `SessionStoreErrorReason`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SessionStore } from "effect-claude-agent"
 *
 * const isReason = Schema.is(SessionStore.SessionStoreErrorReason)
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const SessionStoreErrorReason: typeof Errors.SessionStoreErrorReason = Errors.SessionStoreErrorReason

/**
 * A session store operation failed (see `SessionStoreErrorReason`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore } from "effect-claude-agent"
 *
 * const appendOrLog = (store: SessionStore.SessionStoreShape, key: SessionStore.SessionKey, generation: number) =>
 *   store.append(key, [{ type: "tag", tag: "done" }], { generation }).pipe(
 *     Effect.catchTag("SessionStoreError", (e) =>
 *       e.reason === "StaleWriter" ? Effect.logWarning("another writer owns the session") : Effect.fail(e))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const SessionStoreError: typeof Errors.SessionStoreError = Errors.SessionStoreError

/**
 * @since 0.1.0
 * @category errors
 */
export type SessionStoreError = Errors.SessionStoreError

/**
 * What a session store does.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { SessionStore } from "effect-claude-agent"
 *
 * const count = (key: SessionStore.SessionKey) =>
 *   Effect.flatMap(SessionStore.SessionStore, (store) => store.load(key)).pipe(
 *     Effect.map(Option.match({ onNone: () => 0, onSome: (entries) => entries.length }))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionStoreShape {
  /**
   * Makes the caller the session's writer: returns a generation higher than any handed out for
   * it before; appends with an older one fail from now on.
   */
  readonly acquire: (session: SessionRef) => Effect.Effect<number, SessionStoreError>
  /** Appends a session's entries for several transcripts at once: all recorded, or none. */
  readonly appendAll: (
    session: SessionRef,
    writes: ReadonlyArray<Write>,
    options?: AppendOptions
  ) => Effect.Effect<void, SessionStoreError>
  /** Appends entries to one transcript. */
  readonly append: (
    key: SessionKey,
    entries: ReadonlyArray<Entry>,
    options?: AppendOptions
  ) => Effect.Effect<void, SessionStoreError>
  /** A transcript's entries in append order; `None` for a key never written. */
  readonly load: (key: SessionKey) => Effect.Effect<Option.Option<ReadonlyArray<Entry>>, SessionStoreError>
  /** The project's sessions (order unspecified). */
  readonly listSessions: (projectKey: string) => Effect.Effect<ReadonlyArray<Listed>, SessionStoreError>
  /** The project's sessions with their summaries, in one call. */
  readonly listSummaries: (projectKey: string) => Effect.Effect<ReadonlyArray<SessionSummary>, SessionStoreError>
  /** The subpaths stored under a session (its sub-agents' transcripts). */
  readonly listSubkeys: (session: SessionRef) => Effect.Effect<ReadonlyArray<string>, SessionStoreError>
  /**
   * Deletes a transcript; for a main transcript key, the whole session (its subpaths, summary and
   * generation too).
   */
  readonly delete: (key: SessionKey) => Effect.Effect<void, SessionStoreError>
}

/**
 * Options of `SessionStore.makeSql` and `SessionStore.layerSql`.
 *
 * @example
 * ```ts
 * import type { SessionStore } from "effect-claude-agent"
 *
 * const options: SessionStore.SqlOptions = { tablePrefix: "agents" }
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
 * The session store service, with its implementations as static constructors: in memory, in
 * files, in SQL.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore } from "effect-claude-agent"
 *
 * const sessions = Effect.flatMap(SessionStore.SessionStore, (store) => store.listSessions("-srv-app")).pipe(
 *   Effect.provide(SessionStore.SessionStore.layerMemory)
 * )
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionStore extends Context.Tag("effect-claude-agent/SessionStore")<
  SessionStore,
  SessionStoreShape
>() {
  /**
   * A store in this process's memory: for tests and for sessions that only need to survive their
   * CLI process, not this one.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { SessionStore } from "effect-claude-agent"
   *
   * const program = Effect.gen(function* () {
   *   const store = yield* SessionStore.SessionStore.makeMemory
   *   yield* store.append({ projectKey: "p", sessionId: "s" }, [{ type: "user", uuid: "u1" }])
   * })
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly makeMemory: Effect.Effect<SessionStoreShape> = MemoryStore.make

  /**
   * `makeMemory` as a layer: one store per layer build.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { SessionStore } from "effect-claude-agent"
   *
   * const listed = Effect.flatMap(SessionStore.SessionStore, (s) => s.listSessions("p")).pipe(
   *   Effect.provide(SessionStore.SessionStore.layerMemory)
   * )
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerMemory: Layer.Layer<SessionStore> = Layer.effect(this, MemoryStore.make)

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
   * import { Effect } from "effect"
   * import { SessionStore } from "effect-claude-agent"
   *
   * const store = SessionStore.SessionStore.makeFiles("/var/lib/agents/sessions").pipe(
   *   Effect.provide(NodeContext.layer)
   * )
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly makeFiles = (
    dir: string
  ): Effect.Effect<SessionStoreShape, never, FileSystem.FileSystem | Path.Path> => FileStore.make(dir)

  /**
   * `makeFiles` as a layer.
   *
   * @example
   * ```ts
   * import { NodeContext } from "@effect/platform-node"
   * import { Layer } from "effect"
   * import { SessionStore } from "effect-claude-agent"
   *
   * const StoreLive = SessionStore.SessionStore.layerFiles("./sessions").pipe(Layer.provide(NodeContext.layer))
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerFiles = (
    dir: string
  ): Layer.Layer<SessionStore, never, FileSystem.FileSystem | Path.Path> =>
    Layer.effect(SessionStore, FileStore.make(dir))

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
   * import { SessionStore } from "effect-claude-agent"
   *
   * const store = Effect.flatMap(SqlClient.SqlClient, (sql) => SessionStore.SessionStore.makeSql(sql)).pipe(
   *   Effect.provide(SqliteClient.layer({ filename: "sessions.db" }))
   * )
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly makeSql = (
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
   * import { SessionStore } from "effect-claude-agent"
   *
   * const StoreLive = Layer.unwrapEffect(
   *   Effect.map(SqlClient.SqlClient, (sql) => SessionStore.SessionStore.layerSql(sql))
   * ).pipe(Layer.provide(SqliteClient.layer({ filename: "sessions.db" })))
   * ```
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerSql = (
    sql: SqlClient.SqlClient,
    options: SqlOptions = {}
  ): Layer.Layer<SessionStore, SqlError> => Layer.effect(SessionStore, SqlStore.make(sql, options))
}
