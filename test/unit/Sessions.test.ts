// Sessions on transcripts the real CLI 2.1.330 wrote (test/fixtures/sessions: four sessions from
// ScriptedModel runs, api-request lines dropped, attachment bodies cut to their type, the working
// directory renamed /home/user/project). Each test works on its own copy.
import { FileSystem, Path } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  ConfigProvider,
  Effect,
  Either,
  HashMap,
  Logger,
  LogLevel,
  Option,
  Predicate,
  Schema,
  Stream,
  TestClock
} from "effect"
import { fileURLToPath } from "node:url"
import * as Sessions from "../../src/Sessions.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/sessions", import.meta.url))
const PROJECT = "/home/user/project"

/** Two turns, the second writes a file. */
const PLAIN = "b41a2cec-08c4-4a44-9644-78f8fb84711e"
/** Runs a general-purpose sub-agent. */
const WITH_AGENT = "5d8605df-72f0-4819-8c39-8e65234b6432"
const AGENT = "a79dbecaa212a2d96"
/** A turn, `/compact`, another turn. */
const COMPACTED = "6af5ae5d-ef5b-4820-beef-1161cae8c9a2"
/** One reply with text and two parallel Write calls. */
const PARALLEL = "d02e801d-cb3a-4448-89b1-cbd231f849fe"

const MTIMES: ReadonlyArray<readonly [string, number]> = [
  [PARALLEL, Date.parse("2026-11-23T15:00:00Z")],
  [PLAIN, Date.parse("2026-11-23T14:00:00Z")],
  [COMPACTED, Date.parse("2026-11-23T13:00:00Z")],
  [WITH_AGENT, Date.parse("2026-11-23T12:00:00Z")]
]

// After every timestamp in the fixtures: an archive mark written "now" is newer than their prompts.
const NOW = Date.parse("2026-11-24T00:00:00Z")

const setup = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const configDir = yield* fs.makeTempDirectoryScoped({ prefix: "sessions-test-" })
  yield* fs.copy(FIXTURE, configDir)
  const project = path.join(configDir, "projects", "-home-user-project")
  const file = (id: string) => path.join(project, `${id}.jsonl`)
  for (const [id, mtime] of MTIMES) yield* fs.utimes(file(id), new Date(mtime), new Date(mtime))
  yield* TestClock.setTime(NOW)
  const lines = (id: string) =>
    Effect.map(fs.readFileString(file(id)), (text) => text.split("\n").filter((l) => l.length > 0))
  return { fs, path, configDir, project, file, lines, where: { configDir } }
})

const textOf = (message: unknown): string => {
  const content = Predicate.isRecord(message) ? message.content : undefined
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((b) =>
    !Predicate.isRecord(b)
      ? ""
      : b.type === "text"
      ? String(b.text)
      : b.type === "tool_use"
      ? `tool_use:${String(b.name)}`
      : b.type === "tool_result"
      ? `tool_result:${String(b.tool_use_id)}`
      : String(b.type)
  ).join("|")
}

const summary = (messages: ReadonlyArray<Sessions.SessionMessage>) =>
  messages.map((m) => `${m.type}: ${textOf(m.message)}`)

const Json = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const parse = Schema.decodeUnknownSync(Json)

const withLogs = <A, E, R>(self: Effect.Effect<A, E, R>) => {
  const logs: Array<{ level: string; message: string; annotations: Record<string, unknown> }> = []
  const capture = Logger.make(({ annotations, logLevel, message }) => {
    logs.push({
      level: logLevel.label,
      message: Array.isArray(message) ? message.map(String).join(" ") : String(message),
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return Effect.map(
    self.pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    ),
    (a) => [a, logs] as const
  )
}

describe("Sessions.listSessions", () => {
  it.scoped("lists every session newest first, described from its transcript", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const listed = yield* Sessions.listSessions(where)
      expect(listed.map((s) => s.sessionId)).toEqual([PARALLEL, PLAIN, COMPACTED, WITH_AGENT])
      expect(listed.map((s) => s.summary)).toEqual(["write two files", "hello first", "after compact", "use agent now"])
      const plain = listed[1]
      expect(plain).toEqual({
        sessionId: PLAIN,
        summary: "hello first",
        lastModified: Date.parse("2026-11-23T14:00:00Z"),
        fileSize: plain?.fileSize,
        firstPrompt: "hello first",
        gitBranch: "HEAD",
        cwd: PROJECT,
        createdAt: Date.parse("2026-11-23T14:03:06.903Z")
      })
      expect(plain?.fileSize).toBeGreaterThan(1000)
      // The compacted session's summary is its last prompt; its first prompt is still the first.
      expect(listed[2]).toMatchObject({ summary: "after compact", firstPrompt: "hello there" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("dir: only that project's sessions; offset and limit page the sorted list", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      expect((yield* Sessions.listSessions({ ...where, dir: PROJECT })).length).toBe(4)
      expect(yield* Sessions.listSessions({ ...where, dir: "/home/user/elsewhere" })).toEqual([])
      const page = yield* Sessions.listSessions({ ...where, dir: PROJECT, offset: 1, limit: 2 })
      expect(page.map((s) => s.sessionId)).toEqual([PLAIN, COMPACTED])
      expect((yield* Sessions.listSessions({ ...where, offset: 3 })).map((s) => s.sessionId)).toEqual([WITH_AGENT])
      expect((yield* Sessions.listSessions({ ...where, limit: 0 })).length).toBe(4)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("includeProgrammatic: false leaves out SDK-started sessions (entrypoint sdk-ts)", () =>
    Effect.gen(function*() {
      const { fs, file, where } = yield* setup
      expect(yield* Sessions.listSessions({ ...where, includeProgrammatic: false })).toEqual([])
      const text = yield* fs.readFileString(file(PLAIN))
      yield* fs.writeFileString(file(PLAIN), text.replaceAll("\"entrypoint\":\"sdk-ts\"", "\"entrypoint\":\"cli\""))
      const cli = yield* Sessions.listSessions({ ...where, includeProgrammatic: false })
      expect(cli.map((s) => s.sessionId)).toEqual([PLAIN])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("no projects folder is an empty list, not a failure", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const empty = yield* fs.makeTempDirectoryScoped()
      expect(yield* Sessions.listSessions({ configDir: empty })).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("the config dir comes from CLAUDE_CONFIG_DIR, else HOME/.claude, through the ConfigProvider", () =>
    Effect.gen(function*() {
      const { configDir, fs, path } = yield* setup
      const fromEnv = yield* Sessions.listSessions().pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["CLAUDE_CONFIG_DIR", configDir]])))
      )
      expect(fromEnv.length).toBe(4)
      const home = yield* fs.makeTempDirectoryScoped()
      yield* fs.copy(configDir, path.join(home, ".claude"))
      const fromHome = yield* Sessions.listSessions().pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["HOME", home]])))
      )
      expect(fromHome.map((s) => s.sessionId)).toEqual(fromEnv.map((s) => s.sessionId))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a corrupt line is skipped with a warning naming the file and line; the listing and the conversation stand", () =>
    Effect.gen(function*() {
      const { fs, file, lines, where } = yield* setup
      const original = yield* lines(PLAIN)
      const broken = [...original.slice(0, 3), "{\"type\":\"user\",\"uuid\":", "{\"type\": 42}", ...original.slice(3)]
      yield* fs.writeFileString(file(PLAIN), broken.join("\n") + "\n")
      const [listed, listLogs] = yield* withLogs(Sessions.listSessions(where))
      expect(listed.map((s) => s.sessionId)).toContain(PLAIN)
      expect(listLogs).toContainEqual(expect.objectContaining({
        level: "WARN",
        annotations: expect.objectContaining({ file: file(PLAIN), count: 2 })
      }))
      const [messages, logs] = yield* withLogs(Sessions.getSessionMessages(PLAIN, where))
      expect(summary(messages)).toHaveLength(6)
      const warnings = logs.filter((l) => l.level === "WARN")
      expect(warnings.map((w) => [w.annotations.line, w.annotations.reason])).toEqual([
        [4, "not JSON"],
        [5, "type: Expected string, actual 42"]
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a large transcript is described from its first and last 64 KiB only", () =>
    Effect.gen(function*() {
      const { fs, file, lines, where } = yield* setup
      const original = yield* lines(PLAIN)
      const padding = (n: number) => JSON.stringify({ type: "file-history-snapshot", data: "x".repeat(n) })
      const hidden = JSON.stringify({ type: "custom-title", customTitle: "in the middle", sessionId: PLAIN })
      const grown = [
        ...original.slice(0, 4),
        padding(100_000),
        hidden,
        padding(100_000),
        ...original.slice(4),
        JSON.stringify({ type: "tag", tag: "at the end", sessionId: PLAIN })
      ]
      yield* fs.writeFileString(file(PLAIN), grown.join("\n") + "\n")
      const info = yield* Sessions.getSessionInfo(PLAIN, where)
      expect(info.fileSize).toBeGreaterThan(200_000)
      expect(info).toMatchObject({ firstPrompt: "hello first", tag: "at the end", summary: "hello first" })
      expect(info.customTitle).toBeUndefined()
      // The conversation reads every line.
      expect(summary(yield* Sessions.getSessionMessages(PLAIN, where))).toHaveLength(6)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a session continued in another one is left out in favour of it", () =>
    Effect.gen(function*() {
      const { fs, file, where } = yield* setup
      const marker = JSON.stringify({ type: "continued-in", continuedInSessionId: PARALLEL, sessionId: PLAIN })
      yield* fs.writeFileString(file(PLAIN), `${marker}\n`, { flag: "a" })
      const listed = yield* Sessions.listSessions(where)
      expect(listed.map((s) => s.sessionId)).toEqual([PARALLEL, COMPACTED, WITH_AGENT])
      // getSessionInfo still answers for it.
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).sessionId).toBe(PLAIN)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions: projects, worktrees and long names", () => {
  it.scoped("dir inside a git repository includes its worktrees' sessions unless includeWorktrees is false", () =>
    Effect.gen(function*() {
      const { configDir, fs, path, project } = yield* setup
      const base = yield* Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "repo-" }), fs.realPath)
      const main = path.join(base, "repo")
      const tree = path.join(base, "wt-feat")
      // The layout `git worktree add` leaves: .git/worktrees/<name>/gitdir points at the tree's .git file.
      yield* fs.makeDirectory(path.join(main, ".git", "worktrees", "wt-feat"), { recursive: true })
      yield* fs.makeDirectory(path.join(main, "src"), { recursive: true })
      yield* fs.makeDirectory(tree, { recursive: true })
      yield* fs.writeFileString(path.join(main, ".git", "worktrees", "wt-feat", "gitdir"), `${tree}/.git\n`)
      yield* fs.writeFileString(path.join(main, ".git", "worktrees", "wt-feat", "commondir"), "../..\n")
      yield* fs.writeFileString(path.join(tree, ".git"), `gitdir: ${main}/.git/worktrees/wt-feat\n`)
      const folder = (p: string) => path.join(configDir, "projects", p.replace(/[^a-zA-Z0-9]/g, "-"))
      yield* fs.makeDirectory(folder(main))
      yield* fs.makeDirectory(folder(tree))
      yield* fs.rename(path.join(project, `${PLAIN}.jsonl`), path.join(folder(main), `${PLAIN}.jsonl`))
      yield* fs.rename(path.join(project, `${PARALLEL}.jsonl`), path.join(folder(tree), `${PARALLEL}.jsonl`))

      const ids = (options: Sessions.ListSessionsOptions) =>
        Effect.map(Sessions.listSessions({ configDir, ...options }), (l) => l.map((s) => s.sessionId))
      expect(yield* ids({ dir: main })).toEqual([PARALLEL, PLAIN])
      expect(yield* ids({ dir: tree })).toEqual([PARALLEL, PLAIN])
      expect(yield* ids({ dir: path.join(main, "src") })).toEqual([PARALLEL, PLAIN])
      expect(yield* ids({ dir: main, includeWorktrees: false })).toEqual([PLAIN])
      // Finding one session by id searches the worktrees too.
      expect((yield* Sessions.getSessionInfo(PARALLEL, { configDir, dir: main })).sessionId).toBe(PARALLEL)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a working directory over 200 characters: the hashed folder name, or another hash with that cwd inside", () =>
    Effect.gen(function*() {
      const { configDir, fs, path, project } = yield* setup
      const long = `/home/user/${"d".repeat(60)}/${"é-ü".repeat(20)}/${"x".repeat(70)}/${"y".repeat(40)}`
      const dashed = long.replace(/[^a-zA-Z0-9]/g, "-")
      let hash = 0
      for (let i = 0; i < long.length; i++) hash = ((hash << 5) - hash + long.charCodeAt(i)) | 0
      const exact = path.join(configDir, "projects", `${dashed.slice(0, 200)}-${Math.abs(hash).toString(36)}`)
      const other = path.join(configDir, "projects", `${dashed.slice(0, 200)}-otherhash`)
      const stranger = path.join(configDir, "projects", `${dashed.slice(0, 200)}-stranger`)
      for (const d of [exact, other, stranger]) yield* fs.makeDirectory(d)
      const moveWithCwd = (id: string, to: string, cwd: string) =>
        Effect.gen(function*() {
          const text = yield* fs.readFileString(path.join(project, `${id}.jsonl`))
          yield* fs.writeFileString(path.join(to, `${id}.jsonl`), text.replaceAll(PROJECT, cwd))
          yield* fs.remove(path.join(project, `${id}.jsonl`))
        })
      yield* moveWithCwd(PLAIN, exact, long)
      yield* moveWithCwd(PARALLEL, other, long)
      yield* moveWithCwd(COMPACTED, stranger, `${long}-not-the-same`)
      const listed = yield* Sessions.listSessions({ configDir, dir: long })
      expect(listed.map((s) => s.sessionId).sort()).toEqual([PARALLEL, PLAIN].sort())
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions.getSessionInfo", () => {
  it.scoped("typed failures: no such session, a session of another project, an id that is not a UUID", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const missing = yield* Effect.flip(Sessions.getSessionInfo("00000000-0000-4000-8000-000000000000", where))
      expect(missing._tag).toBe("SessionNotFoundError")
      expect(missing.message).toBe("Session 00000000-0000-4000-8000-000000000000 not found in any project directory")
      const elsewhere = yield* Effect.flip(Sessions.getSessionInfo(PLAIN, { ...where, dir: "/home/user/other" }))
      expect(elsewhere).toMatchObject({ _tag: "SessionNotFoundError", sessionId: PLAIN, dir: "/home/user/other" })
      const invalid = yield* Effect.flip(Sessions.getSessionInfo("../etc/passwd", where))
      expect(invalid).toMatchObject({ _tag: "OptionsError", field: "sessionId" })
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions.getSessionMessages", () => {
  it.scoped("the conversation in order: prompts, replies, tool calls and results; no attachments or metadata", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const messages = yield* Sessions.getSessionMessages(PLAIN, where)
      expect(summary(messages)).toEqual([
        "user: hello first",
        "assistant: plain answer",
        "user: write file please",
        "assistant: tool_use:Write",
        "user: tool_result:toolu_scripted_2_0",
        "assistant: plain answer"
      ])
      expect(messages[0]).toEqual({
        type: "user",
        uuid: "195ece4c-6786-493a-a4b7-422c59f21b28",
        session_id: PLAIN,
        message: { role: "user", content: [{ type: "text", text: "hello first" }] },
        parent_tool_use_id: null,
        parent_agent_id: null,
        timestamp: "2026-11-23T14:03:06.979Z"
      })
      expect(messages.every((m) => Schema.is(Sessions.SessionMessage)(m))).toBe(true)
      const page = yield* Sessions.getSessionMessages(PLAIN, { ...where, offset: 2, limit: 2 })
      expect(page.map((m) => m.uuid)).toEqual(messages.slice(2, 4).map((m) => m.uuid))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("parallel tool calls: every block of the reply and both results, though the chain passes one", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      expect(summary(yield* Sessions.getSessionMessages(PARALLEL, where))).toEqual([
        "user: write two files",
        "assistant: Let me write.",
        "assistant: tool_use:Write",
        "assistant: tool_use:Write",
        "user: tool_result:toolu_scripted_1_1",
        "user: tool_result:toolu_scripted_1_2",
        "assistant: both written"
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("after /compact: from the compaction on, the summary and the command marked; system entries on request", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const messages = yield* Sessions.getSessionMessages(COMPACTED, where)
      expect(messages.map((m) => [m.type, m.is_meta, m.isCompactSummary, m.isCompletedLocalCommand])).toEqual([
        ["user", true, true, undefined],
        ["user", undefined, undefined, true],
        ["user", undefined, undefined, true],
        ["user", undefined, undefined, undefined],
        ["assistant", undefined, undefined, undefined]
      ])
      expect(textOf(messages[3]?.message)).toBe("after compact")
      const withSystem = yield* Sessions.getSessionMessages(COMPACTED, { ...where, includeSystemMessages: true })
      expect(withSystem[0]).toMatchObject({ type: "system", uuid: "eb6cb470-4a1d-4cf7-92f9-f1b524509c14" })
      expect(withSystem.map((m) => m.type)).toEqual(["system", ...messages.map((m) => m.type)])
    }).pipe(Effect.provide(NodeContext.layer)))

  // The CLI 2.1.330 runs recorded here never kept messages through a compaction; the metadata
  // shape is the official SDK's (`compactMetadata.preservedSegment` / `preservedMessages`), and
  // the expected conversation is what its getSessionMessages returns for these lines.
  it.scoped.each(["preservedSegment", "preservedMessages"] as const)(
    "a compaction that kept messages (%s): they follow the summary, and the new turn follows them",
    (kind) =>
      Effect.gen(function*() {
        const { fs, file, where } = yield* setup
        const boundary = "aaaaaaaa-0000-4000-8000-00000000000b"
        const anchor = "aaaaaaaa-0000-4000-8000-000000000005"
        const head = "01a9c30a-acd6-4ed3-8d80-3fc6dd608916"
        const tail = "f5c41164-3689-453b-9c2b-d04f4e79a70e"
        const kept = kind === "preservedSegment"
          ? { preservedSegment: { headUuid: head, tailUuid: tail, anchorUuid: anchor } }
          : {
            preservedMessages: {
              uuids: [head, "f45490be-77d6-4182-803a-93a74cac3457", "f236ce4a-0618-4a94-8bb2-d7af5c0aeefd", tail],
              anchorUuid: anchor
            }
          }
        const added = [
          {
            type: "system",
            subtype: "compact_boundary",
            uuid: boundary,
            parentUuid: null,
            logicalParentUuid: tail,
            compactMetadata: { trigger: "manual", ...kept },
            sessionId: PLAIN,
            timestamp: "2026-11-23T14:05:00.000Z"
          },
          {
            type: "user",
            uuid: anchor,
            parentUuid: boundary,
            isCompactSummary: true,
            message: { role: "user", content: "Summary of the earlier conversation" },
            sessionId: PLAIN,
            timestamp: "2026-11-23T14:05:00.001Z"
          },
          {
            type: "user",
            uuid: "aaaaaaaa-0000-4000-8000-00000000000e",
            parentUuid: anchor,
            message: { role: "user", content: [{ type: "text", text: "after partial compact" }] },
            sessionId: PLAIN,
            timestamp: "2026-11-23T14:05:01.000Z"
          },
          {
            type: "assistant",
            uuid: "aaaaaaaa-0000-4000-8000-00000000000a",
            parentUuid: "aaaaaaaa-0000-4000-8000-00000000000e",
            message: { id: "msg_pc", role: "assistant", content: [{ type: "text", text: "ok" }] },
            sessionId: PLAIN,
            timestamp: "2026-11-23T14:05:02.000Z"
          }
        ]
        yield* fs.writeFileString(file(PLAIN), added.map((e) => JSON.stringify(e)).join("\n") + "\n", { flag: "a" })
        expect(summary(yield* Sessions.getSessionMessages(PLAIN, { ...where, includeSystemMessages: true }))).toEqual([
          "system: ",
          "user: Summary of the earlier conversation",
          "user: write file please",
          "assistant: tool_use:Write",
          "user: tool_result:toolu_scripted_2_0",
          "assistant: plain answer",
          "user: after partial compact",
          "assistant: ok"
        ])
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.scoped("a rewound branch is not in the conversation: the newest leaf decides", () =>
    Effect.gen(function*() {
      const { fs, file, lines, where } = yield* setup
      const original = yield* lines(PLAIN)
      // Another answer to the first prompt, written later: the CLI's shape after a rewind and retry.
      const firstPrompt = parse(original.find((l) => l.includes("\"hello first\"") && l.includes("\"type\":\"user\"")))
      const retry = {
        parentUuid: firstPrompt.uuid,
        isSidechain: false,
        type: "assistant",
        message: { id: "msg_retry", role: "assistant", content: [{ type: "text", text: "a different answer" }] },
        uuid: "7f0f8f2e-0000-4000-8000-000000000001",
        timestamp: "2026-11-23T14:10:00.000Z",
        sessionId: PLAIN
      }
      yield* fs.writeFileString(file(PLAIN), `${JSON.stringify(retry)}\n`, { flag: "a" })
      expect(summary(yield* Sessions.getSessionMessages(PLAIN, where))).toEqual([
        "user: hello first",
        "assistant: a different answer"
      ])
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions: sub-agents", () => {
  it.scoped("lists a session's sub-agents and reads one's conversation, tied to the Agent call", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      expect(yield* Sessions.listSubagents(WITH_AGENT, where)).toEqual([AGENT])
      expect(yield* Sessions.listSubagents(PLAIN, where)).toEqual([])
      const messages = yield* Sessions.getSubagentMessages(WITH_AGENT, AGENT, where)
      expect(summary(messages)).toEqual(["user: SUBTASK please", "assistant: sub done"])
      expect(messages.map((m) => [m.parent_tool_use_id, m.parent_agent_id])).toEqual([
        ["toolu_scripted_4_0", null],
        ["toolu_scripted_4_0", null]
      ])
      const missing = yield* Effect.flip(Sessions.getSubagentMessages(WITH_AGENT, "nope", where))
      expect(missing).toMatchObject({ _tag: "SessionNotFoundError", agentId: "nope" })
      // The session's own conversation does not contain the sub-agent's.
      expect(summary(yield* Sessions.getSessionMessages(WITH_AGENT, where))).not.toContain("user: SUBTASK please")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions: rename, tag, archive, delete", () => {
  it.scoped("rename and tag append the lines the official SDK appends; the newest wins; null clears the tag", () =>
    Effect.gen(function*() {
      const { lines, where } = yield* setup
      yield* Sessions.renameSession(PLAIN, "  First title ", where)
      yield* Sessions.renameSession(PLAIN, "Second title", where)
      yield* Sessions.tagSession(PLAIN, "urgent", where)
      const tail = (yield* lines(PLAIN)).slice(-3)
      expect(tail).toEqual([
        `{"type":"custom-title","customTitle":"First title","sessionId":"${PLAIN}"}`,
        `{"type":"custom-title","customTitle":"Second title","sessionId":"${PLAIN}"}`,
        `{"type":"tag","tag":"urgent","sessionId":"${PLAIN}"}`
      ])
      expect(yield* Sessions.getSessionInfo(PLAIN, where)).toMatchObject({
        summary: "Second title",
        customTitle: "Second title",
        tag: "urgent"
      })
      yield* Sessions.tagSession(PLAIN, null, where)
      expect((yield* lines(PLAIN)).at(-1)).toBe(`{"type":"tag","tag":"","sessionId":"${PLAIN}"}`)
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).tag).toBeUndefined()
      // The conversation is unchanged.
      expect(summary(yield* Sessions.getSessionMessages(PLAIN, where))).toHaveLength(6)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("empty titles and tags are OptionsErrors; an unknown session is SessionNotFoundError", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      expect(yield* Effect.flip(Sessions.renameSession(PLAIN, "   ", where))).toMatchObject({
        _tag: "OptionsError",
        field: "title"
      })
      expect(yield* Effect.flip(Sessions.tagSession(PLAIN, " \u0007 ", where))).toMatchObject({
        _tag: "OptionsError",
        field: "tag"
      })
      const missing = yield* Effect.flip(Sessions.renameSession("00000000-0000-4000-8000-000000000000", "t", where))
      expect(missing._tag).toBe("SessionNotFoundError")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a transcript cut mid-line gets a newline before the appended entry", () =>
    Effect.gen(function*() {
      const { fs, file, lines, where } = yield* setup
      yield* fs.writeFileString(file(PLAIN), "{\"type\":\"assistant\",\"uuid\":\"cut", { flag: "a" })
      yield* Sessions.renameSession(PLAIN, "After a crash", where)
      expect((yield* lines(PLAIN)).at(-1)).toBe(
        `{"type":"custom-title","customTitle":"After a crash","sessionId":"${PLAIN}"}`
      )
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).customTitle).toBe("After a crash")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("archive writes archived.json beside the transcript; unarchive and a later prompt clear it", () =>
    Effect.gen(function*() {
      const { fs, file, path, project, where } = yield* setup
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).archived).toBeUndefined()
      yield* Sessions.archiveSession(PLAIN, where)
      const mark = path.join(project, PLAIN, "archived.json")
      expect(parse(yield* fs.readFileString(mark))).toEqual({
        archived: true,
        at: new Date(NOW).toISOString(),
        by: "sdk"
      })
      expect((yield* fs.stat(mark)).mode & 0o777).toBe(0o600)
      expect((yield* Sessions.listSessions(where)).find((s) => s.sessionId === PLAIN)?.archived).toBe(true)
      yield* Sessions.unarchiveSession(PLAIN, where)
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).archived).toBe(false)

      yield* Sessions.archiveSession(PLAIN, where)
      const prompt = {
        parentUuid: "f5c41164-3689-453b-9c2b-d04f4e79a70e",
        type: "user",
        message: { role: "user", content: "one more thing" },
        uuid: "7f0f8f2e-0000-4000-8000-000000000002",
        timestamp: new Date(NOW + 1000).toISOString(),
        sessionId: PLAIN
      }
      yield* fs.writeFileString(file(PLAIN), `${JSON.stringify(prompt)}\n`, { flag: "a" })
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).archived).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("delete removes the transcript and its folder; a second delete is SessionNotFoundError", () =>
    Effect.gen(function*() {
      const { fs, path, project, where } = yield* setup
      yield* Sessions.deleteSession(WITH_AGENT, where)
      expect(yield* fs.exists(path.join(project, `${WITH_AGENT}.jsonl`))).toBe(false)
      expect(yield* fs.exists(path.join(project, WITH_AGENT))).toBe(false)
      expect((yield* Sessions.listSessions(where)).map((s) => s.sessionId)).toEqual([PARALLEL, PLAIN, COMPACTED])
      expect((yield* Effect.flip(Sessions.deleteSession(WITH_AGENT, where)))._tag).toBe("SessionNotFoundError")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions.forkSession", () => {
  it.scoped("copies the conversation with fresh uuids and links, forkedFrom, and a ' (fork)' title", () =>
    Effect.gen(function*() {
      const { lines, where } = yield* setup
      const fork = yield* Sessions.forkSession(PLAIN, where)
      const source = yield* Sessions.getSessionMessages(PLAIN, where)
      const copied = yield* Sessions.getSessionMessages(fork.sessionId, where)
      expect(summary(copied)).toEqual(summary(source))
      expect(copied.every((m) => m.session_id === fork.sessionId)).toBe(true)
      const sourceIds = new Set(source.map((m) => m.uuid))
      expect(copied.some((m) => sourceIds.has(m.uuid))).toBe(false)

      const written = (yield* lines(fork.sessionId)).map((l) => parse(l))
      const linked = written.filter((e) => typeof e.uuid === "string" && e.type !== "custom-title")
      const ids = new Set(linked.map((e) => e.uuid))
      // Every link points inside the fork, and each entry names its original.
      expect(linked.every((e) => e.parentUuid === null || ids.has(e.parentUuid))).toBe(true)
      expect(linked.every((e) => Predicate.isRecord(e.forkedFrom) && e.forkedFrom.sessionId === PLAIN)).toBe(true)
      expect(written.at(-1)).toMatchObject({
        type: "custom-title",
        customTitle: "hello first (fork)",
        sessionId: fork.sessionId
      })
      expect(written.filter((e) => e.type === "tools-used")).toEqual([
        { type: "tools-used", sessionId: fork.sessionId, tools: ["Write"] }
      ])
      // The last entry is stamped with the time of the fork.
      expect(linked.at(-1)?.timestamp).toBe(new Date(NOW).toISOString())
      const info = yield* Sessions.getSessionInfo(fork.sessionId, where)
      expect(info).toMatchObject({ customTitle: "hello first (fork)", firstPrompt: "hello first" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("upToMessageId copies up to that message; title sets the title; unknown ids are OptionsErrors", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const source = yield* Sessions.getSessionMessages(PLAIN, where)
      const fork = yield* Sessions.forkSession(PLAIN, { ...where, upToMessageId: source[1]?.uuid, title: "Branch" })
      expect(summary(yield* Sessions.getSessionMessages(fork.sessionId, where))).toEqual([
        "user: hello first",
        "assistant: plain answer"
      ])
      expect((yield* Sessions.getSessionInfo(fork.sessionId, where)).customTitle).toBe("Branch")
      const bad = yield* Effect.flip(Sessions.forkSession(PLAIN, { ...where, upToMessageId: "nope" }))
      expect(bad).toMatchObject({ _tag: "OptionsError", field: "upToMessageId" })
      // A renamed session's fork is named after the new title.
      yield* Sessions.renameSession(PLAIN, "Renamed", where)
      const renamedFork = yield* Sessions.forkSession(PLAIN, where)
      expect((yield* Sessions.getSessionInfo(renamedFork.sessionId, where)).customTitle).toBe("Renamed (fork)")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions.transcript", () => {
  it.scoped("streams every entry, metadata included, decoded with the TranscriptEntry schema", () =>
    Effect.gen(function*() {
      const { lines, where } = yield* setup
      const entries = Chunk.toReadonlyArray(yield* Stream.runCollect(Sessions.transcript(PLAIN, where)))
      expect(entries.length).toBe((yield* lines(PLAIN)).length)
      expect(entries.map((e) => e.type)).toContain("last-prompt")
      expect(entries.find((e) => e.type === "last-prompt")?.lastPrompt).toBe("hello first")
      const decode = Schema.decodeUnknownEither(Sessions.TranscriptEntry)
      expect(Either.isLeft(decode({ type: "user", isSidechain: "no" }))).toBe(true)
      expect(Either.isRight(decode({ type: "anything", extra: { kept: true } }))).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))
})

// What plain JavaScript can pass where the types say otherwise.
const untyped = <T>(value: unknown): T => value as T

describe("Sessions: arguments of the wrong type (untyped JavaScript)", () => {
  it.scoped("are OptionsErrors naming the field, not defects", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const list = yield* Effect.flip(Sessions.listSessions(untyped({ ...where, limit: "3" })))
      expect(list).toMatchObject({ _tag: "OptionsError", field: "limit" })
      expect(list.message).toContain("Expected")
      expect(yield* Effect.flip(Sessions.listSessions({ ...where, limit: 2.5 }))).toMatchObject({ field: "limit" })
      expect(yield* Effect.flip(Sessions.listSessions(untyped({ ...where, includeWorktrees: "no" })))).toMatchObject({
        field: "includeWorktrees"
      })
      expect(yield* Effect.flip(Sessions.listSessions(untyped("/home/user/project")))).toMatchObject({
        field: "options"
      })
      const rename = yield* Effect.flip(Sessions.renameSession(PLAIN, untyped(42), where))
      expect(rename).toMatchObject({ _tag: "OptionsError", field: "title", detail: "must be a string, got number" })
      expect(yield* Effect.flip(Sessions.tagSession(PLAIN, untyped(7), where))).toMatchObject({ field: "tag" })
      expect(yield* Effect.flip(Sessions.renameSession(untyped(42), "t", where))).toMatchObject({ field: "sessionId" })
      expect(yield* Effect.flip(Sessions.getSessionMessages(PLAIN, untyped({ ...where, limit: "2" })))).toMatchObject({
        field: "limit"
      })
      expect(yield* Effect.flip(Sessions.getSessionInfo(PLAIN, untyped({ configDir: 1 })))).toMatchObject({
        field: "configDir"
      })
      expect(yield* Effect.flip(Sessions.forkSession(PLAIN, untyped({ ...where, title: 3 })))).toMatchObject({
        field: "title"
      })
      // The valid calls still work after the checks.
      expect((yield* Sessions.listSessions({ ...where, limit: 1 })).length).toBe(1)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions.renameSession: titles listings can show", () => {
  // Listings read a transcript's last 64 KiB: the custom-title line and the newline before it
  // must fit there.
  const lineBytes = (title: string) =>
    new TextEncoder().encode(JSON.stringify({ type: "custom-title", customTitle: title, sessionId: PLAIN })).length
  const longest = 65536 - 2 - lineBytes("")

  it.scoped("the longest title that fits is shown by getSessionInfo; one byte more is an OptionsError", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      const fits = "t".repeat(longest)
      yield* Sessions.renameSession(PLAIN, fits, where)
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).customTitle).toBe(fits)
      const tooLong = yield* Effect.flip(Sessions.renameSession(PLAIN, `${fits}t`, where))
      expect(tooLong).toMatchObject({ _tag: "OptionsError", field: "title" })
      expect(tooLong.message).toContain("last 65536 bytes")
      // Multi-byte characters count as bytes, not characters.
      const wide = yield* Effect.flip(Sessions.renameSession(PLAIN, "é".repeat(longest / 2 + 1), where))
      expect(wide).toMatchObject({ _tag: "OptionsError", field: "title" })
      expect((yield* Sessions.getSessionInfo(PLAIN, where)).customTitle).toBe(fits)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Sessions.findSessionInfo", () => {
  it.scoped("an unknown session is None (the official SDK's undefined); a bad id is still an OptionsError", () =>
    Effect.gen(function*() {
      const { where } = yield* setup
      expect(Option.isNone(yield* Sessions.findSessionInfo("00000000-0000-4000-8000-000000000000", where))).toBe(true)
      const found = yield* Sessions.findSessionInfo(PLAIN, where)
      expect(Option.map(found, (info) => info.sessionId)).toEqual(Option.some(PLAIN))
      expect(yield* Effect.flip(Sessions.findSessionInfo("../etc/passwd", where))).toMatchObject({ field: "sessionId" })
    }).pipe(Effect.provide(NodeContext.layer)))
})
