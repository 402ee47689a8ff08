// An AgentPool keyed conversation with a `sessionStore`: a key whose idle process was stopped is
// resumed from the store (its transcript loaded into a new config directory before the CLI
// starts), never from the local transcript; a key whose session the store lost starts anew.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as AgentPool from "../../../src/AgentPool.js"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import * as SessionServices from "../../../src/layers/SessionServices.js"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import * as Message from "../../../src/schema/Message.js"
import type { SessionStoreShape } from "../../../src/services/SessionStore.js"
import { Transport } from "../../../src/services/Transport.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"

// The fake CLI's session id (its frames carry it).
const SESSION = "00000000-0000-4000-8000-000000000001"
const CONFIG = "/cfg/claude"
// A working directory that does not exist: its project key is the resolved path's.
const CWD = "/srv/app-pool-store"
const PROJECT = "-srv-app-pool-store"
const ref = { projectKey: PROJECT, sessionId: SESSION }

interface Launched {
  readonly resume: string | undefined
  readonly configDir: string | undefined
  readonly mirrors: boolean
  /** The uuids of the transcript the CLI would resume, read from its config directory as it starts. */
  readonly transcript: ReadonlyArray<string> | undefined
}

const readTranscript = (configDir: string | undefined): ReadonlyArray<string> | undefined => {
  if (configDir === undefined) return undefined
  const file = NodePath.join(configDir, "projects", PROJECT, `${SESSION}.jsonl`)
  if (!Fs.existsSync(file)) return undefined
  return Fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => {
    const entry: unknown = JSON.parse(line)
    return typeof entry === "object" && entry !== null && "uuid" in entry ? String(entry.uuid) : ""
  })
}

// Fake CLIs that record how they were started, and mirror each turn's two transcript lines
// (numbered across processes) under the config directory they were given.
const mirroringAgent = Effect.sync(() => {
  const launches: Array<Launched> = []
  let turn = 0
  const agent = ClaudeAgent.make({
    transport: Layer.scoped(
      Transport,
      Effect.flatMap(SessionServices.SessionLaunch, ({ launch, options }) =>
        Effect.gen(function*() {
          const configDir = launch.env.CLAUDE_CONFIG_DIR
          launches.push({
            resume: options.resume,
            configDir,
            mirrors: launch.args.includes("--session-mirror"),
            transcript: readTranscript(configDir)
          })
          const file = `${configDir ?? CONFIG}/projects/${PROJECT}/${SESSION}.jsonl`
          const mirror = (uuid: string) => ({
            type: "transcript_mirror",
            filePath: file,
            entries: [{ type: "user", uuid, message: { role: "user", content: uuid } }]
          })
          const { transport } = yield* FakeCli.make({
            onUserMessage: (message, cli) =>
              Effect.forEach(
                [
                  cli.frames.systemInit(),
                  mirror(`t${++turn}-user`),
                  cli.frames.assistantText(`echo: ${FakeCli.userText(message)}`),
                  mirror(`t${turn}-assistant`),
                  cli.frames.result(`echo: ${FakeCli.userText(message)}`)
                ],
                cli.emit,
                { discard: true }
              )
          })
          return transport
        }))
    )
  })
  return { agent, launches }
})

const answer = (pool: AgentPool.AgentPoolShape, store: SessionStoreShape, prompt: string) =>
  pool.chat("a", prompt, { sessionStore: store, cwd: CWD, env: { CLAUDE_CONFIG_DIR: CONFIG } }).pipe(
    Stream.filter(Message.isResult),
    Stream.runCollect,
    Effect.map((results) => [...results].map((r) => ("result" in r ? r.result : r.subtype)))
  )

const stored = (store: SessionStoreShape) =>
  Effect.map(store.load(ref), Option.match({ onNone: () => [], onSome: (entries) => entries.map((e) => e.uuid) }))

describe("AgentPool with a session store", () => {
  it.scoped("a keyed conversation whose process was stopped is resumed from the store", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const { agent, launches } = yield* mirroringAgent
      // idleTimeToLive 0: each use's process is stopped when the use ends.
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, idleTimeToLive: 0 })
      expect(yield* answer(pool, store, "one")).toEqual(["echo: one"])
      expect(yield* stored(store)).toEqual(["t1-user", "t1-assistant"])
      expect(yield* answer(pool, store, "two")).toEqual(["echo: two"])
      expect(launches).toHaveLength(2)
      expect(launches[0]).toEqual({ resume: undefined, configDir: CONFIG, mirrors: true, transcript: undefined })
      // The second CLI resumes the key's session from a config directory the store was loaded
      // into: the transcript it finds there is the stored one (nothing was written locally).
      const second = launches[1]
      expect(second?.resume).toBe(SESSION)
      expect(second?.mirrors).toBe(true)
      expect(second?.configDir).not.toBe(CONFIG)
      expect(second?.transcript).toEqual(["t1-user", "t1-assistant"])
      // The resumed process appends to the same stored conversation, and its directory is gone.
      expect(yield* stored(store)).toEqual(["t1-user", "t1-assistant", "t2-user", "t2-assistant"])
      expect(second?.configDir !== undefined && Fs.existsSync(second.configDir)).toBe(false)
    }))

  it.scoped("a key whose session the store no longer has fails that use with SessionNotFoundError, then starts anew", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const { agent, launches } = yield* mirroringAgent
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, idleTimeToLive: 0 })
      yield* answer(pool, store, "one")
      yield* store.delete(ref)
      const error = yield* Effect.flip(answer(pool, store, "two"))
      expect(error).toMatchObject({ _tag: "SessionNotFoundError", sessionId: SESSION })
      expect(yield* answer(pool, store, "three")).toEqual(["echo: three"])
      expect(launches.map((l) => l.resume)).toEqual([undefined, undefined])
    }))
})
