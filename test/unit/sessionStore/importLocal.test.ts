// importLocalSession: a session the CLI wrote locally, sub-agents included, copied into a store.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import type { SessionStoreShape } from "../../../src/services/SessionStore.js"

const SESSION = "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10"
const lines = (entries: ReadonlyArray<object>) => entries.map((e) => JSON.stringify(e)).join("\n") + "\n"

// A config directory as the CLI lays it out: one session with one sub-agent; the last line of the
// main transcript is cut short.
const localSession = Effect.acquireRelease(
  Effect.sync(() => {
    const configDir = fs.mkdtempSync(path.join(os.tmpdir(), "import-local-"))
    const project = path.join(configDir, "projects", "-srv-app")
    fs.mkdirSync(path.join(project, SESSION, "subagents"), { recursive: true })
    const main = Array.from({ length: 5 }, (_, i) => ({ type: i % 2 === 0 ? "user" : "assistant", uuid: `m${i}` }))
    fs.writeFileSync(path.join(project, `${SESSION}.jsonl`), lines(main) + "{\"type\":\"user\",\"uu")
    fs.writeFileSync(path.join(project, SESSION, "subagents", "agent-a1.jsonl"), lines([{ type: "user", uuid: "s0" }]))
    fs.writeFileSync(
      path.join(project, SESSION, "subagents", "agent-a1.meta.json"),
      JSON.stringify({ agentType: "general-purpose", finished: true })
    )
    return configDir
  }),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

describe("SessionStores.importLocalSession", () => {
  it.scoped("copies the transcript and its sub-agents in batches; importing again stores nothing twice", () =>
    Effect.gen(function*() {
      const configDir = yield* localSession
      const inner = yield* SessionStores.makeMemory
      const appends = yield* Ref.make(0)
      const store: SessionStoreShape = {
        ...inner,
        append: (key, entries, options) =>
          Effect.zipRight(Ref.update(appends, (n) => n + 1), inner.append(key, entries, options))
      }
      const key = yield* SessionStores.importLocalSession(store, SESSION, { configDir, batchSize: 2 })
      expect(key).toEqual({ projectKey: "-srv-app", sessionId: SESSION })
      const main = Option.getOrElse(yield* store.load(key), () => [])
      expect(main.map((e) => e.uuid)).toEqual(["m0", "m1", "m2", "m3", "m4"])
      // Five entries in batches of two, then the sub-agent's two.
      expect(yield* Ref.get(appends)).toBe(4)
      expect(yield* store.listSubkeys(key)).toEqual(["subagents/agent-a1"])
      expect(Option.getOrElse(yield* store.load({ ...key, subpath: "subagents/agent-a1" }), () => [])).toEqual([
        { type: "agent_metadata", agentType: "general-purpose", finished: true },
        { type: "user", uuid: "s0" }
      ])
      yield* SessionStores.importLocalSession(store, SESSION, {
        configDir,
        dir: "/nonexistent/elsewhere",
        projectKey: "x"
      })
        .pipe(Effect.flip)
      yield* SessionStores.importLocalSession(store, SESSION, { configDir, includeSubagents: false })
      expect(Option.getOrElse(yield* store.load(key), () => []).length).toBe(5)
      expect((yield* store.listSummaries("-srv-app")).map((s) => s.entries)).toEqual([5])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a session that is not there: SessionNotFoundError", () =>
    Effect.gen(function*() {
      const configDir = yield* localSession
      const store = yield* SessionStores.makeMemory
      const missing = yield* Effect.either(
        SessionStores.importLocalSession(store, "0b9a7f3e-2c51-4e8a-9d4f-6a1b2c3d4e5f", { configDir })
      )
      expect(Either.isLeft(missing) && missing.left._tag).toBe("SessionNotFoundError")
    }).pipe(Effect.provide(NodeContext.layer)))
})
