// Unit tests of the cluster entity over the in-memory fake CLI: each "process" is a FakeCli that
// keeps a transcript file where the real CLI would (one line per turn), so that sessions started,
// resumed, mirrored and restored can be checked without a model or a process.
import { Entity, ShardingConfig, TestRunner } from "@effect/cluster"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Clock,
  Context,
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
import { ClaudeAgent, Message, SdkError, SessionServices, Transport } from "effect-claude-agent"
import { AgentEntity, AgentMetrics, TranscriptStore } from "effect-claude-agent/cluster"
import { FakeCli } from "effect-claude-agent/testing"

interface Launched {
  readonly sessionId: string | undefined
  readonly resume: string | undefined
  readonly model: string | undefined
  readonly permissionMode: string | undefined
}

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "agent-entity-")))

const transcriptFile = (configDir: string, cwd: string, sessionId: string) =>
  path.join(configDir, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"), `${sessionId}.jsonl`)

const lines = (file: string): Array<string> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) : []

// A fake ClaudeAgent: records each launch, and each turn appends `{"prompt":…}` to the session's
// transcript and answers `echo: <prompt> (after <n> turns)`, n being the turns it found in the file.
// Prompts starting with "slow" wait for an interrupt; "tool" asks permission for Bash first;
// "crash" makes the CLI exit with code 1. The model "refused-model" is refused by set_model; a
// CLI started with "dying-model" dies (a defect) before it starts.
const fakeAgent = (dirs: { readonly configDir: string; readonly cwd: string }) =>
  Effect.gen(function*() {
    const launched: Array<Launched> = []
    const started = yield* Queue.unbounded<string>()
    const controls = yield* Queue.unbounded<string>()
    const permissionAnswers = yield* Queue.unbounded<unknown>()
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport.Transport,
        Effect.flatMap(SessionServices.SessionLaunch, ({ options }) =>
          Effect.gen(function*() {
            launched.push({
              sessionId: options.sessionId,
              resume: options.resume,
              model: options.model,
              permissionMode: options.permissionMode
            })
            if (options.model === "dying-model") return yield* Effect.die("the fake CLI cannot start")
            const id = options.sessionId ?? options.resume ?? "none"
            const file = transcriptFile(dirs.configDir, dirs.cwd, id)
            if (options.resume !== undefined && !fs.existsSync(file)) {
              return yield* Effect.die(`resume of ${id}: no transcript at ${file}`)
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
                  if (prompt.startsWith("crash")) {
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
                  const reply = `echo: ${prompt} (after ${history} turns)`
                  const assistant = FakeCli.frames.assistantText(reply)
                  // As the CLI does: the turn is in the transcript before its result is reported.
                  fs.mkdirSync(path.dirname(file), { recursive: true })
                  fs.appendFileSync(file, `${JSON.stringify({ prompt, uuid: assistant.uuid })}\n`)
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

// The entity behind a test client (no Sharding): a scope per "instance", closed to passivate it.
const instance = (
  fake: Fake,
  dirs: { readonly configDir: string; readonly cwd: string },
  store: Layer.Layer<TranscriptStore.TranscriptStore>,
  options: Omit<AgentEntity.LayerOptions, "options"> = {}
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const makeClient = yield* Entity.makeTestClient(
      AgentEntity.AgentEntity,
      AgentEntity.layer({
        ...options,
        options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } }
      }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provide(store),
        Layer.provide(NodeContext.layer)
      )
    ).pipe(Scope.extend(scope), Effect.provide(ShardingConfig.layer()))
    return { makeClient, close: Scope.close(scope, Exit.void) }
  })

describe("AgentEntity", () => {
  it.scopedLive("Send streams the turn's messages, as Messages", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, TranscriptStore.layerMemory)
      const conversation = yield* makeClient("user-1")
      const messages = yield* Stream.runCollect(conversation.Send({ turnId: "t1", prompt: "hi" }))
      expect(Chunk.toArray(messages).map((m) => m.type)).toEqual(["system", "assistant", "result"])
      expect(texts(messages)).toEqual(["echo: hi (after 0 turns)"])
      const status = yield* conversation.Status()
      expect(status).toMatchObject({ conversationId: "user-1", running: true, busy: false, turns: 1, turnId: null })
    }))

  it.scopedLive("the first turn starts the session under the conversation's id, a later instance resumes it", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const namespace = (yield* Effect.provide(TranscriptStore.TranscriptStore, TranscriptStore.layerLocal)).namespace
      const sessionId = AgentEntity.sessionIdFor("user-2", namespace)
      expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(AgentEntity.sessionIdFor("user-2", namespace)).toBe(sessionId)
      expect(AgentEntity.sessionIdFor("user-3", namespace)).not.toBe(sessionId)

      const first = yield* instance(fake, dirs, TranscriptStore.layerLocal)
      const one = yield* first.makeClient("user-2")
      yield* Stream.runDrain(one.Send({ turnId: "t1", prompt: "first" }))
      yield* Stream.runDrain(one.Send({ turnId: "t2", prompt: "second" }))
      yield* first.close // passivation: the CLI stops

      const second = yield* instance(fake, dirs, TranscriptStore.layerLocal)
      const two = yield* second.makeClient("user-2")
      const messages = yield* Stream.runCollect(two.Send({ turnId: "t3", prompt: "third" }))
      expect(texts(messages)).toEqual(["echo: third (after 2 turns)"])
      expect(fake.launched.map(({ resume, sessionId }) => ({ resume, sessionId }))).toEqual([
        { sessionId, resume: undefined },
        { sessionId: undefined, resume: sessionId }
      ])
    }))

  it.scopedLive("a transcript the store refuses fails the turn and counts as a mirror failure", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const memory = yield* Effect.provide(TranscriptStore.TranscriptStore, TranscriptStore.layerMemory)
      // Saves the "started" marker, refuses every transcript.
      const refusing = Layer.succeed(TranscriptStore.TranscriptStore, {
        ...memory,
        save: (sessionId, transcript) =>
          transcript === ""
            ? memory.save(sessionId, transcript)
            : Effect.fail(
              new TranscriptStore.TranscriptStoreError({ operation: "save", sessionId, detail: "disk full" })
            )
      })
      const Entity = AgentEntity.layer({ options: { cwd: dirs.cwd, env: { CLAUDE_CONFIG_DIR: dirs.configDir } } }).pipe(
        Layer.provide(Layer.succeed(ClaudeAgent.ClaudeAgent, fake.agent)),
        Layer.provide(refusing),
        Layer.provide(NodeContext.layer)
      )
      const failures = Effect.map(Metric.value(AgentMetrics.mirrorFailures), (state) => state.count)
      const before = yield* failures
      const sent = yield* AgentEntity.send("user-mirror", "hi", { turnId: "t1" }).pipe(
        Stream.runCollect,
        Effect.flip,
        Effect.provide(Entity.pipe(Layer.provideMerge(TestRunner.layer)))
      )
      expect(sent).toMatchObject({ _tag: "TranscriptStoreError" })
      expect(yield* failures).toBe(before + 1)
    }))

  it.scopedLive("mirrors the transcript after each turn and restores it where the runner has none", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const storeLayer = yield* Layer.build(TranscriptStore.layerMemory)
      const store = Layer.succeedContext(storeLayer)
      const sessionId = AgentEntity.sessionIdFor(
        "user-4",
        Context.get(storeLayer, TranscriptStore.TranscriptStore).namespace
      )
      const file = transcriptFile(dirs.configDir, dirs.cwd, sessionId)
      const stored = Effect.flatMap(TranscriptStore.TranscriptStore, (s) => s.load(sessionId)).pipe(
        Effect.provide(storeLayer)
      )

      const first = yield* instance(fake, dirs, store)
      const one = yield* first.makeClient("user-4")
      yield* Stream.runDrain(one.Send({ turnId: "t1", prompt: "first" }))
      expect(yield* stored).toEqual(Option.some(fs.readFileSync(file, "utf8")))
      expect(lines(file).map((l) => JSON.parse(l).prompt)).toEqual(["first"])
      yield* first.close

      // Another machine: no local transcript. The store's copy is put in place before `resume`.
      fs.rmSync(file)
      const second = yield* instance(fake, dirs, store)
      const two = yield* second.makeClient("user-4")
      const messages = yield* Stream.runCollect(two.Send({ turnId: "t2", prompt: "second" }))
      expect(texts(messages)).toEqual(["echo: second (after 1 turns)"])
      expect(yield* stored).toEqual(Option.some(lines(file).map((l) => `${l}\n`).join("")))
      yield* second.close

      // A runner died mid-turn: its local file holds a turn the store never saw; the store wins.
      fs.appendFileSync(file, `${JSON.stringify({ prompt: "half a turn" })}\n`)
      const third = yield* instance(fake, dirs, store)
      const three = yield* third.makeClient("user-4")
      const again = yield* Stream.runCollect(three.Send({ turnId: "t3", prompt: "third" }))
      expect(texts(again)).toEqual(["echo: third (after 2 turns)"])
      expect(lines(file).map((l) => JSON.parse(l).prompt)).toEqual(["first", "second", "third"])
    }))

  it.scopedLive("a conversation whose first turn never completed starts afresh", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const storeLayer = yield* Layer.build(TranscriptStore.layerMemory)
      const store = Layer.succeedContext(storeLayer)
      const sessionId = AgentEntity.sessionIdFor(
        "user-5",
        Context.get(storeLayer, TranscriptStore.TranscriptStore).namespace
      )
      const file = transcriptFile(dirs.configDir, dirs.cwd, sessionId)

      const first = yield* instance(fake, dirs, store)
      const one = yield* first.makeClient("user-5")
      const running = yield* Effect.fork(Stream.runDrain(one.Send({ turnId: "t1", prompt: "slow start" })))
      expect(yield* Queue.take(fake.started)).toBe("slow start")
      // What the CLI wrote of the turn before its runner went away.
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, `${JSON.stringify({ prompt: "slow start" })}\n`)
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
      const storeA = Layer.succeedContext(yield* Layer.build(TranscriptStore.layerMemory))
      const storeB = Layer.succeedContext(yield* Layer.build(TranscriptStore.layerMemory))
      const turn = (store: Layer.Layer<TranscriptStore.TranscriptStore>, turnId: string, prompt: string) =>
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
      expect(new Set(fake.launched.map((l) => l.sessionId ?? l.resume)).size).toBe(2)
    }))

  it.scopedLive("a local transcript the store does not know is not resumed", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const storeLayer = yield* Layer.build(TranscriptStore.layerMemory)
      const store = Context.get(storeLayer, TranscriptStore.TranscriptStore)
      const sessionId = AgentEntity.sessionIdFor("user-gone", store.namespace)
      const first = yield* instance(fake, dirs, Layer.succeedContext(storeLayer))
      yield* Stream.runDrain((yield* first.makeClient("user-gone")).Send({ turnId: "t1", prompt: "first" }))
      yield* first.close
      // The conversation is deleted from the store; this machine still has its CLI transcript.
      yield* store.remove(sessionId)
      expect(lines(transcriptFile(dirs.configDir, dirs.cwd, sessionId))).toHaveLength(1)
      const second = yield* instance(fake, dirs, Layer.succeedContext(storeLayer))
      const messages = yield* Stream.runCollect(
        (yield* second.makeClient("user-gone")).Send({ turnId: "t2", prompt: "again" })
      )
      expect(texts(messages)).toEqual(["echo: again (after 0 turns)"])
      expect(fake.launched.map((l) => l.resume)).toEqual([undefined, undefined])
    }))

  it.scopedLive("Status, SetModel and Interrupt run while a Send streams", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, TranscriptStore.layerMemory)
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
      const { makeClient } = yield* instance(fake, dirs, TranscriptStore.layerMemory)
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
        permissionMode: "plan"
      }])
    }))

  it.scopedLive("a tool use waits for the client's answer, visible in Status", () =>
    Effect.gen(function*() {
      const { dirs, fake } = yield* setup
      const { makeClient } = yield* instance(fake, dirs, TranscriptStore.layerMemory, { askClient: true })
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
        Layer.provide(TranscriptStore.layerMemory),
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
        Layer.provide(TranscriptStore.layerMemory),
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
      new TranscriptStore.TranscriptStoreError({ operation: "load", sessionId: "s", detail: "down" }),
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
        Layer.provideMerge(TranscriptStore.layerMemory),
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
        const sessionId = AgentEntity.sessionIdFor("user-idle", (yield* TranscriptStore.TranscriptStore).namespace)
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
        Layer.provideMerge(TranscriptStore.layerMemory),
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
