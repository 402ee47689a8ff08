/**
 * The SQL approval store's implementation (see `ApprovalStores.makeSql`): one table, created if
 * missing, with the approval as JSON beside the columns it is queried by. A decision is a
 * compare-and-set: `UPDATE … WHERE id = ? AND state = 'pending' RETURNING id`.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Option, ParseResult, Schema } from "effect"
import {
  Approval,
  ApprovalAlreadyDecided,
  ApprovalNotFound,
  ApprovalStoreError,
  type ApprovalStoreShape
} from "../../services/ApprovalStore.js"
import * as Decide from "./decide.js"

/**
 * Options of the SQL store.
 *
 * @internal
 */
export interface Options {
  readonly tablePrefix?: string | undefined
}

const rows = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknown(Schema.Array(schema))

/**
 * Builds the store over `sql`, creating its table if it is missing.
 *
 * @internal
 */
export const make = (sql: SqlClient.SqlClient, options: Options = {}): Effect.Effect<ApprovalStoreShape, SqlError> =>
  Effect.gen(function*() {
    const table = sql(`${options.tablePrefix ?? "claude"}_approvals`)
    // The rows' Schemas, made with the store rather than at import (the barrel loads this module).
    const RecordRow = Schema.Struct({ record: Schema.parseJson(Approval) })
    const IdRow = Schema.Struct({ id: Schema.String })
    yield* sql`CREATE TABLE IF NOT EXISTS ${table} (
      id TEXT PRIMARY KEY,
      project_key TEXT NOT NULL,
      session_id TEXT NOT NULL,
      state TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      record TEXT NOT NULL
    )`
    yield* sql`CREATE INDEX IF NOT EXISTS ${sql(`${options.tablePrefix ?? "claude"}_approvals_pending`)}
      ON ${table} (project_key, state, created_at)`

    const fail = (operation: string) => (cause: unknown) =>
      new ApprovalStoreError({
        reason: ParseResult.isParseError(cause) ? "Corrupt" : "Unavailable",
        operation,
        detail: cause instanceof Error ? cause.message : String(cause),
        cause
      })

    const read = (id: string) =>
      sql`SELECT record FROM ${table} WHERE id = ${id}`.pipe(
        Effect.flatMap(rows(RecordRow)),
        Effect.map((found) => Option.fromNullable(found[0]?.record))
      )

    // The compare-and-set: `true` when this call moved the approval out of `pending`.
    const swap = (next: Approval) =>
      sql`UPDATE ${table} SET state = ${next.state}, record = ${JSON.stringify(next)}
        WHERE id = ${next.id} AND state = 'pending' RETURNING id`.pipe(
        Effect.flatMap(rows(IdRow)),
        Effect.map((updated) => updated.length === 1)
      )

    // The approval as stored now, for the refusal of a decision that lost the race.
    const refused = (
      id: string
    ): Effect.Effect<never, ApprovalNotFound | ApprovalAlreadyDecided | SqlError | ParseResult.ParseError> =>
      Effect.flatMap(
        read(id),
        (current): Effect.Effect<never, ApprovalNotFound | ApprovalAlreadyDecided> =>
          Option.isNone(current)
            ? Effect.fail(new ApprovalNotFound({ id }))
            : Effect.fail(new ApprovalAlreadyDecided({ approval: current.value }))
      )

    const shape: ApprovalStoreShape = {
      create: (approval) =>
        sql`INSERT INTO ${table} (id, project_key, session_id, state, created_at, expires_at, record)
          VALUES (${approval.id}, ${approval.projectKey}, ${approval.sessionId}, ${approval.state},
            ${approval.createdAt}, ${approval.expiresAt}, ${JSON.stringify(approval)})
          ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(fail("create"))),
      get: (id) => read(id).pipe(Effect.mapError(fail("get"))),
      listPending: (filter) =>
        (filter.sessionId === undefined
          ? sql`SELECT record FROM ${table} WHERE project_key = ${filter.projectKey} AND state = 'pending'
            ORDER BY created_at`
          : sql`SELECT record FROM ${table} WHERE project_key = ${filter.projectKey}
            AND session_id = ${filter.sessionId} AND state = 'pending' ORDER BY created_at`).pipe(
            Effect.flatMap(rows(RecordRow)),
            Effect.map((found) => found.map((r) => r.record)),
            Effect.mapError(fail("listPending"))
          ),
      decide: (id, decision, decideOptions) =>
        Effect.gen(
          function*(): Effect.fn.Return<Approval, ApprovalStoreError | ApprovalNotFound | ApprovalAlreadyDecided> {
            const now = yield* Clock.currentTimeMillis
            const current = yield* read(id).pipe(Effect.mapError(fail("decide")))
            if (Option.isNone(current)) return yield* new ApprovalNotFound({ id })
            const next = Decide.step(current.value, decision, now, decideOptions)
            if (next._tag === "Refuse") return yield* new ApprovalAlreadyDecided({ approval: next.approval })
            const won = yield* swap(next.approval).pipe(Effect.mapError(fail("decide")))
            if (!won) {
              return yield* refused(id).pipe(
                Effect.catchIf((e) => e._tag === "SqlError" || e._tag === "ParseError", (e) =>
                  Effect.fail(fail("decide")(e)))
              )
            }
            if (next._tag === "Expire") {
              return yield* new ApprovalAlreadyDecided({ approval: next.approval })
            }
            return next.approval
          }
        ),
      expireDue: Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const due = yield* sql`SELECT record FROM ${table} WHERE state = 'pending' AND expires_at <= ${now}
          ORDER BY created_at`.pipe(Effect.flatMap(rows(RecordRow)))
        const expired: Array<Approval> = []
        for (const { record } of due) {
          const next = Decide.applied(record, Decide.expiry(record), now)
          if (yield* swap(next)) expired.push(next)
        }
        return expired
      }).pipe(Effect.mapError(fail("expireDue")))
    }
    return shape
  })
