// The two writers the entity gives its CLI sessions (src/cluster/internal/turnStore.ts): `make`
// keeps a turn's transcript until the turn is committed with its reply; `direct` (a continuation of
// a decided call) stores the transcript as the CLI writes it and commits only the turn's record.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SessionStores } from "effect-claude-agent"
import * as TurnStore from "../../../src/cluster/internal/turnStore.js"

const ref = { projectKey: "-srv-work", sessionId: "s-1" }

describe("TurnStore", () => {
  it.effect("direct: the mirror's appends are stored at once, fenced by the writer's generation", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const generation = yield* store.acquire(ref)
      const writer = TurnStore.direct(store, ref, generation)
      // The mirror acquires through the view: the entity's generation, not a new one.
      const seen = yield* writer.store.acquire(ref)
      expect(seen).toBe(generation)
      yield* writer.store.append(ref, [{ type: "user", uuid: "u1" }], { generation: seen })
      expect(Option.map(yield* store.load(ref), (es) => es.map((e) => e.uuid))).toEqual(Option.some(["u1"]))
      yield* writer.commit("approval:toolu_1", [{ type: "result" }])
      expect(yield* TurnStore.committed(store, ref)).toEqual(new Set(["approval:toolu_1"]))
      expect(yield* TurnStore.reply(store, ref, "approval:toolu_1")).toEqual(Option.some([{ type: "result" }]))
      // The transcript holds the entry once: the commit adds only the turn's record.
      expect(Option.map(yield* store.load(ref), (es) => es.length)).toEqual(Option.some(1))
    }))

  it.effect("direct: once another writer has acquired the session, the old one's appends and commit are refused", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const first = yield* store.acquire(ref)
      const writer = TurnStore.direct(store, ref, first)
      yield* store.acquire(ref)
      const stale = yield* Effect.flip(writer.store.append(ref, [{ type: "user", uuid: "u2" }], { generation: first }))
      expect(stale.reason).toBe("StaleWriter")
      const commit = yield* Effect.flip(writer.commit("approval:toolu_2", []))
      expect(commit.reason).toBe("StaleWriter")
      expect(yield* TurnStore.committed(store, ref)).toEqual(new Set())
    }))

  it.effect("make: the transcript waits for the commit, then lands with the turn's record", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const generation = yield* store.acquire(ref)
      const writer = TurnStore.make(store, ref, generation)
      yield* writer.store.append(ref, [{ type: "user", uuid: "u1" }], { generation })
      expect(yield* store.load(ref)).toEqual(Option.none())
      yield* writer.commit("t1", [])
      expect(Option.map(yield* store.load(ref), (es) => es.map((e) => e.uuid))).toEqual(Option.some(["u1"]))
    }))
})
