// One suite every SessionStore implementation passes: memory, files and SQLite here, PostgreSQL in
// test/cluster-pg/sessionStore.pgtest.ts. Each test works in a project of its own, so a store shared
// between tests (one database) gives the same answers as a fresh one.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, type Layer, Option } from "effect"
import { SessionStore, type SessionStoreShape } from "../../../src/services/SessionStore.js"
import type { Entry, SessionRef } from "../../../src/services/SessionStore.js"

let counter = 0
const project = () => `project-${process.pid}-${Date.now().toString(36)}-${counter++}`
const session = (projectKey = project(), sessionId = "6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10"): SessionRef => ({
  projectKey,
  sessionId
})

const user = (uuid: string, text: string, extra: Record<string, unknown> = {}): Entry => ({
  type: "user",
  uuid,
  timestamp: `2026-11-26T00:00:0${uuid.length % 10}.000Z`,
  message: { role: "user", content: text },
  ...extra
})
const assistant = (uuid: string, text: string): Entry => ({
  type: "assistant",
  uuid,
  message: { role: "assistant", content: [{ type: "text", text }] }
})

const loaded = (store: SessionStoreShape, key: SessionRef & { readonly subpath?: string }) =>
  Effect.map(store.load(key), Option.getOrElse((): ReadonlyArray<Entry> => []))

/**
 * Registers the suite for one implementation. `layer` is built once per test.
 */
export const conformance = <E>(name: string, layer: Layer.Layer<SessionStore, E>) =>
  describe(`SessionStore conformance: ${name}`, () => {
    const withStore = <A, E2>(f: (store: SessionStoreShape) => Effect.Effect<A, E2>) =>
      Effect.flatMap(SessionStore, f).pipe(Effect.provide(layer))

    it.live("loads back what was appended, in order and deep-equal; a key never written is None", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const ref = session()
          const odd: Entry = {
            type: "attachment",
            text: "line\u2028separator \u{1F600} \"quoted\"\n",
            nested: { list: [1, 2.5, null, true, { deep: "x" }] },
            empty: {}
          }
          yield* store.append(ref, [user("u1", "hello"), odd])
          yield* store.append(ref, [assistant("a1", "hi")])
          expect(yield* loaded(store, ref)).toEqual([user("u1", "hello"), odd, assistant("a1", "hi")])
          expect(yield* store.load(session(ref.projectKey, "another"))).toEqual(Option.none())
          expect(yield* store.load({ ...ref, subpath: "subagents/agent-none" })).toEqual(Option.none())
        })
      ))

    it.live("an entry whose uuid is stored is not stored again; entries without a uuid always are", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const ref = session()
          const title: Entry = { type: "custom-title", customTitle: "T" }
          yield* store.append(ref, [user("u1", "hello"), title])
          // A retried batch, and a batch repeating a uuid within itself.
          yield* store.append(ref, [user("u1", "hello"), title])
          yield* store.append(ref, [assistant("a1", "x"), assistant("a1", "x")])
          expect((yield* loaded(store, ref)).map((e) => e.uuid ?? e.type)).toEqual([
            "u1",
            "custom-title",
            "custom-title",
            "a1"
          ])
          // The same uuid under another subpath is another entry.
          yield* store.append({ ...ref, subpath: "subagents/agent-a" }, [user("u1", "hello")])
          expect((yield* loaded(store, { ...ref, subpath: "subagents/agent-a" })).length).toBe(1)
        })
      ))

    it.live("appendAll writes a session's transcripts together; listSubkeys lists the sub-agents", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const ref = session()
          yield* store.appendAll(ref, [
            { entries: [user("u1", "delegate")] },
            { subpath: "subagents/agent-a", entries: [user("s1", "sub task", { isSidechain: true })] },
            { subpath: "subagents/agent-b", entries: [{ type: "agent_metadata", agentType: "general-purpose" }] },
            { entries: [assistant("a1", "done")] }
          ])
          expect((yield* loaded(store, ref)).map((e) => e.uuid)).toEqual(["u1", "a1"])
          expect([...(yield* store.listSubkeys(ref))].sort()).toEqual(["subagents/agent-a", "subagents/agent-b"])
          expect(yield* loaded(store, { ...ref, subpath: "subagents/agent-b" })).toEqual([
            { type: "agent_metadata", agentType: "general-purpose" }
          ])
        })
      ))

    it.live("a batch with an invalid key is refused whole: nothing of it is stored", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const ref = session()
          const refused = yield* Effect.either(store.appendAll(ref, [
            { entries: [user("u1", "first")] },
            { subpath: "", entries: [user("u2", "bad")] }
          ]))
          expect(Either.isLeft(refused) && refused.left.reason).toBe("InvalidKey")
          const climbing = yield* Effect.either(store.append({ ...ref, subpath: "../other" }, [user("u3", "x")]))
          expect(Either.isLeft(climbing) && climbing.left.reason).toBe("InvalidKey")
          expect(yield* store.load(ref)).toEqual(Option.none())
          expect(yield* store.listSessions(ref.projectKey)).toEqual([])
        })
      ))

    it.live("fencing: after a newer acquire, the older writer's append fails StaleWriter and changes nothing", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const ref = session()
          const first = yield* store.acquire(ref)
          yield* store.append(ref, [user("u1", "from the first")], { generation: first })
          const second = yield* store.acquire(ref)
          expect(second).toBeGreaterThan(first)
          const stale = yield* Effect.either(
            store.appendAll(ref, [
              { entries: [assistant("a-stale", "late")] },
              { subpath: "subagents/agent-z", entries: [user("z", "late")] }
            ], { generation: first })
          )
          expect(Either.isLeft(stale) && stale.left._tag === "SessionStoreError" && stale.left.reason).toBe(
            "StaleWriter"
          )
          yield* store.append(ref, [assistant("a1", "from the second")], { generation: second })
          expect((yield* loaded(store, ref)).map((e) => e.uuid)).toEqual(["u1", "a1"])
          expect(yield* store.listSubkeys(ref)).toEqual([])
          // A generation never handed out is refused too.
          const unknown = yield* Effect.either(store.append(ref, [user("u9", "x")], { generation: second + 5 }))
          expect(Either.isLeft(unknown) && unknown.left.reason).toBe("StaleWriter")
        })
      ))

    it.live("summaries fold the main transcript: set-once and last-wins fields, entry count, mtime", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const projectKey = project()
          const a = session(projectKey, "session-a")
          const b = session(projectKey, "session-b")
          yield* store.append(a, [
            user("u1", "first prompt", { cwd: "/srv/app", gitBranch: "main" }),
            { type: "custom-title", customTitle: "Old title" }
          ])
          yield* store.append(a, [
            assistant("a1", "answer"),
            user("u2", "second prompt", { cwd: "/elsewhere", gitBranch: "feature" }),
            { type: "custom-title", customTitle: "New title" },
            { type: "last-prompt", lastPrompt: "second prompt" },
            { type: "tag", tag: "keep" }
          ])
          // Only sub-agent entries: the session has no main transcript, so it is not listed.
          yield* store.append({ ...b, subpath: "subagents/agent-a" }, [user("s1", "sub")])
          const summaries = yield* store.listSummaries(projectKey)
          expect(summaries.length).toBe(1)
          expect(summaries[0]).toMatchObject({
            sessionId: "session-a",
            entries: 7,
            cwd: "/srv/app",
            firstPrompt: "first prompt",
            lastPrompt: "second prompt",
            customTitle: "New title",
            gitBranch: "feature",
            tag: "keep",
            createdAt: user("u1", "").timestamp
          })
          const listed = yield* store.listSessions(projectKey)
          expect(listed).toEqual([{ sessionId: "session-a", mtime: summaries[0]?.mtime }])
          const before = listed[0]?.mtime ?? 0
          yield* store.append(a, [assistant("a2", "more")])
          const after = (yield* store.listSessions(projectKey))[0]?.mtime ?? 0
          expect(after).toBeGreaterThan(before)
          expect(yield* store.listSessions(project())).toEqual([])
        })
      ))

    it.live("delete: a sub-agent's transcript alone, or the whole session; the generation survives", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const ref = session()
          const generation = yield* store.acquire(ref)
          yield* store.appendAll(ref, [
            { entries: [user("u1", "hello")] },
            { subpath: "subagents/agent-a", entries: [user("s1", "a")] },
            { subpath: "subagents/agent-b", entries: [user("s2", "b")] }
          ], { generation })
          yield* store.delete({ ...ref, subpath: "subagents/agent-a" })
          expect(yield* store.listSubkeys(ref)).toEqual(["subagents/agent-b"])
          expect((yield* loaded(store, ref)).length).toBe(1)
          yield* store.delete(ref)
          expect(yield* store.load(ref)).toEqual(Option.none())
          expect(yield* store.listSubkeys(ref)).toEqual([])
          expect(yield* store.listSessions(ref.projectKey)).toEqual([])
          // Deleting what is not there is not an error.
          yield* store.delete(session(ref.projectKey, "never"))
          const next = yield* store.acquire(ref)
          expect(next).toBeGreaterThan(generation)
          const stale = yield* Effect.either(store.append(ref, [user("u2", "zombie")], { generation }))
          expect(Either.isLeft(stale) && stale.left.reason).toBe("StaleWriter")
        })
      ))

    // Batches for three transcripts of one session, uuids unique, in any order.
    const subpaths = [undefined, "subagents/agent-a", "subagents/agent-b"] as const
    const batches = fc.array(
      fc.record({ target: fc.constantFrom(0, 1, 2), size: fc.integer({ min: 0, max: 4 }) }),
      { maxLength: 12 }
    )

    it.live.prop(
      "any interleaving of appends loads back in order, per transcript",
      [batches],
      ([plan]) =>
        withStore((store) =>
          Effect.gen(function*() {
            const ref = session()
            const expected: Array<Array<string>> = [[], [], []]
            let n = 0
            const made = plan.map(({ size, target }) => {
              const uuids = Array.from({ length: size }, () => `e${n++}`)
              expected[target]?.push(...uuids)
              return { target, entries: uuids.map((u) => user(u, u)) }
            })
            // Each transcript's batches in order on its own fiber; the transcripts race.
            yield* Effect.forEach(
              [0, 1, 2],
              (target) =>
                Effect.forEach(
                  made.filter((m) => m.target === target),
                  (m) => store.append({ ...ref, subpath: subpaths[target] }, m.entries),
                  { discard: true }
                ),
              { concurrency: "unbounded", discard: true }
            )
            for (const target of [0, 1, 2]) {
              const got = yield* loaded(store, { ...ref, ...(subpaths[target] ? { subpath: subpaths[target] } : {}) })
              expect(got.map((e) => e.uuid)).toEqual(expected[target])
            }
          })
        ),
      { fastCheck: { numRuns: 15 } }
    )
  })
