// The CLI's session transcripts (`<config>/projects/<project>/<sessionId>.jsonl`), read the way the
// official SDK (0.3.330) reads them: what a listing shows (title, first prompt, branch, tag,
// archive state) from the first and last 64 KiB of a file, and the conversation as the chain of
// `parentUuid` links from the newest leaf. Pure functions over decoded lines; the file I/O is in
// src/Sessions.ts.
import { Either, Predicate, Schema } from "effect"
import * as Issues from "../schema/issues.js"
import * as Guard from "../schema/guard.js"
import { optionalBoolean, optionalString, optionalUnknown, NullOrString } from "../schema/schemas.js"

/** One decoded line of a transcript. Unknown keys are kept (a fork copies them). */
export const Entry = Schema.Struct(
  {
    type: Schema.String,
    uuid: optionalString,
    parentUuid: Schema.optional(NullOrString),
    logicalParentUuid: Schema.optional(NullOrString),
    sessionId: optionalString,
    timestamp: optionalString,
    subtype: optionalString,
    isSidechain: optionalBoolean,
    isMeta: optionalBoolean,
    isCompactSummary: optionalBoolean,
    isVisibleInTranscriptOnly: optionalBoolean,
    teamName: optionalString,
    agentId: optionalString,
    promptSource: optionalString,
    cwd: optionalString,
    gitBranch: optionalString,
    entrypoint: optionalString,
    customTitle: optionalString,
    aiTitle: optionalString,
    tag: optionalString,
    lastPrompt: optionalString,
    message: optionalUnknown,
    attachment: optionalUnknown,
    origin: optionalUnknown
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export type Entry = typeof Entry.Type

const decodeEntry = Guard.lazily(() => Schema.decodeUnknownEither(Schema.parseJson(Entry)))

/** A line that is not a transcript entry: not JSON, not an object with a string `type`, or a known field of the wrong type. */
export interface Corrupt {
  readonly _tag: "Corrupt"
  readonly reason: string
}

/** Decodes one line; `undefined` for a blank line. */
export const decodeLine = (line: string): Entry | Corrupt | undefined => {
  if (line.trim().length === 0) return undefined
  const decoded = decodeEntry(line)
  if (Either.isRight(decoded)) return decoded.right
  const issue = decoded.left.issue
  // parseJson's own failure (not JSON at all) has no field path worth naming.
  const reason = issue._tag === "Transformation" && issue.kind === "Encoded"
    ? "not JSON"
    : Issues.describe(decoded.left)
  return { _tag: "Corrupt", reason }
}

export const isCorrupt = (u: Entry | Corrupt): u is Corrupt => u._tag === "Corrupt"

// ---------------------------------------------------------------------------------------------
// Content helpers
// ---------------------------------------------------------------------------------------------

const contentOf = (entry: Entry): unknown => Predicate.isRecord(entry.message) ? entry.message.content : undefined

const blocksOf = (content: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(content) ? content.filter(Predicate.isRecord) : []

const hasBlock = (content: unknown, type: string): boolean => blocksOf(content).some((b) => b.type === type)

const stringField = (record: Record<string, unknown>, key: string): string | undefined => {
  const value = record[key]
  return typeof value === "string" ? value : undefined
}

/** The ids a user entry's `tool_result` blocks answer. */
export const toolResultIds = (entry: Entry): ReadonlyArray<string> =>
  blocksOf(contentOf(entry)).flatMap((b) => {
    const id = b.type === "tool_result" ? stringField(b, "tool_use_id") : undefined
    return id === undefined ? [] : [id]
  })

const toolUseIds = (entry: Entry): ReadonlyArray<string> =>
  blocksOf(contentOf(entry)).flatMap((b) => {
    const id = b.type === "tool_use" ? stringField(b, "id") : undefined
    return id === undefined ? [] : [id]
  })

/** The API message id of an assistant entry (one per block: a reply with three blocks is three entries). */
const messageIdOf = (entry: Entry): string | undefined =>
  entry.type === "assistant" && Predicate.isRecord(entry.message) ? stringField(entry.message, "id") : undefined

const isToolResultUser = (entry: Entry): boolean =>
  entry.type === "user" && typeof entry.parentUuid === "string" && hasBlock(contentOf(entry), "tool_result")

// ---------------------------------------------------------------------------------------------
// Listing: what a session's first and last 64 KiB say about it
// ---------------------------------------------------------------------------------------------

/** How much of each end of a transcript a listing reads, as the official SDK does. */
export const LITE_BYTES = 65536

/** The two ends of a transcript, decoded; `head === tail` when the file fits in one read. */
export interface Lite {
  readonly mtime: number
  readonly size: number
  readonly head: ReadonlyArray<Entry>
  readonly tail: ReadonlyArray<Entry>
}

const COMMAND_NAME = /<command-name>(.*?)<\/command-name>/
const BASH_INPUT = /<bash-input>([\s\S]*?)<\/bash-input>/
// A tag-wrapped message the CLI injected, or an interrupt marker: not what the user typed.
const NOT_A_PROMPT = /^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])/
const PROMPT_CHARS = 200

/** Cuts a string at `max` UTF-16 units without splitting a surrogate pair. */
const truncate = (s: string, max: number): string => {
  if (s.length <= max) return s
  const cut = s.slice(0, max)
  const last = cut.charCodeAt(max - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/**
 * What the user typed in a user entry, as a one-line title: `undefined` for tool results, injected
 * reminders and command wrappers (a `<command-name>` goes to `state.command` as the fallback).
 */
const promptText = (content: unknown, state: { command: string }): string | undefined => {
  const texts: Array<string> = []
  if (typeof content === "string") texts.push(content)
  else if (Array.isArray(content)) {
    for (const block of blocksOf(content)) {
      if (block.type === "tool_result") return undefined
      const text = block.type === "text" ? stringField(block, "text") : undefined
      if (text !== undefined) texts.push(text)
    }
  }
  for (const raw of texts) {
    const text = raw.replaceAll("\n", " ").trim()
    if (text.length === 0) continue
    const command = COMMAND_NAME.exec(text)
    if (command !== null) {
      if (state.command.length === 0) state.command = command[1] ?? ""
      continue
    }
    const bash = BASH_INPUT.exec(text)
    if (bash !== null) return `! ${(bash[1] ?? "").trim()}`
    if (NOT_A_PROMPT.test(text)) continue
    return text.length > PROMPT_CHARS ? `${truncate(text, PROMPT_CHARS).trim()}…` : text
  }
  return undefined
}

const isPromptCandidate = (entry: Entry): boolean =>
  entry.type === "user" && entry.isMeta !== true && entry.isCompactSummary !== true

/** The first prompt the user typed (the official `firstPrompt`). */
export const firstPrompt = (entries: ReadonlyArray<Entry>): string | undefined => {
  const state = { command: "" }
  for (const entry of entries) {
    if (!isPromptCandidate(entry)) continue
    const content = contentOf(entry)
    if (hasBlock(content, "tool_result")) continue
    const text = promptText(content, state)
    if (text !== undefined) return text
  }
  return state.command.length > 0 ? state.command : undefined
}

/** "Image" or "Document" when the first prompt was only an attachment of that kind. */
const mediaPrompt = (entries: ReadonlyArray<Entry>): string | undefined => {
  for (const entry of entries) {
    if (entry.type !== "user" || entry.isMeta === true) continue
    const content = contentOf(entry)
    if (hasBlock(content, "tool_result")) continue
    if (hasBlock(content, "image")) return "Image"
    if (hasBlock(content, "document")) return "Document"
  }
  return undefined
}

const findLast = <A>(entries: ReadonlyArray<Entry>, f: (e: Entry) => A | undefined): A | undefined => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]
    const value = entry === undefined ? undefined : f(entry)
    if (value !== undefined) return value
  }
  return undefined
}

const findFirst = <A>(entries: ReadonlyArray<Entry>, f: (e: Entry) => A | undefined): A | undefined => {
  for (const entry of entries) {
    const value = f(entry)
    if (value !== undefined) return value
  }
  return undefined
}

/** The newest `custom-title` entry's title (set by a rename, by the CLI's `/rename`, or by a fork). */
export const customTitleOf = (entries: ReadonlyArray<Entry>): string | undefined =>
  findLast(entries, (e) => e.type === "custom-title" ? e.customTitle : undefined)

/** The newest title the CLI generated (`ai-title`). */
export const aiTitleOf = (entries: ReadonlyArray<Entry>): string | undefined =>
  findLast(entries, (e) => e.type === "ai-title" ? e.aiTitle : undefined)

const relocatedCwdOf = (entries: ReadonlyArray<Entry>): string | undefined =>
  findLast(entries, (e) => e.type === "relocated" ? nonEmpty(stringField(e, "relocatedCwd")) : undefined)

const nonEmpty = (s: string | undefined): string | undefined => s === undefined || s.length === 0 ? undefined : s

/** A first entry marked `isSidechain` is a sub-agent's transcript, never listed as a session. */
export const isSidechainTranscript = (lite: Lite): boolean => lite.head[0]?.isSidechain === true

const PROGRAMMATIC = new Set(["sdk-cli", "sdk-ts", "sdk-py"])

/** Sessions started by an SDK (entrypoint `sdk-*`) or a daemon: `includeProgrammatic: false` hides them. */
export const isProgrammatic = (lite: Lite): boolean => {
  const entrypoint = findFirst(lite.head, (e) => e.entrypoint) ?? findLast(lite.tail, (e) => e.entrypoint)
  if (entrypoint !== undefined && PROGRAMMATIC.has(entrypoint)) return true
  const first = lite.head.find((e) => "parentUuid" in e)
  const kind = first === undefined ? undefined : stringField(first, "sessionKind")
  return kind === "daemon" || kind === "daemon-worker"
}

/**
 * A transcript whose last turn says the conversation continued in another session
 * (`continued-in`): the id of that session. A finished turn after the marker cancels it.
 */
export const continuedIn = (tail: ReadonlyArray<Entry>): string | undefined => {
  for (let i = tail.length - 1; i >= 0; i--) {
    const entry = tail[i]
    if (entry === undefined) continue
    if (entry.type === "continued-in") {
      const id = stringField(entry, "continuedInSessionId")
      return id !== undefined && isUuid(id) ? id : undefined
    }
    if (entry.type === "assistant" && Predicate.isRecord(entry.message)) {
      if (entry.isApiErrorMessage !== true && typeof entry.message.stop_reason === "string") return undefined
    } else if (entry.type === "user" && promptText(contentOf(entry), { command: "" }) !== undefined) {
      return undefined
    }
  }
  return undefined
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (s: string): boolean => UUID.test(s)

/** The `archived.json` mark beside a transcript. */
export const ArchiveMark = Schema.Struct({ archived: Schema.Boolean, at: Schema.String })

/**
 * Whether a prompt the user typed at or after `atMs` is in `entries`: a prompt sent in an archived
 * session unarchives it (the CLI does not remove the mark; readers compare times).
 */
const promptAfter = (entries: ReadonlyArray<Entry>, atMs: number): boolean =>
  entries.some((entry) => {
    if (entry.isSidechain === true || entry.isMeta === true || entry.isCompactSummary === true) return false
    if (entry.isVisibleInTranscriptOnly === true || entry.timestamp === undefined) return false
    let content: unknown
    let origin: unknown
    if (entry.type === "user") {
      content = contentOf(entry)
      origin = entry.origin
    } else if (entry.type === "attachment" && Predicate.isRecord(entry.attachment)) {
      if (entry.attachment.type !== "queued_command" || entry.attachment.isMeta === true) return false
      content = entry.attachment.prompt
      origin = entry.attachment.origin
    } else {
      return false
    }
    if (Predicate.isRecord(origin) && origin.kind !== "human") return false
    if (hasBlock(content, "tool_result")) return false
    const typed = promptText(content, { command: "" }) !== undefined ||
      hasBlock(content, "image") || hasBlock(content, "document")
    const time = Date.parse(entry.timestamp)
    return typed && !Number.isNaN(time) && time > atMs
  })

/** `archived` as the official SDK reports it: absent when never archived. */
export const archivedState = (
  mark: { readonly archived: boolean; readonly atMs: number } | undefined,
  lite: Lite
): boolean | undefined => {
  if (mark === undefined || !mark.archived) return mark?.archived
  return !(promptAfter(lite.tail, mark.atMs) || (lite.head !== lite.tail && promptAfter(lite.head, mark.atMs)))
}

/** The fields of a listing, before the public type is applied. */
export interface InfoFields {
  readonly sessionId: string
  readonly summary: string
  readonly lastModified: number
  readonly fileSize: number
  readonly customTitle?: string
  readonly firstPrompt?: string
  readonly gitBranch?: string
  readonly cwd?: string
  readonly tag?: string
  readonly createdAt?: number
  readonly archived?: boolean
}

/**
 * A session's listing from the two ends of its transcript; `undefined` for a sub-agent's
 * transcript and for one with nothing to call it (no title, no prompt).
 * `sideTitle` is the `custom-title.json` beside the transcript, read only when the tail has no title.
 */
export const info = (
  sessionId: string,
  lite: Lite,
  projectPath: string | undefined,
  sideTitle: string | undefined,
  archived: boolean | undefined
): InfoFields | undefined => {
  if (isSidechainTranscript(lite)) return undefined
  const { head, tail } = lite
  const customTitle = nonEmpty(customTitleOf(tail)) ?? nonEmpty(sideTitle) ?? nonEmpty(customTitleOf(head)) ??
    nonEmpty(aiTitleOf(tail)) ?? nonEmpty(aiTitleOf(head))
  const prompt = firstPrompt(head)
  const summary = customTitle ??
    nonEmpty(findLast(tail, (e) => e.lastPrompt)) ??
    nonEmpty(findLast(tail, (e) => stringField(e, "summary"))) ??
    prompt ??
    mediaPrompt(head)
  if (summary === undefined) return undefined
  const created = findFirst(head, (e) => e.timestamp)
  const createdAt = created === undefined ? Number.NaN : Date.parse(created)
  const gitBranch = nonEmpty(findLast(tail, (e) => e.gitBranch)) ?? nonEmpty(findFirst(head, (e) => e.gitBranch))
  const cwd = relocatedCwdOf(tail) ?? nonEmpty(findFirst(head, (e) => e.cwd)) ?? nonEmpty(projectPath)
  const tag = nonEmpty(findLast(tail, (e) => e.type === "tag" ? e.tag : undefined))
  return {
    sessionId,
    summary,
    lastModified: lite.mtime,
    fileSize: lite.size,
    ...(customTitle !== undefined ? { customTitle } : {}),
    ...(prompt !== undefined ? { firstPrompt: prompt } : {}),
    ...(gitBranch !== undefined ? { gitBranch } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
    ...(tag !== undefined ? { tag } : {}),
    ...(Number.isNaN(createdAt) ? {} : { createdAt }),
    ...(archived !== undefined ? { archived } : {})
  }
}

/** The working directory a transcript was written in (for matching long, hashed project names). */
export const cwdOf = (lite: Lite): string | undefined => relocatedCwdOf(lite.tail) ?? findFirst(lite.head, (e) => e.cwd)

/** Title text as the CLI stores it: one line, no control characters, at most 200 code points. */
export const cleanTitle = (s: string): string =>
  [...s.trim().replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, " ")]
    .slice(0, PROMPT_CHARS).join("").trim()

// ---------------------------------------------------------------------------------------------
// Conversation: the chain of parentUuid links from the newest leaf
// ---------------------------------------------------------------------------------------------

const CHAIN_TYPES = new Set(["user", "assistant", "progress", "system", "attachment"])

/** Entries that take part in the conversation graph (everything else is metadata). */
export const isChainEntry = (entry: Entry): entry is Entry & { readonly uuid: string } =>
  CHAIN_TYPES.has(entry.type) && typeof entry.uuid === "string"

/**
 * The entry a conversation graph needs to keep: user, assistant and system entries whole, others
 * (attachments, progress) only with their links, so a long transcript's snapshots are not held.
 */
export const slim = (entry: Entry & { readonly uuid: string }): Entry & { readonly uuid: string } => {
  if (entry.type === "user" || entry.type === "assistant" || entry.type === "system") return entry
  const attachmentType = Predicate.isRecord(entry.attachment) ? entry.attachment.type : undefined
  return {
    type: entry.type,
    uuid: entry.uuid,
    ...(entry.parentUuid !== undefined ? { parentUuid: entry.parentUuid } : {}),
    ...(entry.sessionId !== undefined ? { sessionId: entry.sessionId } : {}),
    ...(entry.timestamp !== undefined ? { timestamp: entry.timestamp } : {}),
    ...(entry.isSidechain !== undefined ? { isSidechain: entry.isSidechain } : {}),
    ...(entry.isMeta !== undefined ? { isMeta: entry.isMeta } : {}),
    ...(entry.teamName !== undefined ? { teamName: entry.teamName } : {}),
    ...(entry.agentId !== undefined ? { agentId: entry.agentId } : {}),
    ...(attachmentType !== undefined ? { attachment: { type: attachmentType } } : {})
  }
}

type Node = Entry & { readonly uuid: string }

const onMainThread = (e: Node): boolean =>
  e.isSidechain !== true && e.teamName === undefined && e.type !== "progress" &&
  !(Predicate.isRecord(e.attachment) && e.attachment.type === "fork_briefing")

const isTurn = (e: Node): boolean => e.type === "user" || e.type === "assistant"

/**
 * The conversation that ends at the newest leaf: the latest main-thread entry nothing continues,
 * walked back through `parentUuid` to the first user or assistant entry, then back to the root.
 * Branches left by a rewind or an edit are not on it; a compaction's boundary (which has no parent)
 * starts it. Entries of the same API reply that the chain skipped (parallel tool calls and their
 * results) are put back after the reply.
 */
export const chain = (entries: ReadonlyArray<Node>): ReadonlyArray<Node> => {
  const byUuid = new Map<string, Node>()
  const index = new Map<string, number>()
  entries.forEach((e, i) => {
    byUuid.set(e.uuid, e)
    index.set(e.uuid, i)
  })
  relinkPreserved(byUuid)
  const nodes = [...byUuid.values()]
  const parentOf = (e: Node): Node | undefined =>
    typeof e.parentUuid === "string" ? byUuid.get(e.parentUuid) : undefined
  const continued = new Set<string>()
  for (const e of nodes) if (typeof e.parentUuid === "string" && onMainThread(e)) continued.add(e.parentUuid)
  const leaves = nodes.filter((e) => onMainThread(e) && !continued.has(e.uuid))
    .sort((a, b) => (index.get(b.uuid) ?? -1) - (index.get(a.uuid) ?? -1))
  const dead = new Set<string>()
  let leaf: Node | undefined
  for (const start of leaves) {
    const walked: Array<string> = []
    const seen = new Set<string>()
    let cur: Node | undefined = start
    while (cur !== undefined && !dead.has(cur.uuid) && !seen.has(cur.uuid)) {
      if (isTurn(cur)) {
        leaf = cur
        break
      }
      seen.add(cur.uuid)
      walked.push(cur.uuid)
      cur = parentOf(cur)
    }
    if (leaf !== undefined) break
    for (const id of walked) dead.add(id)
  }
  if (leaf === undefined) leaf = fallbackLeaf(nodes, index, parentOf)
  if (leaf === undefined) return []
  const path: Array<Node> = []
  const onPath = new Set<string>()
  for (let cur: Node | undefined = leaf; cur !== undefined && !onPath.has(cur.uuid); cur = parentOf(cur)) {
    onPath.add(cur.uuid)
    path.push(cur)
  }
  path.reverse()
  return withSiblings(nodes, path, onPath)
}

const strings = (u: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(u) && u.every((x): x is string => typeof x === "string") ? u : undefined

// A compaction that keeps some messages verbatim records them in its boundary's metadata: the
// kept messages still link into the old conversation, so they are hung under the boundary's
// anchor (the summary) and whatever followed the anchor is hung under the last kept message.
const relinkPreserved = (byUuid: Map<string, Node>): void => {
  const setParent = (uuid: string, parentUuid: string) => {
    const e = byUuid.get(uuid)
    if (e !== undefined) byUuid.set(uuid, { ...e, parentUuid })
  }
  for (const boundary of byUuid.values()) {
    if (boundary.type !== "system" || boundary.subtype !== "compact_boundary") continue
    const meta = boundary.compactMetadata
    if (!Predicate.isRecord(meta)) continue
    const kept = meta.preservedMessages
    const segment = meta.preservedSegment
    if (Predicate.isRecord(kept)) {
      const uuids = strings(kept.uuids)
      const anchor = kept.anchorUuid
      if (uuids === undefined || typeof anchor !== "string" || uuids.length === 0) continue
      if (uuids.some((u) => !byUuid.has(u))) continue
      let parent = anchor
      for (const u of uuids) {
        setParent(u, parent)
        parent = u
      }
      const first = uuids[0]
      for (const [uuid, e] of byUuid) if (e.parentUuid === anchor && uuid !== first) setParent(uuid, parent)
    } else if (Predicate.isRecord(segment)) {
      const { anchorUuid, headUuid, tailUuid } = segment
      if (typeof anchorUuid !== "string" || typeof headUuid !== "string" || typeof tailUuid !== "string") continue
      setParent(headUuid, anchorUuid)
      for (const [uuid, e] of byUuid) if (e.parentUuid === anchorUuid && uuid !== headUuid) setParent(uuid, tailUuid)
    }
  }
}

// No main-thread leaf reaches a turn (e.g. only sub-agent entries): the newest turn any terminal
// entry reaches, preferring the main thread.
const fallbackLeaf = (
  nodes: ReadonlyArray<Node>,
  index: ReadonlyMap<string, number>,
  parentOf: (e: Node) => Node | undefined
): Node | undefined => {
  const parents = new Set<string>()
  for (const e of nodes) if (typeof e.parentUuid === "string") parents.add(e.parentUuid)
  const reached: Array<Node> = []
  for (const terminal of nodes.filter((e) => !parents.has(e.uuid))) {
    const seen = new Set<string>()
    for (let cur: Node | undefined = terminal; cur !== undefined && !seen.has(cur.uuid); cur = parentOf(cur)) {
      seen.add(cur.uuid)
      if (isTurn(cur)) {
        reached.push(cur)
        break
      }
    }
  }
  const newest = (xs: ReadonlyArray<Node>) =>
    xs.reduce<Node | undefined>(
      (best, x) => best === undefined || (index.get(x.uuid) ?? -1) > (index.get(best.uuid) ?? -1) ? x : best,
      undefined
    )
  const main = reached.filter((e) => e.isSidechain !== true && e.teamName === undefined && e.isMeta !== true)
  return newest(main.length > 0 ? main : reached)
}

// The CLI writes one assistant entry per content block, chained one after another, and each tool
// result as a child of the block that called it: a chain walked from the leaf passes through the
// last block's result only. The other blocks of the reply and their results go back in, in time
// order, after the reply's last entry on the chain.
const withSiblings = (
  nodes: ReadonlyArray<Node>,
  path: ReadonlyArray<Node>,
  onPath: Set<string>
): ReadonlyArray<Node> => {
  const assistants = path.filter((e) => e.type === "assistant")
  if (assistants.length === 0) return path
  const lastOnPath = new Map<string, Node>()
  for (const e of assistants) {
    const id = messageIdOf(e)
    if (id !== undefined) lastOnPath.set(id, e)
  }
  const byMessage = new Map<string, Array<Node>>()
  const callOwner = new Map<string, Node | null>()
  const results: Array<Node> = []
  const order = new Map<string, number>()
  nodes.forEach((e, i) => order.set(e.uuid, i))
  for (const e of nodes) {
    const id = messageIdOf(e)
    if (id !== undefined) {
      const group = byMessage.get(id)
      if (group === undefined) byMessage.set(id, [e])
      else group.push(e)
      for (const call of toolUseIds(e)) {
        const owner = callOwner.get(call)
        callOwner.set(call, owner === undefined || (owner !== null && messageIdOf(owner) === id) ? e : null)
      }
    } else if (isToolResultUser(e)) {
      results.push(e)
    }
  }
  const sameThread = (a: Node, b: Node) =>
    (a.isSidechain ?? false) === (b.isSidechain ?? false) && a.agentId === b.agentId
  const children = new Map<string, Array<Node>>()
  const link = (parent: string, child: Node) => {
    const list = children.get(parent)
    if (list === undefined) children.set(parent, [child])
    else if (!list.includes(child)) list.push(child)
  }
  const byUuid = new Map(nodes.map((e) => [e.uuid, e]))
  for (const r of results) {
    if (typeof r.parentUuid === "string") link(r.parentUuid, r)
    const source = typeof r.sourceToolAssistantUUID === "string" && r.sourceToolAssistantUUID !== r.parentUuid
      ? byUuid.get(r.sourceToolAssistantUUID)
      : undefined
    if (source !== undefined && sameThread(r, source)) link(source.uuid, r)
    for (const call of toolResultIds(r)) {
      const owner = callOwner.get(call)
      if (owner != null && sameThread(r, owner)) link(owner.uuid, r)
    }
  }
  const answered = new Set<string>()
  for (const e of path) for (const id of toolResultIds(e)) answered.add(id)
  const inserts = new Map<string, ReadonlyArray<Node>>()
  const done = new Set<string>()
  const byTime = (a: Node, b: Node) => (a.timestamp ?? "").localeCompare(b.timestamp ?? "")
  for (const a of assistants) {
    const id = messageIdOf(a)
    if (id === undefined || done.has(id)) continue
    done.add(id)
    const group = byMessage.get(id) ?? [a]
    const inGroup = new Set(group.map((e) => e.uuid))
    const blocks = group.filter((e) => !onPath.has(e.uuid))
    const direct: Array<Node> = []
    const indirect: Array<Node> = []
    const seen = new Set<string>()
    for (const member of group) {
      for (const child of children.get(member.uuid) ?? []) {
        if (onPath.has(child.uuid) || seen.has(child.uuid)) continue
        seen.add(child.uuid)
        if (typeof child.parentUuid === "string" && inGroup.has(child.parentUuid)) direct.push(child)
        else indirect.push(child)
      }
    }
    if (indirect.length > 0) {
      // A result that hangs elsewhere belongs here only if it answers a call of this reply that
      // nothing on the chain answered yet.
      const covered = new Set(answered)
      for (const d of direct) for (const call of toolResultIds(d)) covered.add(call)
      indirect.sort((x, y) => (order.get(x.uuid) ?? 0) - (order.get(y.uuid) ?? 0))
      for (const r of indirect) {
        const calls = toolResultIds(r)
        const owned = calls.some((call) => {
          const owner = callOwner.get(call)
          return !covered.has(call) && owner != null && inGroup.has(owner.uuid)
        })
        if (!owned) continue
        for (const call of calls) covered.add(call)
        direct.push(r)
      }
    }
    if (blocks.length === 0 && direct.length === 0) continue
    const extra = [...blocks.sort(byTime), ...direct.sort(byTime)]
    for (const e of extra) onPath.add(e.uuid)
    const anchor = lastOnPath.get(id)
    if (anchor !== undefined) inserts.set(anchor.uuid, extra)
  }
  if (inserts.size === 0) return path
  return path.flatMap((e) => [e, ...(inserts.get(e.uuid) ?? [])])
}

/** The sub-agent's conversation: from its newest user or assistant entry back to the root. */
export const subagentChain = (entries: ReadonlyArray<Node>): ReadonlyArray<Node> => {
  const byUuid = new Map<string, Node>()
  for (const e of entries) byUuid.set(e.uuid, e)
  let leaf: Node | undefined
  for (let i = entries.length - 1; i >= 0 && leaf === undefined; i--) {
    const e = entries[i]
    if (e !== undefined && isTurn(e)) leaf = e
  }
  const path: Array<Node> = []
  const seen = new Set<string>()
  for (let cur = leaf; cur !== undefined && !seen.has(cur.uuid);) {
    seen.add(cur.uuid)
    path.push(cur)
    cur = typeof cur.parentUuid === "string" ? byUuid.get(cur.parentUuid) : undefined
  }
  return path.reverse()
}

const LOCAL_COMMAND: ReadonlyArray<readonly [string, "record" | "output" | "caveat"]> = [
  ["<command-name>", "record"],
  ["<local-command-stdout>", "output"],
  ["<local-command-stderr>", "output"],
  ["<local-command-caveat>", "caveat"]
]

const localCommandPart = (e: Node): "record" | "output" | "caveat" | undefined => {
  if (e.promptSource !== undefined) return undefined
  const content = contentOf(e)
  let text: string | undefined
  if (typeof content === "string") text = content
  else {
    const blocks = blocksOf(content).filter((b) => b.type === "text")
    const last = blocks[blocks.length - 1]
    text = last === undefined ? undefined : stringField(last, "text")
  }
  if (text === undefined) return undefined
  return LOCAL_COMMAND.find(([prefix]) => text.startsWith(prefix))?.[1]
}

/**
 * The indexes of the user entries that record a slash command the CLI ran itself (`/compact`, …):
 * after the caveat the CLI writes, the `<command-name>` entry and its output.
 */
export const completedLocalCommands = (entries: ReadonlyArray<Node>): ReadonlySet<number> => {
  const marked = new Set<number>()
  entries.forEach((e, i) => {
    if (e.type !== "user" || e.isMeta !== true || localCommandPart(e) !== "caveat") return
    let recorded = false
    for (let j = i + 1; j < entries.length; j++) {
      const next = entries[j]
      if (next === undefined || next.type === "assistant") break
      if (next.type !== "user" || next.isMeta === true) continue
      const part = localCommandPart(next)
      if (part === "record" && !recorded) recorded = true
      else if (part !== "output" || !recorded) break
      marked.add(j)
    }
  })
  return marked
}

const NO_RESPONSE = "No response requested."

// An empty reply the CLI writes to close a turn that needed none.
const isQuietClose = (e: Node): boolean => {
  if (e.type !== "assistant" || e.closesQuietTurn !== true) return false
  const content = contentOf(e)
  const blocks = blocksOf(content)
  const text = typeof content === "string"
    ? content
    : blocks.length === 1 && blocks[0]?.type === "text"
    ? stringField(blocks[0], "text")
    : undefined
  return text === "" || text === NO_RESPONSE
}

const CHANNEL_ORIGINS = new Set(["channel", "observer", "observer-activity", "slack-ping", "voice-call", "peer"])

/** Whether the official `getSessionMessages` returns this chain entry. */
export const isVisible = (e: Node, includeSystem: boolean): boolean => {
  if (!(e.type === "user" || e.type === "assistant" || (e.type === "system" && includeSystem))) return false
  if (isQuietClose(e)) return false
  const originKind = Predicate.isRecord(e.origin) ? e.origin.kind : undefined
  if (e.isMeta === true && !(typeof originKind === "string" && CHANNEL_ORIGINS.has(originKind))) return false
  return e.isSidechain !== true && e.teamName === undefined
}

/** Applies `offset` and a positive `limit`, as the official functions do. */
export const page = <A>(items: ReadonlyArray<A>, offset: number | undefined, limit: number | undefined) => {
  const from = offset !== undefined && offset > 0 ? offset : 0
  return limit !== undefined && limit > 0 ? items.slice(from, from + limit) : items.slice(from)
}

// ---------------------------------------------------------------------------------------------
// Fork
// ---------------------------------------------------------------------------------------------

// Per-entry fields that name the source session's state: a fork starts without them.
const DROPPED_ON_FORK = [
  "teamName",
  "agentName",
  "sessionKind",
  "slug",
  "sourceToolAssistantUUID",
  "summarizedTurnPromptUuids",
  "droppedPromptUuids",
  "sentAsUuid",
  "rowsAheadOfPutBack",
  "turnAttributionKey"
]

const remapCompactMetadata = (entry: Entry, ids: ReadonlyMap<string, string>): Record<string, unknown> => {
  const meta = entry.compactMetadata
  if (entry.type !== "system" || !Predicate.isRecord(meta)) return {}
  const remap = (u: unknown): unknown => typeof u === "string" ? ids.get(u) ?? u : u
  const remapFields = (value: unknown, keys: ReadonlyArray<string>): unknown => {
    if (!Predicate.isRecord(value)) return value
    const out: Record<string, unknown> = { ...value }
    for (const key of keys) {
      const v = out[key]
      if (key in out) out[key] = Array.isArray(v) ? v.map(remap) : remap(v)
    }
    return out
  }
  if (meta.preservedMessages === undefined && meta.preservedSegment === undefined) return {}
  return {
    compactMetadata: {
      ...meta,
      ...(meta.preservedMessages !== undefined
        ? { preservedMessages: remapFields(meta.preservedMessages, ["anchorUuid", "uuids", "allUuids"]) }
        : {}),
      ...(meta.preservedSegment !== undefined
        ? { preservedSegment: remapFields(meta.preservedSegment, ["headUuid", "anchorUuid", "tailUuid"]) }
        : {})
    }
  }
}

/** What a fork copies besides the conversation: the source's metadata lines that it keeps. */
export interface ForkSource {
  readonly transcript: ReadonlyArray<Node>
  readonly contentReplacements: ReadonlyArray<unknown>
  readonly atisLatch: string | undefined
  readonly toolsUsed: ReadonlyArray<string> | undefined
  readonly relocatedCwd: string | undefined
}

/** Collects a fork's source from a transcript's entries, in file order. */
export const forkSource = (sessionId: string, entries: ReadonlyArray<Entry>): ForkSource => {
  const transcript: Array<Node> = []
  const contentReplacements: Array<unknown> = []
  let atisLatch: string | undefined
  let toolsUsed: ReadonlyArray<string> | undefined
  let relocatedCwd: string | undefined
  for (const e of entries) {
    if (isChainEntry(e)) transcript.push(e)
    else if (e.sessionId !== sessionId) continue
    else if (e.type === "content-replacement" && Array.isArray(e.replacements)) {
      for (const r of e.replacements) if (Predicate.isRecord(r)) contentReplacements.push(r)
    } else if (e.type === "atis-latch" && typeof e.atis === "string" && /^[\x21-\x7e]*$/.test(e.atis)) {
      atisLatch = e.atis
    } else if (e.type === "tools-used" && Array.isArray(e.tools)) {
      toolsUsed = e.tools.filter((t): t is string => typeof t === "string" && t.length > 0)
    } else if (e.type === "relocated") {
      relocatedCwd = nonEmpty(stringField(e, "relocatedCwd")) ?? relocatedCwd
    }
  }
  return { transcript, contentReplacements, atisLatch, toolsUsed, relocatedCwd }
}

/** Where a fork stops: the entries up to and including `upToMessageId`, or `undefined` if it is not there. */
export const sliceTo = (entries: ReadonlyArray<Node>, upToMessageId: string): ReadonlyArray<Node> | undefined => {
  let at = entries.findIndex((e) => e.uuid === upToMessageId)
  // A queued prompt is known to the caller by the uuid it sent, which the CLI keeps as `source_uuid`.
  if (at === -1) {
    at = entries.findIndex((e) =>
      Predicate.isRecord(e.attachment) && e.attachment.type === "queued_command" &&
      e.attachment.source_uuid === upToMessageId
    )
  }
  return at === -1 ? undefined : entries.slice(0, at + 1)
}

/**
 * The new transcript of a fork: every main-thread entry with a fresh uuid, its links remapped
 * (progress entries are dropped and linked over), `forkedFrom` naming the original, the last
 * entry stamped `now`, then the kept metadata and a `custom-title` line.
 */
export const forkEntries = (input: {
  readonly source: ForkSource
  readonly entries: ReadonlyArray<Node>
  readonly sourceSessionId: string
  readonly forkSessionId: string
  readonly title: string
  readonly now: string
  readonly newUuid: () => string
}): ReadonlyArray<Record<string, unknown>> => {
  const { entries, forkSessionId: sid, newUuid, now, source, sourceSessionId } = input
  const ids = new Map<string, string>()
  for (const e of entries) ids.set(e.uuid, newUuid())
  const byUuid = new Map(entries.map((e) => [e.uuid, e]))
  const kept = entries.filter((e) => e.type !== "progress")
  const out: Array<Record<string, unknown>> = []
  kept.forEach((e, i) => {
    let parent: string | null = null
    const seen = new Set<string>()
    for (let p = e.parentUuid; typeof p === "string";) {
      const above = byUuid.get(p)
      if (above === undefined) break
      if (above.type !== "progress" || seen.has(above.uuid)) {
        parent = ids.get(above.uuid) ?? null
        break
      }
      seen.add(above.uuid)
      p = above.parentUuid
    }
    const copy: Record<string, unknown> = { ...e }
    for (const key of DROPPED_ON_FORK) delete copy[key]
    const logical = e.logicalParentUuid
    const attachment = e.attachment
    const sourceUuid = Predicate.isRecord(attachment) && typeof attachment.source_uuid === "string"
      ? ids.get(attachment.source_uuid)
      : undefined
    const forkedFrom = Predicate.isRecord(e.forkedFrom) ? stringField(e.forkedFrom, "sessionId") : undefined
    out.push({
      ...copy,
      ...(e.type === "system" && e.subtype === "model_refusal_fallback" ? { neutralizedByFork: true } : {}),
      ...remapCompactMetadata(e, ids),
      ...(sourceUuid !== undefined && Predicate.isRecord(attachment)
        ? { attachment: { ...attachment, source_uuid: sourceUuid } }
        : {}),
      uuid: ids.get(e.uuid),
      parentUuid: parent,
      ...(logical === undefined ? {} : { logicalParentUuid: logical === null ? null : ids.get(logical) ?? null }),
      sessionId: sid,
      timestamp: i === kept.length - 1 ? now : e.timestamp,
      isSidechain: false,
      ...(e.type === "assistant"
        ? { requestSessionId: stringField(e, "requestSessionId") ?? forkedFrom ?? e.sessionId }
        : {}),
      forkedFrom: { sessionId: sourceSessionId, messageUuid: e.uuid }
    })
  })
  if (source.contentReplacements.length > 0) {
    out.push({
      type: "content-replacement",
      sessionId: sid,
      replacements: source.contentReplacements,
      uuid: newUuid(),
      timestamp: now
    })
  }
  if (source.atisLatch !== undefined) out.push({ type: "atis-latch", sessionId: sid, atis: source.atisLatch })
  if (source.toolsUsed !== undefined) out.push({ type: "tools-used", sessionId: sid, tools: source.toolsUsed })
  if (source.relocatedCwd !== undefined) {
    out.push({ type: "relocated", sessionId: sid, relocatedCwd: source.relocatedCwd })
  }
  out.push({ type: "custom-title", sessionId: sid, customTitle: input.title, uuid: newUuid(), timestamp: now })
  return out
}

// ---------------------------------------------------------------------------------------------
// Layout: where the CLI keeps a project's transcripts
// ---------------------------------------------------------------------------------------------

const MAX_NAME = 200

/** Every character but ASCII letters and digits becomes `-` (the CLI's project folder name). */
export const dashed = (projectPath: string): string => projectPath.replace(/[^a-zA-Z0-9]/g, "-")

// Java's String.hashCode over UTF-16 units, in base 36: what the CLI appends to a long name.
const hashName = (s: string): string => {
  let h = 0
  for (let i = 0; i < s.length; i++) h = ((h << 5) - h + s.charCodeAt(i)) | 0
  return Math.abs(h).toString(36)
}

/** The folder under `projects/` for a working directory; names over 200 characters are cut and hashed. */
export const projectDirName = (projectPath: string): string => {
  const name = dashed(projectPath)
  return name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME)}-${hashName(projectPath)}`
}

/**
 * For a long name, the prefix every folder of that directory starts with: a CLI built with another
 * hash wrote a different suffix, so such folders are matched by prefix and by the cwd inside.
 */
export const longNamePrefix = (projectPath: string): string | undefined => {
  const name = dashed(projectPath)
  return name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}-` : undefined
}

/** The complete lines of a chunk cut from a file: a partial first or last line is dropped. */
export const chunkLines = (text: string, cutAtStart: boolean, cutAtEnd: boolean): ReadonlyArray<string> => {
  const lines = text.split("\n")
  if (cutAtStart) lines.shift()
  if (cutAtEnd) lines.pop()
  return lines
}
