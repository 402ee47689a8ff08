/**
 * What the `Sessions` functions make of a transcript's entries, wherever the entries come from
 * (a local `.jsonl` file or a `SessionStore`): the conversation as `SessionMessage`s, a sub-agent's,
 * the listing's two ends of a transcript, and a fork's new transcript.
 *
 * @internal
 */
import { Effect, Predicate, Schema } from "effect"
import { OptionsError, SessionNotFoundError } from "../../SdkError.js"
import type { SessionMessage } from "../../Sessions.js"
import * as Args from "./args.js"
import * as T from "./transcript.js"
import { optionalUnknown } from "../schema/schemas.js"

type Node = T.Entry & { readonly uuid: string }

const messageType = (type: string): SessionMessage["type"] | undefined =>
  type === "user" || type === "assistant" || type === "system" ? type : undefined

const toMessage = (
  e: Node,
  parentToolUseId: string | null,
  parentAgentId: string | null,
  completedCommand: boolean
): Array<SessionMessage> => {
  const type = messageType(e.type)
  if (type === undefined) return []
  const origin = Predicate.isRecord(e.origin) && typeof e.origin.kind === "string" ? e.origin : undefined
  const meta = e.isMeta === true || e.isCompactSummary === true || e.isVisibleInTranscriptOnly === true
  return [{
    type,
    uuid: e.uuid,
    session_id: e.sessionId ?? "",
    message: e.message,
    parent_tool_use_id: parentToolUseId,
    parent_agent_id: parentAgentId,
    ...(e.interruptedByShutdown === true ? { interruptedByShutdown: true } : {}),
    ...(e.isCompactSummary === true ? { isCompactSummary: true } : {}),
    ...(meta ? { is_meta: true } : {}),
    ...(completedCommand ? { isCompletedLocalCommand: true } : {}),
    ...(e.timestamp !== undefined ? { timestamp: e.timestamp } : {}),
    ...(origin !== undefined ? { origin } : {})
  }]
}

/**
 * Paging and filtering of `getSessionMessages`.
 *
 * @internal
 */
export interface MessagesPage {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly includeSystemMessages?: boolean | undefined
}

/**
 * The entry a main conversation keeps (chain entries, slimmed), or `undefined`.
 *
 * @internal
 */
export const mainNode = (e: T.Entry): Node | undefined => T.isChainEntry(e) ? T.slim(e) : undefined

/**
 * The entry a sub-agent's conversation keeps (its user, assistant and attachment entries,
 * slimmed), or `undefined`.
 *
 * @internal
 */
export const subagentNode = (e: T.Entry): Node | undefined =>
  T.isChainEntry(e) && (e.type === "user" || e.type === "assistant" || e.type === "attachment")
    ? T.slim(e)
    : undefined

/**
 * A session's messages from its kept entries (`mainNode`), in file order.
 *
 * @internal
 */
export const sessionMessages = (nodes: ReadonlyArray<Node>, options: MessagesPage): ReadonlyArray<SessionMessage> => {
  const conversation = T.chain(nodes)
  const commands = T.completedLocalCommands(conversation)
  const includeSystem = options.includeSystemMessages ?? false
  const messages = conversation.flatMap((e, i) =>
    T.isVisible(e, includeSystem) ? toMessage(e, null, null, commands.has(i)) : []
  )
  return T.page(messages, options.offset, options.limit)
}

const AGENT_REF = /^[A-Za-z0-9_.:-]{1,128}$/

const agentRef = (u: unknown): string | null => typeof u === "string" && AGENT_REF.test(u) ? u : null

/**
 * What a sub-agent's metadata (`agent-<id>.meta.json`, or its `agent_metadata` entry in a store)
 * says about where it was started.
 *
 * @internal
 */
export const AgentMeta = Schema.Struct({
  toolUseId: optionalUnknown,
  parentAgentId: optionalUnknown
})

/**
 * A sub-agent's messages from its kept entries (`subagentNode`), in file order.
 *
 * @internal
 */
export const subagentMessages = (
  nodes: ReadonlyArray<Node>,
  meta: typeof AgentMeta.Type | undefined,
  options: { readonly limit?: number | undefined; readonly offset?: number | undefined }
): ReadonlyArray<SessionMessage> => {
  const toolUseId = agentRef(meta?.toolUseId)
  const parentAgentId = agentRef(meta?.parentAgentId)
  const conversation = T.subagentChain(nodes)
  const commands = T.completedLocalCommands(conversation)
  const messages = conversation.flatMap((e, i) =>
    e.type === "user" || e.type === "assistant" ? toMessage(e, toolUseId, parentAgentId, commands.has(i)) : []
  )
  return T.page(messages, options.offset, options.limit)
}

const utf8 = new TextEncoder()

/**
 * The two ends of a transcript held as entries, cut where a listing of the same transcript as a
 * file cuts it (its first and last `LITE_BYTES` bytes, whole lines only), and its size as a file.
 *
 * @internal
 */
export const liteOf = (entries: ReadonlyArray<T.Entry>, mtime: number): T.Lite => {
  const lengths = entries.map((e) => utf8.encode(JSON.stringify(e)).length + 1)
  const size = lengths.reduce((a, b) => a + b, 0)
  if (size <= T.LITE_BYTES) return { mtime, size, head: entries, tail: entries }
  const tailStart = size - T.LITE_BYTES
  const head: Array<T.Entry> = []
  const tail: Array<T.Entry> = []
  let offset = 0
  entries.forEach((entry, i) => {
    const length = lengths[i] ?? 0
    // A line is in the head when its newline is; in the tail when it starts after the cut.
    if (offset + length <= T.LITE_BYTES) head.push(entry)
    if (offset > tailStart) tail.push(entry)
    offset += length
  })
  return { mtime, size, head, tail }
}

/**
 * The newest `timestamp` among `entries`, in milliseconds, if any.
 *
 * @internal
 */
export const lastTimestamp = (entries: ReadonlyArray<T.Entry>): number | undefined => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const at = entries[i]?.timestamp
    const ms = at === undefined ? Number.NaN : Date.parse(at)
    if (!Number.isNaN(ms)) return ms
  }
  return undefined
}

/**
 * Whether a transcript holds a conversation (any linked entry), for `continued-in` markers.
 *
 * @internal
 */
export const holdsConversation = (entries: ReadonlyArray<T.Entry>): boolean => entries.some((e) => "parentUuid" in e)

/**
 * What a fork needs besides the source's entries.
 *
 * @internal
 */
export interface ForkInput {
  readonly sessionId: string
  readonly upToMessageId?: string | undefined
  readonly title?: string | undefined
  /** The source's title kept beside its transcript (`custom-title.json`), when there is one. */
  readonly sideTitle?: string | undefined
  readonly forkId: string
  readonly now: string
  readonly newUuid: () => string
}

/**
 * The transcript of a fork of the session whose entries are `entries` (file order): `OptionsError`
 * when `upToMessageId` is not in it, `SessionNotFoundError` when it has no messages.
 *
 * @internal
 */
export const forkLines = (
  entries: ReadonlyArray<T.Entry>,
  input: ForkInput
): Effect.Effect<ReadonlyArray<Record<string, unknown>>, OptionsError | SessionNotFoundError> =>
  Effect.gen(function*() {
    const { sessionId } = input
    const source = T.forkSource(sessionId, entries)
    const main = source.transcript.filter((e) => e.isSidechain !== true)
    let slice: ReadonlyArray<Node> = main
    if (input.upToMessageId !== undefined) {
      const cut = T.sliceTo(main, input.upToMessageId)
      if (cut === undefined) {
        return yield* new OptionsError({
          field: "upToMessageId",
          detail: `message ${input.upToMessageId} is not in session ${sessionId}`
        })
      }
      slice = cut
    }
    if (!slice.some((e) => e.type !== "progress")) {
      return yield* new SessionNotFoundError({ sessionId, reason: "it has no messages to fork" })
    }
    let title = input.title === undefined ? "" : yield* Args.checkTitle("title", input.title, sessionId)
    if (title.length === 0) {
      const sourceTitle = T.customTitleOf(entries) || input.sideTitle || T.aiTitleOf(entries) ||
        T.firstPrompt(entries)
      title = `${sourceTitle || "Forked session"} (fork)`
    }
    return T.forkEntries({
      source,
      entries: slice,
      sourceSessionId: sessionId,
      forkSessionId: input.forkId,
      title,
      now: input.now,
      newUuid: input.newUuid
    })
  })
