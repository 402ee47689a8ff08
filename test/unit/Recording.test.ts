import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { Cause, Chunk, Effect, Exit, Fiber, Layer, Option, Queue, Schema, Scope, Stream, TestClock } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import { Transport, type TransportShape } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as Recording from "../../src/testing/Recording.js"
import { program } from "../support/recordingProgram.js"

const FIXTURE = new URL("../fixtures/recording-session.jsonl", import.meta.url).pathname

const loadFixture = Recording.load(FIXTURE).pipe(Effect.provide(NodeContext.layer))

const field = (u: unknown, key: string): unknown =>
  typeof u === "object" && u !== null && key in u ? Reflect.get(u, key) : undefined

// Reads a transport's frames into a queue, for step-by-step assertions.
const collectFrames = (transport: TransportShape) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<unknown>()
    const fiber = yield* transport.frames.pipe(Stream.runForEach((f) => Queue.offer(queue, f.value)), Effect.forkScoped)
    return { queue, fiber }
  })

// The `RecordingError` a replay mismatch dies with (a failure or success fails the test).
const mismatchOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(self), (exit) => {
    const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
    if (Option.isSome(defect) && defect.value instanceof Recording.RecordingError) {
      expect(defect.value.reason).toBe("Mismatch")
      return Effect.succeed(defect.value)
    }
    return Effect.dieMessage(`expected a replay mismatch, got ${String(exit)}`)
  })

describe("Recording: replaying the recorded real session", () => {
  it.effect("delivers the recorded messages and control replies", () =>
    Effect.gen(function*() {
      const entries = yield* loadFixture
      const replayed = yield* program().pipe(Effect.provide(Recording.layerReplay(entries)))

      // Every message frame the CLI wrote up to the second result, in order, but those the
      // official SDK does not deliver either (prompt lifecycles, run states for the SDK alone).
      const recorded: Array<unknown> = []
      let results = 0
      for (const entry of entries) {
        if (entry.dir !== "out" || results === 2) continue
        const type = field(entry.frame, "type")
        if (typeof type === "string" && type.startsWith("control_")) continue
        if (type === "command_lifecycle" || field(entry.frame, "sdk_host_only") === true) continue
        recorded.push(entry.frame)
        if (type === "result") results++
      }
      expect(replayed.messages.map((m) => [m.type, "subtype" in m ? m.subtype : undefined])).toEqual(
        recorded.map((f) => [field(f, "type"), field(f, "subtype")])
      )
      expect(replayed.messages.filter(Message.isResult).map((r) => ("result" in r ? r.result : undefined))).toEqual([
        "first answer",
        "second answer"
      ])
      expect(replayed.messages.filter(Message.isAssistant).map(Message.assistantText)).toEqual([
        "first answer",
        "second answer"
      ])
      expect(replayed.model).toEqual({ model: "claude-haiku-4-5" })
      expect(replayed.status).toEqual({ mcpServers: [] })
    }))

  it.effect("layerReplayFile reads the file; the session reports the recorded session id and init", () =>
    Effect.gen(function*() {
      const { init, sessionId, results } = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        yield* session.send("turn one")
        const one = yield* session.receiveResponse.pipe(Stream.runCollect)
        const init = yield* session.initializationResult
        yield* session.setModel("claude-haiku-4-5")
        yield* session.mcpServerStatus()
        yield* session.send("turn two")
        const two = yield* session.receiveResponse.pipe(Stream.runCollect)
        const results = Chunk.toArray(Chunk.appendAll(one, two)).filter(Message.isResult).map((r) => r.subtype)
        return { init, sessionId: yield* session.sessionId, results }
      })).pipe(Effect.provide(Recording.layerReplayFile(FIXTURE).pipe(Layer.provide(NodeContext.layer))))
      expect(init.pid).toBeTypeOf("number")
      expect(sessionId).toBe("11a2c6ce-10d7-4cd6-b9a6-bfd073b33d61")
      expect(results).toEqual(["success", "success"])
    }))

  it.effect("a different prompt fails send and the stream with the entry and a diff", () =>
    Effect.gen(function*() {
      const entries = yield* loadFixture
      const { sent, streamed } = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        const sent = yield* mismatchOf(session.send("something else"))
        const streamed = yield* session.receiveResponse.pipe(Stream.runDrain, Effect.flip)
        return { sent, streamed }
      })).pipe(Effect.provide(Recording.layerReplay(entries)))
      expect(sent.entry).toBe(1)
      const reason = sent.message
      expect(reason).toMatch(/^Replay mismatch at entry 1: /)
      expect(reason).toContain("at $.message.content[0].text")
      expect(reason).toContain(`expected: "turn one"`)
      expect(reason).toContain(`actual:   "something else"`)
      expect(reason).toContain(`expected frame: {"type":"user"`)
      // The replayed CLI exits on input it did not expect, with the mismatch on stderr.
      expect(streamed).toMatchObject({ _tag: "ProcessError", exitCode: 1, stderrTail: reason })
    }))

  it.effect("a different control request is a mismatch naming the recorded one", () =>
    Effect.gen(function*() {
      const entries = yield* loadFixture
      const error = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        yield* session.send("turn one")
        yield* session.receiveResponse.pipe(Stream.runDrain)
        return yield* mismatchOf(session.setModel("claude-opus-4-1"))
      })).pipe(Effect.provide(Recording.layerReplay(entries)))
      expect(error.message).toMatch(/^Replay mismatch at entry 7: /)
      expect(error.message).toContain("at $.request.model")
      expect(error.message).toContain(`expected: "claude-haiku-4-5"`)
    }))
})

describe("Recording: replayTransport", () => {
  const mcpStatus = { type: "control_request", request_id: "req_1_recorded", request: { subtype: "mcp_status" } }
  const mcpAnswer = {
    type: "control_response",
    response: { subtype: "success", request_id: "req_1_recorded", response: { mcpServers: [] } }
  }
  const canUseTool = {
    type: "control_request",
    request_id: "cli-7",
    request: { subtype: "can_use_tool", tool_name: "Bash", input: {} }
  }
  const allow = {
    type: "control_response",
    response: { subtype: "success", request_id: "cli-7", response: { behavior: "allow" } }
  }
  const remapEntries: ReadonlyArray<Recording.Entry> = [
    { t: 0, dir: "in", frame: mcpStatus },
    { t: 1, dir: "out", frame: mcpAnswer },
    { t: 2, dir: "out", frame: canUseTool },
    { t: 3, dir: "in", frame: allow },
    { t: 4, dir: "in", frame: { type: "control_cancel_request", request_id: "req_1_recorded" } },
    { t: 5, dir: "end-input" },
    { t: 6, dir: "exit", exitCode: 0, signal: undefined }
  ]

  it.scoped("maps the SDK's request ids to the live ones and replays the CLI's verbatim", () =>
    Effect.gen(function*() {
      const transport = yield* Recording.replayTransport(remapEntries)
      const { queue, fiber } = yield* collectFrames(transport)
      yield* transport.send({ type: "control_request", request_id: "req_9_live", request: { subtype: "mcp_status" } })
      const answer = yield* Queue.take(queue)
      expect(answer).toEqual({
        type: "control_response",
        response: { subtype: "success", request_id: "req_9_live", response: { mcpServers: [] } }
      })
      expect(field(yield* Queue.take(queue), "request_id")).toBe("cli-7")
      yield* transport.send({
        type: "control_response",
        response: { subtype: "success", request_id: "cli-7", response: { behavior: "allow" } }
      })
      // A cancel names the request by its live id.
      yield* transport.send({ type: "control_cancel_request", request_id: "req_9_live" })
      yield* transport.endInput
      yield* Fiber.join(fiber)
      expect(yield* transport.exitStatus).toEqual({ exitCode: 0, signal: undefined })
    }))

  it.scoped("an answer to a CLI request must carry the CLI's id", () =>
    Effect.gen(function*() {
      const transport = yield* Recording.replayTransport(remapEntries)
      const { fiber } = yield* collectFrames(transport)
      yield* transport.send({ type: "control_request", request_id: "req_9_live", request: { subtype: "mcp_status" } })
      const error = yield* mismatchOf(transport.send({
        type: "control_response",
        response: { subtype: "success", request_id: "req_9_live", response: { behavior: "allow" } }
      }))
      expect(error.message).toMatch(/^Replay mismatch at entry 3: /)
      expect(error.message).toContain("at $.response.request_id")
      expect(error.message).toContain(`expected: "cli-7"`)
      // The CLI exited on it, its stderr saying why.
      yield* Fiber.join(fiber)
      expect(yield* transport.exitStatus).toEqual({ exitCode: 1, signal: undefined })
      expect(yield* transport.stderrTail).toBe(error.message)
      // Once failed, every send fails the same way.
      expect((yield* mismatchOf(transport.send({ type: "user" }))).message).toBe(error.message)
    }))

  it.scoped("ending the input while the recording expects a frame is a mismatch naming it", () =>
    Effect.gen(function*() {
      const transport = yield* Recording.replayTransport(remapEntries)
      yield* transport.endInput
      yield* transport.frames.pipe(Stream.runDrain)
      expect(yield* transport.exitStatus).toEqual({ exitCode: 1, signal: undefined })
      const stderr = yield* transport.stderrTail
      expect(stderr).toMatch(/^Replay mismatch at entry 0: the code ended the input, but the recording expects/)
      expect(stderr).toContain(`"subtype":"mcp_status"`)
    }))

  it.scoped("a frame sent after the recording ended is a mismatch", () =>
    Effect.gen(function*() {
      const transport = yield* Recording.replayTransport([
        { t: 0, dir: "in", frame: { type: "user" } },
        { t: 1, dir: "out", frame: { type: "result", subtype: "success" } },
        { t: 2, dir: "exit", exitCode: 0, signal: undefined }
      ])
      yield* transport.send({ type: "user" })
      const error = yield* mismatchOf(transport.send({ type: "user", extra: 1 }))
      expect(error.message).toBe(
        "Replay mismatch at entry 3: the recording expects nothing more (the recording has ended), " +
          `but the code sent {"type":"user","extra":1}`
      )
    }))

  it.effect("like a process: a send after the end of input fails; closing the scope ends it with SIGTERM", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const transport = yield* Recording.replayTransport([{ t: 0, dir: "end-input" }]).pipe(Scope.extend(scope))
      yield* transport.endInput
      const error = yield* transport.send({ type: "user" }).pipe(Effect.flip)
      expect(error).toMatchObject({
        reason: "InputClosed",
        description: "Cannot write to the Claude Code CLI: its input was already closed"
      })
      const exit = yield* transport.exitStatus.pipe(Effect.fork)
      yield* Effect.yieldNow()
      expect(exit.unsafePoll()).toBeNull()
      yield* Scope.close(scope, Exit.void)
      expect(yield* Fiber.join(exit)).toEqual({ exitCode: undefined, signal: "SIGTERM" })
    }))

  it.scoped("pace: frames wait for their recorded time (TestClock)", () =>
    Effect.gen(function*() {
      const transport = yield* Recording.replayTransport([
        { t: 0, dir: "out", frame: { type: "system", subtype: "a" } },
        { t: 1000, dir: "out", frame: { type: "system", subtype: "b" } },
        { t: 1500, dir: "exit", exitCode: 0, signal: undefined }
      ], { pace: true })
      const { queue, fiber } = yield* collectFrames(transport)
      expect(field(yield* Queue.take(queue), "subtype")).toBe("a")
      yield* TestClock.adjust("999 millis")
      expect(Option.isNone(yield* Queue.poll(queue))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(field(yield* Queue.take(queue), "subtype")).toBe("b")
      yield* TestClock.adjust("500 millis")
      yield* Fiber.join(fiber)
    }))
})

describe("Recording: recordTransport and files", () => {
  it.scoped("records a FakeCli conversation in order", () =>
    Effect.gen(function*() {
      const { transport } = yield* FakeCli.make()
      const log: Array<Recording.Entry> = []
      const recorded = yield* Recording.recordTransport(transport, (entry) => Effect.sync(() => void log.push(entry)))
      // `undefined` fields never reach the CLI, so they are not recorded either.
      const user = { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null, gone: undefined }
      yield* recorded.send(user)
      const frames = yield* recorded.frames.pipe(Stream.map((f) => f.value), Stream.take(3), Stream.runCollect)
      yield* recorded.endInput
      yield* recorded.endInput
      expect(yield* recorded.exitStatus).toEqual({ exitCode: 0, signal: undefined })
      yield* recorded.exitStatus

      expect(log.map((e) => e.dir)).toEqual(["in", "out", "out", "out", "end-input", "exit"])
      expect(log[0]).toMatchObject({
        dir: "in",
        frame: { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null }
      })
      expect(Object.keys(Object(log[0] !== undefined && "frame" in log[0] ? log[0].frame : {}))).not.toContain("gone")
      expect(log.slice(1, 4).map((e) => ("frame" in e ? e.frame : undefined))).toEqual(Chunk.toArray(frames))
      expect(log[5]).toMatchObject({ dir: "exit", exitCode: 0, signal: undefined })
      expect(log.every((e) => e.t === 0)).toBe(true)
    }))

  it.scoped("what was recorded replays", () =>
    Effect.gen(function*() {
      const log: Array<Recording.Entry> = []
      const recordingLayer = Layer.succeed(
        ClaudeAgent.ClaudeAgent,
        ClaudeAgent.make({
          transport: Layer.scoped(
            Transport,
            Effect.suspend(() =>
              Effect.flatMap(FakeCli.make(), ({ transport }) =>
                Recording.recordTransport(transport, (entry) =>
                  Effect.sync(() => void log.push(entry))))
            )
          )
        })
      )
      const ask = ClaudeAgent.query("hello").pipe(Stream.runCollect, Effect.map(Chunk.toArray))
      const live = yield* ask.pipe(Effect.provide(recordingLayer))
      const replayed = yield* ask.pipe(Effect.provide(Recording.layerReplay(log)))
      expect(replayed).toEqual(live)
    }))

  it.effect("parse reports the line and the field of a broken entry", () =>
    Effect.gen(function*() {
      const broken = (text: string) =>
        Recording.parse(text, "x.jsonl").pipe(
          Effect.flip,
          Effect.tap((e) => expect(e.reason).toBe("Invalid")),
          Effect.map((e) => e.message)
        )
      expect(yield* broken(`{"t":0,"dir":"end-input"}\n\n{"t":1,"dir":"sideways"}\n`)).toBe(
        `Invalid recording x.jsonl:3: \`dir\`: Expected "in" | "out" | "end-input" | "exit", actual "sideways"`
      )
      expect(yield* broken(`{"t":0,"dir":"in"}`)).toBe("Invalid recording x.jsonl:1: `frame`: is missing")
      expect(yield* broken(`{"t":"0","dir":"out","frame":{}}`)).toBe(
        `Invalid recording x.jsonl:1: \`t\`: Expected number, actual "0"`
      )
      expect(yield* broken(`{"t":0,"dir":"end-input"}\n{"t":1,`)).toMatch(/^Invalid recording x\.jsonl:2: .*JSON/)
    }))

  it.effect("exit entries: a missing code or signal is written as null and read back as undefined", () =>
    Effect.gen(function*() {
      const entries = yield* Recording.parse(
        `{"t":1,"dir":"exit","exitCode":null,"signal":"SIGTERM"}\n{"t":2,"dir":"exit","exitCode":3}\n`,
        "x.jsonl"
      )
      expect(entries).toEqual([
        { t: 1, dir: "exit", exitCode: undefined, signal: "SIGTERM" },
        { t: 2, dir: "exit", exitCode: 3, signal: undefined }
      ])
      const first = entries[0]
      expect(first === undefined ? "" : Schema.encodeSync(Schema.parseJson(Recording.Entry))(first)).toBe(
        `{"t":1,"dir":"exit","exitCode":null,"signal":"SIGTERM"}`
      )
    }))

  it.effect("a missing file is reported as not found, with its path", () =>
    Effect.gen(function*() {
      const missing = yield* Recording.load("/nonexistent/recording.jsonl").pipe(
        Effect.provide(NodeContext.layer),
        Effect.flip
      )
      expect(missing._tag).toBe("RecordingError")
      expect(missing.reason).toBe("NotFound")
      expect(missing.path).toBe("/nonexistent/recording.jsonl")
      expect(missing.message).toBe("Cannot read the recording /nonexistent/recording.jsonl: file not found")

      const replay = yield* ClaudeAgent.query("hi").pipe(
        Stream.runDrain,
        Effect.provide(Recording.layerReplayFile("/nonexistent/other.jsonl").pipe(Layer.provide(NodeContext.layer))),
        Effect.flip
      )
      expect(replay.message).toBe("Cannot read the recording /nonexistent/other.jsonl: file not found")
    }))

  it.effect("a path that cannot be read is Unreadable; one that cannot be written kills the recording session with Unwritable", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(`${fs.realpathSync("/tmp")}/recording-`)
      const unreadable = yield* Recording.load(dir).pipe(Effect.provide(NodeContext.layer), Effect.flip)
      expect(unreadable).toMatchObject({ _tag: "RecordingError", reason: "Unreadable", path: dir })
      const exit = yield* ClaudeAgent.query("hi").pipe(
        Stream.runDrain,
        Effect.provide(Recording.layerRecord(`${dir}/missing/recording.jsonl`).pipe(Layer.provide(NodeContext.layer))),
        Effect.exit
      )
      const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
      expect(Option.getOrUndefined(defect)).toMatchObject({
        _tag: "RecordingError",
        reason: "Unwritable",
        path: `${dir}/missing/recording.jsonl`
      })
      fs.rmSync(dir, { recursive: true })
    }))

  it("the fixture is a committed recording of the real CLI", () => {
    const text = fs.readFileSync(FIXTURE, "utf8")
    expect(text).toContain(`"claude_code_version":"2.1.330"`)
    expect(text).not.toMatch(/127\.0\.0\.1:\d+/)
  })
})
