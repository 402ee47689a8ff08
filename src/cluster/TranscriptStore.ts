/**
 * `TranscriptStore`: where a conversation's CLI transcript lives when the runner that wrote it is
 * gone.
 *
 * The CLI resumes a session (`resume`) from its transcript, a JSONL file under the machine's
 * `CLAUDE_CONFIG_DIR`. An `AgentEntity` that moves to another runner (failover, shard move) finds
 * no such file there. The entity therefore mirrors the transcript into this store after every
 * completed turn, and restores it to the local path before it resumes the session. The store holds
 * the transcript as of the last completed turn: a turn cut short by a crash is not in it, so the
 * re-run of that turn starts from the same place the first attempt did.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql"
import { Context, Effect, Layer, Option, Predicate, Ref, Schema } from "effect"
import { defaultNamespace, v4 } from "./internal/uuid.js"

/**
 * A store operation that failed (the database is unreachable, a query failed).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const load = TranscriptStore.TranscriptStore.pipe(
 *   Effect.flatMap((store) => store.load("0e4a1c2e-8a51-5d1f-9a47-3c5b1f0e2d11")),
 *   Effect.catchTag("TranscriptStoreError", (e) => Effect.logError(e.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class TranscriptStoreError extends Schema.TaggedError<TranscriptStoreError>(
  "effect-claude-agent/cluster/TranscriptStoreError"
)("TranscriptStoreError", {
  operation: Schema.Literal("load", "save", "remove", "removeIdle"),
  sessionId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `TranscriptStore.${this.operation}(${this.sessionId}) failed: ${this.detail}`
  }
}

/**
 * The store's operations. A transcript is the JSONL text of the CLI's session file; the empty
 * string marks a conversation that has started but has no completed turn yet.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const hasTurns = (store: TranscriptStore.TranscriptStoreShape, sessionId: string) =>
 *   Effect.map(store.load(sessionId), Option.exists((text) => text.length > 0))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface TranscriptStoreShape {
  /** The stored transcript of a session, if any. */
  readonly load: (sessionId: string) => Effect.Effect<Option.Option<string>, TranscriptStoreError>
  /** Replaces the stored transcript of a session. */
  readonly save: (sessionId: string, transcript: string) => Effect.Effect<void, TranscriptStoreError>
  /** Forgets a session. */
  readonly remove: (sessionId: string) => Effect.Effect<void, TranscriptStoreError>
  /**
   * Forgets the sessions whose transcript was last saved before `before` (milliseconds since the
   * epoch), and answers how many: the retention of `AgentAdmin` (`RetentionPolicy.idleTranscripts`).
   * A store without it keeps its transcripts until they are removed one by one.
   */
  readonly removeIdle?: ((before: number) => Effect.Effect<number, TranscriptStoreError>) | undefined
  /**
   * Whether `load` is authoritative. `false` for `layerLocal`, which keeps nothing: the entity then
   * resumes from the local file as it finds it.
   */
  readonly durable: boolean
  /**
   * A UUID naming this store: the CLI session ids of its conversations are derived from it
   * (`AgentEntity.sessionIdFor`), so two stores never share a session id. `layerSql` keeps it in
   * its table (a new database, a new namespace); `layerMemory` draws one per layer.
   */
  readonly namespace: string
}

/**
 * The `TranscriptStore` service.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const hasTranscript = (sessionId: string) =>
 *   Effect.flatMap(TranscriptStore.TranscriptStore, (store) => store.load(sessionId)).pipe(Effect.map(Option.isSome))
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class TranscriptStore extends Context.Tag("effect-claude-agent/cluster/TranscriptStore")<
  TranscriptStore,
  TranscriptStoreShape
>() {}

/**
 * Keeps transcripts in this process's memory, for tests (and for one process that never
 * restarts).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* TranscriptStore.TranscriptStore
 *   yield* store.save("0e4a1c2e-8a51-5d1f-9a47-3c5b1f0e2d11", "{\"type\":\"user\"}\n")
 * }).pipe(Effect.provide(TranscriptStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TranscriptStore> = Layer.effect(
  TranscriptStore,
  Effect.map(Effect.zip(Ref.make(new Map<string, MemoryEntry>()), v4), ([ref, namespace]) => ({
    load: (sessionId) =>
      Effect.map(Ref.get(ref), (m) => Option.map(Option.fromNullable(m.get(sessionId)), (e) => e.transcript)),
    save: (sessionId, transcript) =>
      Effect.flatMap(
        Effect.clockWith((clock) => clock.currentTimeMillis),
        (at) => Ref.update(ref, (m) => new Map(m).set(sessionId, { transcript, at }))
      ),
    remove: (sessionId) =>
      Ref.update(ref, (m) => {
        const next = new Map(m)
        next.delete(sessionId)
        return next
      }),
    removeIdle: (before) =>
      Ref.modify(ref, (m) => {
        const next = new Map(Array.from(m).filter(([, entry]) => entry.at >= before))
        return [m.size - next.size, next]
      }),
    durable: true,
    namespace
  }))
)

interface MemoryEntry {
  readonly transcript: string
  readonly at: number
}

/**
 * Keeps nothing: the CLI's own files are the only copy. Fine on one machine whose disk survives a
 * restart (`SingleRunner`); a conversation that moves to another machine starts afresh there.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { AgentEntity, TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const entity = AgentEntity.layer().pipe(Layer.provide(TranscriptStore.layerLocal))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLocal: Layer.Layer<TranscriptStore> = Layer.succeed(TranscriptStore, {
  load: () => Effect.succeed(Option.none()),
  save: () => Effect.void,
  remove: () => Effect.void,
  durable: false,
  namespace: defaultNamespace
})

/**
 * Options of `layerSql`.
 *
 * @example
 * ```ts
 * import { TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const options: TranscriptStore.SqlOptions = { table: "agents_transcripts" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface SqlOptions {
  /** The table's name. Default `claude_transcripts`. It is created if it does not exist. */
  readonly table?: string | undefined
}

/**
 * Keeps transcripts in one SQL table (`session_id`, `transcript`, `updated_at`), created if it
 * does not exist; works on PostgreSQL, SQLite and MySQL, typically the cluster's own database.
 * Each save replaces the session's row with the whole transcript.
 *
 * @example
 * ```ts
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Layer } from "effect"
 * import { TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const store = TranscriptStore.layerSql().pipe(Layer.provide(SqliteClient.layer({ filename: "agents.db" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options: SqlOptions = {}): Layer.Layer<TranscriptStore, SqlError, SqlClient.SqlClient> =>
  Layer.effect(
    TranscriptStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = sql(options.table ?? "claude_transcripts")
      yield* sql.onDialectOrElse({
        mysql: () =>
          sql`CREATE TABLE IF NOT EXISTS ${table} (
            session_id VARCHAR(64) PRIMARY KEY,
            transcript LONGTEXT NOT NULL,
            updated_at BIGINT NOT NULL
          )`,
        mssql: () =>
          sql`IF OBJECT_ID(${options.table ?? "claude_transcripts"}, 'U') IS NULL CREATE TABLE ${table} (
            session_id NVARCHAR(64) PRIMARY KEY,
            transcript NVARCHAR(MAX) NOT NULL,
            updated_at BIGINT NOT NULL
          )`,
        orElse: () =>
          sql`CREATE TABLE IF NOT EXISTS ${table} (
            session_id VARCHAR(64) PRIMARY KEY,
            transcript TEXT NOT NULL,
            updated_at BIGINT NOT NULL
          )`
      })
      const fail = (operation: TranscriptStoreError["operation"], sessionId: string) => (e: SqlError) =>
        new TranscriptStoreError({ operation, sessionId, detail: e.message })

      const Row = Schema.Struct({ transcript: Schema.String })
      const load = (sessionId: string) =>
        sql`SELECT transcript FROM ${table} WHERE session_id = ${sessionId}`.pipe(
          Effect.mapError(fail("load", sessionId)),
          Effect.flatMap((rows) =>
            Schema.decodeUnknown(Schema.Array(Row))(rows).pipe(
              Effect.mapError((e) => new TranscriptStoreError({ operation: "load", sessionId, detail: e.message }))
            )
          ),
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.transcript))
        )
      const save = (sessionId: string, transcript: string) =>
        Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
          sql.onDialectOrElse({
            mysql: () =>
              sql`INSERT INTO ${table} (session_id, transcript, updated_at) VALUES (${sessionId}, ${transcript}, ${now})
                ON DUPLICATE KEY UPDATE transcript = VALUES(transcript), updated_at = VALUES(updated_at)`,
            mssql: () =>
              sql`MERGE ${table} WITH (HOLDLOCK) AS t USING (SELECT ${sessionId} AS session_id) AS s
                ON t.session_id = s.session_id
                WHEN MATCHED THEN UPDATE SET transcript = ${transcript}, updated_at = ${now}
                WHEN NOT MATCHED THEN INSERT (session_id, transcript, updated_at) VALUES (${sessionId}, ${transcript}, ${now});`,
            orElse: () =>
              sql`INSERT INTO ${table} (session_id, transcript, updated_at) VALUES (${sessionId}, ${transcript}, ${now})
                ON CONFLICT (session_id) DO UPDATE SET transcript = excluded.transcript, updated_at = excluded.updated_at`
          }).pipe(Effect.asVoid, Effect.mapError(fail("save", sessionId))))
      const remove = (sessionId: string) =>
        sql`DELETE FROM ${table} WHERE session_id = ${sessionId}`.pipe(
          Effect.asVoid,
          Effect.mapError(fail("remove", sessionId))
        )
      // The namespace's row is never idle (`updated_at` 0 would make it the oldest of all).
      const removeIdle = (before: number) =>
        sql`DELETE FROM ${table} WHERE updated_at < ${before} AND session_id <> ${namespaceKey}`.raw.pipe(
          Effect.map(affectedRows),
          Effect.mapError(fail("removeIdle", "*"))
        )
      return { load, save, remove, removeIdle, durable: true, namespace: yield* namespaceRow(sql, table, load) }
    })
  )

// How many rows a `DELETE` removed, from the driver's raw result: `rowCount` (pg), `changes`
// (SQLite), `affectedRows` (MySQL), `rowsAffected` (mssql).
const affectedRows = (raw: unknown): number => {
  if (!Predicate.isRecord(raw)) return 0
  for (const key of ["rowCount", "changes", "affectedRows", "rowsAffected"]) {
    const value = raw[key]
    if (typeof value === "number") return value
    if (Array.isArray(value) && typeof value[0] === "number") return value[0]
  }
  return 0
}

// The row under which `layerSql` keeps its namespace: not a UUID, so no session id can take it.
const namespaceKey = "~namespace"

// The store's namespace: read from its row, or drawn and inserted if there is none. Inserted only
// where absent, then read back, so that runners starting together on a new table agree.
const namespaceRow = (
  sql: SqlClient.SqlClient,
  table: Statement.Identifier,
  load: (sessionId: string) => Effect.Effect<Option.Option<string>, TranscriptStoreError>
) =>
  Effect.gen(function*() {
    const found = yield* load(namespaceKey)
    if (Option.isSome(found)) return found.value
    const drawn = yield* v4
    yield* sql.onDialectOrElse({
      mysql: () =>
        sql`INSERT IGNORE INTO ${table} (session_id, transcript, updated_at) VALUES (${namespaceKey}, ${drawn}, 0)`,
      mssql: () =>
        sql`MERGE ${table} WITH (HOLDLOCK) AS t USING (SELECT ${namespaceKey} AS session_id) AS s
          ON t.session_id = s.session_id
          WHEN NOT MATCHED THEN INSERT (session_id, transcript, updated_at) VALUES (${namespaceKey}, ${drawn}, 0);`,
      orElse: () =>
        sql`INSERT INTO ${table} (session_id, transcript, updated_at) VALUES (${namespaceKey}, ${drawn}, 0)
          ON CONFLICT (session_id) DO NOTHING`
    })
    return Option.getOrElse(yield* load(namespaceKey), () => drawn)
  }).pipe(Effect.orDie)
