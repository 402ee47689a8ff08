/**
 * The session store in a directory (`SessionStore.makeFiles`): per project a folder, per session
 * an append-only log of its appends (one line per `appendAll`, so a batch is written with one
 * `write` and a line cut short by a crash is ignored), a summary file and a generation file.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Clock, Effect, Option } from "effect"
import type { Entry, SessionRef, SessionStoreShape, SessionSummary } from "../../services/SessionStore.js"
import { parseJsonBoundary } from "../protocol/json.js"
import { toListed } from "./memoryStore.js"
import { SessionStoreError } from "./storeError.js"
import * as Store from "./store.js"

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
 * A store in a directory (`SessionStore.makeFiles`).
 *
 * @internal
 */
export const make = (
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
