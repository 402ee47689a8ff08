// Unit tests of the cluster entity over the in-memory fake CLI: each "process" is a FakeCli that
// keeps a transcript file where the real CLI would (one line per turn, under the config directory
// it was started with) and mirrors each line to the session store as the real CLI does
// (`transcript_mirror`), so that sessions started, recorded and resumed from the store can be
// checked without a model or a process.
import { TestRunner } from "@effect/cluster"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Clock,
  Deferred,
  Effect,
  Either,
  Exit,
  Fiber,
  Layer,
  Metric,
  Option,
  Queue,
  Schema,
  Scope,
  Stream
} from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  AgentPool,
  ClaudeAgent,
  Message,
  SdkError,
  SessionServices,
  SessionStore,
  SessionStores,
  Transport
} from "effect-claude-agent"
import { AgentEntity, AgentMetrics } from "effect-claude-agent/cluster"
import { FakeCli } from "effect-claude-agent/testing"

interface Launched {
  readonly sessionId: string | undefined
  readonly resume: string | undefined
  readonly model: string | undefined
  readonly permissionMode: string | undefined
  /** The config directory the CLI was given: a temporary one when resumed from the store. */
  readonly configDir: string | undefined
}

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "agent-entity-")))

const projectKey = (cwd: string) => cwd.replace(/[^a-zA-Z0-9]/g, "-")

const transcriptFile = (configDir: string, cwd: string, sessionId: string) =>
  path.join(configDir, "projects", projectKey(cwd), `${sessionId}.jsonl`)

const lines = (file: string): Array<string> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) : []

// A fake ClaudeAgent: records each launch, and each turn appends `{"type":"user","prompt":…}` to
// the session's transcript, mirrors it, and answers `echo: <prompt> (after <n> turns)`, n being
// the turns it found in the file. As the real CLI, it refuses `sessionId` for a session it has a
// transcript of, and `resume` of one it has none of. Prompts starting with "slow" wait for an
// interrupt; "tool" asks permission for Bash first; "crash" makes the CLI exit with code 1 (after
// mirroring the turn's line: the store must not keep it). The model "refused-model" is refused by
// set_model; a CLI started with "dying-model" dies (a defect) before it starts.
const fakeAgent = (dirs: { readonly configDir: string; readonly cwd: string }) =>
  Effect.gen(function*() {
    const launched: Array<Launched> = []
    const started = yield* Queue.unbounded<string>()
    const controls = yield* Queue.unbounded<string>()
    const permissionAnswers = yield* Queue.unbounded<unknown>()
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport.Transport,
        Effect.flatMap(SessionServices.SessionLaunch, ({ launch, options }) =>
          Effect.gen(function*() {
            const configDir = launch.env.CLAUDE_CONFIG_DIR ?? dirs.configDir
            launched.push({
              sessionId: options.sessionId,
              resume: options.resume,
              model: options.model,
              permissionMode: options.permissionMode,
              configDir
            })
            if (options.model === "dying-model") return yield* Effect.die("the fake CLI cannot start")
            const id = options.sessionId ?? options.resume ?? "none"
            const file = transcriptFile(configDir, dirs.cwd, id)
            if (options.resume !== undefined && !fs.existsSync(file)) {
              return yield* Effect.die(`resume of ${id}: no transcript at ${file}`)
            }
            if (options.sessionId !== undefined && fs.existsSync(file)) {
              return yield* Effect.die(`Session ID ${id} is already in use.`)
            }
            const interrupted = yield* Deferred.make<void>()
            const { transport } = yield* FakeCli.make({
              onControlRequest: (request) =>
                Effect.gen(function*() {
                  yield* Queue.offer(controls, request.subtype)
                  if (request.subtype === "interrupt") yield* Deferred.succeed(interrupted, undefined)
                  if (request.subtype === "set_model" && request.model === "refused-model") {
                    return Option.some(FakeCli.controlFailure("unknown model refused-model", "invalid_model"))
                  }
                  return Option.none()
                }),
              onUserMessage: (message, cli) =>
                Effect.gen(function*() {
                  const prompt = FakeCli.userText(message)
                  const history = lines(file).length
                  yield* Queue.offer(started, prompt)
                  yield* cli.emit(FakeCli.frames.systemInit({ model: options.model ?? "claude-fake-1" }))
                  const reply = `echo: ${prompt} (after ${history} turns)`
                  const assistant = FakeCli.frames.assistantText(reply)
                  // As the CLI does: the turn is written and mirrored before its result is reported.
                  const write = (entry: { readonly type: string; readonly prompt: string; readonly uuid: string }) =>
                    Effect.gen(function*() {
                      fs.mkdirSync(path.dirname(file), { recursive: true })
                      fs.appendFileSync(file, `${JSON.stringify(entry)}\n`)
                      yield* cli.emit({ type: "transcript_mirror", filePath: file, entries: [entry] })
                    })
                  if (prompt.startsWith("crash")) {
                    yield* write({ type: "user", prompt, uuid: String(assistant.uuid) })
                    yield* cli.stderr("fatal: the fake CLI crashed")
                    return yield* cli.exit({ exitCode: 1 })
                  }
                  if (prompt.startsWith("slow")) {
                    yield* cli.emit(FakeCli.frames.assistantText("working"))
                    yield* Deferred.await(interrupted)
                    return yield* cli.emit(
                      FakeCli.frames.result("interrupted", { isError: true, subtype: "error_during_execution" })
                    )
                  }
                  if (prompt.startsWith("tool")) {
                    const answer = yield* cli.requestRaw({
                      subtype: "can_use_tool",
                      tool_name: "Bash",
                      input: { command: "ls" },
                      tool_use_id: "toolu_1",
                      permission_suggestions: []
                    })
                    yield* Queue.offer(permissionAnswers, answer)
                  }
                  yield* write({ type: "user", prompt, uuid: String(assistant.uuid) })
                  yield* cli.emit(assistant)
                  yield* cli.emit(FakeCli.frames.result(reply))
                })
            })
            return transport
          }))
      )
    })
    return { agent, launched, started, controls, permissionAnswers }
  })

type Fake = Effect.Effect.Success<ReturnType<typeof fakeAgent>>

const texts = (messages: Chunk.Chunk<Message.Message>) =>
  Chunk.toArray(messages).filter(Message.isAssistant).map(Message.assistantText)

const setup = Effect.gen(function*() {
  const root = tempDir()
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true })))
  const dirs = { configDir: path.join(root, "config"), cwd: path.join(root, "work") }
  fs.mkdirSync(dirs.cwd, { recursive: true })
  const fake = yield* fakeAgent(dirs)
  return { dirs, fake }
})

// The entity on a runner of its own (TestRunner: one process, its messages in memory), whose
// scope is closed to stop it.
const instance = (
  fake: Fake,
  dirs: { readonly configDir: string; readonly cwd: string },
  store: SessionStore.SessionStoreShape,
  options: Omit<AgentEntity.LayerOptions, "options"> = {}
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      AgentEntity.layer({
        ...options,
        options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } }
      }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provide(Layer.succeed(SessionStore.SessionStore, store)),
        Layer.provide(NodeContext.layer),
        Layer.provideMerge(TestRunner.layer)
      ),
      scope
    )
    const client = yield* Effect.provide(AgentEntity.AgentEntity.client, context)
    return { makeClient: (id: string) => Effect.succeed(client(id)), close: Scope.close(scope, Exit.void) }
  })

// The uuids (or, for the entity's own records, the turn ids) a store keeps for a conversation.
const storedIds = (
  store: SessionStore.SessionStoreShape,
  dirs: { readonly cwd: string },
  id: string,
  subpath?: string
) =>
  Effect.map(
    store.load({ projectKey: projectKey(dirs.cwd), sessionId: AgentEntity.sessionIdFor(id), subpath }),
    Option.match({ onNone: () => [], onSome: (entries) => entries.map((e) => e.prompt ?? e.uuid) })
  )

describe("AgentEntity", { timeout: 15_000 }, () => {
  it.scopedLive("Send streams the turn's messages, as Messages", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, yield* SessionStores.makeMemory)
      const conversation = yield* makeClient("user-1")
      const messages = yield* Stream.runCollect(conversation.Send({ turnId: "t1", prompt: "hi" }))
      expect(Chunk.toArray(messages).map((m) => m.type)).toEqual(["system", "assistant", "result"])
      expect(texts(messages)).toEqual(["echo: hi (after 0 turns)"])
      const status = yield* conversation.Status()
      expect(status).toMatchObject({ conversationId: "user-1", running: true, busy: false, turns: 1, turnId: null })
    }))

  it.scopedLive("the first turn starts the session under the conversation's id, a later instance resumes it from the store", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      const sessionId = AgentEntity.sessionIdFor("user-2")
      expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(AgentEntity.sessionIdFor("user-2")).toBe(sessionId)
      expect(AgentEntity.sessionIdFor("user-3")).not.toBe(sessionId)
      expect(AgentEntity.sessionIdFor("user-2", "billing")).not.toBe(sessionId)
      expect(yield* AgentEntity.sessionRefFor("user-2", { cwd: dirs.cwd })).toEqual({
        projectKey: projectKey(dirs.cwd),
        sessionId
      })

      const first = yield* instance(fake, dirs, store)
      const one = yield* first.makeClient("user-2")
      yield* Stream.runDrain(one.Send({ turnId: "t1", prompt: "first" }))
      yield* Stream.runDrain(one.Send({ turnId: "t2", prompt: "second" }))
      yield* first.close // passivation: the CLI stops
      // Each turn recorded with its id, its transcript line mirrored by the CLI.
      expect(yield* storedIds(store, dirs, "user-2")).toEqual(["first", "second"])
      expect(yield* storedIds(store, dirs, "user-2", "cluster/turns")).toEqual(["t1", "t2"])

      const second = yield* instance(fake, dirs, store)
      const two = yield* second.makeClient("user-2")
      const messages = yield* Stream.runCollect(two.Send({ turnId: "t3", prompt: "third" }))
      expect(texts(messages)).toEqual(["echo: third (after 2 turns)"])
      expect(fake.launched.map(({ resume, sessionId }) => ({ resume, sessionId }))).toEqual([
        { sessionId, resume: undefined },
        { sessionId: undefined, resume: sessionId }
      ])
      // The resumed CLI ran in a config directory the store was loaded into, not the runner's own.
      expect(fake.launched[0]?.configDir).toBe(dirs.configDir)
      expect(fake.launched[1]?.configDir).not.toBe(dirs.configDir)
      expect(yield* storedIds(store, dirs, "user-2")).toEqual(["first", "second", "third"])
    }))

  it.scopedLive("a turn the store refuses fails and counts as a mirror failure; the next turn does not see it", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const memory = yield* SessionStores.makeMemory
      let refuse = true
      const refusing: SessionStore.SessionStoreShape = {
        ...memory,
        appendAll: (session, writes, options) =>
          refuse
            ? Effect.fail(
              new SessionStore.SessionStoreError({ reason: "Corrupt", operation: "append", detail: "disk full" })
            )
            : memory.appendAll(session, writes, options)
      }
      const Entity = AgentEntity.layer({ options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } } }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provide(Layer.succeed(SessionStore.SessionStore, refusing)),
        Layer.provide(NodeContext.layer)
      )
      const failures = Effect.map(Metric.value(AgentMetrics.mirrorFailures), (state) => state.count)
      const before = yield* failures
      const { sent, next } = yield* Effect.gen(function*() {
        const sent = yield* AgentEntity.send("user-mirror", "hi", { turnId: "t1" }).pipe(Stream.runCollect, Effect.flip)
        refuse = false
        const next = yield* AgentEntity.send("user-mirror", "again", { turnId: "t2" }).pipe(Stream.runCollect)
        return { sent, next }
      }).pipe(Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer))))
      expect(sent).toMatchObject({ _tag: "SessionStoreError", reason: "Corrupt" })
      expect(yield* failures).toBe(before + 1)
      // The failed turn's CLI was dropped; the conversation starts anew without it.
      expect(texts(next)).toEqual(["echo: again (after 0 turns)"])
      expect(yield* storedIds(memory, dirs, "user-mirror")).toEqual(["again"])
    }))

  it.scopedLive("a commit retried after an append the store recorded stores the turn once", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const memory = yield* SessionStores.makeMemory
      let lost = 0
      // The first append of each turn is recorded, but its answer is lost (a connection dropped after the commit).
      const flaky: SessionStore.SessionStoreShape = {
        ...memory,
        appendAll: (session, writes, options) =>
          Effect.zipRight(
            memory.appendAll(session, writes, options),
            Effect.suspend(() =>
              lost++ % 2 === 0
                ? Effect.fail(
                  new SessionStore.SessionStoreError({ reason: "Unavailable", operation: "append", detail: "reset" })
                )
                : Effect.void
            )
          )
      }
      const { makeClient } = yield* instance(fake, dirs, flaky)
      const conversation = yield* makeClient("user-retry")
      yield* Stream.runDrain(conversation.Send({ turnId: "t1", prompt: "first" }))
      yield* Stream.runDrain(conversation.Send({ turnId: "t2", prompt: "second" }))
      expect(lost).toBe(4)
      expect(yield* storedIds(memory, dirs, "user-retry")).toEqual(["first", "second"])
      expect(yield* storedIds(memory, dirs, "user-retry", "cluster/turns")).toEqual(["t1", "t2"])
      expect(yield* storedIds(memory, dirs, "user-retry", "cluster/replies")).toEqual(["t1", "t2"])
    }))

  it.scopedLive("a turn the store recorded is never run again: sent again, its reply is replayed", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      const first = yield* instance(fake, dirs, store)
      const one = yield* first.makeClient("user-replay")
      const original = yield* Stream.runCollect(one.Send({ turnId: "t1", prompt: "first" }))
      yield* first.close
      expect(Chunk.toArray(yield* Queue.takeAll(fake.started))).toEqual(["first"])

      // The next owner gets the turn again (its runner stopped before the client had read the reply).
      const second = yield* instance(fake, dirs, store)
      const two = yield* second.makeClient("user-replay")
      const replayed = yield* Stream.runCollect(two.Send({ turnId: "t1", prompt: "first" }))
      expect(Chunk.toArray(replayed).map((m) => m.type)).toEqual(["system", "assistant", "result"])
      expect(texts(replayed)).toEqual(texts(original))
      // No CLI was started for it, the prompt reached no model, and the transcript has the turn once.
      expect(fake.launched).toHaveLength(1)
      expect(Chunk.toArray(yield* Queue.takeAll(fake.started))).toEqual([])
      expect(yield* storedIds(store, dirs, "user-replay")).toEqual(["first"])
      const next = yield* Stream.runCollect(two.Send({ turnId: "t2", prompt: "second" }))
      expect(texts(next)).toEqual(["echo: second (after 1 turns)"])
    }))

  it.scopedLive("an instance that lost the conversation cannot append once the new owner has opened it", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      // The old owner, still running (a runner frozen, then thawed), and the new one.
      const old = yield* instance(fake, dirs, store)
      const stale = yield* old.makeClient("user-fenced")
      yield* Stream.runDrain(stale.Send({ turnId: "t1", prompt: "first" }))
      const current = yield* instance(fake, dirs, store)
      const owner = yield* current.makeClient("user-fenced")
      expect(texts(yield* Stream.runCollect(owner.Send({ turnId: "t2", prompt: "second" })))).toEqual([
        "echo: second (after 1 turns)"
      ])
      const refused = yield* stale.Send({ turnId: "t3", prompt: "late" }).pipe(Stream.runCollect, Effect.flip)
      expect(refused).toMatchObject({ _tag: "SessionStoreError", reason: "StaleWriter" })
      expect(yield* storedIds(store, dirs, "user-fenced")).toEqual(["first", "second"])
      expect(yield* storedIds(store, dirs, "user-fenced", "cluster/turns")).toEqual(["t1", "t2"])
      // The old owner dropped its CLI: it does not go on writing.
      expect((yield* stale.Status()).running).toBe(false)
    }))

  it.scopedLive("a turn cut short (the CLI crashed) is not in the store; the next turn resumes without it", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      const { makeClient } = yield* instance(fake, dirs, store)
      const conversation = yield* makeClient("user-4")
      yield* Stream.runDrain(conversation.Send({ turnId: "t1", prompt: "first" }))
      const crashed = yield* conversation.Send({ turnId: "t2", prompt: "crash now" }).pipe(Stream.runDrain, Effect.flip)
      expect(crashed).toMatchObject({ _tag: "ProcessError" })
      // The crashed CLI had mirrored its line of the turn: the store did not keep it.
      expect(yield* storedIds(store, dirs, "user-4")).toEqual(["first"])
      const messages = yield* Stream.runCollect(conversation.Send({ turnId: "t3", prompt: "third" }))
      expect(texts(messages)).toEqual(["echo: third (after 1 turns)"])
      expect(yield* storedIds(store, dirs, "user-4")).toEqual(["first", "third"])
      expect(fake.launched.map((l) => l.resume === undefined ? "started" : "resumed")).toEqual(["started", "resumed"])
    }))

  it.scopedLive("a conversation whose first turn never completed starts afresh", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      const sessionId = AgentEntity.sessionIdFor("user-5")
      const file = transcriptFile(dirs.configDir, dirs.cwd, sessionId)

      const first = yield* instance(fake, dirs, store)
      const one = yield* first.makeClient("user-5")
      const running = yield* Effect.fork(Stream.runDrain(one.Send({ turnId: "t1", prompt: "slow start" })))
      expect(yield* Queue.take(fake.started)).toBe("slow start")
      // What the CLI wrote of the turn before its runner went away: the CLI would refuse the
      // session id while it is there.
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, `${JSON.stringify({ type: "user", prompt: "slow start" })}\n`)
      yield* Fiber.interrupt(running)
      yield* first.close

      const second = yield* instance(fake, dirs, store)
      const two = yield* second.makeClient("user-5")
      const messages = yield* Stream.runCollect(two.Send({ turnId: "t1", prompt: "start" }))
      expect(texts(messages)).toEqual(["echo: start (after 0 turns)"])
      expect(fake.launched.map((l) => l.sessionId)).toEqual([sessionId, sessionId])
    }))

  it.scopedLive("two stores on one machine never share a conversation", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const storeA = yield* SessionStores.makeMemory
      const storeB = yield* SessionStores.makeMemory
      const turn = (store: SessionStore.SessionStoreShape, turnId: string, prompt: string) =>
        Effect.gen(function*() {
          const running = yield* instance(fake, dirs, store)
          const conversation = yield* running.makeClient("user-shared")
          const messages = yield* Stream.runCollect(conversation.Send({ turnId, prompt }))
          yield* running.close
          return texts(messages)
        })
      expect(yield* turn(storeA, "a1", "I am Carol")).toEqual(["echo: I am Carol (after 0 turns)"])
      // Same conversation id, same CLI config dir, another store: a conversation of its own.
      expect(yield* turn(storeB, "b1", "who am I")).toEqual(["echo: who am I (after 0 turns)"])
      expect(yield* turn(storeA, "a2", "who am I")).toEqual(["echo: who am I (after 1 turns)"])
      expect(yield* storedIds(storeA, dirs, "user-shared")).toEqual(["I am Carol", "who am I"])
      expect(yield* storedIds(storeB, dirs, "user-shared")).toEqual(["who am I"])
    }))

  it.scopedLive("a local transcript the store does not know is not resumed", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      const sessionId = AgentEntity.sessionIdFor("user-gone")
      const first = yield* instance(fake, dirs, store)
      yield* Stream.runDrain((yield* first.makeClient("user-gone")).Send({ turnId: "t1", prompt: "first" }))
      yield* first.close
      // The conversation is deleted from the store; this machine still has its CLI transcript.
      yield* store.delete({ projectKey: projectKey(dirs.cwd), sessionId })
      expect(lines(transcriptFile(dirs.configDir, dirs.cwd, sessionId))).toHaveLength(1)
      const second = yield* instance(fake, dirs, store)
      const messages = yield* Stream.runCollect(
        (yield* second.makeClient("user-gone")).Send({ turnId: "t2", prompt: "again" })
      )
      expect(texts(messages)).toEqual(["echo: again (after 0 turns)"])
      expect(fake.launched.map((l) => l.resume)).toEqual([undefined, undefined])
    }))

  it.scopedLive("new conversations on a pool of one CLI start: the resume attempt the store refuses holds no slot", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const store = yield* SessionStores.makeMemory
      const pool = yield* AgentPool.make(fake.agent, { maxConcurrent: 1, idleTimeToLive: 0 })
      const Entity = AgentEntity.layer({
        options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } },
        maxIdleTime: "1 second"
      }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, pool)),
        Layer.provide(Layer.succeed(SessionStore.SessionStore, store)),
        Layer.provide(NodeContext.layer)
      )
      const answers = yield* Effect.forEach(["pool-a", "pool-b"], (id) =>
        AgentEntity.send(id, `hello ${id}`).pipe(
          Stream.runCollect,
          Effect.map(texts),
          Effect.timeout("10 seconds")
        )).pipe(Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer))))
      expect(answers).toEqual([["echo: hello pool-a (after 0 turns)"], ["echo: hello pool-b (after 0 turns)"]])
    }))

  it.scopedLive("Status, SetModel and Interrupt run while a Send streams", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, yield* SessionStores.makeMemory)
      const conversation = yield* makeClient("user-6")
      const firstMessage = yield* Deferred.make<void>()
      const turn = yield* conversation.Send({ turnId: "t1", prompt: "slow work" }).pipe(
        Stream.tap((m) => (Message.isAssistant(m) ? Deferred.succeed(firstMessage, undefined) : Effect.void)),
        Stream.runCollect,
        Effect.fork
      )
      yield* Deferred.await(firstMessage)

      const busy = yield* conversation.Status()
      const control = (subtype: string) =>
        Queue.take(fake.controls).pipe(Effect.repeat({ until: (s) => s === subtype }))
      expect(busy).toMatchObject({ running: true, busy: true, turnId: "t1", turns: 0, model: "claude-fake-1" })
      yield* conversation.SetModel({ model: "claude-opus-4-1" })
      expect(yield* control("set_model")).toBe("set_model")
      expect((yield* conversation.Status()).model).toBe("claude-opus-4-1")
      yield* conversation.SetPermissionMode({ mode: "acceptEdits" })
      expect(yield* control("set_permission_mode")).toBe("set_permission_mode")

      expect(yield* conversation.Interrupt()).toEqual({ interrupted: true })
      const messages = yield* Fiber.join(turn)
      const result = Chunk.toArray(messages).find(Message.isResult)
      expect(result?.subtype).toBe("error_during_execution")
      expect(yield* conversation.Status()).toMatchObject({
        busy: false,
        turnId: null,
        turns: 1,
        permissionMode: "acceptEdits"
      })
      expect(yield* conversation.Interrupt()).toEqual({ interrupted: false })
    }))

  it.scopedLive("a later CLI of the instance starts with the model and mode that were set", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, yield* SessionStores.makeMemory)
      const conversation = yield* makeClient("user-7")
      // Before any turn: no CLI is started, the settings wait for it.
      yield* conversation.SetModel({ model: "claude-haiku-4-5" })
      yield* conversation.SetPermissionMode({ mode: "plan" })
      expect((yield* conversation.Status()).running).toBe(false)
      yield* Stream.runDrain(conversation.Send({ turnId: "t1", prompt: "hi" }))
      expect(fake.launched).toEqual([{
        sessionId: (yield* conversation.Status()).sessionId,
        resume: undefined,
        model: "claude-haiku-4-5",
        permissionMode: "plan",
        configDir: dirs.configDir
      }])
    }))

  it.scopedLive("a tool use waits for the client's answer, visible in Status", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, yield* SessionStores.makeMemory, { askClient: true })
      const conversation = yield* makeClient("user-8")
      const turn = yield* Effect.fork(Stream.runCollect(conversation.Send({ turnId: "t1", prompt: "tool please" })))
      const pending = yield* conversation.Status().pipe(
        Effect.zipLeft(Effect.yieldNow()),
        Effect.repeat({ until: (s) => s.pendingPermissions.length > 0 })
      )
      expect(pending.pendingPermissions).toEqual([expect.objectContaining({
        toolUseId: "toolu_1",
        toolName: "Bash",
        input: { command: "ls" }
      })])
      expect(yield* conversation.AnswerPermission({ toolUseId: "toolu_9", result: { behavior: "allow" } })).toBe(false)
      expect(
        yield* conversation.AnswerPermission({ toolUseId: "toolu_1", result: { behavior: "deny", message: "not now" } })
      )
        .toBe(true)
      const answer = yield* Queue.take(fake.permissionAnswers)
      expect(answer).toMatchObject({ subtype: "success", response: { behavior: "deny", message: "not now" } })
      yield* Fiber.join(turn)
      expect((yield* conversation.Status()).pendingPermissions).toEqual([])
    }))

  it.scopedLive("through the cluster: a persisted Send's replies travel as the CLI's JSON and decode back", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const Entity = AgentEntity.layer({ options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } } }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provide(SessionStores.layerMemory),
        Layer.provide(NodeContext.layer)
      )
      const messages = yield* AgentEntity.send("user-9", "over the wire", { turnId: "t1" }).pipe(
        Stream.runCollect,
        Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer)))
      )
      expect(Chunk.toArray(messages).map((m) => m.type)).toEqual(["system", "assistant", "result"])
      expect(texts(messages)).toEqual(["echo: over the wire (after 0 turns)"])
      const result = Chunk.toArray(messages).find(Message.isResult)
      expect(result?.total_cost_usd).toBe(0.001)
    }))

  it.scopedLive("through the cluster: a client catches a turn's and a request's failures by their own tags", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const Entity = AgentEntity.layer({ options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } } }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provide(SessionStores.layerMemory),
        Layer.provide(NodeContext.layer)
      )
      const { crashed, died, refused } = yield* Effect.gen(function*() {
        const crashed = yield* AgentEntity.send("user-7", "crash now", { turnId: "t1" }).pipe(
          Stream.runDrain,
          Effect.as("no failure"),
          Effect.catchTag("ProcessError", (e) => Effect.succeed(`ProcessError ${e.exitCode}: ${e.stderrTail}`))
        )
        yield* AgentEntity.send("user-7", "hello", { turnId: "t2" }).pipe(Stream.runDrain)
        const client = yield* AgentEntity.AgentEntity.client
        const refused = yield* client("user-7").SetModel({ model: "refused-model" }).pipe(
          Effect.as("no failure"),
          Effect.catchTag("ControlError", (e) => Effect.succeed(`ControlError ${e.errorCode}: ${e.error}`))
        )
        // A defect has no type of its own: it travels as AgentError.
        yield* client("user-8").SetModel({ model: "dying-model" })
        const died = yield* AgentEntity.send("user-8", "hello", { turnId: "t3" }).pipe(
          Stream.runDrain,
          Effect.as("no failure"),
          Effect.catchTag("AgentError", (e) => Effect.succeed(`AgentError ${e.reason}: ${e.message}`))
        )
        return { crashed, refused, died }
      }).pipe(Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer))))
      expect(crashed).toBe("ProcessError 1: fatal: the fake CLI crashed")
      expect(refused).toBe("ControlError invalid_model: unknown model refused-model")
      expect(died).toBe("AgentError Defect: the fake CLI cannot start")
    }))

  it("every failure of the RPCs survives JSON as its own class", () => {
    const wire = Schema.parseJson(AgentEntity.AgentFailure)
    const failures = [
      new SdkError.ProcessError({
        exitCode: 1,
        stderrTail: "boom",
        lastErrorResult: { type: "result", is_error: true }
      }),
      new SdkError.CLIConnectionError({ reason: "WriteFailed", description: "EPIPE", cause: new Error("EPIPE") }),
      new SdkError.SessionClosedError({ reason: "ScopeClosed" }),
      new SdkError.CLIEndedError({ reason: "NoResult" }),
      new SdkError.TimeoutException({ requestId: "req_1", subtype: "interrupt", timeoutMillis: 5 }),
      new SdkError.PoolClosedError({ stage: "stopped" }),
      new SdkError.SessionNotFoundError({ sessionId: "s" }),
      new SdkError.ResultError({ subtype: "error_max_turns", detail: "max turns", raw: { type: "result" } }),
      new SessionStore.SessionStoreError({ reason: "StaleWriter", operation: "append", sessionId: "s", detail: "gen" }),
      new AgentEntity.AgentError({ reason: "Defect", message: "bug" })
    ]
    for (const failure of failures) {
      const back = Schema.decodeUnknownSync(wire)(Schema.encodeSync(wire)(failure))
      expect(back).toBeInstanceOf(failure.constructor)
      expect(back._tag).toBe(failure._tag)
      expect(back.message).toBe(failure.message)
    }
  })

  it.scopedLive("an idle conversation is passivated after maxIdleTime: its CLI stops, the next turn resumes it", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const closed = yield* Deferred.make<string>()
      let turnsDone = 0
      // The fake agent, noting when a session's scope (the CLI process) closes.
      const agent: ClaudeAgent.ClaudeAgentShape = {
        ...fake.agent,
        session: (options) =>
          fake.agent.session(options).pipe(
            Effect.tap(() =>
              Effect.addFinalizer(() =>
                Effect.sync(() => Deferred.unsafeDone(closed, Exit.succeed(`after ${turnsDone}`)))
              )
            )
          )
      }
      const Entity = AgentEntity.layer({
        options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } },
        maxIdleTime: "1 second"
      }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, agent)),
        Layer.provideMerge(SessionStores.layerMemory),
        Layer.provide(NodeContext.layer)
      )
      yield* Effect.gen(function*() {
        const turn = (turnId: string, prompt: string) =>
          AgentEntity.send("user-idle", prompt, { turnId }).pipe(Stream.runCollect, Effect.map(texts))
        expect(yield* turn("t1", "first")).toEqual(["echo: first (after 0 turns)"])
        turnsDone = 1
        // Nothing asks: the reaper (which looks every 5 s at the least) passivates the instance,
        // and its scope stops the CLI.
        expect(yield* Deferred.await(closed).pipe(Effect.timeout("20 seconds"))).toBe("after 1")
        expect(yield* turn("t2", "second")).toEqual(["echo: second (after 1 turns)"])
        const sessionId = AgentEntity.sessionIdFor("user-idle")
        expect(fake.launched.map(({ resume, sessionId }) => ({ resume, sessionId }))).toEqual([
          { sessionId, resume: undefined },
          { sessionId: undefined, resume: sessionId }
        ])
      }).pipe(Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer))))
    }))
})

// The real clock, moved forward on demand: the entity reads the time through it, so a deadline
// can pass while a turn waits, without waiting.
const movableClock = () => {
  const live = Clock.make()
  let ahead = 0
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => live.unsafeCurrentTimeMillis() + ahead,
    currentTimeMillis: Effect.sync(() => live.unsafeCurrentTimeMillis() + ahead),
    unsafeCurrentTimeNanos: () => live.unsafeCurrentTimeNanos() + BigInt(ahead) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => live.unsafeCurrentTimeNanos() + BigInt(ahead) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
  return { clock, forward: (millis: number) => Effect.sync(() => void (ahead += millis)) }
}

describe("AgentEntity: turn deadlines", () => {
  it.scopedLive("a turn not started by its deadline never reaches the CLI; its reply is TurnExpiredError", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const time = movableClock()
      const Entity = AgentEntity.layer({ options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } } }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provideMerge(SessionStores.layerMemory),
        Layer.provide(NodeContext.layer)
      )
      yield* Effect.gen(function*() {
        const conversation = (yield* AgentEntity.AgentEntity.client)("user-deadline")
        const reason = (exit: Either.Either<unknown, { readonly _tag: string; readonly message: string }>) =>
          Either.match(exit, { onLeft: (e) => e._tag, onRight: () => "ran" })
        const now = yield* Clock.currentTimeMillis

        const late = yield* conversation.Send({ turnId: "t0", prompt: "late", deadline: now - 1 }).pipe(
          Stream.runDrain,
          Effect.either
        )
        expect(reason(late)).toBe("TurnExpiredError")

        // A turn queued behind a slow one, whose deadline passes while it waits.
        const firstMessage = yield* Deferred.make<void>()
        const slow = yield* conversation.Send({ turnId: "t1", prompt: "slow work" }).pipe(
          Stream.tap((m) => (Message.isAssistant(m) ? Deferred.succeed(firstMessage, undefined) : Effect.void)),
          Stream.runDrain,
          Effect.fork
        )
        yield* Deferred.await(firstMessage)
        const queued = yield* conversation.Send({ turnId: "t2", prompt: "queued", deadline: now + 60_000 }).pipe(
          Stream.runDrain,
          Effect.either,
          Effect.fork
        )
        yield* time.forward(120_000)
        expect(yield* conversation.Interrupt()).toEqual({ interrupted: true })
        yield* Fiber.join(slow)
        expect(reason(yield* Fiber.join(queued))).toBe("TurnExpiredError")

        const inTime = yield* AgentEntity.send("user-deadline", "in time", { deadline: "1 minute" }).pipe(
          Stream.runCollect
        )
        expect(texts(inTime)).toEqual(["echo: in time (after 0 turns)"])
        expect(Chunk.toArray(yield* Queue.takeAll(fake.started))).toEqual(["slow work", "in time"])
      }).pipe(Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer))), Effect.withClock(time.clock))
    }))
})

describe("AgentEntity.MessageWire", () => {
  it("round-trips known and unknown messages, unknown fields included", () => {
    const encode = Schema.encodeSync(AgentEntity.MessageWire)
    const decode = Schema.decodeUnknownSync(AgentEntity.MessageWire)
    const assistant = { ...FakeCli.frames.assistantText("hi"), extra_field: { kept: true } }
    const wire = JSON.parse(JSON.stringify(encode(decode(assistant))))
    expect(wire).toEqual(assistant)
    const future = { type: "brand_new_type", payload: [1, 2] }
    const decoded = decode(future)
    expect(decoded.type).toBe("unknown")
    expect(encode(decoded)).toEqual(future)
    expect(() => decode({ type: "result", subtype: "success" })).toThrow()
  })
})
