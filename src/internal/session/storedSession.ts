/**
 * A session with a `SessionStore`, before its CLI starts: `continue` picks the project's newest
 * stored session, a `resume` target is loaded from the store into a temporary config directory
 * (the CLI's layout, removed when the session's scope closes) that the CLI is pointed at, and the
 * CLI is started with `--session-mirror`.
 *
 * @internal
 */
import { Duration, Effect, Option, type Scope } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as NodePath from "node:path"
import type { Options } from "../../schema/Options.js"
import { SessionNotFoundError } from "../../SdkError.js"
import type { Entry, SessionRef, SessionStoreShape } from "../../services/SessionStore.js"
import { SessionStoreError } from "../../services/SessionStore.js"
import { projectDirName } from "../transcripts/transcript.js"

const DEFAULT_LOAD_TIMEOUT = Duration.seconds(60)

/**
 * The flag that makes the CLI send `transcript_mirror` frames.
 *
 * @internal
 */
export const mirrorFlag = "session-mirror"

// What the CLI needs from the user's config directory to start as that user: credentials, global
// state, settings. Copied into the temporary one when present.
const carried = [".credentials.json", ".claude.json", ".config.json", "settings.json"]

const unavailable = (operation: string, sessionId: string | undefined) => (cause: unknown) =>
  new SessionStoreError({
    reason: "Unavailable",
    operation,
    ...(sessionId === undefined ? {} : { sessionId }),
    detail: cause instanceof Error ? cause.message : String(cause),
    cause
  })

const io = <A>(operation: string, sessionId: string | undefined, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: unavailable(operation, sessionId) })

/**
 * The store's project key for a working directory: the CLI's folder name for it under `projects/`,
 * after resolving symbolic links as the CLI does.
 *
 * @internal
 */
export const projectKeyOf = (cwd: string): Effect.Effect<string> =>
  Effect.promise(() => Fs.realpath(cwd).catch(() => NodePath.resolve(cwd))).pipe(
    Effect.map((real) => projectDirName(real.normalize("NFC")))
  )

// The user's config directory and the file the CLI keeps its global state in outside it.
const sourceDirs = (env: Readonly<Record<string, string | undefined>>) => {
  const home = env.HOME ?? env.USERPROFILE ?? Os.homedir()
  const configDir = env.CLAUDE_CONFIG_DIR ?? NodePath.join(home, ".claude")
  return {
    configDir,
    globalState: env.CLAUDE_CONFIG_DIR === undefined ? NodePath.join(home, ".claude.json") : undefined
  }
}

const jsonl = (entries: ReadonlyArray<Entry>): string => entries.map((e) => JSON.stringify(e)).join("\n") + "\n"

// A sub-agent's transcript: its `agent_metadata` entries go to the `.meta.json` beside it (the
// last one: the CLI rewrites that file as the sub-agent runs), the rest to the transcript.
const writeSubagent = async (base: string, subpath: string, entries: ReadonlyArray<Entry>) => {
  const file = NodePath.join(base, `${subpath}.jsonl`)
  await Fs.mkdir(NodePath.dirname(file), { recursive: true })
  const lines = entries.filter((e) => e.type !== "agent_metadata")
  const meta = entries.filter((e) => e.type === "agent_metadata").at(-1)
  await Fs.writeFile(file, lines.length === 0 ? "" : jsonl(lines))
  if (meta !== undefined) {
    const { type: _type, ...fields } = meta
    await Fs.writeFile(NodePath.join(base, `${subpath}.meta.json`), JSON.stringify(fields))
  }
}

/**
 * Loads a stored session into a new config directory, removed when the scope closes; `None`
 * when the store does not have it.
 *
 * @internal
 */
export const materialize = (
  store: SessionStoreShape,
  ref: SessionRef,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<Option.Option<string>, SessionStoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const main = yield* store.load(ref)
    if (Option.isNone(main)) return Option.none()
    // Only the sub-agents' transcripts go back to the CLI (the only subpaths 2.1.330 mirrors):
    // other subpaths are the host's (the cluster keeps its turn ids and replies there).
    const subkeys = (yield* store.listSubkeys(ref)).filter((subpath) => subpath.startsWith("subagents/"))
    const subagents = yield* Effect.forEach(subkeys, (subpath) =>
      Effect.map(
        store.load({ ...ref, subpath }),
        (entries) => ({ subpath, entries: Option.getOrElse(entries, () => []) })
      ))
    const dir = yield* Effect.acquireRelease(
      io("load", ref.sessionId, () => Fs.mkdtemp(NodePath.join(Os.tmpdir(), "claude-store-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    yield* io("load", ref.sessionId, async () => {
      const project = NodePath.join(dir, "projects", ref.projectKey)
      await Fs.mkdir(project, { recursive: true })
      await Fs.writeFile(NodePath.join(project, `${ref.sessionId}.jsonl`), jsonl(main.value))
      for (const { entries, subpath } of subagents) {
        await writeSubagent(NodePath.join(project, ref.sessionId), subpath, entries)
      }
      const source = sourceDirs(env)
      for (const name of carried) {
        await Fs.copyFile(NodePath.join(source.configDir, name), NodePath.join(dir, name)).catch(() => undefined)
      }
      if (source.globalState !== undefined) {
        await Fs.copyFile(source.globalState, NodePath.join(dir, ".claude.json")).catch(() => undefined)
      }
    })
    return Option.some(dir)
  })

/**
 * The options the CLI is started with, for a session with a store.
 *
 * @internal
 */
export const prepare = <R>(
  options: Options<R> & { readonly sessionStore: SessionStoreShape },
  parentEnv: Readonly<Record<string, string | undefined>>
): Effect.Effect<
  Options<R>,
  SessionStoreError | SessionNotFoundError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const store = options.sessionStore
    const env = { ...parentEnv, ...options.env }
    // The CLI's working directory: the option, else this process's (the CLI inherits it).
    const projectKey = yield* projectKeyOf(options.cwd ?? NodePath.resolve("."))
    const timeout = options.sessionStoreLoadTimeout === undefined
      ? DEFAULT_LOAD_TIMEOUT
      : Duration.decode(options.sessionStoreLoadTimeout)
    let next: Options<R> = { ...options, extraArgs: { ...options.extraArgs, [mirrorFlag]: null } }
    let target = options.resume
    if (target === undefined && options.continue === true) {
      const listed = yield* store.listSessions(projectKey)
      target = [...listed].sort((a, b) => b.mtime - a.mtime)[0]?.sessionId
      const { continue: _continue, ...rest } = next
      next = target === undefined ? rest : { ...rest, resume: target }
    }
    if (target !== undefined) {
      const sessionId = target
      const loaded = yield* materialize(store, { projectKey, sessionId }, env).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new SessionStoreError({
              reason: "Unavailable",
              operation: "load",
              sessionId,
              detail: `no answer within ${Duration.format(timeout)}`
            })
        })
      )
      if (Option.isSome(loaded)) {
        next = { ...next, env: { ...next.env, CLAUDE_CONFIG_DIR: loaded.value } }
      } else if (options.resumeMissing === "new") {
        yield* Effect.logInfo(
          `effect-claude-agent: session ${sessionId} is not in the store; starting a new conversation`
        )
        const { forkSession: _f, resume: _r, resumeDropsTurn: _d, resumeSessionAt: _a, ...rest } = next
        next = rest
      } else {
        return yield* new SessionNotFoundError({ sessionId, reason: "not in the session store" })
      }
    }
    return next
  })
