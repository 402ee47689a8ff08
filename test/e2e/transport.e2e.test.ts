// The subprocess Transport against a real child process (an echo stub, not the CLI): concurrent
// senders never interleave bytes on stdin, and a child flooding stderr cannot deadlock it.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Logger, Stream } from "effect"
import { fileURLToPath } from "node:url"
import { Transport, type SubprocessConfig } from "../../src/services/Transport.js"

const echo = fileURLToPath(new URL("../fixtures/echo-cli.mjs", import.meta.url))

const config = (env: Record<string, string> = {}): SubprocessConfig => ({
  command: echo,
  args: [],
  env: { PATH: process.env.PATH ?? "", ...env },
  maxBufferSize: 1024 * 1024,
  closeGracePeriod: "2 seconds"
})

describe("e2e: subprocess Transport", () => {
  it.scopedLive("concurrent senders of large frames never interleave on stdin", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.makeSubprocess(config())
      const n = 64
      const payload = "x".repeat(200 * 1024) + "\u2028é€😀"
      const received = yield* Effect.fork(
        transport.frames.pipe(Stream.map((f) => f.value), Stream.take(n), Stream.runCollect)
      )
      yield* Effect.forEach(
        Array.from({ length: n }, (_, i) => i),
        (i) => transport.send({ type: "probe", id: i, payload }),
        { concurrency: "unbounded", discard: true }
      )
      const frames = Chunk.toArray(yield* Fiber.join(received))
      expect(frames).toHaveLength(n)
      const ids = frames.map((f) => (typeof f === "object" && f !== null && "id" in f ? f.id : "corrupt"))
      expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: n }, (_, i) => i))
      for (const f of frames) {
        expect(typeof f === "object" && f !== null && "payload" in f ? f.payload : undefined).toBe(payload)
      }
      yield* transport.endInput
      expect((yield* transport.exitStatus).exitCode).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("after endInput a send is a CLIConnectionError; what was sent before is delivered", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.makeSubprocess(config())
      yield* transport.send({ type: "probe", id: 1 })
      yield* transport.endInput
      const error = yield* Effect.flip(transport.send({ type: "probe", id: 2 }))
      expect(error).toMatchObject({ _tag: "CLIConnectionError", reason: "InputClosed" })
      expect(error.message).toContain("its input was already closed")
      const frames = yield* transport.frames.pipe(Stream.map((f) => f.value), Stream.runCollect)
      expect(Chunk.toArray(frames)).toEqual([{ type: "probe", id: 1 }])
      expect((yield* transport.exitStatus).exitCode).toBe(0)
    }))

  it.scopedLive("stderr streams the child's lines to a subscriber and ends when the child exits", () =>
    Effect.gen(function*() {
      // Each stdin line comes back on stderr; EOF ends the child.
      const script =
        "require(\"readline\").createInterface({ input: process.stdin }).on(\"line\", (l) => process.stderr.write(\"got \" + l + \"\\n\"))"
      const transport = yield* Transport.makeSubprocess({
        ...config(),
        command: process.execPath,
        args: ["-e", script]
      })
      const lines = yield* Effect.fork(Stream.runCollect(transport.stderr))
      // The subscriber runs up to its first wait before this fiber goes on.
      yield* Effect.yieldNow()
      yield* transport.send({ n: 1 })
      yield* transport.send({ n: 2 })
      yield* transport.endInput
      expect(Chunk.toArray(yield* Fiber.join(lines))).toEqual(["got {\"n\":1}", "got {\"n\":2}"])
      // A subscriber after the end gets nothing, and ends.
      expect(Chunk.toArray(yield* Stream.runCollect(transport.stderr))).toEqual([])
      expect(yield* transport.stderrTail).toBe("got {\"n\":1}\ngot {\"n\":2}")
    }))

  it.scopedLive("a child that exits at once: its exit status, the end of its frames, its last stderr", () =>
    Effect.gen(function*() {
      const script = "process.stdout.write(\"{\\\"last\\\":1}\\n\"); process.stderr.write(\"bye\"); process.exit(3)"
      const transport = yield* Transport.makeSubprocess({
        ...config(),
        command: process.execPath,
        args: ["-e", script]
      })
      const frames = yield* transport.frames.pipe(Stream.map((f) => f.value), Stream.runCollect)
      expect(Chunk.toArray(frames)).toEqual([{ last: 1 }])
      expect(yield* transport.exitStatus).toEqual({ exitCode: 3, signal: undefined })
      // Writing to a pipe nobody reads any more: a typed failure (EPIPE), never an uncaught error.
      const error = yield* Effect.flip(transport.send({ late: true }).pipe(Effect.repeat({ until: () => false })))
      expect(error).toMatchObject({ _tag: "CLIConnectionError" })
      expect(["InputClosed", "WriteFailed"]).toContain(error.reason)
      // stderr may end after the exit: its stream ends with it, and then the tail is complete.
      yield* Stream.runDrain(transport.stderr)
      expect(yield* transport.stderrTail).toBe("bye")
    }))

  it.scopedLive("a missing working directory and a missing command are told apart (Node reports both as ENOENT)", () =>
    Effect.gen(function*() {
      const noDir = yield* Effect.flip(
        Transport.makeSubprocess({ ...config(), cwd: "/nonexistent/effect-claude-agent" })
      )
      expect(noDir).toMatchObject({ _tag: "CLIConnectionError", reason: "SpawnFailed" })
      expect(noDir.message).toContain("The working directory /nonexistent/effect-claude-agent is not accessible")
      const noCommand = yield* Effect.flip(Transport.makeSubprocess({ ...config(), command: "/nonexistent/claude" }))
      expect(noCommand._tag).toBe("CLINotFoundError")
    }))

  it.scopedLive("a child that floods stderr (8 MiB) is drained: stdout keeps flowing, the tail is kept", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const floodDone = yield* Deferred.make<void>()
      const transport = yield* Transport.makeSubprocess({
        ...config({ FLOOD_STDERR_MB: "8" }),
        onStderr: (line) => {
          lines.push(line)
          if (line === "stderr flood done") Deferred.unsafeDone(floodDone, Effect.void)
        }
      })
      yield* transport.send({ type: "ping" })
      const [frame] = Chunk.toArray(
        yield* transport.frames.pipe(Stream.map((f) => f.value), Stream.take(1), Stream.runCollect)
      )
      expect(frame).toEqual({ type: "ping" })
      yield* Deferred.await(floodDone)
      expect(lines.length).toBe(8 * 1024 + 1)
      expect(yield* transport.stderrTail).toContain("stderr flood done")
      expect((yield* transport.stderrTail).length).toBeLessThanOrEqual(2048)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a cwd that is a file is a CLIConnectionError naming it, not a defect", () =>
    Effect.gen(function*() {
      const error = yield* Transport.makeSubprocess({ ...config(), cwd: echo }).pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "CLIConnectionError", reason: "SpawnFailed" })
      expect(error.message).toContain(echo)
      expect(error.message).toContain("not a directory")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a stderr callback that throws is reported once as a warning, and stderr is still drained", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push([message].flat().map(String).join(" "))
      })
      let calls = 0
      const transport = yield* Transport.makeSubprocess({
        ...config({ FLOOD_STDERR_MB: "1" }),
        onStderr: () => {
          calls++
          throw new Error("callback bug")
        }
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      // The child answers on stdout only after its whole stderr flood was read.
      yield* transport.send({ type: "probe" })
      const echoed = yield* transport.frames.pipe(Stream.map((f) => f.value), Stream.take(1), Stream.runCollect)
      expect(Chunk.size(echoed)).toBe(1)
      expect(calls).toBeGreaterThan(1000)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("callback bug")
    }).pipe(Effect.provide(NodeContext.layer)))
})
