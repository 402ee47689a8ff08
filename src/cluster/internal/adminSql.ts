/**
 * The SQL behind `AgentAdmin`: conversations and their turns read from `@effect/cluster`'s
 * message tables (`<prefix>_messages`, `<prefix>_replies`, `<prefix>_runners`), and the deletes
 * of a conversation and of old finished turns. Works on PostgreSQL and SQLite (and MySQL).
 *
 * A turn is a `Send` request row (`kind` 0). Its replies are chunk rows (`kind` NULL) and one exit
 * row (`kind` 0) once it is over; the acknowledgements and interrupts of a request are message
 * rows with its `request_id`. Row ids are snowflakes: the time a row was written is in its id.
 *
 * @internal
 */
import { MachineId, Runner, Snowflake } from "@effect/cluster"
import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Predicate } from "effect"

/** @internal */
export interface ConversationRow {
  readonly conversationId: string
  readonly shardId: string
  readonly turnCount: number
  readonly openTurns: number
  readonly firstAt: number
  readonly lastAt: number
}

/** @internal */
export interface TurnRow {
  readonly requestId: string
  readonly shardId: string
  readonly payload: unknown
  readonly startedAt: number
  readonly traceId: string | null
  readonly chunks: number
  readonly endedAt: number | null
  readonly exit: unknown
}

/** @internal */
export interface RemovedRows {
  readonly turns: number
  readonly messages: number
  readonly replies: number
}

const text = (
  u: unknown
): string => (typeof u === "string" ? u : typeof u === "bigint" || typeof u === "number" ? String(u) : "")
const count = (
  u: unknown
): number => (typeof u === "number" ? u : typeof u === "bigint" || typeof u === "string" ? Number(u) : 0)
const at = (id: unknown): number => Snowflake.timestamp(Snowflake.Snowflake(text(id)))
const json = (u: unknown): unknown => {
  if (typeof u !== "string") return null
  try {
    return JSON.parse(u)
  } catch {
    return null
  }
}

// A heartbeat as milliseconds since the epoch: a `Date` (pg), or the text of a timestamp (SQLite).
const heartbeat = (u: unknown): number | null => {
  if (u instanceof Date) return u.getTime()
  if (typeof u !== "string") return null
  const parsed = Date.parse(u.includes("T") || u.endsWith("Z") ? u : `${u.replace(" ", "T")}Z`)
  return Number.isNaN(parsed) ? null : parsed
}

// Ids go into `IN (…)` lists as literals (as `@effect/cluster`'s storage does): only digits pass.
const idList = (ids: ReadonlyArray<string>) => ids.filter((id) => /^\d+$/.test(id)).join(",")

// How many rows a statement changed, from the driver's raw result.
const changed = (raw: unknown): number => {
  if (!Predicate.isRecord(raw)) return 0
  for (const key of ["rowCount", "changes", "affectedRows"]) {
    const value = raw[key]
    if (typeof value === "number") return value
  }
  return 0
}

// What the queries work on: one cluster's tables, in one dialect.
interface Tables {
  readonly sql: SqlClient.SqlClient
  readonly messages: Statement.Identifier
  readonly replies: Statement.Identifier
  readonly runners: Statement.Identifier
  readonly sqlFalse: Statement.Fragment
  readonly entityType: string
}

// Snowflake ids read as bigints: SQLite's numbers would round them.
const safe = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, SqlClient.SafeIntegers, true)

const reads = ({ entityType, messages, replies, runners, sql, sqlFalse }: Tables) => {
  const conversations = (page: { readonly limit: number; readonly offset: number }) =>
    sql`
      SELECT entity_id, shard_id, COUNT(*) AS turn_count,
        SUM(CASE WHEN processed = ${sqlFalse} THEN 1 ELSE 0 END) AS open_turns,
        MIN(id) AS first_id, MAX(id) AS last_id
      FROM ${messages}
      WHERE entity_type = ${entityType} AND kind = 0
      GROUP BY entity_id, shard_id
      ORDER BY MAX(id) DESC
      LIMIT ${page.limit} OFFSET ${page.offset}
    `.pipe(
      safe,
      Effect.map((rows) =>
        rows.map((row): ConversationRow => ({
          conversationId: text(row.entity_id),
          shardId: text(row.shard_id),
          turnCount: count(row.turn_count),
          openTurns: count(row.open_turns),
          firstAt: at(row.first_id),
          lastAt: at(row.last_id)
        }))
      )
    )

  const turns = (conversationId: string) =>
    sql`
      SELECT m.id, m.shard_id, m.payload, m.trace_id,
        (SELECT COUNT(*) FROM ${replies} c WHERE c.request_id = m.id AND c.kind IS NULL) AS chunks,
        e.id AS exit_id, e.payload AS exit_payload
      FROM ${messages} m
      LEFT JOIN ${replies} e ON e.request_id = m.id AND e.kind = 0
      WHERE m.entity_type = ${entityType} AND m.entity_id = ${conversationId} AND m.kind = 0
      ORDER BY m.id ASC
    `.pipe(
      safe,
      Effect.map((rows) =>
        rows.map((row): TurnRow => ({
          requestId: text(row.id),
          shardId: text(row.shard_id),
          payload: json(row.payload),
          startedAt: at(row.id),
          traceId: typeof row.trace_id === "string" ? row.trace_id : null,
          chunks: count(row.chunks),
          endedAt: row.exit_id === null || row.exit_id === undefined ? null : at(row.exit_id),
          exit: json(row.exit_payload)
        }))
      )
    )

  const openTurns = (conversationId: string) =>
    sql`
      SELECT COUNT(*) AS n FROM ${messages}
      WHERE entity_type = ${entityType} AND entity_id = ${conversationId} AND kind = 0 AND processed = ${sqlFalse}
    `.pipe(Effect.map((rows) => count(rows[0]?.n)))

  const allRunners = sql`SELECT runner, healthy, last_heartbeat FROM ${runners}`.pipe(
    Effect.map((rows) =>
      rows.map((row) => ({
        runner: Runner.Runner.decodeSync(text(row.runner)),
        healthy: row.healthy === true || row.healthy === 1 || row.healthy === 1n,
        lastHeartbeat: heartbeat(row.last_heartbeat)
      }))
    )
  )
  const healthyRunners = Effect.map(allRunners, (all) => all.filter((r) => r.healthy).map((r) => r.runner))

  // Turns not over, by shard.
  const openByShard = sql`
    SELECT shard_id, COUNT(*) AS n FROM ${messages}
    WHERE entity_type = ${entityType} AND kind = 0 AND processed = ${sqlFalse}
    GROUP BY shard_id
  `.pipe(Effect.map((rows) => rows.map((row) => ({ shardId: text(row.shard_id), open: count(row.n) }))))

  return { conversations, turns, openTurns, allRunners, healthyRunners, openByShard }
}

const deletes = ({ entityType, messages, replies, sql }: Tables) => {
  // Replies first: a reply row never outlives the request it answers.
  const removeRequests = (ids: ReadonlyArray<string>): Effect.Effect<RemovedRows, SqlError> => {
    const list = idList(ids)
    if (list === "") return Effect.succeed({ turns: 0, messages: 0, replies: 0 })
    return Effect.gen(function*() {
      const removedReplies = changed(yield* sql`DELETE FROM ${replies} WHERE request_id IN (${sql.literal(list)})`.raw)
      const removedMessages = changed(
        yield* sql`DELETE FROM ${messages} WHERE request_id IN (${sql.literal(list)})`.raw
      )
      return { turns: ids.length, messages: removedMessages, replies: removedReplies }
    }).pipe(sql.withTransaction, safe)
  }

  const requestIdsOf = (conversationId: string) =>
    sql`
      SELECT id FROM ${messages}
      WHERE entity_type = ${entityType} AND entity_id = ${conversationId} AND kind = 0
    `.pipe(safe, Effect.map((rows) => rows.map((row) => text(row.id))))

  const remove = (conversationId: string) => Effect.flatMap(requestIdsOf(conversationId), removeRequests)

  const finishedBefore = (before: number, limit: number) =>
    sql`
      SELECT m.id FROM ${messages} m
      JOIN ${replies} e ON e.request_id = m.id AND e.kind = 0
      WHERE m.entity_type = ${entityType} AND m.kind = 0 AND e.id < ${sql.literal(cutoff(before))}
      LIMIT ${limit}
    `.pipe(safe, Effect.map((rows) => rows.map((row) => text(row.id))))

  // Old finished turns, a batch at a time so no statement holds many locks for long.
  const removeFinished = (before: number, batch: number) =>
    Effect.gen(function*() {
      let total = { turns: 0, messages: 0, replies: 0 }
      for (;;) {
        const ids = yield* finishedBefore(before, batch)
        const removed = yield* removeRequests(ids)
        total = {
          turns: total.turns + removed.turns,
          messages: total.messages + removed.messages,
          replies: total.replies + removed.replies
        }
        if (ids.length < batch) return total
      }
    })

  // Replies whose request is gone: written by a turn that ended after its conversation was deleted.
  const removeOrphanReplies = (before: number) =>
    sql`
      DELETE FROM ${replies}
      WHERE id < ${sql.literal(cutoff(before))}
      AND NOT EXISTS (SELECT 1 FROM ${messages} m WHERE m.id = ${replies}.request_id)
    `.raw.pipe(safe, Effect.map(changed))

  return { remove, removeFinished, removeOrphanReplies }
}

/**
 * The queries on one cluster's tables.
 *
 * @internal
 */
export const make = (options: { readonly prefix: string; readonly entityType: string }) =>
  Effect.map(SqlClient.SqlClient, (client) => {
    const sql = client.withoutTransforms()
    const tables: Tables = {
      sql,
      messages: sql(`${options.prefix}_messages`),
      replies: sql(`${options.prefix}_replies`),
      runners: sql(`${options.prefix}_runners`),
      sqlFalse: sql.onDialectOrElse({
        sqlite: () => sql.literal("0"),
        mssql: () => sql.literal("0"),
        orElse: () => sql.literal("FALSE")
      }),
      entityType: options.entityType
    }
    return { ...reads(tables), ...deletes(tables) }
  })

/**
 * The smallest snowflake of a millisecond: rows with a smaller id were written before it.
 *
 * @internal
 */
export const cutoff = (before: number): string =>
  String(Snowflake.make({ timestamp: Math.max(before, snowflakeEpoch), machineId: MachineId.make(0), sequence: 0 }))

// The first millisecond a snowflake can name (`Snowflake`'s epoch, 2025-01-01).
const snowflakeEpoch = Snowflake.timestamp(Snowflake.Snowflake(0n))

/**
 * The queries `make` gives.
 *
 * @internal
 */
export type Queries = Effect.Effect.Success<ReturnType<typeof make>>
