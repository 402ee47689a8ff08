/**
 * `SessionStore` implementations: in memory (tests, one process), in files (one machine, or a
 * shared volume) and in SQL through `@effect/sql` (SQLite embedded, or PostgreSQL for many
 * machines).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect, Layer } from "effect"
import * as ImportLocal from "../internal/session/importLocal.js"
import * as Store from "../internal/session/store.js"
import type { SessionNotFoundError } from "../SdkError.js"
import type * as Service from "../services/SessionStore.js"
import {
  type Entry,
  type SessionRef,
  SessionStore,
  type SessionStoreError,
  type SessionStoreShape,
  type Write
} from "../services/SessionStore.js"

/**
 * A store in this process's memory (`SessionStore.SessionStore.makeMemory`): for tests and for
 * sessions that only need to survive their CLI process, not this one.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStores } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStores.makeMemory
 *   yield* store.append({ projectKey: "p", sessionId: "s" }, [{ type: "user", uuid: "u1" }])
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<SessionStoreShape> = SessionStore.makeMemory

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
export const layerMemory: Layer.Layer<SessionStore> = SessionStore.layerMemory

/**
 * A store in a directory (`SessionStore.SessionStore.makeFiles`): per project a folder, per
 * session an append-only log of its appends, a summary file and a generation file. Writes from
 * this process are serialised; several processes sharing the directory are fenced by the
 * generation file, read before each append (a check, not a lock: use the SQL store where writers
 * race across machines).
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { SessionStores } from "effect-claude-agent"
 *
 * const store = SessionStores.makeFiles("/var/lib/agents/sessions").pipe(Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFiles = (
  dir: string
): Effect.Effect<SessionStoreShape, never, FileSystem.FileSystem | Path.Path> => SessionStore.makeFiles(dir)

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
  SessionStore.layerFiles(dir)

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
export interface SqlOptions extends Service.SqlOptions {}

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
): Effect.Effect<SessionStoreShape, SqlError> => SessionStore.makeSql(sql, options)

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
  SessionStore.layerSql(sql, options)

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
