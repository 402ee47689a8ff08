// `SqlMessageStorage` with streamed replies read back correctly.
//
// @effect/cluster 0.60.2 stores a stream's chunks with `kind` NULL and its exit with `kind` 0, and
// reads rows back with `Number(row.kind) === 0`: `Number(null)` is 0, so every stored chunk is read
// as an exit whose value is the chunk's array, which fails to decode and ends the stream with a
// defect. A client reads stored replies whenever it cannot be answered live: the runner that owned
// the conversation died mid-turn, or the same turn is sent again (a duplicate). That is exactly
// the failover path of `AgentEntity.Send`, on every SQL dialect. This wrapper replaces `repliesFor`
// with the same query and a correct reading. Storing a request also wakes the runner that holds
// its shard (`wakeup.ts`). Everything else is the library's storage.
import { MessageStorage, Reply, SqlMessageStorage } from "@effect/cluster"
import { PersistenceError } from "@effect/cluster/ClusterError"
import type { OutgoingRequest } from "@effect/cluster/Message"
import type { Rpc } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, FiberRef, Predicate, Schema } from "effect"
import * as Wakeup from "./wakeup.js"

const str = (u: unknown): string => (typeof u === "bigint" || typeof u === "number" ? String(u) : `${u}`)

export const make = (options: { readonly prefix?: string | undefined } = {}) =>
  Effect.gen(function*() {
    const inner = yield* SqlMessageStorage.make(options)
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const replies = sql(`${options.prefix ?? "cluster"}_replies`)
    const sqlFalse = sql.onDialectOrElse({
      sqlite: () => sql.literal("0"),
      mssql: () => sql.literal("0"),
      orElse: () => sql.literal("FALSE")
    })

    const repliesFor = <R extends Rpc.Any>(
      requests: Iterable<OutgoingRequest<R>>
    ): Effect.Effect<Array<Reply.Reply<R>>, PersistenceError> =>
      Effect.gen(function*() {
        const byId = new Map<string, OutgoingRequest<R>>()
        for (const request of requests) byId.set(String(request.envelope.requestId), request)
        if (byId.size === 0) return []
        const rows = yield* sql`
          SELECT id, kind, request_id, payload, sequence
          FROM ${replies}
          WHERE request_id IN (${sql.literal(Array.from(byId.keys()).join(","))})
          AND (kind = 0 OR (kind IS NULL AND acked = ${sqlFalse}))
          ORDER BY rowid ASC
        `.unprepared.pipe(
          Effect.provideService(SqlClient.SafeIntegers, true),
          PersistenceError.refail
        )
        const out: Array<Reply.Reply<R>> = []
        const failed = new Set<string>()
        for (const row of rows) {
          if (!Predicate.isRecord(row)) continue
          const requestId = str(row.request_id)
          const request = byId.get(requestId)
          if (request === undefined || failed.has(requestId)) continue
          const payload: unknown = JSON.parse(str(row.payload))
          const encoded = row.kind === null || row.kind === undefined
            ? { _tag: "Chunk", id: str(row.id), requestId, sequence: Number(row.sequence), values: payload }
            : { _tag: "WithExit", id: str(row.id), requestId, exit: payload }
          const decoded = yield* Schema.decodeUnknown(Reply.Reply(request.rpc))(encoded).pipe(
            Effect.locally(FiberRef.currentContext, request.context),
            Effect.catchAll((error) => {
              failed.add(requestId)
              return Effect.succeed(
                new Reply.WithExit<R>({
                  id: request.envelope.requestId,
                  requestId: request.envelope.requestId,
                  exit: Exit.die(error)
                })
              )
            })
          )
          out.push(decoded)
        }
        return out
      })

    const wake = yield* Wakeup.makeNotifier(options.prefix)
    const saveRequest: MessageStorage.MessageStorage["Type"]["saveRequest"] = (message) =>
      Effect.tap(inner.saveRequest(message), () => wake(message.envelope.address.shardId.toString()))

    return MessageStorage.MessageStorage.of({ ...inner, saveRequest, repliesFor })
  })
