/**
 * What every session store shares: key checks, the summary fold and the uuid de-duplication.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Entry, SessionKey, SessionRef, SessionSummary, Write } from "../../services/SessionStore.js"
import { SessionStoreError } from "./storeError.js"

/**
 * The subpath a main transcript is stored under where a column or a file name needs one.
 *
 * @internal
 */
export const MAIN = ""

// A key part: no path separators that climb, nothing empty.
const badPart = (s: string): boolean => s.length === 0 || s === "." || s === ".." || s.includes("\0")
const badSubpath = (s: string): boolean =>
  s.length === 0 || s.startsWith("/") || s.includes("\\") || s.split("/").some(badPart)

/**
 * Fails with `InvalidKey` for a key that names nothing a store can hold safely.
 *
 * @internal
 */
export const checkKey = (operation: string, key: SessionKey | SessionRef): Effect.Effect<void, SessionStoreError> => {
  const subpath = "subpath" in key ? key.subpath : undefined
  const detail = badPart(key.projectKey) || key.projectKey.includes("/")
    ? `invalid projectKey ${JSON.stringify(key.projectKey)}`
    : badPart(key.sessionId) || key.sessionId.includes("/")
    ? `invalid sessionId ${JSON.stringify(key.sessionId)}`
    : subpath !== undefined && badSubpath(subpath)
    ? `invalid subpath ${JSON.stringify(subpath)} (omit it for the main transcript)`
    : undefined
  return detail === undefined
    ? Effect.void
    : Effect.fail(new SessionStoreError({ reason: "InvalidKey", operation, sessionId: key.sessionId, detail }))
}

/**
 * Checks every write's subpath.
 *
 * @internal
 */
export const checkWrites = (
  operation: string,
  session: SessionRef,
  writes: ReadonlyArray<Write>
): Effect.Effect<void, SessionStoreError> =>
  Effect.zipRight(
    checkKey(operation, session),
    Effect.forEach(writes, (w) => checkKey(operation, { ...session, subpath: w.subpath }), { discard: true })
  )

/**
 * The failure of an append whose generation is not the current one.
 *
 * @internal
 */
export const stale = (session: SessionRef, given: number, current: number): SessionStoreError =>
  new SessionStoreError({
    reason: "StaleWriter",
    operation: "append",
    sessionId: session.sessionId,
    detail: `generation ${given} is stale: the session's writer holds generation ${current}`
  })

/**
 * The entries of `entries` to store: those whose `uuid` is neither in `seen` nor earlier in the
 * batch. `seen` gains the uuids kept.
 *
 * @internal
 */
export const fresh = (entries: ReadonlyArray<Entry>, seen: Set<string>): Array<Entry> => {
  const out: Array<Entry> = []
  for (const entry of entries) {
    const uuid = entry.uuid
    if (typeof uuid === "string") {
      if (seen.has(uuid)) continue
      seen.add(uuid)
    }
    out.push(entry)
  }
  return out
}

/**
 * The store's clock reading for an append, never earlier than the last one it returned (so
 * `mtime` orders writes even when the wall clock steps back).
 *
 * @internal
 */
export const clock = () => {
  let last = 0
  return (now: number): number => (last = Math.max(Math.floor(now), last + 1))
}

const str = (u: unknown): string | undefined => typeof u === "string" && u.length > 0 ? u : undefined

// The text a user entry carries: a string content, or its text blocks joined.
const promptText = (entry: Entry): string | undefined => {
  const message = entry.message
  if (typeof message !== "object" || message === null || !("content" in message)) return undefined
  const content = message.content
  if (typeof content === "string") return str(content.trim())
  if (!Array.isArray(content)) return undefined
  const texts: Array<string> = []
  for (const block of content) {
    if (typeof block === "object" && block !== null && "type" in block && block.type === "text" && "text" in block) {
      if (typeof block.text === "string") texts.push(block.text)
    }
  }
  return str(texts.join("\n").trim())
}

// A prompt typed by a person: not a tool result, not the CLI's own (meta, command output).
const isTypedPrompt = (entry: Entry): boolean =>
  entry.type === "user" && entry.isMeta !== true && entry.isSidechain !== true && entry.toolUseResult === undefined

/**
 * Folds appended entries of a main transcript into its summary. Pure; `mtime` is the store's
 * clock at the append.
 *
 * @internal
 */
export const foldSummary = (
  previous: SessionSummary | undefined,
  sessionId: string,
  entries: ReadonlyArray<Entry>,
  mtime: number
): SessionSummary => {
  const s: { -readonly [K in keyof SessionSummary]: SessionSummary[K] } = {
    ...(previous ?? { sessionId, entries: 0 }),
    mtime,
    entries: (previous?.entries ?? 0) + entries.length
  }
  for (const e of entries) {
    s.createdAt ??= str(e.timestamp)
    s.cwd ??= str(e.cwd)
    if (isTypedPrompt(e)) {
      const text = promptText(e)
      if (text !== undefined && !text.startsWith("<")) {
        s.firstPrompt ??= text
      }
    }
    s.gitBranch = str(e.gitBranch) ?? s.gitBranch
    if (e.type === "custom-title") s.customTitle = str(e.customTitle) ?? s.customTitle
    if (e.type === "ai-title") s.aiTitle = str(e.aiTitle) ?? s.aiTitle
    if (e.type === "last-prompt") s.lastPrompt = str(e.lastPrompt) ?? s.lastPrompt
    if (e.type === "tag") s.tag = typeof e.tag === "string" ? e.tag : s.tag
  }
  return s
}

/**
 * `true` for a JSON object with a string `type`: a transcript entry.
 *
 * @internal
 */
export const isEntry = (u: unknown): u is Entry =>
  typeof u === "object" && u !== null && !Array.isArray(u) && "type" in u && typeof u.type === "string"

/**
 * `true` for a stored summary.
 *
 * @internal
 */
export const isSummary = (u: unknown): u is SessionSummary =>
  typeof u === "object" && u !== null && "sessionId" in u && typeof u.sessionId === "string" && "mtime" in u &&
  typeof u.mtime === "number" && "entries" in u && typeof u.entries === "number"
