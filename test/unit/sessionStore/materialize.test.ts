// Loading a stored session for the CLI: the transcript and its sub-agents are written where the
// CLI reads them; subpaths the host keeps beside them (the cluster's turn ids and replies) are not.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as StoredSession from "../../../src/internal/session/storedSession.js"
import * as SessionStores from "../../../src/layers/SessionStores.js"

const ref = { projectKey: "-srv-app", sessionId: "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10" }

describe("StoredSession.materialize", () => {
  it.scoped("writes the transcript and sub-agents, not the host's subpaths; the folder goes with the scope", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      yield* store.append(ref, [{ type: "user", uuid: "m0" }, { type: "assistant", uuid: "m1" }])
      yield* store.append({ ...ref, subpath: "subagents/agent-a1" }, [{ type: "user", uuid: "s0" }])
      yield* store.append({ ...ref, subpath: "cluster/turns" }, [{ type: "turn", uuid: "t0" }])
      const dir = yield* Effect.scoped(
        Effect.gen(function*() {
          const loaded = yield* StoredSession.materialize(store, ref, {})
          expect(Option.isSome(loaded)).toBe(true)
          const dir = Option.getOrThrow(loaded)
          const project = path.join(dir, "projects", ref.projectKey)
          const main = fs.readFileSync(path.join(project, `${ref.sessionId}.jsonl`), "utf8")
          expect(main.trim().split("\n").map((l) => JSON.parse(l).uuid)).toEqual(["m0", "m1"])
          expect(fs.existsSync(path.join(project, ref.sessionId, "subagents", "agent-a1.jsonl"))).toBe(true)
          expect(fs.existsSync(path.join(project, ref.sessionId, "cluster"))).toBe(false)
          return dir
        })
      )
      expect(fs.existsSync(dir)).toBe(false)
    }))

  it.scoped("a session the store does not have is None", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      expect(Option.isNone(yield* StoredSession.materialize(store, ref, {}))).toBe(true)
    }))
})
