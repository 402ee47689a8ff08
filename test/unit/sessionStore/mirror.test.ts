// The transcript mirror over the fake CLI: `transcript_mirror` frames go to the store, never to
// the user; a turn's entries are stored before its `result` is delivered; a failed append is a
// `mirror_error` message (or, by option, the turn's failure) and the session goes on; a fenced-out
// writer stores nothing.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Ref, Stream } from "effect"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import { keyOf } from "../../../src/internal/session/mirror.js"
import * as SessionStores from "../../../src/layers/SessionStores.js"
import type { Message } from "../../../src/schema/Message.js"
import * as Options from "../../../src/schema/Options.js"
import { SessionStoreError, type SessionStoreShape } from "../../../src/services/SessionStore.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"

const CONFIG = "/cfg/claude"
const SESSION = "11111111-2222-4333-8444-555555555555"
const ref = { projectKey: "-srv-app", sessionId: SESSION }
const mainFile = `${CONFIG}/projects/-srv-app/${SESSION}.jsonl`
const agentFile = `${CONFIG}/projects/-srv-app/${SESSION}/subagents/agent-a1.jsonl`

const mirrorFrame = (filePath: string, uuids: ReadonlyArray<string>) => ({
  type: "transcript_mirror",
  filePath,
  entries: uuids.map((uuid) => ({ type: "user", uuid, message: { role: "user", content: uuid } }))
})

// Each user message: a turn whose transcript lines come as three mirror frames, numbered by turn.
const mirroredTurns = (turn: Ref.Ref<number>) =>
  FakeCli.layerClaudeAgent({
    onUserMessage: (_message, cli) =>
      Effect.flatMap(Ref.updateAndGet(turn, (n) => n + 1), (n) =>
        Effect.forEach(
          [
            { ...cli.frames.systemInit(), session_id: SESSION },
            mirrorFrame(mainFile, [`t${n}-user`]),
            cli.frames.assistantText(`answer ${n}`),
            mirrorFrame(mainFile, [`t${n}-assistant`]),
            mirrorFrame(agentFile, [`t${n}-agent`]),
            cli.frames.result(`answer ${n}`)
          ],
          cli.emit,
          { discard: true }
        ))
  })

const uuidsOf = (store: SessionStoreShape, subpath?: string) =>
  Effect.map(
    store.load(subpath === undefined ? ref : { ...ref, subpath }),
    Option.match({ onNone: () => [], onSome: (entries) => entries.map((e) => e.uuid) })
  )

// Runs turns; at each `result`, what the store holds for the main transcript.
const turns = (store: SessionStoreShape, count: number, extra: { readonly sessionStoreFlush?: "eager" } = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const session = yield* ClaudeAgent.session({ sessionStore: store, env: { CLAUDE_CONFIG_DIR: CONFIG }, ...extra })
    const seen: Array<Message> = []
    const atResult: Array<ReadonlyArray<string | undefined>> = []
    for (let i = 0; i < count; i++) {
      yield* session.send(`prompt ${i}`)
      yield* session.receiveResponse.pipe(Stream.runForEach((m) =>
        Effect.gen(function*() {
          seen.push(m)
          if (m.type === "result") atResult.push(yield* uuidsOf(store))
        })
      ))
    }
    return { seen, atResult }
  }))

// A store whose appends are counted, and fail while `failing` is set.
const instrumented = Effect.gen(function*() {
  const inner = yield* SessionStores.makeMemory
  const calls = yield* Ref.make(0)
  const failing = yield* Ref.make(false)
  const store: SessionStoreShape = {
    ...inner,
    appendAll: (session, writes, options) =>
      Effect.zipRight(
        Ref.update(calls, (n) => n + 1),
        Effect.flatMap(Ref.get(failing), (fail) =>
          fail
            ? Effect.fail(new SessionStoreError({ reason: "Corrupt", operation: "append", detail: "disk on fire" }))
            : inner.appendAll(session, writes, options))
      )
  }
  return { store, calls, failing }
})

describe("the transcript mirror", () => {
  it("reads a frame's path as the session and subpath it stands for", () => {
    expect(keyOf(mainFile, CONFIG)).toEqual({ ref, subpath: undefined })
    expect(keyOf(agentFile, `${CONFIG}/`)).toEqual({ ref, subpath: "subagents/agent-a1" })
    // Outside the config directory given: the last `projects` folder of the path.
    expect(keyOf(`/other/projects/-srv-app/${SESSION}.jsonl`, CONFIG)).toEqual({ ref, subpath: undefined })
    expect(keyOf("C:\\Users\\me\\.claude\\projects\\p\\s.jsonl", undefined)).toEqual({
      ref: { projectKey: "p", sessionId: "s" },
      subpath: undefined
    })
    expect(keyOf(`${CONFIG}/projects/-srv-app/${SESSION}.json`, CONFIG)).toBeUndefined()
    expect(keyOf(`${CONFIG}/todos/${SESSION}.jsonl`, CONFIG)).toBeUndefined()
  })

  it.effect("batched: a turn's entries are stored in one append before its result is delivered; frames are never messages", () =>
    Effect.gen(function*() {
      const { calls, store } = yield* instrumented
      const { atResult, seen } = yield* turns(store, 2).pipe(Effect.provide(mirroredTurns(yield* Ref.make(0))))
      expect(atResult).toEqual([["t1-user", "t1-assistant"], ["t1-user", "t1-assistant", "t2-user", "t2-assistant"]])
      expect(yield* uuidsOf(store, "subagents/agent-a1")).toEqual(["t1-agent", "t2-agent"])
      expect(yield* Ref.get(calls)).toBe(2)
      expect(seen.map((m) => m.type)).toEqual(["system", "assistant", "result", "system", "assistant", "result"])
    }))

  it.effect("eager: one append per frame", () =>
    Effect.gen(function*() {
      const { calls, store } = yield* instrumented
      const { atResult } = yield* turns(store, 1, { sessionStoreFlush: "eager" }).pipe(
        Effect.provide(mirroredTurns(yield* Ref.make(0)))
      )
      expect(atResult).toEqual([["t1-user", "t1-assistant"]])
      expect(yield* Ref.get(calls)).toBe(3)
    }))

  it.effect("a failed append is a mirror_error message before the result, and the session goes on", () =>
    Effect.gen(function*() {
      const { failing, store } = yield* instrumented
      yield* Ref.set(failing, true)
      const turn = yield* Ref.make(0)
      const program = Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ sessionStore: store, env: { CLAUDE_CONFIG_DIR: CONFIG } })
        yield* session.send("one")
        const first = yield* Stream.runCollect(session.receiveResponse)
        yield* Ref.set(failing, false)
        yield* session.send("two")
        yield* Stream.runDrain(session.receiveResponse)
        return [...first]
      }))
      const first = yield* program.pipe(Effect.provide(mirroredTurns(turn)))
      const error = first.find((m) => m.type === "system" && m.subtype === "mirror_error")
      expect(error).toMatchObject({
        type: "system",
        subtype: "mirror_error",
        key: { projectKey: "-srv-app", sessionId: SESSION },
        session_id: SESSION
      })
      expect(first.map((m) => m.type).slice(-2)).toEqual(["system", "result"])
      // The failed turn's batch is dropped, the next turn's is stored.
      expect(yield* uuidsOf(store)).toEqual(["t2-user", "t2-assistant"])
    }))

  it.effect("sessionStoreFailure fail: a failed append fails the turn's stream with it, the next turn starts clean", () =>
    Effect.gen(function*() {
      const { failing, store } = yield* instrumented
      yield* Ref.set(failing, true)
      const program = Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({
          sessionStore: store,
          sessionStoreFailure: "fail",
          env: { CLAUDE_CONFIG_DIR: CONFIG }
        })
        yield* session.send("one")
        const seen: Array<Message> = []
        const failure = yield* Effect.flip(
          Stream.runForEach(session.receiveResponse, (m) => Effect.sync(() => seen.push(m)))
        )
        yield* Ref.set(failing, false)
        yield* session.send("two")
        const second = yield* Stream.runCollect(session.receiveResponse)
        return { failure, seen, second: [...second] }
      }))
      const { failure, second, seen } = yield* program.pipe(Effect.provide(mirroredTurns(yield* Ref.make(0))))
      expect(failure).toBeInstanceOf(SessionStoreError)
      expect(failure).toMatchObject({ _tag: "SessionStoreError", reason: "Corrupt", operation: "append" })
      // The failed turn delivered what came before its result, and no mirror_error message.
      expect(seen.map((m) => m.type)).toEqual(["system", "assistant"])
      // The failed turn's result is not the next turn's: the second stream is the second turn.
      expect(second.map((m) => m.type)).toEqual(["system", "assistant", "result"])
      expect(second.find((m) => m.type === "assistant")).toMatchObject({
        message: { content: [{ type: "text", text: "answer 2" }] }
      })
      expect(yield* uuidsOf(store)).toEqual(["t2-user", "t2-assistant"])
    }))

  it.effect("sessionStoreFailure fail, eager: the turn fails at the refused frame", () =>
    Effect.gen(function*() {
      const { failing, store } = yield* instrumented
      yield* Ref.set(failing, true)
      const program = Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({
          sessionStore: store,
          sessionStoreFailure: "fail",
          sessionStoreFlush: "eager",
          env: { CLAUDE_CONFIG_DIR: CONFIG }
        })
        yield* session.send("one")
        const seen: Array<Message> = []
        const failure = yield* Effect.flip(
          Stream.runForEach(session.receiveResponse, (m) => Effect.sync(() => seen.push(m)))
        )
        return { failure, seen }
      }))
      const { failure, seen } = yield* program.pipe(Effect.provide(mirroredTurns(yield* Ref.make(0))))
      expect(failure).toMatchObject({ _tag: "SessionStoreError", reason: "Corrupt" })
      // The first frame's append fails: after the init message, before the assistant's.
      expect(seen.map((m) => m.type)).toEqual(["system"])
    }))

  it.effect("a writer fenced out by a newer one stores nothing more and reports it", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const turn = yield* Ref.make(0)
      const program = Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ sessionStore: store, env: { CLAUDE_CONFIG_DIR: CONFIG } })
        yield* session.send("one")
        yield* Stream.runDrain(session.receiveResponse)
        // Another process resumes the session and becomes its writer.
        yield* store.acquire(ref)
        yield* session.send("two")
        return [...(yield* Stream.runCollect(session.receiveResponse))]
      }))
      const second = yield* program.pipe(Effect.provide(mirroredTurns(turn)))
      const error = second.find((m) => m.type === "system" && m.subtype === "mirror_error")
      expect(error !== undefined && "error" in error && error.error).toContain("StaleWriter")
      expect(yield* uuidsOf(store)).toEqual(["t1-user", "t1-assistant"])
      expect(yield* uuidsOf(store, "subagents/agent-a1")).toEqual(["t1-agent"])
    }))

  it.effect("options: the store's settings need a store; a store needs local writes; a store is a store", () =>
    Effect.gen(function*() {
      const store = yield* SessionStores.makeMemory
      const field = (input: Options.Options) => Effect.map(Effect.flip(Options.validate(input)), (e) => e.field)
      expect(yield* field({ sessionStoreFlush: "eager" })).toBe("sessionStoreFlush")
      expect(yield* field({ resumeMissing: "new" })).toBe("resumeMissing")
      expect(yield* field({ sessionStoreFailure: "fail" })).toBe("sessionStoreFailure")
      expect(yield* field({ sessionStore: store, persistSession: false })).toBe("sessionStore")
      expect(yield* field({ sessionStore: store, enableFileCheckpointing: true })).toBe("sessionStore")
      expect((yield* Effect.flip(Options.check({ sessionStore: { load: () => Effect.void } }))).field).toBe(
        "sessionStore"
      )
      yield* Options.validate({
        sessionStore: store,
        sessionStoreFlush: "eager",
        sessionStoreFailure: "fail",
        resumeMissing: "new"
      })
    }))
})
