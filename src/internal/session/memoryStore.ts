/**
 * The in-memory session store (`SessionStore.makeMemory`): for tests and for sessions that only
 * need to survive their CLI process, not this one.
 *
 * @internal
 */
import { Clock, Effect, Option } from "effect"
import type { Entry, Listed, SessionRef, SessionStoreShape, SessionSummary } from "../../services/SessionStore.js"
import * as Store from "./store.js"

interface MemorySession {
  generation: number
  readonly transcripts: Map<string, { readonly entries: Array<Entry>; readonly seen: Set<string> }>
  summary: SessionSummary | undefined
}

/**
 * A store in this process's memory (`SessionStore.makeMemory`).
 *
 * @internal
 */
export const make: Effect.Effect<SessionStoreShape> = Effect.sync(() => {
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

/**
 * A listing from summaries.
 *
 * @internal
 */
export const toListed = (summaries: ReadonlyArray<SessionSummary>): ReadonlyArray<Listed> =>
  summaries.map((s) => ({ sessionId: s.sessionId, mtime: s.mtime }))
