/**
 * A conversation's turns in the `SessionStore`. The CLI mirrors its transcript through the
 * session's `sessionStore` option; the entity gives it `TurnWriter.store`, a view of the real store
 * that keeps the mirror's appends of the conversation's session until the turn is over. `commit`
 * then records them, the turn's id and its reply in one `appendAll` (one transaction in SQL),
 * fenced by the generation the entity acquired when it opened the session: the stored transcript
 * and the stored replies never disagree (a turn is in both or in neither), and a runner that lost
 * the conversation appends nothing once the new owner has opened it.
 *
 * @internal
 */
import { Effect, Option, Schedule } from "effect"
import type { Entry, SessionRef, SessionStoreError, SessionStoreShape, Write } from "../../services/SessionStore.js"

/**
 * The subpath of a session's committed turn ids (one small entry per turn, its `uuid` the turn id).
 *
 * @internal
 */
export const TURNS = "cluster/turns"

/**
 * The subpath of a session's turn replies (`messages`: the reply as the wire encodes it).
 *
 * @internal
 */
export const REPLIES = "cluster/replies"

/**
 * The subpath of a session's calls waiting for a decision (`awaiting`) and those continued since
 * (`continued`), one small entry each: what the cluster entity checks before it runs a turn.
 *
 * @internal
 */
export const APPROVALS = "cluster/approvals"

/**
 * What `make` gives: the store for the session's options, and the turn's commit.
 *
 * @internal
 */
export interface TurnWriter {
  readonly store: SessionStoreShape
  /**
   * Records what the mirror kept since the last commit, the turn id and its reply (and `approvals`
   * entries, for the `APPROVALS` subpath), together.
   */
  readonly commit: (
    turnId: string,
    reply: ReadonlyArray<unknown>,
    approvals?: ReadonlyArray<Entry>
  ) => Effect.Effect<void, SessionStoreError>
}

const same = (a: SessionRef, b: SessionRef): boolean => a.projectKey === b.projectKey && a.sessionId === b.sessionId

// A database blip should not fail a turn the model completed; a fenced-out writer is not retried.
const retry = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/**
 * A writer for the session `ref`, fenced by `generation` (from `store.acquire(ref)`).
 *
 * @internal
 */
export const make = (store: SessionStoreShape, ref: SessionRef, generation: number): TurnWriter => {
  let pending: Array<Write> = []
  const appendAll: SessionStoreShape["appendAll"] = (session, writes, options) =>
    same(session, ref)
      ? Effect.sync(() => {
        for (const write of writes) pending.push(write)
      })
      : store.appendAll(session, writes, options)
  const view: SessionStoreShape = {
    ...store,
    // The mirror fences its appends with the generation it acquires: the entity's, acquired at open.
    acquire: (session) => same(session, ref) ? Effect.succeed(generation) : store.acquire(session),
    appendAll,
    append: (key, entries, options) => appendAll(key, [{ subpath: key.subpath, entries }], options)
  }
  const commit = (turnId: string, reply: ReadonlyArray<unknown>, approvals: ReadonlyArray<Entry> = []) =>
    Effect.suspend(() => {
      const writes: Array<Write> = [
        ...pending,
        ...turnRecord(turnId, reply, approvals)
      ]
      pending = []
      // A retry after an append that was recorded but not acknowledged stores nothing twice: the
      // store skips entries whose uuid it has.
      return store.appendAll(ref, writes, { generation }).pipe(
        Effect.retry({ schedule: retry, while: (e) => e.reason === "Unavailable" })
      )
    })
  return { store: view, commit }
}

// A turn's own entries: its id, its reply, and what it changed of the calls waiting for a decision.
const turnRecord = (turnId: string, reply: ReadonlyArray<unknown>, approvals: ReadonlyArray<Entry>): Array<Write> => [
  { subpath: TURNS, entries: [{ type: "agent-turn", uuid: turnId }] },
  { subpath: REPLIES, entries: [{ type: "agent-reply", uuid: turnId, messages: reply }] },
  ...(approvals.length === 0 ? [] : [{ subpath: APPROVALS, entries: approvals }])
]

const uuids = (entries: Option.Option<ReadonlyArray<Entry>>): Set<string> =>
  new Set(Option.getOrElse(entries, (): ReadonlyArray<Entry> => []).flatMap((e) => e.uuid ?? []))

/**
 * The ids of the session's committed turns.
 *
 * @internal
 */
export const committed = (store: SessionStoreShape, ref: SessionRef): Effect.Effect<Set<string>, SessionStoreError> =>
  Effect.map(store.load({ ...ref, subpath: TURNS }), uuids)

/**
 * The stored reply of a committed turn (`messages` as stored), if the store has it.
 *
 * @internal
 */
export const reply = (
  store: SessionStoreShape,
  ref: SessionRef,
  turnId: string
): Effect.Effect<Option.Option<unknown>, SessionStoreError> =>
  Effect.map(
    store.load({ ...ref, subpath: REPLIES }),
    Option.flatMap((entries) => Option.fromNullable(entries.find((e) => e.uuid === turnId)?.messages))
  )

/**
 * A writer for the session `ref` whose mirror appends go to the store at once (fenced by
 * `generation`), and whose `commit` records only the turn id and its reply. For a continuation of a
 * decided call: with the session's `eager` flush, the call's result is stored as soon as the tool
 * has run, so a runner that stops before the turn's end leaves the next owner a transcript that
 * says the tool ran, and the tool is not run again.
 *
 * @internal
 */
export const direct = (store: SessionStoreShape, ref: SessionRef, generation: number): TurnWriter => ({
  store: { ...store, acquire: (session) => same(session, ref) ? Effect.succeed(generation) : store.acquire(session) },
  commit: (turnId, reply, approvals = []) =>
    store.appendAll(ref, turnRecord(turnId, reply, approvals), { generation }).pipe(
      Effect.retry({ schedule: retry, while: (e) => e.reason === "Unavailable" })
    )
})

/**
 * The entry that records a call waiting for a decision, or its continuation.
 *
 * @internal
 */
export const approvalEntry = (kind: "awaiting" | "continued", toolUseId: string): Entry => ({
  type: kind,
  uuid: `${kind}:${toolUseId}`,
  toolUseId
})

/**
 * The session's calls that wait for a decision or for their continuation.
 *
 * @internal
 */
export const awaiting = (store: SessionStoreShape, ref: SessionRef): Effect.Effect<Set<string>, SessionStoreError> =>
  Effect.map(store.load({ ...ref, subpath: APPROVALS }), (found) => {
    const waiting = new Set<string>()
    for (const entry of Option.getOrElse(found, (): ReadonlyArray<Entry> => [])) {
      const id = entry.toolUseId
      if (typeof id !== "string") continue
      if (entry.type === "awaiting") waiting.add(id)
      else if (entry.type === "continued") waiting.delete(id)
    }
    return waiting
  })
