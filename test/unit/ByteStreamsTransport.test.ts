// `Transport.fromByteStreams` over in-memory byte streams: a session with the fake CLI behind
// bytes cut anywhere, the reader's rules (line limit, split UTF-8), whole frames from concurrent
// senders, stderr drained while stdout is idle, the remote side's exit, and `close` run once.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Option, Queue, Scope, Sink, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import { READ_AHEAD_BYTES } from "../../src/internal/process/stdout.js"
import * as Message from "../../src/schema/Message.js"
import { type ByteStreams, type ByteWriter, Transport } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const line = (value: unknown) => JSON.stringify(value) + "\n"

// Bytes cut every `size` bytes: lines and multi-byte characters split across chunks.
const cut = (bytes: Uint8Array, size: number): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size))
  return out
}

// The fake CLI seen from its own side, as byte streams: what the SDK writes to stdin is split
// into lines and handed to the fake as the CLI would read them; the fake's stdout frames come
// back as bytes cut every `chunkSize` bytes.
const fakeOverBytes = (behaviour: FakeCli.Behaviour, chunkSize: number) =>
  Effect.gen(function*() {
    const { cli, transport: fake } = yield* FakeCli.make(behaviour)
    let partial = ""
    const stdin: ByteWriter = {
      write: (bytes) =>
        Effect.suspend(() => {
          const lines = (partial + decoder.decode(bytes, { stream: true })).split("\n")
          partial = lines.pop() ?? ""
          return Effect.forEach(lines, (l) => fake.send(JSON.parse(l)), { discard: true })
        }),
      end: fake.endInput
    }
    const streams: ByteStreams = {
      stdin,
      stdout: fake.frames.pipe(Stream.mapConcat((frame) => cut(encoder.encode(line(frame.value)), chunkSize))),
      exit: fake.exitStatus
    }
    return { cli, streams }
  })

const failure = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ?
    Option.getOrUndefined(
      Exit.causeOption(exit).pipe(Option.flatMap((c) => c._tag === "Fail" ? Option.some(c.error) : Option.none()))
    ) :
    undefined

describe("Transport.fromByteStreams", () => {
  it.effect("a conversation with the fake CLI over byte streams cut every 7 bytes", () =>
    Effect.gen(function*() {
      const handle = yield* Deferred.make<FakeCli.FakeCliHandle>()
      const transport = Transport.layerByteStreams(
        fakeOverBytes({}, 7).pipe(Effect.tap(({ cli }) => Deferred.succeed(handle, cli)), Effect.map((f) => f.streams))
      )
      const agent = ClaudeAgent.make({ transport })
      const messages = yield* agent.query("héllo wörld 😀 日本").pipe(Stream.runCollect, Effect.scoped)
      const result = Chunk.findLast(messages, Message.isResult)
      expect(Option.map(result, (r) => r.subtype)).toStrictEqual(Option.some("success"))
      expect(Option.map(result, (r) => (r.subtype === "success" ? r.result : ""))).toStrictEqual(
        Option.some("echo: héllo wörld 😀 日本")
      )
      // The fake read the SDK's frames whole: the initialize request and the prompt.
      const sent = yield* (yield* Deferred.await(handle)).sent
      expect(sent.map((f) => f.type)).toEqual(expect.arrayContaining(["control_request", "user"]))
    }))

  it.scoped("a 2 MB line fails the frames with CLIJSONDecodeError (LineTooLong) after the frames before it", () =>
    Effect.gen(function*() {
      const long = encoder.encode(line({ a: 1 }) + line({ pad: "x".repeat(2 * 1024 * 1024) }) + line({ b: 2 }))
      const transport = yield* Transport.fromByteStreams({
        stdin: Sink.drain,
        stdout: Stream.fromIterable(cut(long, 64 * 1024)).pipe(Stream.rechunk(1)),
        exit: Effect.never,
        closeGracePeriod: 0
      })
      const seen: Array<unknown> = []
      const exit = yield* transport.frames.pipe(
        Stream.runForEach((frame) => Effect.sync(() => seen.push(frame.value))),
        Effect.exit
      )
      expect(seen).toEqual([{ a: 1 }])
      expect(failure(exit)).toMatchObject({ _tag: "CLIJSONDecodeError", reason: "LineTooLong", limit: 1024 * 1024 })
    }))

  it.scoped("a multi-byte character split across chunks survives; \\r\\n counts as \\n", () =>
    Effect.gen(function*() {
      const text = "{\"t\":\"é€😀日本\"}\r\n" + line({ n: 2 })
      const transport = yield* Transport.fromByteStreams({
        stdin: Sink.drain,
        stdout: Stream.fromIterable(cut(encoder.encode(text), 1)),
        exit: Effect.succeed(0)
      })
      const frames = yield* Stream.runCollect(transport.frames)
      expect(Chunk.toArray(frames).map((f) => f.value)).toEqual([{ t: "é€😀日本" }, { n: 2 }])
      expect(Chunk.toArray(frames).map((f) => f.bytes)).toEqual([encoder.encode(text).length - 8, 8])
    }))

  it.scoped("concurrent sends reach a slow writer whole, one write at a time, every frame once", () =>
    Effect.gen(function*() {
      const written: Array<Uint8Array> = []
      const ended = yield* Deferred.make<void>()
      let inFlight = 0
      let overlapped = false
      const stdin: ByteWriter = {
        // Each write takes several steps, so a second writer would overlap it.
        write: (bytes) =>
          Effect.gen(function*() {
            inFlight++
            if (inFlight > 1) overlapped = true
            for (const piece of cut(bytes, 5)) {
              written.push(piece)
              yield* Effect.yieldNow()
            }
            inFlight--
          }),
        end: Deferred.succeed(ended, undefined)
      }
      const transport = yield* Transport.fromByteStreams({
        stdin,
        stdout: Stream.never,
        exit: Effect.never,
        closeGracePeriod: 0
      })
      const frames = Array.from({ length: 200 }, (_, i) => ({ i, text: "ü".repeat(i * 37 % 500) }))
      yield* Effect.forEach(frames, transport.send, { concurrency: "unbounded", discard: true })
      yield* transport.endInput
      yield* Deferred.await(ended)
      const joined = new Uint8Array(written.reduce((n, b) => n + b.length, 0))
      written.reduce((at, b) => (joined.set(b, at), at + b.length), 0)
      const lines = decoder.decode(joined).split("\n")
      expect(lines.pop()).toBe("")
      expect(lines.map((l) => JSON.parse(l)).sort((a, b) => a.i - b.i)).toEqual(frames)
      expect(overlapped).toBe(false)
      // After the end of input a send fails.
      expect(yield* Effect.flip(transport.send({ late: true }))).toMatchObject({ reason: "InputClosed" })
    }))

  it.scoped("a Sink as stdin gets every frame in order and its input ends with the transport's", () =>
    Effect.gen(function*() {
      const collected = yield* Deferred.make<Chunk.Chunk<Uint8Array>>()
      const sink = Sink.collectAll<Uint8Array>().pipe(Sink.mapEffect((all) => Deferred.succeed(collected, all)))
      const transport = yield* Transport.fromByteStreams({
        stdin: sink,
        stdout: Stream.never,
        exit: Effect.never,
        closeGracePeriod: 0
      })
      for (let i = 0; i < 50; i++) yield* transport.send({ i })
      yield* transport.endInput
      const bytes = Chunk.toArray(yield* Deferred.await(collected))
      const text = bytes.map((b) => decoder.decode(b)).join("")
      expect(text).toBe(Array.from({ length: 50 }, (_, i) => line({ i })).join(""))
    }))

  it.scoped("stderr is drained while stdout is idle: a CLI blocked on a full stderr pipe still gets to stdout", () =>
    Effect.gen(function*() {
      // Pipes of four chunks: the CLI's writes wait while a pipe is full.
      const stderrPipe = yield* Queue.bounded<Uint8Array | null>(4)
      const stdoutPipe = yield* Queue.bounded<Uint8Array | null>(4)
      const lines: Array<string> = []
      const transport = yield* Transport.fromByteStreams({
        stdin: Sink.drain,
        stdout: Stream.fromQueue(stdoutPipe).pipe(Stream.takeWhile((b) => b !== null)),
        stderr: Stream.fromQueue(stderrPipe).pipe(Stream.takeWhile((b) => b !== null)),
        exit: Effect.never,
        closeGracePeriod: 0,
        onStderr: (l) => void lines.push(l)
      })
      // The CLI writes 2000 stderr lines, and only then its one stdout frame.
      yield* Effect.forkScoped(Effect.gen(function*() {
        for (let i = 0; i < 2000; i++) yield* Queue.offer(stderrPipe, encoder.encode(`warning ${i}\n`))
        yield* Queue.offer(stdoutPipe, encoder.encode(line({ type: "done" })))
        yield* Queue.offer(stdoutPipe, null)
      }))
      const frames = yield* Stream.runCollect(transport.frames)
      expect(Chunk.toArray(frames).map((f) => f.value)).toEqual([{ type: "done" }])
      expect(lines).toHaveLength(2000)
      expect(yield* transport.stderrTail).toMatch(/warning 1999$/)
    }))

  it.scoped("a reader that stops taking stops the pulling of stdout after the read-ahead", () =>
    Effect.gen(function*() {
      const chunk = encoder.encode(line({ pad: "x".repeat(1000) }).repeat(16))
      let pulled = 0
      const transport = yield* Transport.fromByteStreams({
        stdin: Sink.drain,
        stdout: Stream.repeatValue(chunk).pipe(Stream.tap(() => Effect.sync(() => pulled++)), Stream.take(1000)),
        exit: Effect.never,
        closeGracePeriod: 0
      })
      yield* Effect.yieldNow().pipe(Effect.repeatN(200))
      const held = pulled
      expect(held * chunk.length).toBeGreaterThanOrEqual(READ_AHEAD_BYTES)
      expect(held * chunk.length).toBeLessThan(READ_AHEAD_BYTES + 2 * chunk.length)
      // Taking resumes it; nothing is lost.
      const frames = yield* Stream.runCount(transport.frames)
      expect(frames).toBe(1000 * 16)
    }))

  it.effect("the remote side exiting mid-turn fails the query with ProcessError after what it wrote", () =>
    Effect.gen(function*() {
      const behaviour: FakeCli.Behaviour = {
        onUserMessage: (_, cli) =>
          Effect.zipRight(
            Effect.forEach([cli.frames.systemInit(), cli.frames.assistantText("half")], cli.emit, { discard: true }),
            Effect.zipRight(cli.stderr("out of memory"), cli.exit({ exitCode: 137 }))
          )
      }
      const agent = ClaudeAgent.make({
        transport: Transport.layerByteStreams(Effect.map(fakeOverBytes(behaviour, 13), (f) => f.streams))
      })
      const seen: Array<Message.Message> = []
      const exit = yield* agent.query("go").pipe(
        Stream.runForEach((m) => Effect.sync(() => seen.push(m))),
        Effect.scoped,
        Effect.exit
      )
      expect(seen.some(Message.isAssistant)).toBe(true)
      expect(failure(exit)).toMatchObject({ _tag: "ProcessError", exitCode: 137 })
    }))

  it.scoped("a lost connection (the exit signal fails) ends the frames with CLIConnectionError", () =>
    Effect.gen(function*() {
      const lost = yield* Deferred.make<never, Error>()
      const transport = yield* Transport.fromByteStreams({
        stdin: Sink.drain,
        stdout: Stream.concat(Stream.make(encoder.encode(line({ a: 1 }))), Stream.never),
        exit: Deferred.await(lost)
      })
      const fiber = yield* Effect.fork(Stream.runCollect(transport.frames))
      yield* Deferred.fail(lost, new Error("connection reset by peer"))
      const exit = yield* Fiber.await(fiber)
      expect(failure(exit)).toMatchObject({ _tag: "CLIConnectionError", reason: "ReadFailed" })
      expect(yield* transport.exitStatus).toEqual({ exitCode: undefined, signal: undefined })
      expect(yield* transport.stderrTail).toContain("connection reset by peer")
    }))

  it.effect("closing the scope ends stdin, then runs close once, even after terminate ran it", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const run = (terminate: boolean) =>
        Effect.gen(function*() {
          const exited = yield* Deferred.make<number>()
          const scope = yield* Scope.make()
          const transport = yield* Transport.fromByteStreams({
            stdin: { write: () => Effect.void, end: Effect.sync(() => events.push("end of input")) },
            stdout: Stream.never,
            exit: Deferred.await(exited),
            close: Effect.sync(() => events.push("close")).pipe(Effect.zipRight(Deferred.succeed(exited, 143))),
            closeGracePeriod: "10 millis"
          }).pipe(Scope.extend(scope))
          if (terminate) {
            yield* transport.terminate
            expect(yield* transport.exitStatus).toEqual({ exitCode: 143, signal: undefined })
          }
          yield* Scope.close(scope, Exit.void)
        })
      yield* run(false)
      expect(events).toEqual(["end of input", "close"])
      events.length = 0
      yield* run(true)
      expect(events.filter((e) => e === "close")).toHaveLength(1)
      expect(events[0]).toBe("close")
    }))

  it.scoped("a failing stdout stream fails the frames with ReadFailed after the frames before it", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.fromByteStreams({
        stdin: Sink.drain,
        stdout: Stream.concat(Stream.make(encoder.encode(line({ a: 1 }))), Stream.fail(new Error("channel closed"))),
        exit: Effect.never,
        closeGracePeriod: 0
      })
      const seen: Array<unknown> = []
      const exit = yield* transport.frames.pipe(
        Stream.runForEach((frame) => Effect.sync(() => seen.push(frame.value))),
        Effect.exit
      )
      expect(seen).toEqual([{ a: 1 }])
      expect(failure(exit)).toMatchObject({ _tag: "CLIConnectionError", reason: "ReadFailed" })
      expect(failure(exit)?.message).toContain("channel closed")
    }))

  it.scoped("without a close, terminate ends the input and waits for the exit", () =>
    Effect.gen(function*() {
      const exited = yield* Deferred.make<number>()
      const transport = yield* Transport.fromByteStreams({
        stdin: { write: () => Effect.void, end: Deferred.succeed(exited, 0) },
        stdout: Stream.never,
        exit: Deferred.await(exited)
      })
      yield* transport.terminate
      expect(yield* transport.exitStatus).toEqual({ exitCode: 0, signal: undefined })
      expect(yield* Effect.flip(transport.send({ a: 1 }))).toMatchObject({ reason: "InputClosed" })
    }))

  it.scoped("writes after a failed sink fail with WriteFailed", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.fromByteStreams({
        stdin: { write: () => Effect.fail(new Error("EPIPE")) },
        stdout: Stream.never,
        exit: Effect.never,
        closeGracePeriod: 0
      })
      yield* transport.send({ a: 1 })
      yield* Effect.yieldNow().pipe(Effect.repeatN(10))
      const error = yield* Effect.flip(transport.send({ a: 2 }))
      expect(error).toMatchObject({ _tag: "CLIConnectionError", reason: "WriteFailed" })
      expect(error.message).toContain("EPIPE")
    }))
})
