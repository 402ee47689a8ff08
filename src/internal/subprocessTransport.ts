/**
 * The subprocess `Transport`: the real CLI started with `@effect/platform` `Command`.
 *
 * Ordering matters here (finalizers run last-in-first-out):
 * 1. the stdin writer is forked before the process starts, so it is interrupted after the process
 *    is dead and an EPIPE becomes a typed failure instead of an uncaught exception;
 * 2. `Command.start` registers the platform's own release (SIGTERM to the group, then wait);
 * 3. our stop sequence is registered last so it runs first: end stdin, wait, SIGTERM, wait,
 *    SIGKILL. The platform release alone waits forever on a CLI that ignores SIGTERM.
 *
 * @internal
 */
import * as Command from "@effect/platform/Command"
import type { PlatformError } from "@effect/platform/Error"
import { Cause, Chunk, Deferred, Duration, Effect, Mailbox, Option, Predicate, PubSub, Ref, Sink, Stream } from "effect"
import { CLIConnectionError, CLINotFoundError } from "../SdkError.js"
import type { ExitStatus, SubprocessConfig, TransportShape } from "../services/Transport.js"
import * as Defaults from "./defaults.js"
import { runDetached } from "./detached.js"
import * as Framing from "./framing.js"
import * as Orphans from "./orphans.js"
import { StderrTail } from "./stderr.js"

const OUTBOX_CAPACITY = 64
const STDERR_SUBSCRIBER_BUFFER = 1024
const encoder = new TextEncoder()

// Frames queued while the writer was busy go out in one write (one syscall, one read for the CLI).
const joinFrames = (frames: Chunk.Chunk<Uint8Array>): Chunk.Chunk<Uint8Array> => {
  if (frames.length <= 1) return frames
  let total = 0
  for (const frame of frames) total += frame.length
  const joined = new Uint8Array(total)
  let offset = 0
  for (const frame of frames) {
    joined.set(frame, offset)
    offset += frame.length
  }
  return Chunk.of(joined)
}

const signalOf = (error: PlatformError): string | undefined => {
  const match = /signal: (SIG[A-Z0-9]+)/.exec(error.message)
  return match?.[1]
}

const startError = (config: SubprocessConfig, error: PlatformError): CLINotFoundError | CLIConnectionError => {
  if (error._tag === "SystemError" && error.reason === "NotFound" && error.method !== "access") {
    return new CLINotFoundError({ searched: [config.command], reason: error.message })
  }
  if (error._tag === "SystemError" && error.method === "access") {
    return new CLIConnectionError({
      reason: `The working directory ${config.cwd ?? "(unset)"} is not accessible: ${error.message}`,
      cause: error
    })
  }
  return new CLIConnectionError({ reason: `Could not start ${config.command}: ${error.message}`, cause: error })
}

// Node's spawn throws some failures synchronously (ENOTDIR for a `cwd` that is a file, for one),
// which the platform surfaces as defects: every way of failing to start is typed here.
const spawnDefectError = (config: SubprocessConfig, defect: unknown): CLIConnectionError => {
  const code = Predicate.hasProperty(defect, "code") && typeof defect.code === "string" ? defect.code : undefined
  const text = Predicate.hasProperty(defect, "message") && typeof defect.message === "string"
    ? defect.message
    : String(defect)
  if (code === "ENOTDIR" && config.cwd !== undefined) {
    return new CLIConnectionError({
      reason: `The working directory ${config.cwd} is not a directory (ENOTDIR): set \`cwd\` to a directory`,
      cause: defect
    })
  }
  return new CLIConnectionError({
    reason: `Could not start ${config.command}${config.cwd === undefined ? "" : ` in ${config.cwd}`}: ${code ?? text}`,
    cause: defect
  })
}

/** @internal */
export const makeSubprocess = (config: SubprocessConfig) =>
  Effect.gen(function*() {
    // Frames are encoded by `send`, on the caller's fiber: the writer only hands bytes to stdin.
    const outbox = yield* Mailbox.make<Uint8Array>({ capacity: OUTBOX_CAPACITY })
    const stdinSink = yield* Deferred.make<Sink.Sink<void, Uint8Array, never, PlatformError>>()
    const writerFailure = yield* Ref.make<Option.Option<PlatformError>>(Option.none())
    const tail = new StderrTail(Defaults.stderrTailBytes)

    // (1) the writer: one long-lived stream into stdin (each finished `Stream.run` would close it).
    yield* Deferred.await(stdinSink).pipe(
      Effect.flatMap((sink) => Mailbox.toStream(outbox).pipe(Stream.mapChunks(joinFrames), Stream.run(sink))),
      Effect.catchAll((e) => Ref.set(writerFailure, Option.some(e))),
      // Later offers must fail fast instead of filling a queue nobody drains.
      Effect.ensuring(outbox.end),
      Effect.forkScoped
    )

    const command = Command.make(config.command, ...config.args).pipe(
      Command.env(config.env, { extendEnv: false }),
      config.cwd !== undefined ? Command.workingDirectory(config.cwd) : (c) => c
    )

    // (2) the process, with the platform's release.
    const proc = yield* Command.start(command).pipe(
      Effect.mapError((e) => startError(config, e)),
      Effect.catchAllDefect((defect) => Effect.fail(spawnDefectError(config, defect)))
    )
    const unregister = Orphans.register(proc.pid)

    const exitStatus = yield* Deferred.make<ExitStatus>()
    yield* proc.exitCode.pipe(
      Effect.map((code): ExitStatus => ({ exitCode: code, signal: undefined })),
      Effect.catchAll((e) => Effect.succeed<ExitStatus>({ exitCode: undefined, signal: signalOf(e) })),
      Effect.flatMap((status) => Deferred.succeed(exitStatus, status)),
      Effect.ensuring(Effect.sync(unregister)),
      Effect.forkScoped
    )

    // (3) the stop sequence, registered last so it runs first.
    const grace = config.closeGracePeriod === undefined
      ? Defaults.closeGracePeriod
      : Duration.decode(config.closeGracePeriod)
    const waitExit = Deferred.await(exitStatus).pipe(Effect.interruptible, Effect.timeout(grace))
    yield* Effect.addFinalizer(() =>
      outbox.end.pipe(
        Effect.zipRight(waitExit),
        // `Effect.timeout`'s own exception: matched by its guard, not by its `_tag` (which this
        // library's TimeoutException shares).
        Effect.catchIf(Cause.isTimeoutException, () =>
          Effect.logDebug(`effect-claude-agent: CLI ${proc.pid} still running after stdin EOF; SIGTERM`).pipe(
            Effect.zipRight(proc.kill("SIGTERM").pipe(Effect.ignore, Effect.interruptible, Effect.timeout(grace))),
            Effect.zipRight(waitExit)
          )),
        Effect.catchIf(Cause.isTimeoutException, () =>
          Effect.logWarning(`effect-claude-agent: CLI ${proc.pid} ignored SIGTERM; SIGKILL`).pipe(
            Effect.zipRight(proc.kill("SIGKILL").pipe(Effect.ignore, Effect.interruptible, Effect.timeout(grace))),
            Effect.ignore
          )),
        Effect.ignore,
        runDetached
      )
    )

    yield* Deferred.succeed(stdinSink, proc.stdin)

    // stderr is always drained: a CLI blocked on a full stderr pipe stops writing stdout too.
    const onStderr = config.onStderr
    const stderrHub = yield* PubSub.sliding<string>(STDERR_SUBSCRIBER_BUFFER)
    // A throwing user callback must not stop the drain; it is reported once, not per line.
    let callbackFailure: unknown
    let callbackFailureReported = false
    yield* proc.stderr.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.runForEach((line) =>
        Effect.suspend(() => {
          tail.append(line)
          if (onStderr !== undefined) {
            try {
              onStderr(line)
            } catch (error) {
              callbackFailure ??= error
            }
          }
          if (callbackFailure === undefined || callbackFailureReported) return PubSub.publish(stderrHub, line)
          callbackFailureReported = true
          return Effect.logWarning(
            `effect-claude-agent: the \`stderr\` callback threw (${
              Predicate.hasProperty(callbackFailure, "message") ? String(callbackFailure.message) : String(callbackFailure)
            }); stderr is still drained, later failures are not reported`
          ).pipe(Effect.zipRight(PubSub.publish(stderrHub, line)))
        })
      ),
      Effect.ignore,
      Effect.ensuring(PubSub.shutdown(stderrHub)),
      Effect.forkScoped
    )

    const send = (frame: unknown): Effect.Effect<void, CLIConnectionError> =>
      Effect.suspend(() => {
        const line = encoder.encode(Framing.encodeFrame(frame))
        return outbox.offer(line).pipe(
          Effect.flatMap((accepted) =>
            accepted ? Effect.void : Effect.flatMap(Ref.get(writerFailure), (failure) =>
              Effect.fail(
                new CLIConnectionError({
                  reason: Option.isSome(failure)
                    ? `Cannot write to the Claude Code CLI: ${failure.value.message}`
                    : "Cannot write to the Claude Code CLI: its input was already closed",
                  ...(Option.isSome(failure) ? { cause: failure.value } : {})
                })
              ))
          )
        )
      })

    const frames: TransportShape["frames"] = proc.stdout.pipe(
      Framing.framesMapError(
        config.maxBufferSize,
        (e: PlatformError) => new CLIConnectionError({ reason: `Reading the CLI's stdout failed: ${e.message}`, cause: e })
      )
    )

    const transport: TransportShape = {
      send,
      frames,
      endInput: Effect.asVoid(outbox.end),
      terminate: proc.kill("SIGTERM").pipe(Effect.ignore),
      exitStatus: Deferred.await(exitStatus),
      stderrTail: Effect.sync(() => tail.get()),
      stderr: Stream.fromPubSub(stderrHub),
      pid: Option.some(proc.pid)
    }
    return transport
  })
