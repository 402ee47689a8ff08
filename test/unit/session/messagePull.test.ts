// The message pull's state machine over plain chunks: no CLI, no control channel.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Option, Queue, Stream, TestClock } from "effect"
import * as Initialize from "../../../src/internal/session/initialize.js"
import * as MessagePull from "../../../src/internal/session/messagePull.js"
import { ControlError } from "../../../src/SdkError.js"
import type { StreamError } from "../../../src/services/ControlChannel.js"

// A handshake already answered.
const answered = Effect.tap(Initialize.handshake<void>(Effect.void), (init) => init.settle(Effect.void))

const session = "00000000-0000-4000-8000-000000000001"
let counter = 0
const uuid = () => `00000000-0000-4000-8000-${String(++counter).padStart(12, "0")}`

const assistant = (text: string) => ({
  type: "assistant",
  message: {
    id: `msg_${uuid()}`,
    type: "message",
    role: "assistant",
    model: "claude-fake-1",
    content: [{ type: "text", text }],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 }
  },
  parent_tool_use_id: null,
  session_id: session,
  uuid: uuid()
})

const result = (text: string) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  duration_ms: 12,
  duration_api_ms: 10,
  num_turns: 1,
  result: text,
  stop_reason: "end_turn",
  session_id: session,
  total_cost_usd: 0.001,
  usage: { input_tokens: 10, output_tokens: 5 },
  modelUsage: {},
  permission_denials: [],
  terminal_reason: "completed",
  uuid: uuid()
})

const commandsChanged = (names: ReadonlyArray<string>) => ({
  type: "system",
  subtype: "commands_changed",
  commands: names.map((name) => ({ name, description: `the ${name} command` })),
  session_id: session,
  uuid: uuid()
})

const lifecycle = (state: string) => ({
  type: "command_lifecycle",
  command_uuid: "11111111-1111-4111-8111-111111111111",
  state,
  session_id: session,
  uuid: uuid()
})

// A source whose chunks are exactly those offered, in order; `end` ends it.
const source = Effect.gen(function*() {
  const chunks = yield* Queue.unbounded<Option.Option<ReadonlyArray<unknown>>>()
  const frames: Stream.Stream<unknown, StreamError> = Stream.repeatEffectChunkOption(
    Effect.flatMap(
      Queue.take(chunks),
      Option.match({
        onNone: () => Effect.fail(Option.none()),
        onSome: (chunk) => Effect.succeed(Chunk.fromIterable(chunk))
      })
    )
  )
  return {
    frames,
    offer: (...chunk: ReadonlyArray<unknown>) => Queue.offer(chunks, Option.some(chunk)),
    end: Queue.offer(chunks, Option.none())
  }
})

// What a message is, as the tests tell messages apart.
const label = (m: unknown): string => {
  const record = m as { type: string; result?: string; message?: { content: ReadonlyArray<{ text: string }> } }
  if (record.type === "result") return `result:${record.result}`
  if (record.type === "assistant") return `assistant:${record.message?.content[0]?.text}`
  if (record.type === "command_lifecycle") return `lifecycle:${(m as { state: string }).state}`
  return record.type
}
const labels = <E>(stream: Stream.Stream<unknown, E>) =>
  Effect.map(Stream.runCollect(stream), (chunk) => Chunk.toReadonlyArray(chunk).map(label))

const initError = new ControlError({ subtype: "initialize", requestId: "1", error: "no answer" })

describe("messagePull", () => {
  it.scoped("a turn's stream stops at its result; what followed in the chunk waits for the next consumer", () =>
    Effect.gen(function*() {
      const { frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      yield* offer(assistant("a1"), result("r1"), assistant("a2"), result("r2"), assistant("a3"))
      expect(yield* labels(pull.receiveResponse)).toEqual(["assistant:a1", "result:r1"])
      expect(yield* labels(pull.receiveResponse)).toEqual(["assistant:a2", "result:r2"])
      yield* offer(result("r3"))
      expect(yield* labels(pull.receiveResponse)).toEqual(["assistant:a3", "result:r3"])
    }))

  it.scoped("messages runs across results until the source ends", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      yield* offer(assistant("a1"), result("r1"), assistant("a2"))
      yield* offer(result("r2"))
      yield* end
      expect(yield* labels(pull.messages)).toEqual(["assistant:a1", "result:r1", "assistant:a2", "result:r2"])
    }))

  it.scoped("a frame that fails decoding fails the pull after the frames before it, then the stream goes on", () =>
    Effect.gen(function*() {
      const { frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      yield* offer(assistant("a1"), 42, assistant("a2"), result("r1"))
      const seen: Array<string> = []
      const error = yield* pull.receiveResponse.pipe(
        Stream.runForEach((m) => Effect.sync(() => seen.push(label(m)))),
        Effect.flip
      )
      expect(seen).toEqual(["assistant:a1"])
      expect(error._tag).toBe("MessageParseError")
      if (error._tag === "MessageParseError") expect(error.raw).toBe(42)
      expect(yield* labels(pull.receiveResponse)).toEqual(["assistant:a2", "result:r1"])
    }))

  it.scoped("a bad frame first in its chunk fails the pull with nothing delivered", () =>
    Effect.gen(function*() {
      const { frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      yield* offer("not an object", result("r1"))
      const error = yield* Effect.flip(labels(pull.receiveResponse))
      expect(error._tag).toBe("MessageParseError")
      expect(yield* labels(pull.receiveResponse)).toEqual(["result:r1"])
    }))

  it.scoped("a failed initialize stops the CLI: a waiting pull ends with its failure, and every later pull does", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      // `initialize` unanswered until its deadline: the pull waits on a source that stays silent.
      const init = yield* Initialize.handshake<void>(end)
      yield* Effect.forkScoped(Effect.zipRight(Effect.sleep("60 seconds"), init.settle(Effect.fail(initError))))
      const pull = yield* MessagePull.make(frames, init)
      const waiting = yield* Effect.fork(Effect.flip(labels(pull.receiveResponse)))
      yield* TestClock.adjust("59 seconds")
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(waiting)).toBe(initError)
      yield* offer(assistant("late"), result("r"))
      expect(yield* Effect.flip(labels(pull.messages))).toBe(initError)
    }))

  it.scoped("frames that come before initialize is answered are delivered", () =>
    Effect.gen(function*() {
      const { frames, offer } = yield* source
      const init = yield* Initialize.handshake<void>(Effect.void)
      const pull = yield* MessagePull.make(frames, init)
      yield* offer(assistant("early"), result("r1"))
      expect(yield* labels(pull.receiveResponse)).toEqual(["assistant:early", "result:r1"])
      yield* init.settle(Effect.void)
      yield* offer(result("r2"))
      expect(yield* labels(pull.receiveResponse)).toEqual(["result:r2"])
    }))

  it.scoped("once initialize is answered, its later failure cannot happen and pulls run on the source alone", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      yield* offer(result("r1"))
      yield* end
      expect(yield* labels(pull.messages)).toEqual(["result:r1"])
    }))

  it.scoped("system/commands_changed replaces the commands, once it has been read", () =>
    Effect.gen(function*() {
      const { frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      expect(pull.latestCommands()).toBeUndefined()
      yield* offer(commandsChanged(["review"]), result("r1"), commandsChanged(["review", "deploy"]))
      yield* Stream.runDrain(pull.receiveResponse)
      expect(pull.latestCommands()?.map((c) => c.name)).toEqual(["review"])
      yield* offer(result("r2"))
      yield* Stream.runDrain(pull.receiveResponse)
      expect(pull.latestCommands()?.map((c) => c.name)).toEqual(["review", "deploy"])
    }))

  it.scoped("command_lifecycle frames are left out by default, a chunk of nothing else included", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered)
      yield* offer(lifecycle("queued"), lifecycle("started"))
      yield* offer(assistant("a1"), lifecycle("cancelled"), result("r1"), lifecycle("completed"))
      expect(yield* labels(pull.receiveResponse)).toEqual(["assistant:a1", "result:r1"])
      yield* offer(lifecycle("started"), result("r2"))
      yield* end
      expect(yield* labels(pull.messages)).toEqual(["result:r2"])
    }))

  it.scoped("with includeCommandLifecycle they are delivered where they came", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered, {
        includeCommandLifecycle: true
      })
      yield* offer(lifecycle("queued"), lifecycle("started"))
      yield* offer(assistant("a1"), result("r1"), lifecycle("completed"))
      expect(yield* labels(pull.receiveResponse)).toEqual([
        "lifecycle:queued",
        "lifecycle:started",
        "assistant:a1",
        "result:r1"
      ])
      yield* end
      expect(yield* labels(pull.messages)).toEqual(["lifecycle:completed"])
    }))

  it.scoped("run states the CLI marks sdk_host_only are left out; unmarked ones are delivered", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered, {
        includeCommandLifecycle: true
      })
      const state = (value: string, hostOnly?: boolean) => ({
        type: "system",
        subtype: "session_state_changed",
        state: value,
        ...(hostOnly === undefined ? {} : { sdk_host_only: hostOnly }),
        session_id: session
      })
      yield* offer(
        state("running", true),
        assistant("a1"),
        state("requires_action", false),
        result("r1"),
        state("idle")
      )
      yield* end
      expect(yield* labels(pull.messages)).toEqual(["assistant:a1", "system", "result:r1", "system"])
    }))

  it.scoped("with includeSessionState the marked run states are delivered too", () =>
    Effect.gen(function*() {
      const { end, frames, offer } = yield* source
      const pull = yield* MessagePull.make(frames, yield* answered, {
        includeSessionState: true
      })
      const running = {
        type: "system",
        subtype: "session_state_changed",
        state: "running",
        sdk_host_only: true,
        session_id: session
      }
      yield* offer(running, lifecycle("started"), result("r1"))
      yield* end
      expect(yield* labels(pull.messages)).toEqual(["system", "result:r1"])
    }))
})
