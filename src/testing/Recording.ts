/**
 * Record & replay: capture a real session between the SDK and the Claude Code CLI as JSONL, and
 * play it back later as the CLI, with no process, no model and no network.
 *
 * A recording is the conversation on the wire: every frame the host wrote to stdin (`in`), every
 * frame the CLI wrote to stdout (`out`), the end of input and the exit. Replaying it checks that
 * the code under test sends exactly what it sent when it was recorded, and answers with exactly
 * what the CLI answered, through the real framing and message decoding.
 *
 * @since 0.1.0
 */
import { FileSystem, Path } from "@effect/platform"
import {
  Clock,
  Context,
  Duration,
  Effect,
  Either,
  Fiber,
  FiberSet,
  Layer,
  Option,
  ParseResult,
  Predicate,
  Schema,
  type Scope,
  Stream
} from "effect"
import * as ClaudeAgent from "../ClaudeAgent.js"
import { runDetached } from "../internal/effect/detached.js"
import * as Defaults from "../internal/defaults.js"
import * as Framing from "../internal/protocol/json.js"
import * as MemoryTransport from "./internal/memoryTransport.js"
import * as SessionServices from "../layers/SessionServices.js"
import { Transport, type TransportShape } from "../services/Transport.js"

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

const FrameEntry = <Dir extends "in" | "out">(dir: Dir) =>
  Schema.Struct({ t: Schema.Number, dir: Schema.Literal(dir), frame: Schema.Unknown })

// JSON has no `undefined`: a missing exit code or signal is written as `null`, and read back from
// `null` or an absent key.
const nullable = <A>(schema: Schema.Schema<A>) =>
  Schema.optionalToRequired(Schema.NullOr(schema), Schema.UndefinedOr(schema), {
    decode: (value) => Option.getOrUndefined(value) ?? undefined,
    encode: (value) => Option.some(value ?? null)
  })

/**
 * One event of a recording, one JSON line in a recording file. `t` is the time in milliseconds
 * since the transport started; `in` frames went from the host to the CLI (stdin), `out` frames
 * from the CLI to the host (stdout).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const entry = Schema.decodeUnknownSync(Recording.Entry)({ t: 3, dir: "exit", exitCode: 0, signal: null })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Entry = Schema.Union(
  FrameEntry("in"),
  FrameEntry("out"),
  Schema.Struct({ t: Schema.Number, dir: Schema.Literal("end-input") }),
  Schema.Struct({
    t: Schema.Number,
    dir: Schema.Literal("exit"),
    exitCode: nullable(Schema.Number),
    signal: nullable(Schema.String)
  })
)

/**
 * One event of a recording (see the {@link Entry} schema).
 *
 * @example
 * ```ts
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const entries: ReadonlyArray<Recording.Entry> = [
 *   { t: 0, dir: "in", frame: { type: "user", message: { role: "user", content: "hi" } } },
 *   { t: 5, dir: "out", frame: { type: "result", subtype: "success", result: "hello" } },
 *   { t: 6, dir: "end-input" },
 *   { t: 9, dir: "exit", exitCode: 0, signal: undefined }
 * ]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * What went wrong with a recording (`RecordingError.reason`):
 *
 * - `NotFound`: the recording file does not exist.
 * - `Unreadable`: the recording file could not be read.
 * - `Invalid`: the file is not a recording (`line` is the first line that is not a valid entry).
 * - `Unwritable`: `layerRecord` could not create the file it records to.
 * - `Mismatch`: a replay met input that the recording does not have (`entry` is the index of the
 *   recorded entry it expected, i.e. line `entry + 1` of the file).
 *
 * @example
 * ```ts
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const reasons = Recording.RecordingErrorReason.literals
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const RecordingErrorReason = Schema.Literal("NotFound", "Unreadable", "Invalid", "Unwritable", "Mismatch")

/**
 * @since 0.1.0
 * @category models
 */
export type RecordingErrorReason = typeof RecordingErrorReason.Type

/**
 * A recording could not be read, written or played: `reason` says which. `load` and
 * `layerReplayFile` fail with it; a replay that diverges from its recording (`Mismatch`) and a
 * recording that cannot be written (`Unwritable`) are defects carrying it, since the code under
 * test, not the caller, must change: the `send` that diverged dies with it, and the replayed CLI
 * then exits with code 1 and the error's message on stderr, so the session ends with a
 * `ProcessError` that shows it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const entries = Recording.load("test/fixtures/recording-session.jsonl").pipe(
 *   Effect.catchTag("RecordingError", (e) => Effect.die(e.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordingError extends Schema.TaggedError<RecordingError>(
  "effect-claude-agent/RecordingError"
)("RecordingError", {
  reason: RecordingErrorReason,
  /** The recording file, when there is one (a replay of entries in memory has none). */
  path: Schema.optional(Schema.String),
  /** `Invalid`: the 1-based line that is not a valid entry. */
  line: Schema.optional(Schema.Number),
  /** `Mismatch`: the index of the recorded entry the replay expected. */
  entry: Schema.optional(Schema.Number),
  /** What is wrong, for a person. */
  description: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  override get message(): string {
    const path = this.path ?? "(entries)"
    switch (this.reason) {
      case "NotFound":
      case "Unreadable":
        return `Cannot read the recording ${path}: ${this.description}`
      case "Invalid":
        return `Invalid recording ${path}:${this.line ?? "?"}: ${this.description}`
      case "Unwritable":
        return `Cannot write the recording ${path}: ${this.description}`
      case "Mismatch":
        return `Replay mismatch at entry ${this.entry ?? "?"}: ${this.description}`
    }
  }
}

// One line of a recording file.
const EntryLine = Schema.parseJson(Entry)

const encodeEntry = (entry: Entry): string => Schema.encodeSync(EntryLine)(entry) + "\n"

// `exact`: an `in` or `out` entry must have its `frame` key, even though any value may go in it.
const decodeEntry = Schema.decodeEither(EntryLine, { exact: true })

// Each problem as "`path`: message", e.g. "`dir`: Expected "in" | "out" | …, actual "sideways"".
const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length === 0 ? issue.message : `\`${issue.path.join(".")}\`: ${issue.message}`))
    .join("; ")

/**
 * Parses the text of a recording file (JSONL, blank lines ignored).
 *
 * @example
 * ```ts
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const entries = Recording.parse('{"t":0,"dir":"end-input"}\n', "inline")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (text: string, path: string): Effect.Effect<ReadonlyArray<Entry>, RecordingError> =>
  Effect.suspend(() => {
    const entries: Array<Entry> = []
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] ?? "").trim()
      if (line.length === 0) continue
      const entry = decodeEntry(line)
      if (Either.isLeft(entry)) {
        return Effect.fail(
          new RecordingError({
            reason: "Invalid",
            path,
            line: i + 1,
            description: describeParseError(entry.left),
            cause: entry.left
          })
        )
      }
      entries.push(entry.right)
    }
    return Effect.succeed(entries)
  })

/**
 * Reads a recording file.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const entries = Recording.load("test/fixtures/recording-session.jsonl").pipe(Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (path: string): Effect.Effect<ReadonlyArray<Entry>, RecordingError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((e) =>
        e._tag === "SystemError" && e.reason === "NotFound"
          ? new RecordingError({ reason: "NotFound", path, description: "file not found", cause: e })
          : new RecordingError({ reason: "Unreadable", path, description: e.message, cause: e })
      )
    )
    return yield* parse(text, path)
  })

// What the transport would have written: `undefined` fields gone, dates as strings, and so on.
const roundTrip = (frame: unknown): unknown => {
  try {
    return Framing.parseJsonBoundary(Framing.encodeFrame(frame))
  } catch {
    return frame
  }
}

// ---------------------------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------------------------

/**
 * Wraps a transport so that everything crossing it is handed to `write`, in order: each frame
 * sent (before it is written, so the CLI's answer can never be recorded ahead of it), each frame
 * read, the end of input (once) and the exit status (once, when someone first observes it).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeCli, Recording } from "effect-claude-agent/testing"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const log: Array<Recording.Entry> = []
 *   const { transport } = yield* FakeCli.make()
 *   const recorded = yield* Recording.recordTransport(transport, (entry) => Effect.sync(() => log.push(entry)))
 *   yield* recorded.endInput
 * }))
 * ```
 *
 * @since 0.1.0
 * @category recording
 */
export const recordTransport = (
  transport: TransportShape,
  write: (entry: Entry) => Effect.Effect<void>
): Effect.Effect<TransportShape> =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    // One writer at a time keeps `t` monotonic and the file in the order events happened.
    const writeLock = yield* Effect.makeSemaphore(1)
    // Held across record-and-send, so concurrent senders are recorded in the order they write.
    const sendLock = yield* Effect.makeSemaphore(1)
    let inputEnded = false
    let exitRecorded = false

    const record = (make: (t: number) => Entry | undefined) =>
      writeLock.withPermits(1)(
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const entry = make(now - start)
          return entry === undefined ? Effect.void : write(entry)
        })
      )

    return {
      send: (frame) =>
        sendLock.withPermits(1)(
          Effect.suspend(() =>
            // A send after the end of input fails without reaching the CLI: nothing to replay.
            inputEnded ? transport.send(frame) : record((t) => ({ t, dir: "in", frame: roundTrip(frame) })).pipe(
              Effect.zipRight(transport.send(frame))
            )
          )
        ),
      frames: transport.frames.pipe(Stream.tap((frame) => record((t) => ({ t, dir: "out", frame: frame.value })))),
      terminate: transport.terminate,
      endInput: sendLock.withPermits(1)(
        Effect.suspend(() => {
          if (inputEnded) return transport.endInput
          inputEnded = true
          return record((t) => ({ t, dir: "end-input" })).pipe(Effect.zipRight(transport.endInput))
        })
      ),
      exitStatus: transport.exitStatus.pipe(
        Effect.tap((status) =>
          record((t) => {
            if (exitRecorded) return undefined
            exitRecorded = true
            return { t, dir: "exit", exitCode: status.exitCode, signal: status.signal }
          })
        )
      ),
      stderrTail: transport.stderrTail,
      stderr: transport.stderr,
      pid: transport.pid
    }
  })

// `rec.jsonl`, `rec-2.jsonl`, `rec-3.jsonl`, …
const numberedPath = (path: Path.Path, file: string, n: number): string => {
  if (n === 1) return file
  const ext = path.extname(file)
  const base = path.basename(file, ext)
  return path.join(path.dirname(file), `${base}-${n}${ext}`)
}

/**
 * `ClaudeAgent.layer` (the real CLI) with every session's transport recorded to a JSONL file:
 * the first session to `path`, the second to `path` with `-2` before the extension, and so on.
 * Lines are appended as they happen, so a crash leaves everything up to it on disk.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const record = Recording.layerRecord("test/fixtures/recording-hi.jsonl").pipe(Layer.provide(NodeContext.layer))
 * const recorded = ClaudeAgent.query("hi").pipe(Stream.runDrain, Effect.provide(record))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRecord = (
  path: string
): Layer.Layer<
  ClaudeAgent.ClaudeAgent,
  never,
  FileSystem.FileSystem | Path.Path
> =>
  Layer.effect(
    ClaudeAgent.ClaudeAgent,
    Effect.gen(function*() {
      // Only these services, as in `ClaudeAgent.layer`: the layer's Scope must not leak into sessions.
      const context = Context.pick(FileSystem.FileSystem, Path.Path)(
        yield* Effect.context<FileSystem.FileSystem | Path.Path>()
      )
      const fs = yield* FileSystem.FileSystem
      const pathService = yield* Path.Path
      let sessions = 0
      const encoder = new TextEncoder()

      const transport = Layer.scoped(
        Transport,
        Effect.gen(function*() {
          sessions++
          const file = numberedPath(pathService, path, sessions)
          const handle = yield* fs.open(file, { flag: "w" }).pipe(
            Effect.mapError((e) =>
              new RecordingError({ reason: "Unwritable", path: file, description: e.message, cause: e })
            ),
            Effect.orDie
          )
          const write = (entry: Entry) =>
            handle.writeAll(encoder.encode(encodeEntry(entry))).pipe(
              Effect.catchAll((e) =>
                Effect.logWarning(`effect-claude-agent: could not write to the recording ${file}: ${e.message}`)
              )
            )
          // Registered before the process is spawned, so it runs after the process has been reaped
          // (and before the file is closed): the session's reader is gone by then, so this is the
          // one place the exit is sure to be seen.
          let recorded: TransportShape | undefined
          yield* Effect.addFinalizer(() =>
            recorded === undefined
              ? Effect.void
              : recorded.exitStatus.pipe(
                Effect.interruptible,
                Effect.timeout(Duration.seconds(5)),
                Effect.ignore,
                runDetached
              )
          )
          const spawned = yield* Layer.build(SessionServices.subprocessTransport)
          recorded = yield* recordTransport(Context.get(spawned, Transport), write)
          return recorded
        }).pipe(Effect.provide(context))
      )
      return ClaudeAgent.make({ transport })
    })
  )

// ---------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------

/**
 * Replay options. `pace: true` emits each CLI frame no earlier than its recorded time after the
 * start (through `Clock`, so `TestClock` controls it); by default frames are emitted as soon as
 * the input before them has been matched. `maxBufferSize` is the stdout line limit (default: the
 * session's `maxBufferSize` under `layerReplay`, else 1 MiB).
 *
 * @example
 * ```ts
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const options: Recording.ReplayOptions = { pace: true }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayOptions {
  readonly pace?: boolean | undefined
  readonly maxBufferSize?: number | undefined
}

const VALUE_CHARS = 200
const FRAME_CHARS = 600

const truncate = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text

const show = (u: unknown, max: number = FRAME_CHARS): string => {
  if (u === undefined) return "(absent)"
  try {
    return truncate(JSON.stringify(u) ?? String(u), max)
  } catch {
    return truncate(String(u), max)
  }
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const childPath = (path: string, key: string): string =>
  identifier.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

interface Difference {
  readonly path: string
  readonly expected: unknown
  readonly actual: unknown
}

// The first place (depth first, keys sorted) where two JSON values differ.
const firstDifference = (expected: unknown, actual: unknown, path: string): Difference | undefined => {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const n = Math.max(expected.length, actual.length)
    for (let i = 0; i < n; i++) {
      const d = firstDifference(expected[i], actual[i], `${path}[${i}]`)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (Predicate.isRecord(expected) && Predicate.isRecord(actual)) {
    const keys = Array.from(new Set([...Object.keys(expected), ...Object.keys(actual)])).sort()
    for (const key of keys) {
      const d = firstDifference(expected[key], actual[key], childPath(path, key))
      if (d !== undefined) return d
    }
    return undefined
  }
  return Object.is(expected, actual) ? undefined : { path, expected, actual }
}

const renderDifference = (d: Difference, expectedFrame: unknown, actualFrame: unknown): string =>
  `the frame sent differs from the recording at ${d.path}\n` +
  `  expected: ${show(d.expected, VALUE_CHARS)}\n` +
  `  actual:   ${show(d.actual, VALUE_CHARS)}\n` +
  `  expected frame: ${show(expectedFrame)}\n` +
  `  actual frame:   ${show(actualFrame)}`

const describeEntry = (entry: Entry | undefined): string => {
  if (entry === undefined) return "nothing more (the recording has ended)"
  switch (entry.dir) {
    case "in":
      return `the frame ${show(entry.frame)}`
    case "end-input":
      return "the end of input"
    case "out":
    case "exit":
      return `the CLI's ${entry.dir}`
  }
}

/**
 * A transport that plays the CLI of a recording. Each frame the code sends must equal the next
 * recorded `in` frame (else `send` dies with a `RecordingError` of reason `Mismatch`, whose
 * message starts `Replay mismatch at entry <n>:`, `n` being the index in `entries`, i.e. line
 * n + 1 of the file, and the CLI exits with code 1 and that message on stderr), and the
 * recorded `out` frames up to the next `in` are then emitted through the real framing. The SDK's random control request ids are mapped: a recorded `request_id` matches the
 * live one the code sends, and the recorded answers carry the live id.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * declare const entries: ReadonlyArray<Recording.Entry>
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const transport = yield* Recording.replayTransport(entries)
 *   yield* transport.endInput
 * }))
 * ```
 *
 * @since 0.1.0
 * @category replay
 */
export const replayTransport = (
  entries: ReadonlyArray<Entry>,
  options: ReplayOptions = {}
): Effect.Effect<TransportShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const lock = yield* Effect.makeSemaphore(1)
    const fibers = yield* FiberSet.make()
    const start = yield* Clock.currentTimeMillis
    const pace = options.pace === true
    // Recorded id → the id the live code used: control request ids, and user message uuids (the
    // CLI echoes those in `command_lifecycle`, `still_queued`, …, and the code sends them back in
    // `rewind_files`).
    const ids = new Map<string, string>()
    const relabel = (u: unknown): unknown => {
      if (ids.size === 0) return u
      if (typeof u === "string") return ids.get(u) ?? u
      if (Array.isArray(u)) return u.map(relabel)
      return Predicate.isRecord(u) ? relabelObject(u) : u
    }
    const relabelObject = (o: { readonly [key: string]: unknown }): { readonly [key: string]: unknown } => {
      if (ids.size === 0) return o
      const out: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(o)) out[key] = relabel(value)
      return out
    }

    let failure: RecordingError | undefined

    const cli = yield* MemoryTransport.make({
      onSend: (frame) => send(frame),
      onEndInput: Effect.suspend(() => endInput),
      maxBufferSize: options.maxBufferSize ?? Defaults.maxBufferSize,
      pid: Option.none()
    })

    const isInput = (entry: Entry | undefined): boolean =>
      entry !== undefined && (entry.dir === "in" || entry.dir === "end-input")
    const nextInput = (from: number): number => {
      let i = from
      while (i < entries.length && !isInput(entries[i])) i++
      return i
    }
    // The index of the recorded input the code must produce next.
    let expectAt = nextInput(0)

    // Recorded answers carry the live ids.
    const liveOut = relabel

    const play = (entry: Entry): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (failure !== undefined) return Effect.void
        const wait = pace
          ? Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Math.max(0, start + entry.t - now)))
          : Effect.void
        switch (entry.dir) {
          case "out":
            return wait.pipe(Effect.zipRight(Effect.suspend(() => cli.writeFrame(liveOut(entry.frame)))))
          case "exit":
            return wait.pipe(Effect.zipRight(cli.exit({ exitCode: entry.exitCode, signal: entry.signal })))
          default:
            return Effect.void
        }
      })

    // Paced segments run in the background, each after the one before it.
    let previous: Fiber.Fiber<void> | undefined
    const playSegment = (from: number, to: number): Effect.Effect<void> => {
      const segment = Effect.forEach(entries.slice(from, to), play, { discard: true })
      if (!pace) return segment
      return Effect.suspend(() => {
        const before = previous
        const run = before === undefined ? segment : Fiber.await(before).pipe(Effect.zipRight(segment))
        return Effect.map(FiberSet.run(fibers, run), (fiber) => {
          previous = fiber
        })
      })
    }

    // The code under test diverged: a defect for the code that sent, and a CLI that exits on
    // input it did not expect, so that everything waiting on the session ends.
    const mismatch = (at: number, detail: string): Effect.Effect<never> =>
      Effect.suspend(() => {
        const error = new RecordingError({ reason: "Mismatch", entry: at, description: detail })
        failure = error
        const exit = cli.writeStderr(error.message).pipe(Effect.zipRight(cli.exit({ exitCode: 1, signal: undefined })))
        return Effect.flatMap(cli.exited, (exited) => exited ? Effect.void : exit).pipe(
          Effect.zipRight(Effect.die(error))
        )
      })

    // The recorded frame as it should look live: request ids and user message uuids become the
    // ones in use.
    const normalise = (
      recorded: unknown,
      actual: unknown
    ): { readonly frame: unknown; readonly bind?: readonly [string, string] } => {
      if (!Predicate.isRecord(recorded) || !Predicate.isRecord(actual)) return { frame: relabel(recorded) }
      const expected = relabelObject(recorded)
      if (recorded.type === "user" && actual.type === "user" && typeof actual.uuid === "string") {
        // A recording made before every user message carried a uuid has none to map.
        const frame = { ...expected, uuid: actual.uuid }
        return typeof recorded.uuid === "string" && !ids.has(recorded.uuid)
          ? { frame, bind: [recorded.uuid, actual.uuid] }
          : { frame }
      }
      const recordedId = recorded.request_id
      if (typeof recordedId !== "string") return { frame: expected }
      const known = ids.get(recordedId)
      if (expected.type === "control_request" && actual.type === "control_request") {
        if (known !== undefined) return { frame: { ...expected, request_id: known } }
        return typeof actual.request_id === "string"
          ? { frame: { ...expected, request_id: actual.request_id }, bind: [recordedId, actual.request_id] }
          : { frame: expected }
      }
      if (expected.type === "control_cancel_request" && known !== undefined) {
        return { frame: { ...expected, request_id: known } }
      }
      return { frame: expected }
    }

    // `actual` is the frame as the CLI reads it (encoded and parsed again).
    const send = (actual: unknown): Effect.Effect<void> =>
      lock.withPermits(1)(Effect.suspend(() => {
        if (failure !== undefined) return Effect.die(failure)
        const at = expectAt
        const expected = entries[at]
        if (expected === undefined || expected.dir !== "in") {
          return mismatch(at, `the recording expects ${describeEntry(expected)}, but the code sent ${show(actual)}`)
        }
        const normalised = normalise(expected.frame, actual)
        const difference = firstDifference(normalised.frame, actual, "$")
        if (difference !== undefined) {
          return mismatch(at, renderDifference(difference, normalised.frame, actual))
        }
        if (normalised.bind !== undefined) ids.set(normalised.bind[0], normalised.bind[1])
        expectAt = nextInput(at + 1)
        return playSegment(at + 1, expectAt)
      }))

    // Runs once: the transport ignores an end of input after the first.
    const endInput: Effect.Effect<void> = lock.withPermits(1)(Effect.suspend(() => {
      if (failure !== undefined) return Effect.void
      const at = expectAt
      const expected = entries[at]
      // A recording that stops short of the end of input (the CLI died first) has nothing to match.
      if (expected === undefined) return Effect.void
      if (expected.dir !== "end-input") {
        return mismatch(at, `the code ended the input, but the recording expects ${describeEntry(expected)}`).pipe(
          Effect.catchAllDefect(() => Effect.void)
        )
      }
      expectAt = nextInput(at + 1)
      return playSegment(at + 1, expectAt)
    }))

    yield* playSegment(0, expectAt)
    return cli.transport
  })

/**
 * `ClaudeAgent` playing a recording: every session gets a fresh replay of `entries` (one
 * recording is one session).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * declare const entries: ReadonlyArray<Recording.Entry>
 * const test = ClaudeAgent.query("hi").pipe(Stream.runCollect, Effect.provide(Recording.layerReplay(entries)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReplay = (
  entries: ReadonlyArray<Entry>,
  options: ReplayOptions = {}
): Layer.Layer<ClaudeAgent.ClaudeAgent> =>
  Layer.succeed(
    ClaudeAgent.ClaudeAgent,
    ClaudeAgent.make({
      transport: Layer.scoped(
        Transport,
        Effect.flatMap(SessionServices.SessionLaunch, (session) =>
          replayTransport(entries, { maxBufferSize: session.options.maxBufferSize, ...options }))
      )
    })
  )

/**
 * `layerReplay` with the entries read from a recording file.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const replay = Recording.layerReplayFile("test/fixtures/recording-hi.jsonl").pipe(Layer.provide(NodeContext.layer))
 * const replayed = ClaudeAgent.query("hi").pipe(Stream.runCollect, Effect.provide(replay))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReplayFile = (
  path: string,
  options: ReplayOptions = {}
): Layer.Layer<ClaudeAgent.ClaudeAgent, RecordingError, FileSystem.FileSystem> =>
  Layer.unwrapEffect(Effect.map(load(path), (entries) => layerReplay(entries, options)))
