/**
 * A session the CLI wrote locally, copied into a store: its transcript, and its sub-agents'
 * (each `.meta.json` as an `agent_metadata` entry, as the mirror stores it), in batches.
 *
 * @internal
 */
import type { ImportOptions } from "../../layers/SessionStores.js"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Effect, Option } from "effect"
import { SessionNotFoundError } from "../../SdkError.js"
import type { Entry, SessionRef, SessionStoreShape } from "../../services/SessionStore.js"
import { SessionStoreError } from "../../services/SessionStore.js"
import { parseJsonBoundary } from "../protocol/json.js"
import * as ConfigDir from "../transcripts/configDir.js"
import { projectDirName } from "../transcripts/transcript.js"
import { isEntry } from "./store.js"

// The complete lines of a transcript that are entries; a line cut short or foreign is skipped.
const entriesOf = (text: string): Array<Entry> =>
  text.split("\n").flatMap((line) => {
    if (line.trim().length === 0) return []
    try {
      const parsed = parseJsonBoundary(line)
      return isEntry(parsed) ? [parsed] : []
    } catch {
      return []
    }
  })

/**
 * Copies the local session `sessionId` into `store`; returns the key it is stored under.
 *
 * @internal
 */
export const importLocal = (
  store: SessionStoreShape,
  sessionId: string,
  options: ImportOptions = {}
): Effect.Effect<SessionRef, SessionNotFoundError | SessionStoreError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = path.join(yield* ConfigDir.resolve({ configDir: options.configDir }), "projects")
    const exists = (p: string) => fs.exists(p).pipe(Effect.orElseSucceed(() => false))
    const folders = options.dir !== undefined
      ? [
        projectDirName(
          (yield* fs.realPath(options.dir).pipe(Effect.orElseSucceed(() => path.resolve(options.dir ?? "."))))
            .normalize("NFC")
        )
      ]
      : yield* fs.readDirectory(root).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
    let folder: string | undefined
    for (const name of folders) {
      if (yield* exists(path.join(root, name, `${sessionId}.jsonl`))) {
        folder = name
        break
      }
    }
    if (folder === undefined) {
      return yield* new SessionNotFoundError({ sessionId, ...(options.dir === undefined ? {} : { dir: options.dir }) })
    }
    const ref: SessionRef = { projectKey: options.projectKey ?? folder, sessionId }
    const batchSize = Math.max(1, options.batchSize ?? 500)
    const append = (subpath: string | undefined, entries: ReadonlyArray<Entry>) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(entries.length / batchSize) }, (_, i) =>
          entries.slice(i * batchSize, (i + 1) * batchSize)),
        (batch) =>
          store.append({ ...ref, subpath }, batch),
        { discard: true }
      )
    const read = (file: string) =>
      fs.readFileString(file).pipe(
        Effect.mapError((cause) =>
          new SessionStoreError({ reason: "Unavailable", operation: "import", sessionId, detail: cause.message, cause })
        )
      )
    yield* append(undefined, entriesOf(yield* read(path.join(root, folder, `${sessionId}.jsonl`))))
    if (options.includeSubagents === false) return ref
    const base = path.join(root, folder, sessionId)
    const files = yield* fs.readDirectory(base, { recursive: true }).pipe(
      Effect.orElseSucceed((): ReadonlyArray<string> => [])
    )
    for (const file of files.filter((f) => f.endsWith(".jsonl")).sort()) {
      const subpath = file.slice(0, -".jsonl".length).split(path.sep).join("/")
      const meta = yield* read(path.join(base, `${subpath}.meta.json`)).pipe(Effect.option)
      const metaEntry = Option.flatMap(meta, (text) => {
        try {
          const parsed = parseJsonBoundary(text)
          return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
            ? Option.some<Entry>({ ...parsed, type: "agent_metadata" })
            : Option.none()
        } catch {
          return Option.none()
        }
      })
      const entries = entriesOf(yield* read(path.join(base, file)))
      yield* append(subpath, Option.isSome(metaEntry) ? [metaEntry.value, ...entries] : entries)
    }
    return ref
  })
