/**
 * The CLI's session files: list the sessions on this machine, read a conversation, fork, rename,
 * tag, archive and delete it, with no CLI process involved.
 *
 * The CLI writes each session to `<config dir>/projects/<project>/<sessionId>.jsonl`, one JSON
 * entry per line (the config dir is `CLAUDE_CONFIG_DIR`, or `~/.claude`; `<project>` is the
 * working directory with every character but letters and digits turned into `-`). Sub-agents
 * write theirs to `<project>/<sessionId>/subagents/agent-<agentId>.jsonl`. These functions read
 * and write those files the way the official SDK's functions of the same names do
 * (`@anthropic-ai/claude-agent-sdk` 0.3.330), so both SDKs and the CLI agree: a rename or a tag
 * is a line appended to the transcript, the archive mark is `<project>/<sessionId>/archived.json`,
 * and a renamed, tagged or forked session resumes with the `resume` option.
 *
 * `fromStore(store)` has the same functions over a `SessionStore`, for conversations kept off the
 * local disk.
 *
 * Every function is an `Effect` that needs `FileSystem` and `Path` from `@effect/platform`
 * (`NodeContext.layer` on Node). Transcripts are read as a `Stream` of lines, so a large one is
 * never held as one string; a line that is not a valid entry is skipped with a warning in the log,
 * and a listing never fails because of one file.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { PlatformError } from "@effect/platform/Error"
import { Chunk, Clock, Effect, Option, Schema, Stream } from "effect"
import * as ConfigDir from "./internal/transcripts/configDir.js"
import { LineSplitter } from "./internal/protocol/lineSplitter.js"
import * as Guard from "./internal/schema/guard.js"
import * as Args from "./internal/transcripts/args.js"
import * as Read from "./internal/transcripts/read.js"
import * as Stored from "./internal/transcripts/stored.js"
import * as T from "./internal/transcripts/transcript.js"
import { type OptionsError, SessionNotFoundError } from "./SdkError.js"
import type { SessionStoreError, SessionStoreShape } from "./services/SessionStore.js"
import {
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionalUnknown,
  NullOrString
} from "./internal/schema/schemas.js"

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/**
 * One line of a transcript, decoded: `type` plus the fields the CLI writes on most entries, typed
 * where present; every other field is kept as it is (`unknown`). Entries of types `user`,
 * `assistant`, `system`, `attachment` and `progress` form the conversation through `uuid` and
 * `parentUuid`; the others are metadata (`custom-title`, `tag`, `last-prompt`, …).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * const entry = Schema.decodeUnknownSync(Sessions.TranscriptEntry)({ type: "tag", tag: "urgent", sessionId: "s" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const TranscriptEntry: Schema.Schema<T.Entry, typeof T.Entry.Encoded> = T.Entry

/**
 * @since 0.1.0
 * @category models
 */
export type TranscriptEntry = T.Entry

/**
 * A session as `listSessions` and `getSessionInfo` describe it (the official `SDKSessionInfo`).
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const title = (info: Sessions.SessionInfo) => info.customTitle ?? info.summary
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const SessionInfo = Schema.Struct({
  /** The session id (a UUID): what the `resume` option takes. */
  sessionId: Schema.String,
  /** The title shown for it: the custom title, else the CLI's generated title, the last or first prompt. */
  summary: Schema.String,
  /** When the transcript was last written, in milliseconds since the epoch. */
  lastModified: Schema.Number,
  /** The transcript's size in bytes. */
  fileSize: optionalNumber,
  /** A title set by `renameSession`, the CLI's `/rename` or a fork. */
  customTitle: optionalString,
  /** The first prompt typed, on one line, at most 200 characters. */
  firstPrompt: optionalString,
  /** The git branch at the end of the session. */
  gitBranch: optionalString,
  /** The session's working directory. */
  cwd: optionalString,
  /** The tag set by `tagSession`. */
  tag: optionalString,
  /** When the session started, in milliseconds since the epoch. */
  createdAt: optionalNumber,
  /**
   * `true` when archived; `false` when it was archived and then unarchived, or a prompt was sent in
   * it since; absent when it never was.
   */
  archived: optionalBoolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SessionInfo extends Schema.Schema.Type<typeof SessionInfo> {}

/**
 * A message of a stored conversation (the official `SessionMessage`): `message` is the API
 * message as the CLI stored it (`{ role, content }` for a user, the whole API reply for an
 * assistant), absent on system entries.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const prompts = (messages: ReadonlyArray<Sessions.SessionMessage>) =>
 *   messages.filter((m) => m.type === "user" && m.is_meta !== true)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const SessionMessage = Schema.Struct({
  type: Schema.Literal("user", "assistant", "system"),
  uuid: Schema.String,
  session_id: Schema.String,
  message: Schema.Unknown,
  /** In a sub-agent's conversation: the `Agent` tool call that started it. */
  parent_tool_use_id: NullOrString,
  /** In a nested sub-agent's conversation: the sub-agent that started it. */
  parent_agent_id: NullOrString,
  timestamp: optionalString,
  /** Not typed by the user: the CLI's own context (a compaction summary, a reminder). */
  is_meta: optionalBoolean,
  isCompactSummary: optionalBoolean,
  /** A slash command the CLI ran itself (`/compact`), or its output. */
  isCompletedLocalCommand: optionalBoolean,
  /** The turn was cut short because the CLI was shutting down. */
  interruptedByShutdown: optionalBoolean,
  /** Where a prompt came from when it was not typed (a channel, a peer session, …). */
  origin: optionalUnknown
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SessionMessage extends Schema.Schema.Type<typeof SessionMessage> {}

/**
 * Where to look for a session, shared by every function.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const here: Sessions.SessionLocation = { dir: "/home/me/project", configDir: "/home/me/.claude" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface SessionLocation {
  /**
   * The project's working directory: only its sessions (and those of its git worktrees). Omitted:
   * every project.
   */
  readonly dir?: string | undefined
  /**
   * The CLI's config directory. Default: `CLAUDE_CONFIG_DIR` from the Effect `ConfigProvider`
   * (the environment by default), else `.claude` in `HOME` (or `USERPROFILE`).
   */
  readonly configDir?: string | undefined
}

/**
 * Options of `listSessions` (the official `ListSessionsOptions`, without `sessionStore`).
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const secondPage: Sessions.ListSessionsOptions = { limit: 20, offset: 20, includeProgrammatic: false }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface ListSessionsOptions extends SessionLocation {
  /** At most this many sessions (a positive number; otherwise all). */
  readonly limit?: number | undefined
  /** Skip this many of the newest first. Default 0. */
  readonly offset?: number | undefined
  /** With `dir` inside a git repository: also the sessions of its other worktrees. Default `true`. */
  readonly includeWorktrees?: boolean | undefined
  /** Also sessions started by an SDK (entrypoint `sdk-ts`, `sdk-py`, `sdk-cli`) or a daemon. Default `true`. */
  readonly includeProgrammatic?: boolean | undefined
}

/**
 * Options of `getSessionMessages`.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const lastTen: Sessions.GetSessionMessagesOptions = { offset: 0, limit: 10, includeSystemMessages: true }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface GetSessionMessagesOptions extends SessionLocation {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  /** Also system entries (compaction boundaries, notices). Default `false`. */
  readonly includeSystemMessages?: boolean | undefined
}

/**
 * Options of `getSubagentMessages`.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const firstFive: Sessions.GetSubagentMessagesOptions = { limit: 5 }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface GetSubagentMessagesOptions extends SessionLocation {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/**
 * Options of `forkSession`.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const options: Sessions.ForkSessionOptions = { title: "try another approach" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface ForkSessionOptions extends SessionLocation {
  /** Copy up to and including this message (a `uuid` from `getSessionMessages`). Default: all. */
  readonly upToMessageId?: string | undefined
  /** The fork's title. Default: the source's title (or first prompt) + ` (fork)`. */
  readonly title?: string | undefined
}

/**
 * What `forkSession` returns: the new session, resumable with the `resume` option.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const resumeOptions = (fork: Sessions.ForkSessionResult) => ({ resume: fork.sessionId })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ForkSessionResult {
  readonly sessionId: string
}

/**
 * Where the store-backed functions (`fromStore`) look: the project a session is stored under.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const byDir: Sessions.StoreLocation = { dir: "/srv/app" }
 * const byKey: Sessions.StoreLocation = { projectKey: "-srv-app" }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface StoreLocation {
  /**
   * The project's working directory: its sessions are stored under the CLI's folder name for it
   * (as a session with the `sessionStore` option mirrors them). Default: this process's working
   * directory.
   */
  readonly dir?: string | undefined
  /** The store's project key itself (wins over `dir`). */
  readonly projectKey?: string | undefined
}

/**
 * The options of a local function, for its store-backed twin: `dir` and `configDir` give way to
 * `StoreLocation`, and `includeWorktrees` (a local layout matter) goes.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * const page: Sessions.StoreOptions<Sessions.ListSessionsOptions> = { projectKey: "-srv-app", limit: 20 }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export type StoreOptions<O extends SessionLocation> =
  & Omit<O, keyof SessionLocation | "includeWorktrees">
  & StoreLocation

/**
 * The `Sessions` functions over a `SessionStore`, as `fromStore` returns them: the same names,
 * answers and errors as the local functions for the same entries, with `SessionStoreError` where
 * the local ones have `PlatformError`, and nothing needed from the context. (A mirrored session
 * lacks the lines the CLI writes locally only: its last `last-prompt`, written at exit, so an
 * untitled session's `summary` can name the turn before's prompt.) The archive functions
 * are not here: the archive mark is a file beside a transcript, not an entry of it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore, Sessions } from "effect-claude-agent"
 *
 * const titles = Effect.gen(function*() {
 *   const sessions: Sessions.StoredSessions = Sessions.fromStore(yield* SessionStore.SessionStore)
 *   return (yield* sessions.listSessions({ dir: "/srv/app" })).map((s) => s.summary)
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredSessions {
  /**
   * `listSessions` of one project's stored sessions (`lastModified`: the store's clock). Each
   * session listed is loaded (with `limit`, only as many as the page needs); the store's own
   * `listSummaries` answers in one call with what it folds on append.
   */
  readonly listSessions: (
    options?: StoreOptions<ListSessionsOptions>
  ) => Effect.Effect<ReadonlyArray<SessionInfo>, OptionsError | SessionStoreError>
  /** `getSessionInfo` of a stored session. */
  readonly getSessionInfo: (
    sessionId: string,
    options?: StoreLocation
  ) => Effect.Effect<SessionInfo, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `findSessionInfo` of a stored session. */
  readonly findSessionInfo: (
    sessionId: string,
    options?: StoreLocation
  ) => Effect.Effect<Option.Option<SessionInfo>, OptionsError | SessionStoreError>
  /** `transcript`: a stored session's entries, in append order. */
  readonly transcript: (
    sessionId: string,
    options?: StoreLocation
  ) => Stream.Stream<TranscriptEntry, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `getSessionMessages` of a stored session. */
  readonly getSessionMessages: (
    sessionId: string,
    options?: StoreOptions<GetSessionMessagesOptions>
  ) => Effect.Effect<ReadonlyArray<SessionMessage>, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `listSubagents`: the sub-agents stored under a session (subpaths `subagents/…/agent-<id>`). */
  readonly listSubagents: (
    sessionId: string,
    options?: StoreLocation
  ) => Effect.Effect<ReadonlyArray<string>, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `getSubagentMessages`, `parent_tool_use_id` from the sub-agent's stored `agent_metadata`. */
  readonly getSubagentMessages: (
    sessionId: string,
    agentId: string,
    options?: StoreOptions<GetSubagentMessagesOptions>
  ) => Effect.Effect<ReadonlyArray<SessionMessage>, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `renameSession`: appends the same `custom-title` entry to the stored transcript. */
  readonly renameSession: (
    sessionId: string,
    title: string,
    options?: StoreLocation
  ) => Effect.Effect<void, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `tagSession`: appends the same `tag` entry to the stored transcript. */
  readonly tagSession: (
    sessionId: string,
    tag: string | null,
    options?: StoreLocation
  ) => Effect.Effect<void, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `deleteSession`: the session and its sub-agents' transcripts (the store's `delete`). */
  readonly deleteSession: (
    sessionId: string,
    options?: StoreLocation
  ) => Effect.Effect<void, SessionNotFoundError | OptionsError | SessionStoreError>
  /** `forkSession`: the fork is appended to the store under the same project. */
  readonly forkSession: (
    sessionId: string,
    options?: StoreOptions<ForkSessionOptions>
  ) => Effect.Effect<ForkSessionResult, SessionNotFoundError | OptionsError | SessionStoreError>
}

// ---------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------

interface Ctx {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  /** `<config dir>/projects` */
  readonly root: string
}

const context = (configDir: string | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const ctx: Ctx = { fs, path, root: path.join(yield* ConfigDir.resolve({ configDir }), "projects") }
    return ctx
  })

const isDirectory = (ctx: Ctx, p: string) =>
  ctx.fs.stat(p).pipe(
    Effect.map((info) => info.type === "Directory"),
    Effect.orElseSucceed(() => false)
  )

const readDirectory = (ctx: Ctx, p: string) =>
  ctx.fs.readDirectory(p).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))

/** The directory as the CLI names it: symlinks resolved (the CLI records its real cwd). */
const resolveDir = (ctx: Ctx, dir: string) =>
  ctx.fs.realPath(dir).pipe(Effect.orElseSucceed(() => ctx.path.resolve(dir)))

/** The folders under `projects/` that hold `projectPath`'s sessions. */
const projectDirsFor = (ctx: Ctx, projectPath: string) =>
  Effect.gen(function*() {
    const exact = ctx.path.join(ctx.root, T.projectDirName(projectPath))
    const found: Array<string> = []
    if (yield* isDirectory(ctx, exact)) found.push(exact)
    const prefix = T.longNamePrefix(projectPath)
    if (prefix === undefined) return found
    const wanted = T.dashed(projectPath)
    for (const name of yield* readDirectory(ctx, ctx.root)) {
      const candidate = ctx.path.join(ctx.root, name)
      if (!name.startsWith(prefix) || candidate === exact) continue
      if (yield* holdsSessionsOf(ctx, candidate, wanted)) found.push(candidate)
    }
    return found
  })

// Whether a transcript in this folder was written in the directory whose dashed name is `wanted`.
const holdsSessionsOf = (ctx: Ctx, projectDir: string, wanted: string) =>
  Effect.gen(function*() {
    for (const name of yield* readDirectory(ctx, projectDir)) {
      if (!name.endsWith(".jsonl")) continue
      const lite = yield* readLite(ctx, ctx.path.join(projectDir, name)).pipe(
        Effect.orElseSucceed(() => Option.none<T.Lite>())
      )
      if (Option.isNone(lite)) continue
      const cwd = T.cwdOf(lite.value)
      if (cwd !== undefined && T.dashed(cwd) === wanted) return true
    }
    return false
  })

const readText = (ctx: Ctx, p: string) => ctx.fs.readFileString(p).pipe(Effect.option)

/**
 * The working trees of the git repository `dir` is in (the main one first), read from `.git` the
 * way `git worktree list` does; empty outside a repository.
 */
const worktreesOf = (ctx: Ctx, dir: string) =>
  Effect.gen(function*() {
    const { path } = ctx
    let gitDir: string | undefined
    for (let cur = dir;;) {
      const dotGit = path.join(cur, ".git")
      const info = yield* Effect.option(ctx.fs.stat(dotGit))
      if (Option.isSome(info) && info.value.type === "Directory") {
        gitDir = dotGit
        break
      }
      if (Option.isSome(info) && info.value.type === "File") {
        const pointer = yield* readText(ctx, dotGit)
        const match = Option.isSome(pointer) ? /^gitdir:\s*(.+?)\s*$/m.exec(pointer.value) : null
        if (match?.[1] !== undefined) gitDir = path.resolve(cur, match[1])
        break
      }
      const parent = path.dirname(cur)
      if (parent === cur) break
      cur = parent
    }
    if (gitDir === undefined) return []
    const commonFile = yield* readText(ctx, path.join(gitDir, "commondir"))
    const commonDir = Option.isSome(commonFile) ? path.resolve(gitDir, commonFile.value.trim()) : gitDir
    const main = path.basename(commonDir) === ".git" ? path.dirname(commonDir) : commonDir
    const trees = [main]
    const linkedRoot = path.join(commonDir, "worktrees")
    for (const name of yield* readDirectory(ctx, linkedRoot)) {
      const pointer = yield* readText(ctx, path.join(linkedRoot, name, "gitdir"))
      if (Option.isNone(pointer) || pointer.value.trim().length === 0) continue
      trees.push(path.dirname(path.resolve(linkedRoot, name, pointer.value.trim())))
    }
    return yield* Effect.forEach(trees, (t) => resolveDir(ctx, t))
  })

interface Located {
  readonly file: string
  readonly projectDir: string
  readonly projectPath: string | undefined
}

/**
 * Every non-empty `<sessionId>.jsonl`: in `dir`'s project folders, then its worktrees', or in
 * every project. Lazy, so a caller that needs the first one reads no further.
 */
const locations = (ctx: Ctx, sessionId: string, dir: string | undefined): Stream.Stream<Located> => {
  const fileName = `${sessionId}.jsonl`
  const at = (projectDir: string, projectPath: string | undefined) =>
    ctx.fs.stat(ctx.path.join(projectDir, fileName)).pipe(
      Effect.map((info) =>
        info.type === "File" && info.size > 0
          ? Option.some<Located>({ file: ctx.path.join(projectDir, fileName), projectDir, projectPath })
          : Option.none()
      ),
      Effect.orElseSucceed(() => Option.none<Located>())
    )
  const folders: Stream.Stream<readonly [string, string | undefined]> = dir === undefined
    ? Stream.fromIterableEffect(readDirectory(ctx, ctx.root)).pipe(
      Stream.map((name) => [ctx.path.join(ctx.root, name), undefined] as const)
    )
    : Stream.unwrap(Effect.gen(function*() {
      const resolved = yield* resolveDir(ctx, dir)
      const own = Stream.fromIterableEffect(projectDirsFor(ctx, resolved)).pipe(
        Stream.map((d) => [d, resolved] as const)
      )
      const others = Stream.fromIterableEffect(worktreesOf(ctx, resolved)).pipe(
        Stream.filter((tree) => tree !== resolved),
        Stream.flatMap((tree) =>
          Stream.fromIterableEffect(projectDirsFor(ctx, tree)).pipe(Stream.map((d) => [d, tree] as const))
        )
      )
      return Stream.concat(own, others)
    }))
  return folders.pipe(
    Stream.mapEffect(([projectDir, projectPath]) => at(projectDir, projectPath)),
    Stream.filterMap((o) => o)
  )
}

const locate = (ctx: Ctx, sessionId: string, dir: string | undefined) =>
  locations(ctx, sessionId, dir).pipe(
    Stream.runHead,
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new SessionNotFoundError({ sessionId, ...(dir !== undefined ? { dir } : {}) })),
      onSome: Effect.succeed
    }))
  )

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

const decoder = new TextDecoder("utf-8")

/** The lines of a file, split on bytes so a multi-byte character across chunks survives. */
const rawLines = (ctx: Ctx, file: string): Stream.Stream<string, PlatformError> =>
  Stream.suspend(() => {
    // Transcript lines can be large (images, snapshots): no length limit, each is held once.
    const splitter = new LineSplitter(Number.POSITIVE_INFINITY)
    return ctx.fs.stream(file).pipe(
      Stream.mapConcat((chunk) => {
        const lines = splitter.push(chunk)
        return Array.isArray(lines) ? lines : []
      }),
      Stream.concat(Stream.suspend(() => {
        const last = splitter.flush()
        return last === undefined ? Stream.empty : Stream.make(last)
      }))
    )
  })

/** A transcript's entries in file order; a corrupt line is logged (with its line number) and skipped. */
const decodedEntries = (ctx: Ctx, file: string): Stream.Stream<T.Entry, PlatformError> =>
  Stream.suspend(() => {
    let lineNo = 0
    return rawLines(ctx, file).pipe(
      Stream.mapChunksEffect((lines) => {
        const out: Array<T.Entry> = []
        const corrupt: Array<{ line: number; reason: string }> = []
        for (const line of lines) {
          lineNo++
          const decoded = T.decodeLine(line)
          if (decoded === undefined) continue
          if (T.isCorrupt(decoded)) corrupt.push({ line: lineNo, reason: decoded.reason })
          else out.push(decoded)
        }
        const result = Effect.succeed(Chunk.unsafeFromArray(out))
        return corrupt.length === 0 ? result : Effect.zipRight(
          Effect.forEach(corrupt, ({ line, reason }) =>
            Effect.logWarning("effect-claude-agent: skipped a corrupt transcript line").pipe(
              Effect.annotateLogs({ file, line, reason })
            ), { discard: true }),
          result
        )
      })
    )
  })

// A `Read` keep-function as a `Stream.filterMap` step.
const nodeOf = <A>(keep: (e: T.Entry) => A | undefined) => (e: T.Entry): Option.Option<A> =>
  Option.fromNullable(keep(e))

const readAtMost = (handle: FileSystem.File, bytes: number) =>
  Effect.gen(function*() {
    const parts: Array<Uint8Array> = []
    let total = 0
    while (total < bytes) {
      const chunk = yield* handle.readAlloc(bytes - total)
      if (Option.isNone(chunk) || chunk.value.length === 0) break
      parts.push(chunk.value)
      total += chunk.value.length
    }
    const out = new Uint8Array(total)
    let offset = 0
    for (const part of parts) {
      out.set(part, offset)
      offset += part.length
    }
    return out
  })

const decodeChunk = (bytes: Uint8Array, cutAtStart: boolean, cutAtEnd: boolean) => {
  const entries: Array<T.Entry> = []
  const corrupt: Array<string> = []
  for (const line of T.chunkLines(decoder.decode(bytes), cutAtStart, cutAtEnd)) {
    const decoded = T.decodeLine(line)
    if (decoded === undefined) continue
    if (T.isCorrupt(decoded)) corrupt.push(decoded.reason)
    else entries.push(decoded)
  }
  return { entries, corrupt }
}

/** The first and last 64 KiB of a transcript, decoded: what a listing needs, whatever the file's size. */
const readLite = (ctx: Ctx, file: string) =>
  Effect.scoped(Effect.gen(function*() {
    const handle = yield* ctx.fs.open(file, { flag: "r" })
    const info = yield* handle.stat
    const size = Number(info.size)
    if (info.type !== "File" || size === 0) return Option.none<T.Lite>()
    const mtime = Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() })
    const headBytes = yield* readAtMost(handle, Math.min(size, T.LITE_BYTES))
    const head = decodeChunk(headBytes, false, size > headBytes.length)
    let tail = head
    if (size > headBytes.length) {
      const start = Math.max(0, size - T.LITE_BYTES)
      yield* handle.seek(start, "start")
      tail = decodeChunk(yield* readAtMost(handle, size - start), start > 0, false)
    }
    const corrupt = tail === head ? head.corrupt : [...head.corrupt, ...tail.corrupt]
    if (corrupt.length > 0) {
      yield* Effect.logWarning("effect-claude-agent: skipped corrupt transcript lines").pipe(
        Effect.annotateLogs({ file, count: corrupt.length, first: corrupt[0] })
      )
    }
    const lite: T.Lite = { mtime, size, head: head.entries, tail: tail === head ? head.entries : tail.entries }
    return Option.some(lite)
  }))

// The side files' decoders, built when a listing first reads one.
const decodeSideTitle = Guard.lazily(() =>
  Schema.decodeUnknownOption(Schema.parseJson(Schema.Struct({ customTitle: Schema.String })))
)
const decodeArchiveMark = Guard.lazily(() => Schema.decodeUnknownOption(Schema.parseJson(T.ArchiveMark)))
const MARK_MAX_BYTES = 4096

const sideFile = (ctx: Ctx, located: { readonly projectDir: string }, sessionId: string, name: string) =>
  ctx.path.join(located.projectDir, sessionId, name)

/** The title in `<project>/<sessionId>/custom-title.json`, where one is kept beside the transcript. */
const readSideTitle = (ctx: Ctx, located: Located, sessionId: string) =>
  readText(ctx, sideFile(ctx, located, sessionId, "custom-title.json")).pipe(
    Effect.map(Option.flatMap(decodeSideTitle)),
    Effect.map((o) => Option.isSome(o) ? T.cleanTitle(o.value.customTitle) || undefined : undefined)
  )

const readArchiveMark = (ctx: Ctx, located: Located, sessionId: string) =>
  Effect.gen(function*() {
    const file = sideFile(ctx, located, sessionId, "archived.json")
    const info = yield* Effect.option(ctx.fs.stat(file))
    if (Option.isNone(info) || info.value.size > MARK_MAX_BYTES) return undefined
    const text = yield* readText(ctx, file)
    const mark = Option.flatMap(text, decodeArchiveMark)
    if (Option.isNone(mark)) return undefined
    const atMs = Date.parse(mark.value.at)
    return Number.isNaN(atMs) ? undefined : { archived: mark.value.archived, atMs }
  })

const infoAt = (ctx: Ctx, sessionId: string, located: Located, lite: T.Lite) =>
  Effect.gen(function*() {
    const sideTitle = T.customTitleOf(lite.tail) === undefined
      ? yield* readSideTitle(ctx, located, sessionId)
      : undefined
    const mark = yield* readArchiveMark(ctx, located, sessionId)
    return T.info(sessionId, lite, located.projectPath, sideTitle, T.archivedState(mark, lite))
  })

// Whether a transcript holds a conversation (any linked entry), for `continued-in` markers.
const holdsConversation = (ctx: Ctx, file: string) =>
  rawLines(ctx, file).pipe(
    Stream.filter((line) => line.includes("\"parentUuid\":")),
    Stream.runHead,
    Effect.map(Option.isSome),
    Effect.orElseSucceed(() => false)
  )

// ---------------------------------------------------------------------------------------------
// Listing
// ---------------------------------------------------------------------------------------------

interface Candidate extends Located {
  readonly sessionId: string
  readonly mtime: number
}

const candidatesIn = (ctx: Ctx, projectDir: string, projectPath: string | undefined) =>
  Effect.gen(function*() {
    const names = (yield* readDirectory(ctx, projectDir)).filter((n) =>
      n.endsWith(".jsonl") && T.isUuid(n.slice(0, -6))
    )
    const found = yield* Effect.forEach(names, (name) => {
      const file = ctx.path.join(projectDir, name)
      return ctx.fs.stat(file).pipe(
        Effect.map((info): Option.Option<Candidate> =>
          info.type === "File"
            ? Option.some({
              sessionId: name.slice(0, -6),
              file,
              projectDir,
              projectPath,
              mtime: Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() })
            })
            : Option.none()
        ),
        Effect.orElseSucceed(() => Option.none<Candidate>())
      )
    }, { concurrency: 16 })
    return found.flatMap(Option.toArray)
  })

const listingFolders = (ctx: Ctx, options: ListSessionsOptions) =>
  Effect.gen(function*() {
    if (options.dir === undefined) {
      const names = yield* readDirectory(ctx, ctx.root)
      const dirs = yield* Effect.filter(names.map((n) => ctx.path.join(ctx.root, n)), (d) => isDirectory(ctx, d))
      return dirs.map((d) => [d, undefined] as const)
    }
    const resolved = yield* resolveDir(ctx, options.dir)
    const trees = options.includeWorktrees === false ? [] : yield* worktreesOf(ctx, resolved)
    const paths = trees.length <= 1 ? [resolved] : [resolved, ...trees.filter((t) => t !== resolved)]
    const seen = new Set<string>()
    const out: Array<readonly [string, string]> = []
    for (const p of paths) {
      for (const d of yield* projectDirsFor(ctx, p)) {
        if (seen.has(d)) continue
        seen.add(d)
        out.push([d, p])
      }
    }
    return out
  })

/**
 * The sessions on this machine, newest first (the official `listSessions`): every project's, or
 * with `dir` that project's and its git worktrees'. Sub-agent transcripts and transcripts with no
 * prompt are not sessions and are left out; a session continued in another (`continued-in`) is
 * left out in favour of it. With `limit`, only as many transcripts are read as the page needs.
 *
 * Fails only with `OptionsError` for an option of the wrong type (from untyped JavaScript,
 * `limit: "3"`): a missing projects folder is an empty list, an unreadable transcript is skipped
 * with a warning.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * const program = Sessions.listSessions({ dir: "/home/me/project", limit: 10 }).pipe(
 *   Effect.tap((sessions) => Effect.forEach(sessions, (s) => Effect.log(s.sessionId, s.summary))),
 *   Effect.provide(NodeContext.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category listing
 */
export const listSessions = (
  options: ListSessionsOptions = {}
): Effect.Effect<ReadonlyArray<SessionInfo>, OptionsError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    yield* Args.local.list(options)
    const ctx = yield* context(options.configDir)
    const folders = yield* listingFolders(ctx, options)
    const candidates = (yield* Effect.forEach(folders, ([d, p]) => candidatesIn(ctx, d, p), { concurrency: 4 })).flat()
    candidates.sort((a, b) =>
      a.mtime !== b.mtime ? b.mtime - a.mtime : a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0
    )
    const includeProgrammatic = options.includeProgrammatic ?? true
    const seen = new Set<string>()
    const infos = Stream.fromIterable(candidates).pipe(
      Stream.mapEffect((c) => listed(ctx, c, includeProgrammatic), { concurrency: 8 }),
      Stream.filterMap((o) => o),
      // The same session in two folders (a moved project): the newest copy, which sorts first.
      Stream.filter((info) => {
        if (seen.has(info.sessionId)) return false
        seen.add(info.sessionId)
        return true
      }),
      Stream.drop(options.offset !== undefined && options.offset > 0 ? options.offset : 0)
    )
    const page = options.limit !== undefined && options.limit > 0 ? Stream.take(infos, options.limit) : infos
    return Chunk.toReadonlyArray(yield* Stream.runCollect(page))
  })

const listed = (ctx: Ctx, c: Candidate, includeProgrammatic: boolean) =>
  Effect.gen(function*() {
    const lite = yield* readLite(ctx, c.file)
    if (Option.isNone(lite)) return Option.none<SessionInfo>()
    if (!includeProgrammatic && T.isProgrammatic(lite.value)) return Option.none<SessionInfo>()
    const next = T.continuedIn(lite.value.tail)
    if (next !== undefined && (yield* holdsConversation(ctx, ctx.path.join(c.projectDir, `${next}.jsonl`)))) {
      return Option.none<SessionInfo>()
    }
    const fields = yield* infoAt(ctx, c.sessionId, c, lite.value)
    return fields === undefined
      ? Option.none<SessionInfo>()
      : Option.some<SessionInfo>({ ...fields, lastModified: c.mtime })
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning("effect-claude-agent: skipped an unreadable transcript").pipe(
          Effect.annotateLogs({ file: c.file, error: error.message })
        ),
        Option.none<SessionInfo>()
      )
    )
  )

/**
 * One session's listing, reading only its transcript (the official `getSessionInfo`). Fails with
 * `SessionNotFoundError` when there is no transcript, or when it is one `listSessions` leaves out
 * (a sub-agent's, or one with no prompt); with `OptionsError` when `sessionId` is not a UUID.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const title = Sessions.getSessionInfo(sessionId).pipe(Effect.map((info) => info.customTitle ?? info.summary))
 * ```
 *
 * @since 0.1.0
 * @category listing
 */
export const getSessionInfo = (
  sessionId: string,
  options: SessionLocation = {}
): Effect.Effect<
  SessionInfo,
  SessionNotFoundError | OptionsError | PlatformError,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    const lite = yield* readLite(ctx, located.file)
    const fields = Option.isSome(lite) ? yield* infoAt(ctx, sessionId, located, lite.value) : undefined
    if (fields === undefined) {
      return yield* new SessionNotFoundError({
        sessionId,
        reason: "its transcript holds no listable session (a sub-agent's, or one with no prompt)"
      })
    }
    return fields
  })

/**
 * `getSessionInfo` with "no such session" as `Option.none()` rather than an error: what the
 * official `getSessionInfo` answers with `undefined` (no transcript, or one `listSessions` leaves
 * out). Still fails with `OptionsError` when `sessionId` is not a UUID or an option has the wrong
 * type, and with `PlatformError` when a file cannot be read.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const title = Sessions.findSessionInfo(sessionId).pipe(
 *   Effect.map(Option.match({ onNone: () => "(no such session)", onSome: (info) => info.summary }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category listing
 */
export const findSessionInfo = (
  sessionId: string,
  options: SessionLocation = {}
): Effect.Effect<Option.Option<SessionInfo>, OptionsError | PlatformError, FileSystem.FileSystem | Path.Path> =>
  getSessionInfo(sessionId, options).pipe(
    Effect.map(Option.some),
    Effect.catchTag("SessionNotFoundError", () => Effect.succeed(Option.none<SessionInfo>()))
  )

// ---------------------------------------------------------------------------------------------
// Conversations
// ---------------------------------------------------------------------------------------------

/**
 * A transcript's entries in file order, decoded as they are read (a large transcript is never
 * held whole): the raw material of `getSessionMessages`, with every metadata line too. A corrupt
 * line is logged at warning level, with its line number, and skipped.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const toolsUsed = Sessions.transcript(sessionId).pipe(
 *   Stream.filter((entry) => entry.type === "tools-used"),
 *   Stream.runLast
 * )
 * const program = Effect.flatMap(toolsUsed, (entry) => Effect.log(entry))
 * ```
 *
 * @since 0.1.0
 * @category conversations
 */
export const transcript = (
  sessionId: string,
  options: SessionLocation = {}
): Stream.Stream<
  TranscriptEntry,
  SessionNotFoundError | OptionsError | PlatformError,
  FileSystem.FileSystem | Path.Path
> =>
  Stream.unwrap(Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    return decodedEntries(ctx, located.file)
  }))

/**
 * A session's conversation, oldest first (the official `getSessionMessages`): the chain of
 * entries from the newest message back to the start (or to the last compaction), so branches left
 * by a rewind are not in it; the parallel tool calls of one reply and their results are all in it.
 * User and assistant messages, plus system entries with `includeSystemMessages`; the CLI's own
 * context (reminders, sub-agent entries) is left out. `offset` and `limit` page the result.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Sessions.getSessionMessages(sessionId, { limit: 20 }).pipe(
 *   Effect.tap((messages) => Effect.forEach(messages, (m) => Effect.log(m.type, m.uuid)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category conversations
 */
export const getSessionMessages = (
  sessionId: string,
  options: GetSessionMessagesOptions = {}
): Effect.Effect<
  ReadonlyArray<SessionMessage>,
  SessionNotFoundError | OptionsError | PlatformError,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.messages)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    const nodes = yield* decodedEntries(ctx, located.file).pipe(
      Stream.filterMap(nodeOf(Read.mainNode)),
      Stream.runCollect
    )
    return Read.sessionMessages(Chunk.toReadonlyArray(nodes), options)
  })

const subagentsDir = (ctx: Ctx, located: Located, sessionId: string) =>
  ctx.path.join(located.projectDir, sessionId, "subagents")

const agentFiles = (ctx: Ctx, dir: string) =>
  ctx.fs.readDirectory(dir, { recursive: true }).pipe(
    Effect.orElseSucceed((): ReadonlyArray<string> => []),
    Effect.map((entries) =>
      entries.flatMap((relative) => {
        const name = ctx.path.basename(relative)
        return name.startsWith("agent-") && name.endsWith(".jsonl")
          ? [{ agentId: name.slice(6, -6), file: ctx.path.join(dir, relative) }]
          : []
      }).sort((a, b) => a.file < b.file ? -1 : a.file > b.file ? 1 : 0)
    )
  )

/**
 * The ids of the sub-agents a session ran (the official `listSubagents`): one per
 * `agent-<id>.jsonl` under `<project>/<sessionId>/subagents/`, nested folders included.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Sessions.listSubagents(sessionId).pipe(
 *   Effect.flatMap((ids) => Effect.forEach(ids, (id) => Sessions.getSubagentMessages(sessionId, id)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category conversations
 */
export const listSubagents = (
  sessionId: string,
  options: SessionLocation = {}
): Effect.Effect<ReadonlyArray<string>, SessionNotFoundError | OptionsError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    return (yield* agentFiles(ctx, subagentsDir(ctx, located, sessionId))).map((a) => a.agentId)
  })

const decodeAgentMeta = Guard.lazily(() => Schema.decodeUnknownOption(Schema.parseJson(Read.AgentMeta)))

/**
 * A sub-agent's conversation, oldest first (the official `getSubagentMessages`): its user and
 * assistant messages, each with `parent_tool_use_id` set to the `Agent` tool call that started it
 * (from the `agent-<id>.meta.json` beside the transcript).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * declare const agentId: string
 * const program = Sessions.getSubagentMessages(sessionId, agentId).pipe(
 *   Effect.catchTag("SessionNotFoundError", () => Effect.succeed([]))
 * )
 * ```
 *
 * @since 0.1.0
 * @category conversations
 */
export const getSubagentMessages = (
  sessionId: string,
  agentId: string,
  options: GetSubagentMessagesOptions = {}
): Effect.Effect<
  ReadonlyArray<SessionMessage>,
  SessionNotFoundError | OptionsError | PlatformError,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.page)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    const agent = (yield* agentFiles(ctx, subagentsDir(ctx, located, sessionId))).find((a) => a.agentId === agentId)
    if (agent === undefined) {
      return yield* new SessionNotFoundError({
        sessionId,
        agentId,
        ...(options.dir !== undefined ? { dir: options.dir } : {})
      })
    }
    const meta = Option.flatMap(
      yield* readText(ctx, agent.file.replace(/\.jsonl$/, ".meta.json")),
      decodeAgentMeta
    )
    const nodes = yield* decodedEntries(ctx, agent.file).pipe(
      Stream.filterMap(nodeOf(Read.subagentNode)),
      Stream.runCollect
    )
    return Read.subagentMessages(Chunk.toReadonlyArray(nodes), Option.getOrUndefined(meta), options)
  })

// ---------------------------------------------------------------------------------------------
// Changes
// ---------------------------------------------------------------------------------------------

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

// Appends one entry. A transcript cut short mid-line (a crash) gets a newline first, so the new
// entry is not glued to the broken one. Opened for appending: the CLI may be writing too.
const appendEntry = (ctx: Ctx, file: string, entry: Record<string, unknown>) =>
  Effect.gen(function*() {
    const lastByte = yield* Effect.scoped(Effect.gen(function*() {
      const handle = yield* ctx.fs.open(file, { flag: "r" })
      const size = Number((yield* handle.stat).size)
      if (size === 0) return undefined
      yield* handle.seek(size - 1, "start")
      return Option.getOrUndefined(yield* handle.readAlloc(1))?.[0]
    }))
    const prefix = lastByte === undefined || lastByte === 0x0a ? "" : "\n"
    yield* ctx.fs.writeFileString(file, `${prefix}${JSON.stringify(entry)}\n`, { flag: "a" })
  })

/**
 * Renames a session (the official `renameSession`): appends a `custom-title` entry to its
 * transcript, which the CLI, both SDKs and `listSessions` read as its title. `OptionsError` for an
 * empty title, one that is not a string, or one whose transcript line is over 64 KiB (listings
 * look for the title in a transcript's last 64 KiB, so it would never be shown).
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Sessions.renameSession(sessionId, "Refactor the parser")
 * ```
 *
 * @since 0.1.0
 * @category changes
 */
export const renameSession = (
  sessionId: string,
  title: string,
  options: SessionLocation = {}
): Effect.Effect<void, SessionNotFoundError | OptionsError | PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const entry = yield* Args.renameEntry(sessionId, title)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    yield* appendEntry(ctx, located.file, entry)
  })

/**
 * Tags a session, or clears its tag with `null` (the official `tagSession`): appends a `tag`
 * entry to its transcript. `OptionsError` for an empty tag.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Effect.zipRight(Sessions.tagSession(sessionId, "needs-review"), Sessions.tagSession(sessionId, null))
 * ```
 *
 * @since 0.1.0
 * @category changes
 */
export const tagSession = (
  sessionId: string,
  tag: string | null,
  options: SessionLocation = {}
): Effect.Effect<void, SessionNotFoundError | OptionsError | PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const entry = yield* Args.tagEntry(sessionId, tag)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    yield* appendEntry(ctx, located.file, entry)
  })

const setArchived = (sessionId: string, archived: boolean, options: SessionLocation) =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const ctx = yield* context(options.configDir)
    const all = Chunk.toReadonlyArray(yield* Stream.runCollect(locations(ctx, sessionId, options.dir)))
    if (all.length === 0) {
      return yield* new SessionNotFoundError({ sessionId, ...(options.dir !== undefined ? { dir: options.dir } : {}) })
    }
    const text = JSON.stringify({ archived, at: yield* nowIso, by: "sdk" })
    yield* Effect.forEach(all, (located) =>
      Effect.gen(function*() {
        const dir = ctx.path.join(located.projectDir, sessionId)
        const file = ctx.path.join(dir, "archived.json")
        yield* ctx.fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
        // Written whole, then renamed: a reader never sees half a mark.
        const temp = `${file}.${crypto.randomUUID()}.tmp`
        yield* ctx.fs.writeFileString(temp, text, { mode: 0o600 })
        yield* ctx.fs.rename(temp, file).pipe(Effect.tapError(() => Effect.ignore(ctx.fs.remove(temp))))
      }), { discard: true })
  })

/**
 * Archives a session (the official `archiveSession`): it stays on disk and in `listSessions`, with
 * `archived: true`, until `unarchiveSession` or a new prompt in it. The mark is
 * `<project>/<sessionId>/archived.json`; the transcript is not changed.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Sessions.archiveSession(sessionId)
 * ```
 *
 * @since 0.1.0
 * @category changes
 */
export const archiveSession = (
  sessionId: string,
  options: SessionLocation = {}
): Effect.Effect<void, SessionNotFoundError | OptionsError | PlatformError, FileSystem.FileSystem | Path.Path> =>
  setArchived(sessionId, true, options)

/**
 * Unarchives a session (the official `unarchiveSession`): `listSessions` then reports
 * `archived: false`.
 *
 * @example
 * ```ts
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Sessions.unarchiveSession(sessionId)
 * ```
 *
 * @since 0.1.0
 * @category changes
 */
export const unarchiveSession = (
  sessionId: string,
  options: SessionLocation = {}
): Effect.Effect<void, SessionNotFoundError | OptionsError | PlatformError, FileSystem.FileSystem | Path.Path> =>
  setArchived(sessionId, false, options)

/**
 * Deletes a session (the official `deleteSession`): its transcript and its
 * `<project>/<sessionId>/` folder (sub-agent transcripts, archive mark).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Sessions.deleteSession(sessionId).pipe(
 *   Effect.catchTag("SessionNotFoundError", () => Effect.void)
 * )
 * ```
 *
 * @since 0.1.0
 * @category changes
 */
export const deleteSession = (
  sessionId: string,
  options: SessionLocation = {}
): Effect.Effect<void, SessionNotFoundError | OptionsError | PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.location)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    yield* ctx.fs.remove(located.file)
    yield* ctx.fs.remove(ctx.path.join(located.projectDir, sessionId), { recursive: true, force: true })
  })

/**
 * Forks a session into a new one (the official `forkSession`): its conversation copied with fresh
 * uuids (links kept), each entry naming its original in `forkedFrom`, and a `custom-title` line
 * (`title`, or the source's title + ` (fork)`). Up to `upToMessageId` if given. File-history
 * snapshots are not copied, so the fork cannot rewind files. The new session is in the same
 * project folder and resumes with `{ resume: sessionId }`.
 *
 * Fails with `OptionsError` when `upToMessageId` is not in the session, and with
 * `SessionNotFoundError` when the session has no messages.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, Sessions } from "effect-claude-agent"
 *
 * declare const sessionId: string
 * const program = Effect.gen(function*() {
 *   const fork = yield* Sessions.forkSession(sessionId, { title: "Plan B" })
 *   yield* ClaudeAgent.query("Try the other approach", { resume: fork.sessionId }).pipe(Stream.runDrain)
 * })
 * ```
 *
 * @since 0.1.0
 * @category changes
 */
export const forkSession = (
  sessionId: string,
  options: ForkSessionOptions = {}
): Effect.Effect<
  ForkSessionResult,
  SessionNotFoundError | OptionsError | PlatformError,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    yield* Args.checkId(sessionId, options, Args.local.fork)
    const ctx = yield* context(options.configDir)
    const located = yield* locate(ctx, sessionId, options.dir)
    const entries = Chunk.toReadonlyArray(yield* Stream.runCollect(decodedEntries(ctx, located.file)))
    const forkId = crypto.randomUUID()
    const lines = yield* Read.forkLines(entries, {
      sessionId,
      upToMessageId: options.upToMessageId,
      title: options.title,
      sideTitle: yield* readSideTitle(ctx, located, sessionId),
      forkId,
      now: yield* nowIso,
      newUuid: () => crypto.randomUUID()
    })
    const text = lines.map((line) => JSON.stringify(line)).join("\n") + "\n"
    yield* ctx.fs.writeFileString(ctx.path.join(located.projectDir, `${forkId}.jsonl`), text, {
      flag: "wx",
      mode: 0o600
    })
    return { sessionId: forkId }
  })

// ---------------------------------------------------------------------------------------------
// Store
// ---------------------------------------------------------------------------------------------

/**
 * The `Sessions` functions over a `SessionStore`, for conversations kept off the local disk (a
 * session run with the `sessionStore` option, or one copied with
 * `SessionStores.importLocalSession`). A store holds the transcript's entries as the CLI writes
 * them, so each function gives the answer its local namesake gives for the same session; sessions
 * are found under a project key (`StoreLocation`) rather than in a config directory.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore, Sessions } from "effect-claude-agent"
 *
 * const program = Effect.gen(function*() {
 *   const sessions = Sessions.fromStore(yield* SessionStore.SessionStore)
 *   const [newest] = yield* sessions.listSessions({ dir: "/srv/app", limit: 1 })
 *   if (newest === undefined) return []
 *   yield* sessions.renameSession(newest.sessionId, "Quarterly report", { dir: "/srv/app" })
 *   return yield* sessions.getSessionMessages(newest.sessionId, { dir: "/srv/app" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category store
 */
export const fromStore = (store: SessionStoreShape): StoredSessions => Stored.make(store)
