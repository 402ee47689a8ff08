/**
 * The SQL session store's implementation (see `SessionStores.makeSql`): two tables, created if
 * missing: sessions (generation, mtime, summary) and entries (keyed by session, subpath and
 * sequence). Only `@effect/sql`'s types are imported: the client is passed in, so the core entry
 * does not load `@effect/sql`.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Option, ParseResult, Schema } from "effect"
import type { Entry, SessionRef, SessionStoreShape, SessionSummary } from "../../services/SessionStore.js"
import { parseJsonBoundary } from "../protocol/json.js"
import { SessionStoreError } from "./storeError.js"
import * as Store from "./store.js"
import { NullOrString } from "../schema/schemas.js"

/**
 * Options of the SQL store.
 *
 * @internal
 */
export interface Options {
  /** Table names' prefix: `<prefix>_sessions`, `<prefix>_entries`. Default `claude`. */
  readonly tablePrefix?: string | undefined
}

// Rows per INSERT: well under SQLite's and PostgreSQL's bound-parameter limits.
const INSERT_ROWS = 500

/**
 * Builds the store over `sql`, creating its tables if they are missing.
 *
 * @internal
 */
export const make = (
  sql: SqlClient.SqlClient,
  options: Options = {}
): Effect.Effect<SessionStoreShape, SqlError> =>
  Effect.gen(function*() {
    const prefix = options.tablePrefix ?? "claude"
    const sessions = sql(`${prefix}_sessions`)
    const entries = sql(`${prefix}_entries`)
    yield* sql`CREATE TABLE IF NOT EXISTS ${sessions} (
      project_key TEXT NOT NULL,
      session_id TEXT NOT NULL,
      generation BIGINT NOT NULL,
      mtime BIGINT,
      summary TEXT,
      PRIMARY KEY (project_key, session_id)
    )`
    yield* sql`CREATE TABLE IF NOT EXISTS ${entries} (
      project_key TEXT NOT NULL,
      session_id TEXT NOT NULL,
      subpath TEXT NOT NULL,
      seq BIGINT NOT NULL,
      uuid TEXT,
      entry TEXT NOT NULL,
      PRIMARY KEY (project_key, session_id, subpath, seq)
    )`
    yield* sql`CREATE UNIQUE INDEX IF NOT EXISTS ${sql(`${prefix}_entries_uuid`)}
      ON ${entries} (project_key, session_id, subpath, uuid)`
    const tick = Store.clock()
    // The rows' Schemas, made with the store rather than at import (the barrel loads this module).
    // PostgreSQL returns BIGINT columns as strings.
    const Num = Schema.Union(Schema.Number, Schema.NumberFromString)
    const GenerationRow = Schema.Struct({ generation: Num, summary: NullOrString })
    const SeqRow = Schema.Struct({ seq: Schema.NullOr(Num) })
    const UuidRow = Schema.Struct({ uuid: Schema.String })
    const EntryRow = Schema.Struct({ entry: Schema.String })
    const SummaryRow = Schema.Struct({ summary: Schema.String })
    const SubpathRow = Schema.Struct({ subpath: Schema.String })

    const fail = (operation: string, ref: SessionRef | undefined) => (cause: unknown) =>
      cause instanceof SessionStoreError ? cause : new SessionStoreError({
        reason: ParseResult.isParseError(cause)
          ? "Corrupt"
          : "Unavailable",
        operation,
        ...(ref === undefined ? {} : { sessionId: ref.sessionId }),
        detail: cause instanceof Error ? cause.message : String(cause),
        cause
      })
    const rows = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknown(Schema.Array(schema))
    const where = (ref: SessionRef) => sql`project_key = ${ref.projectKey} AND session_id = ${ref.sessionId}`

    // The session's row, created if missing and, on PostgreSQL, locked for the transaction.
    const lockSession = (ref: SessionRef) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO ${sessions} (project_key, session_id, generation)
          VALUES (${ref.projectKey}, ${ref.sessionId}, 0)
          ON CONFLICT (project_key, session_id) DO NOTHING`
        const lock = sql.onDialectOrElse({ pg: () => sql`FOR UPDATE`, orElse: () => sql`` })
        const found = yield* rows(GenerationRow)(
          yield* sql`SELECT generation, summary FROM ${sessions} WHERE ${where(ref)} ${lock}`
        )
        return found[0] ?? { generation: 0, summary: null }
      })

    const parseSummary = (text: string | null): SessionSummary | undefined => {
      if (text === null) return undefined
      const parsed: unknown = parseJsonBoundary(text)
      return Store.isSummary(parsed) ? parsed : undefined
    }

    // One transcript's fresh entries inserted after its last sequence number.
    const insert = (ref: SessionRef, subpath: string, batch: ReadonlyArray<Entry>) =>
      Effect.gen(function*() {
        const uuids = batch.flatMap((e) => typeof e.uuid === "string" ? [e.uuid] : [])
        const seen = new Set<string>()
        for (let i = 0; i < uuids.length; i += INSERT_ROWS) {
          const found = yield* sql`SELECT uuid FROM ${entries} WHERE ${where(ref)} AND subpath = ${subpath}
            AND ${sql.in("uuid", uuids.slice(i, i + INSERT_ROWS))}`.pipe(Effect.flatMap(rows(UuidRow)))
          for (const row of found) seen.add(row.uuid)
        }
        const kept = Store.fresh(batch, seen)
        if (kept.length === 0) return kept
        const [last] = yield* sql`SELECT MAX(seq) AS seq FROM ${entries} WHERE ${where(ref)} AND subpath = ${subpath}`
          .pipe(
            Effect.flatMap(rows(SeqRow))
          )
        const first = (last?.seq ?? 0) + 1
        const values = kept.map((entry, i) => ({
          project_key: ref.projectKey,
          session_id: ref.sessionId,
          subpath,
          seq: first + i,
          uuid: typeof entry.uuid === "string" ? entry.uuid : null,
          entry: JSON.stringify(entry)
        }))
        for (let i = 0; i < values.length; i += INSERT_ROWS) {
          yield* sql`INSERT INTO ${entries} ${sql.insert(values.slice(i, i + INSERT_ROWS))}`
        }
        return kept
      })

    const appendAll: SessionStoreShape["appendAll"] = (ref, writes, appendOptions) =>
      Effect.zipRight(
        Store.checkWrites("append", ref, writes),
        sql.withTransaction(Effect.gen(function*() {
          const row = yield* lockSession(ref)
          const given = appendOptions?.generation
          if (given !== undefined && given !== row.generation) {
            return yield* Effect.fail(Store.stale(ref, given, row.generation))
          }
          let main: Array<Entry> = []
          for (const write of writes) {
            const kept = yield* insert(ref, write.subpath ?? Store.MAIN, write.entries)
            if (write.subpath === undefined) main = main.concat(kept)
          }
          if (main.length === 0) return
          const mtime = tick(yield* Clock.currentTimeMillis)
          const summary = Store.foldSummary(parseSummary(row.summary), ref.sessionId, main, mtime)
          yield* sql`UPDATE ${sessions} SET mtime = ${mtime}, summary = ${JSON.stringify(summary)} WHERE ${where(ref)}`
        })).pipe(Effect.mapError(fail("append", ref)))
      )

    const listSummaries = (projectKey: string) =>
      sql`SELECT summary FROM ${sessions} WHERE project_key = ${projectKey} AND summary IS NOT NULL`.pipe(
        Effect.flatMap(rows(SummaryRow)),
        Effect.map((found) => found.flatMap((r) => parseSummary(r.summary) ?? [])),
        Effect.mapError(fail("listSummaries", undefined))
      )

    const shape: SessionStoreShape = {
      acquire: (ref) =>
        Effect.zipRight(
          Store.checkKey("acquire", ref),
          sql.withTransaction(Effect.gen(function*() {
            const row = yield* lockSession(ref)
            const next = row.generation + 1
            yield* sql`UPDATE ${sessions} SET generation = ${next} WHERE ${where(ref)}`
            return next
          })).pipe(Effect.mapError(fail("acquire", ref)))
        ),
      appendAll,
      append: (key, batch, appendOptions) => appendAll(key, [{ subpath: key.subpath, entries: batch }], appendOptions),
      load: (key) =>
        Effect.zipRight(
          Store.checkKey("load", key),
          sql`SELECT entry FROM ${entries} WHERE ${where(key)} AND subpath = ${key.subpath ?? Store.MAIN}
            ORDER BY seq`.pipe(
            Effect.flatMap(rows(EntryRow)),
            Effect.flatMap((found) =>
              Effect.try(() => found.map((r) => parseJsonBoundary(r.entry)).filter(Store.isEntry))
            ),
            Effect.map((loaded) => loaded.length === 0 ? Option.none() : Option.some(loaded)),
            Effect.mapError(fail("load", key))
          )
        ),
      listSummaries,
      listSessions: (projectKey) =>
        Effect.map(
          listSummaries(projectKey),
          (found) => found.map((s) => ({ sessionId: s.sessionId, mtime: s.mtime }))
        ),
      listSubkeys: (ref) =>
        Effect.zipRight(
          Store.checkKey("listSubkeys", ref),
          sql`SELECT DISTINCT subpath FROM ${entries} WHERE ${where(ref)} AND subpath <> ${Store.MAIN}`.pipe(
            Effect.flatMap(rows(SubpathRow)),
            Effect.map((found) => found.map((r) => r.subpath)),
            Effect.mapError(fail("listSubkeys", ref))
          )
        ),
      delete: (key) =>
        Effect.zipRight(
          Store.checkKey("delete", key),
          (key.subpath !== undefined
            ? sql`DELETE FROM ${entries} WHERE ${where(key)} AND subpath = ${key.subpath}`
            // The session's row (and its generation) stays: a writer fenced out stays fenced out.
            : sql.withTransaction(Effect.zipRight(
              sql`DELETE FROM ${entries} WHERE ${where(key)}`,
              sql`UPDATE ${sessions} SET mtime = NULL, summary = NULL WHERE ${where(key)}`
            ))).pipe(Effect.asVoid, Effect.mapError(fail("delete", key)))
        )
    }
    return shape
  })
