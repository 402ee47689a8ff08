/**
 * The transcript mirror: the `transcript_mirror` frames of a session started with
 * `--session-mirror`, appended to its `SessionStore`. Batched (the default), a turn's frames are
 * appended together, in one `appendAll` per session, when its `result` arrives and before the
 * `result` is delivered; eager, each frame is appended as it comes. A failed append is delivered
 * as a `system/mirror_error` message, or (`failure: "fail"`) fails the turn's message stream with
 * its `SessionStoreError`; either way the session goes on.
 *
 * @internal
 */
import { Context, Duration, Effect, Schedule } from "effect"
import type { Entry, SessionRef, SessionStoreShape, Write } from "../../services/SessionStore.js"
import { SessionStoreError } from "../../services/SessionStore.js"
import type { RawObject } from "../protocol/router.js"
import { isEntry } from "./store.js"

/**
 * What a session's mirror is given: the store, how to flush, and the config directory the CLI
 * writes under (the frames' paths are read relative to its `projects` folder).
 *
 * @internal
 */
export interface MirrorConfig {
  readonly store: SessionStoreShape
  readonly flush: "batched" | "eager"
  /** A failed append: a `system/mirror_error` message, or the failure of the turn's stream. */
  readonly failure: "message" | "fail"
  readonly configDir: string | undefined
}

/**
 * Queued in place of a `mirror_error` message when failures fail the turn: the session's message
 * pull fails the turn's stream with `error` where it meets it.
 *
 * @internal
 */
export class MirrorFailure {
  constructor(readonly error: SessionStoreError) {}
}

/**
 * The mirror's configuration in a session's context when the session has a store: the control
 * channel reads it when it starts its reader.
 *
 * @internal
 */
export class MirrorSettings extends Context.Tag("effect-claude-agent/internal/MirrorSettings")<
  MirrorSettings,
  MirrorConfig
>() {}

/**
 * What the reader hands the mirror.
 *
 * @internal
 */
export interface Mirror {
  /** A `transcript_mirror` frame: kept for the turn, or (eager) the append to run now. */
  readonly frame: (frame: RawObject) => Effect.Effect<void> | undefined
  /** `true` when frames wait for the end of the turn. */
  readonly pending: () => boolean
  /** Appends what waits; failures become `mirror_error` messages or a `MirrorFailure`. */
  readonly flush: Effect.Effect<void>
}

// Past this many waiting entries a batch is appended without waiting for the turn's end.
const MAX_PENDING = 500
const APPEND_TIMEOUT = Duration.seconds(60)
// Two more tries for a store that is unavailable; never for a fenced-out writer. Made on first use:
// the first Schedule a process builds compiles Schedule's code, ~0.4 ms of an import otherwise.
const makeRetry = () => Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
let retry: ReturnType<typeof makeRetry> | undefined

/**
 * The session and subpath a frame's file stands for: `<configDir>/projects/<project>/<session>.jsonl`
 * or `…/<project>/<session>/<subpath>.jsonl`. `undefined` for any other path.
 *
 * @internal
 */
export const keyOf = (
  filePath: string,
  configDir: string | undefined
): { readonly ref: SessionRef; readonly subpath: string | undefined } | undefined => {
  const path = filePath.replace(/\\/g, "/")
  const root = configDir === undefined ? undefined : `${configDir.replace(/\\/g, "/").replace(/\/+$/, "")}/projects/`
  const at = root !== undefined && path.startsWith(root)
    ? root.length - "/projects/".length
    : path.lastIndexOf("/projects/")
  if (at < 0 || !path.endsWith(".jsonl")) return undefined
  const parts = path.slice(at + "/projects/".length, -".jsonl".length).split("/")
  const [projectKey, sessionId, ...rest] = parts
  if (projectKey === undefined || sessionId === undefined || projectKey === "" || sessionId === "") return undefined
  return { ref: { projectKey, sessionId }, subpath: rest.length === 0 ? undefined : rest.join("/") }
}

interface Batch {
  readonly ref: SessionRef
  readonly writes: Map<string | undefined, Array<Entry>>
}

/**
 * A mirror over `config.store`; `emit` delivers its `mirror_error` messages (or `MirrorFailure`s)
 * to the session.
 *
 * @internal
 */
export const make = (config: MirrorConfig, emit: (messages: Array<unknown>) => Effect.Effect<void>): Mirror => {
  // Each session's generation, acquired at its first append: a process that resumes the session
  // later acquires a newer one, and this writer's appends are refused from then on.
  const generations = new Map<string, number>()
  let batches = new Map<string, Batch>()
  let waiting = 0

  const generation = (ref: SessionRef) => {
    const id = `${ref.projectKey}\u0000${ref.sessionId}`
    const known = generations.get(id)
    return known !== undefined
      ? Effect.succeed(known)
      : Effect.tap(config.store.acquire(ref), (g) => Effect.sync(() => generations.set(id, g)))
  }

  const report = (batch: Batch, error: SessionStoreError) => {
    const warned = Effect.logWarning(`effect-claude-agent: session store append failed: ${error.message}`)
    if (config.failure === "fail") return Effect.zipRight(warned, emit([new MirrorFailure(error)]))
    const subpaths = [...batch.writes.keys()]
    const subpath = subpaths.length === 1 ? subpaths[0] : undefined
    return Effect.zipRight(
      warned,
      emit([{
        type: "system",
        subtype: "mirror_error",
        error: error.message,
        key: { ...batch.ref, ...(subpath === undefined ? {} : { subpath }) },
        session_id: batch.ref.sessionId,
        uuid: crypto.randomUUID()
      }])
    )
  }

  const append = (batch: Batch): Effect.Effect<void> => {
    const writes: Array<Write> = []
    for (const [subpath, entries] of batch.writes) {
      writes.push(subpath === undefined ? { entries } : { subpath, entries })
    }
    return generation(batch.ref).pipe(
      Effect.flatMap((g) => config.store.appendAll(batch.ref, writes, { generation: g })),
      Effect.retry({ schedule: retry ??= makeRetry(), while: (e) => e.reason === "Unavailable" }),
      Effect.timeoutFail({
        duration: APPEND_TIMEOUT,
        onTimeout: () =>
          new SessionStoreError({
            reason: "Unavailable",
            operation: "append",
            sessionId: batch.ref.sessionId,
            detail: `no answer within ${Duration.format(APPEND_TIMEOUT)}`
          })
      }),
      Effect.catchAll((e) => report(batch, e))
    )
  }

  const take = (): ReadonlyArray<Batch> => {
    const taken = [...batches.values()]
    batches = new Map()
    waiting = 0
    return taken
  }
  // What waits is taken now, when the frame is routed: the append itself runs later, in order
  // with the chunk's other effects.
  const appendTaken = (): Effect.Effect<void> => Effect.forEach(take(), append, { discard: true })
  const flush = Effect.suspend(appendTaken)

  const frame = (raw: RawObject): Effect.Effect<void> | undefined => {
    const filePath = raw.filePath
    const entries = raw.entries
    const key = typeof filePath === "string" ? keyOf(filePath, config.configDir) : undefined
    if (key === undefined || !Array.isArray(entries)) {
      return Effect.logDebug("effect-claude-agent: transcript_mirror frame without a transcript path ignored", raw)
    }
    const kept = entries.filter(isEntry)
    const id = `${key.ref.projectKey}\u0000${key.ref.sessionId}`
    let batch = batches.get(id)
    if (batch === undefined) batches.set(id, batch = { ref: key.ref, writes: new Map() })
    const list = batch.writes.get(key.subpath)
    if (list === undefined) batch.writes.set(key.subpath, kept)
    else for (const entry of kept) list.push(entry)
    waiting += kept.length
    return config.flush === "eager" || waiting >= MAX_PENDING ? appendTaken() : undefined
  }

  return { frame, pending: () => waiting > 0 || batches.size > 0, flush }
}
