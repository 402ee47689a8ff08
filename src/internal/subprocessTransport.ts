/**
 * The subprocess `Transport`: the real CLI started with `node:child_process` (Node, Bun and Deno
 * all provide it), its pipes driven by their own events.
 *
 * Why not `@effect/platform`'s `Command`: every frame went through a writer fiber and the
 * platform's stdin `Sink` (a fiber wake-up and a channel step per write, waiting for the write's
 * callback), every read through the platform's `Readable` stream (a channel step and a pull per
 * read), and its start ran a `FileSystem.access` of the working directory, a fiber for the exit
 * code and a stream per pipe. Measured over the bench's fake CLI, dropping it took a quarter off a
 * hook round trip's CPU and a fifth off a session's set-up (README, Performance, sixth round). Here:
 * - stdout's chunks are kept as they arrive and split and parsed when the reader takes them, all
 *   at once; stdout is paused when the reader is not waiting and `READ_AHEAD_BYTES` are pending
 *   (so a reader that stops pulling — a full message queue — stops the reading, as before);
 * - `send` writes on the caller's fiber (one `write` per frame, in call order, never interleaved)
 *   and waits only when the pipe asks it to (`drain`);
 * - stderr is always drained, whatever its subscribers do: a CLI blocked on a full stderr pipe
 *   stops writing stdout too.
 *
 * The stop sequence runs when the scope closes: end stdin, wait, SIGTERM to the process group,
 * wait, SIGKILL. The CLI is started in a process group of its own (not on Windows) so that what it
 * started goes with it.
 *
 * @internal
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { accessSync } from "node:fs"
import type { Readable, Writable } from "node:stream"
import { Cause, Chunk, Deferred, Duration, Effect, Exit, Option, Predicate, PubSub, Runtime, Stream } from "effect"
import { CLIConnectionError, CLIJSONDecodeError, CLINotFoundError } from "../SdkError.js"
import type { ExitStatus, Frame, ReadError, SubprocessConfig, TransportShape } from "../services/Transport.js"
import * as Defaults from "./defaults.js"
import { runDetached } from "./detached.js"
import * as Framing from "./framing.js"
import * as Orphans from "./orphans.js"
import { StderrTail } from "./stderr.js"

// Parsed frames held for a reader that is not taking them before stdout is paused. Node's own
// buffer (64 KiB) and the pipe's come on top; a line longer than this still completes (it is
// bounded by `maxBufferSize`).
export const READ_AHEAD_BYTES = 1024 * 1024
const STDERR_SUBSCRIBER_BUFFER = 1024
const isWindows = process.platform === "win32"

const messageOf = (u: unknown): string =>
  Predicate.hasProperty(u, "message") && typeof u.message === "string" ? u.message : String(u)

const codeOf = (u: unknown): string | undefined =>
  Predicate.hasProperty(u, "code") && typeof u.code === "string" ? u.code : undefined

const accessible = (dir: string): string | undefined => {
  try {
    accessSync(dir)
    return undefined
  } catch (error) {
    return messageOf(error)
  }
}

// Node reports a missing working directory as ENOENT of the command itself: the directory is
// checked only then, off the path of every successful start.
const startError = (config: SubprocessConfig, error: unknown): CLINotFoundError | CLIConnectionError => {
  const code = codeOf(error)
  if (code === "ENOENT" && config.cwd !== undefined) {
    const problem = accessible(config.cwd)
    if (problem !== undefined) {
      return new CLIConnectionError({
        reason: `The working directory ${config.cwd} is not accessible: ${problem}`,
        cause: error
      })
    }
  }
  if (code === "ENOENT") return new CLINotFoundError({ searched: [config.command], reason: messageOf(error) })
  if (code === "ENOTDIR" && config.cwd !== undefined) {
    return new CLIConnectionError({
      reason: `The working directory ${config.cwd} is not a directory (ENOTDIR): set \`cwd\` to a directory`,
      cause: error
    })
  }
  return new CLIConnectionError({
    reason: `Could not start ${config.command}${config.cwd === undefined ? "" : ` in ${config.cwd}`}: ${
      code ?? messageOf(error)
    }`,
    cause: error
  })
}

type Pull = Effect.Effect<Chunk.Chunk<Frame>, Option.Option<ReadError>>

/**
 * stdout for one reader: the chunks as they arrive, split and parsed when the reader takes them.
 *
 * Chunks waiting here are bytes outside the JavaScript heap; parsed messages (several times the
 * size of their bytes) are made only when the reader is ready for them, so they never wait for a
 * busy reader, where they would outlive young-generation collections.
 *
 * @internal
 */
export class StdoutFrames {
  private chunks: Array<Uint8Array> = []
  private bufferedBytes = 0
  private failure: ReadError | undefined
  // Whether `failure` has been handed to the reader (the frames parsed before it go first).
  private failed = false
  private ended = false
  private paused = false
  private waiter: ((next: Pull) => void) | undefined
  private readonly splitter: Framing.LineSplitter

  constructor(private readonly stdout: Readable, maxBytes: number) {
    this.splitter = new Framing.LineSplitter(maxBytes)
    stdout.on("data", (chunk: Uint8Array) => this.onData(chunk))
    stdout.on("end", () => this.onEnd())
    stdout.on("error", (error: unknown) =>
      this.onFailure(
        new CLIConnectionError({ reason: `Reading the CLI's stdout failed: ${messageOf(error)}`, cause: error })
      )
    )
  }

  private onData(chunk: Uint8Array): void {
    // After an error nothing more is kept, but the pipe is still drained until the end: a CLI
    // blocked on a full pipe would never see its stdin close.
    if (this.failure !== undefined || this.ended) return
    this.chunks.push(chunk)
    this.bufferedBytes += chunk.length
    this.wake()
    // Only a reader that is not waiting (busy, or held back by a full message queue) lets chunks
    // pile up here. Pausing and resuming the pipe costs a system call each, so it is not done
    // while the reader keeps up.
    if (this.waiter === undefined && this.bufferedBytes >= READ_AHEAD_BYTES && !this.paused) {
      this.paused = true
      this.stdout.pause()
    }
  }

  private onEnd(): void {
    if (this.failure !== undefined || this.ended) return
    this.ended = true
    this.wake()
  }

  private onFailure(error: ReadError): void {
    if (this.failure !== undefined) return
    this.failure = error
    this.chunks = []
    this.bufferedBytes = 0
    if (this.paused) {
      this.paused = false
      this.stdout.resume()
    }
    this.wake()
  }

  // The waiting reader takes what is there on its own fiber.
  private wake(): void {
    const waiter = this.waiter
    if (waiter === undefined) return
    this.waiter = undefined
    waiter(this.pull)
  }

  // Everything complete so far, or the end, or the failure; undefined when there is nothing yet.
  private take(): Pull | undefined {
    const frames: Array<Frame> = []
    let noise: Array<string> | undefined
    let failure: ReadError | undefined
    if (this.chunks.length > 0) {
      const chunks = this.chunks
      this.chunks = []
      this.bufferedBytes = 0
      if (this.paused) {
        this.paused = false
        this.stdout.resume()
      }
      for (const chunk of chunks) {
        const lines = this.splitter.push(chunk)
        failure = lines instanceof CLIJSONDecodeError
          ? lines
          : this.parse(lines, frames, (line) => (noise ??= []).push(line))
        if (failure !== undefined) break
      }
    }
    if (failure === undefined && this.ended && !this.failed) {
      const last = this.splitter.flush()
      if (last !== undefined) failure = this.parse([last], frames, (line) => (noise ??= []).push(line))
    }
    if (failure !== undefined) this.onFailure(failure)
    let next: Pull | undefined
    if (frames.length > 0) {
      next = Effect.succeed(Chunk.unsafeFromArray(frames))
    } else if (this.failure !== undefined && !this.failed) {
      this.failed = true
      next = Effect.fail(Option.some(this.failure))
    } else if (this.failed || this.ended) {
      next = Effect.fail(Option.none())
    }
    if (noise === undefined) return next
    const logged = Effect.logDebug("effect-claude-agent: skipped non-JSON stdout lines", noise.map(Framing.linePrefix))
    return Effect.zipRight(logged, next ?? this.pull)
  }

  private parse(
    lines: ReadonlyArray<string>,
    frames: Array<Frame>,
    onNoise: (line: string) => void
  ): CLIJSONDecodeError | undefined {
    for (const line of lines) {
      const parsed = Framing.parseLine(line)
      if (parsed instanceof CLIJSONDecodeError) return parsed
      // The line's length stands for its size: what is buffered is bounded by it, not billed.
      if (parsed._tag === "Frame") frames.push({ value: parsed.frame, bytes: line.length + 1 })
      else if (parsed.line.length > 0) onNoise(parsed.line)
    }
    return undefined
  }

  readonly pull: Pull = Effect.suspend(() =>
    this.take() ?? Effect.async<Chunk.Chunk<Frame>, Option.Option<ReadError>>((resume) => {
      this.waiter = resume
      return Effect.sync(() => {
        if (this.waiter === resume) this.waiter = undefined
      })
    })
  )
}

/**
 * stderr, always drained: every line goes to the tail, the `stderr` callback and the subscribers
 * of the moment.
 *
 * @internal
 */
class StderrLines {
  readonly tail = new StderrTail(Defaults.stderrTailBytes)
  // Made for the first subscriber: most sessions never read `stderr` (and a subscriber sees the
  // lines from the moment it runs, not earlier ones).
  private hub: PubSub.PubSub<string> | undefined
  private open = true
  private decoder: InstanceType<typeof TextDecoder> | undefined
  private partial = ""
  private callbackFailed = false

  constructor(
    stderr: Readable,
    private readonly onStderr: ((line: string) => void) | undefined,
    private readonly runtime: Runtime.Runtime<never>
  ) {
    stderr.on("data", (chunk: Uint8Array) => {
      const text = this.partial + (this.decoder ??= new TextDecoder("utf-8")).decode(chunk, { stream: true })
      let from = 0
      for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", from)) {
        this.line(text.slice(from, nl))
        from = nl + 1
      }
      this.partial = text.slice(from)
    })
    stderr.once("end", () => {
      const rest = this.decoder === undefined ? this.partial : this.partial + this.decoder.decode()
      this.partial = ""
      if (rest.length > 0) this.line(rest)
      Runtime.runFork(runtime)(this.close)
    })
    stderr.on("error", () => {})
  }

  private line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    this.tail.append(line)
    if (this.onStderr !== undefined) {
      try {
        this.onStderr(line)
      } catch (error) {
        // A throwing user callback must not stop the drain; it is reported once, not per line.
        if (!this.callbackFailed) {
          this.callbackFailed = true
          Runtime.runFork(this.runtime)(
            Effect.logWarning(
              `effect-claude-agent: the \`stderr\` callback threw (${
                messageOf(error)
              }); stderr is still drained, later failures are not reported`
            )
          )
        }
      }
    }
    this.hub?.unsafeOffer(line)
  }

  readonly close: Effect.Effect<void> = Effect.suspend(() => {
    this.open = false
    return this.hub === undefined ? Effect.void : PubSub.shutdown(this.hub)
  })

  readonly lines: Stream.Stream<string> = Stream.unwrap(Effect.suspend(() => {
    if (!this.open) return Effect.succeed(Stream.empty)
    if (this.hub !== undefined) return Effect.succeed(Stream.fromPubSub(this.hub))
    return Effect.map(PubSub.sliding<string>(STDERR_SUBSCRIBER_BUFFER), (hub) => {
      this.hub ??= hub
      return Stream.fromPubSub(this.hub)
    })
  }))
}

/**
 * stdin: one `write` per frame, on the caller's fiber.
 *
 * @internal
 */
class StdinFrames {
  private ended = false
  private failure: unknown
  // Senders held back by a full pipe, released together by one listener.
  private waiters: Array<() => void> = []

  constructor(private readonly stdin: Writable) {
    stdin.on("error", (error: unknown) => {
      this.failure ??= error
    })
    const release = () => {
      const waiters = this.waiters
      this.waiters = []
      for (const waiter of waiters) waiter()
    }
    stdin.on("drain", release)
    stdin.on("close", release)
  }

  private readonly drained = Effect.async<void>((resume) => {
    const waiter = () => resume(Effect.void)
    this.waiters.push(waiter)
    return Effect.sync(() => {
      this.waiters = this.waiters.filter((w) => w !== waiter)
    })
  })

  readonly send = (frame: unknown): Effect.Effect<void, CLIConnectionError> =>
    Effect.suspend(() => {
      if (this.failure !== undefined) {
        return Effect.fail(
          new CLIConnectionError({
            reason: `Cannot write to the Claude Code CLI: ${messageOf(this.failure)}`,
            cause: this.failure
          })
        )
      }
      if (this.ended || !this.stdin.writable) {
        return Effect.fail(
          new CLIConnectionError({ reason: "Cannot write to the Claude Code CLI: its input was already closed" })
        )
      }
      // Concurrent senders never interleave, and frames written while the pipe is busy leave
      // together (Node's `writev`).
      return this.stdin.write(Framing.encodeFrame(frame)) ? Effect.void : this.drained
    })

  readonly end: Effect.Effect<void> = Effect.sync(() => {
    if (this.ended) return
    this.ended = true
    this.stdin.end()
  })
}

interface Started {
  readonly child: ChildProcess
  readonly pid: number
  readonly stdin: StdinFrames
  readonly stdout: StdoutFrames
  readonly stderr: StderrLines
  readonly exited: () => ExitStatus | undefined
}

// Sends `signal` to the process group (the CLI and what it started), else to the process. Windows
// has neither groups nor signals: the process tree is ended with `taskkill /T /F`, as the
// platform's `Command` did.
const signalGroup = (child: ChildProcess, pid: number, signal: NodeJS.Signals): void => {
  if (isWindows) {
    execFile("taskkill", ["/pid", String(pid), "/T", "/F"], { windowsHide: true }, (error) => {
      if (error !== null) child.kill(signal)
    })
    return
  }
  try {
    process.kill(-pid, signal)
    return
  } catch {
    // No group (already gone): the process itself below.
  }
  try {
    child.kill(signal)
  } catch {
    // Already gone.
  }
}

// Spawns the CLI and listens to everything it can emit before anything can be emitted: its
// pipes, its exit (which may come before this fiber runs again).
const start = (config: SubprocessConfig, runtime: Runtime.Runtime<never>, exitStatus: Deferred.Deferred<ExitStatus>) =>
  Effect.async<Started, CLINotFoundError | CLIConnectionError>((resume) => {
    let child: ChildProcess
    try {
      child = spawn(config.command, config.args, {
        stdio: ["pipe", "pipe", "pipe"],
        cwd: config.cwd,
        env: config.env,
        detached: !isWindows
      })
    } catch (defect) {
      // Some failures are thrown at once (ENOTDIR for a `cwd` that is a file, for one).
      resume(Effect.fail(startError(config, defect)))
      return
    }
    const { stderr, stdin, stdout } = child
    if (stdin === null || stdout === null || stderr === null) {
      child.kill("SIGKILL")
      resume(Effect.fail(new CLIConnectionError({ reason: `Could not start ${config.command}: no pipes to the process` })))
      return
    }
    const pipes = {
      stdin: new StdinFrames(stdin),
      stdout: new StdoutFrames(stdout, config.maxBufferSize),
      stderr: new StderrLines(stderr, config.onStderr, runtime)
    }
    let status: ExitStatus | undefined
    let unregister = () => {}
    child.once("exit", (code, signal) => {
      status = { exitCode: code ?? undefined, signal: signal ?? undefined }
      unregister()
      Deferred.unsafeDone(exitStatus, Exit.succeed(status))
    })
    let spawned = false
    child.on("error", (error) => {
      // After the start, a failure (a signal that cannot be sent) is not the session's concern.
      if (!spawned) resume(Effect.fail(startError(config, error)))
    })
    child.once("spawn", () => {
      spawned = true
      const pid = child.pid
      if (pid === undefined) {
        resume(Effect.fail(new CLIConnectionError({ reason: `Could not start ${config.command}: no process id` })))
        return
      }
      unregister = Orphans.register(pid)
      resume(Effect.succeed({ child, pid, ...pipes, exited: () => status }))
    })
  })

/** @internal */
export const makeSubprocess = (config: SubprocessConfig) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const grace = config.closeGracePeriod === undefined
      ? Defaults.closeGracePeriod
      : Duration.decode(config.closeGracePeriod)
    const exitStatus = yield* Deferred.make<ExitStatus>()

    // The stop sequence, run when the scope closes: end stdin, wait, SIGTERM to the group, wait,
    // SIGKILL. Released with the start, atomically: no interruption can leave the process behind.
    const stop = ({ child, exited, pid, stderr, stdin }: Started) => {
      const kill = (signal: NodeJS.Signals) =>
        Effect.sync(() => {
          if (exited() === undefined) signalGroup(child, pid, signal)
        })
      const waitExit = Deferred.await(exitStatus).pipe(Effect.interruptible, Effect.timeout(grace))
      const sequence = stdin.end.pipe(
        Effect.zipRight(waitExit),
        // `Effect.timeout`'s own exception: matched by its guard, not by its `_tag` (which this
        // library's TimeoutException shares).
        Effect.catchIf(Cause.isTimeoutException, () =>
          Effect.logDebug(`effect-claude-agent: CLI ${pid} still running after stdin EOF; SIGTERM`).pipe(
            Effect.zipRight(kill("SIGTERM")),
            Effect.zipRight(waitExit)
          )),
        Effect.catchIf(Cause.isTimeoutException, () =>
          Effect.logWarning(`effect-claude-agent: CLI ${pid} ignored SIGTERM; SIGKILL`).pipe(
            Effect.zipRight(kill("SIGKILL")),
            Effect.zipRight(waitExit)
          )),
        Effect.ignore,
        runDetached
      )
      // As the platform's `Command` did: a CLI that exited with an error may have left what it
      // started (MCP servers, tool processes) in its group.
      const cleanup = Effect.sync(() => {
        const code = exited()?.exitCode
        if (code !== undefined && code !== 0 && !isWindows) signalGroup(child, pid, "SIGTERM")
      })
      return Effect.suspend(() => exited() === undefined ? sequence : Effect.void).pipe(
        Effect.zipRight(cleanup),
        Effect.zipRight(stderr.close)
      )
    }
    const started = yield* Effect.acquireRelease(start(config, runtime, exitStatus), stop)
    const { child, pid, stderr, stdin, stdout } = started

    const transport: TransportShape = {
      send: stdin.send,
      frames: Stream.fromPull(Effect.succeed(stdout.pull)),
      endInput: stdin.end,
      terminate: Effect.suspend(() => {
        if (started.exited() === undefined) signalGroup(child, pid, "SIGTERM")
        return Effect.asVoid(Deferred.await(exitStatus))
      }),
      exitStatus: Deferred.await(exitStatus),
      stderrTail: Effect.sync(() => stderr.tail.get()),
      stderr: stderr.lines,
      pid: Option.some(pid)
    }
    return transport
  })
