/**
 * Byte-correct NDJSON framing for the CLI's stdout.
 *
 * Lines are split on `0x0A` over raw bytes and each complete line is decoded as UTF-8 on its own,
 * so a multi-byte character split across pipe chunks always survives (platform `Ndjson` and
 * `Command.streamLines` decode per chunk and corrupt it). The size limit is checked while a line is
 * still partial, so an endless line never buffers more than `maxBytes` plus one chunk.
 *
 * @internal
 */
import { Cause, Channel, Chunk, Effect, Stream } from "effect"
import { CLIJSONDecodeError } from "../SdkError.js"
import type { Frame } from "../services/Transport.js"

const NEWLINE = 0x0a
const CR = 0x0d
const PREFIX_CHARS = 200

const decoder = new TextDecoder("utf-8")

/** @internal */
export const linePrefix = (line: string): string =>
  line.length > PREFIX_CHARS ? line.slice(0, PREFIX_CHARS) + "…" : line

const tooLong = (start: string, limit: number, observed: number) =>
  new CLIJSONDecodeError({ reason: "LineTooLong", linePrefix: linePrefix(start), limit, observed })

const stripCR = (line: string): string =>
  line.length > 0 && line.charCodeAt(line.length - 1) === CR ? line.slice(0, -1) : line

// A line's pieces (the tails and heads of the chunks it spans) joined into one array, to be
// decoded in one call: the non-streaming decoder is more than twice as fast as a streaming one
// (measured on 100 KB lines in two pieces, Node 20), and one copy of the bytes costs less than
// that difference.
const joinPieces = (pieces: ReadonlyArray<Uint8Array>, last: Uint8Array | undefined, total: number): Uint8Array => {
  const joined = new Uint8Array(total)
  let offset = 0
  for (const piece of pieces) {
    joined.set(piece, offset)
    offset += piece.length
  }
  if (last !== undefined) joined.set(last, offset)
  return joined
}

/**
 * A stateful splitter: feed it chunks, it returns the complete lines they finish.
 * Plain imperative code because it runs once per 64 KiB chunk on the hot path.
 *
 * A line that spans chunks is kept as the pieces of those chunks (references, not copies: the
 * chunks must not be reused by whoever produced them, which holds for Node's reads and for the
 * in-memory transport) and decoded once when it completes, so a multi-byte character cut by a
 * chunk boundary is whole again before it is decoded.
 *
 * @internal
 */
export class LineSplitter {
  private pending: Array<Uint8Array> = []
  private pendingBytes = 0

  constructor(readonly maxBytes: number) {}

  // The start of the pending line (and of `more`), for an error message.
  private prefix(more: Uint8Array | undefined): string {
    const want = PREFIX_CHARS * 4
    const pieces: Array<Uint8Array> = []
    let have = 0
    for (const piece of more === undefined ? this.pending : [...this.pending, more]) {
      if (have >= want) break
      const part = piece.subarray(0, want - have)
      pieces.push(part)
      have += part.length
    }
    return decoder.decode(joinPieces(pieces, undefined, have))
  }

  /** Returns the lines completed by `chunk`, or the error for an over-long line. */
  push(chunk: Uint8Array): Array<string> | CLIJSONDecodeError {
    const lines: Array<string> = []
    let start = 0
    let nl = chunk.indexOf(NEWLINE, start)
    // The line that completes what earlier chunks started.
    if (nl !== -1 && this.pendingBytes > 0) {
      const lineBytes = this.pendingBytes + nl
      if (lineBytes > this.maxBytes) return tooLong(this.prefix(chunk.subarray(0, nl)), this.maxBytes, lineBytes)
      const line = decoder.decode(joinPieces(this.pending, chunk.subarray(0, nl), lineBytes))
      this.pending = []
      this.pendingBytes = 0
      lines.push(stripCR(line))
      start = nl + 1
      nl = chunk.indexOf(NEWLINE, start)
    }
    // Whole lines inside this chunk: check each length on the bytes, then decode the region in
    // one call (a region that ends at a newline never splits a UTF-8 sequence).
    const regionStart = start
    let regionEnd = -1
    while (nl !== -1) {
      if (nl - start > this.maxBytes) {
        return tooLong(decoder.decode(chunk.subarray(start, start + PREFIX_CHARS * 4)), this.maxBytes, nl - start)
      }
      regionEnd = nl
      start = nl + 1
      nl = chunk.indexOf(NEWLINE, start)
    }
    if (regionEnd !== -1) {
      const text = decoder.decode(chunk.subarray(regionStart, regionEnd))
      let from = 0
      for (;;) {
        const to = text.indexOf("\n", from)
        const end = to === -1 ? text.length : to
        lines.push(end > from && text.charCodeAt(end - 1) === CR ? text.slice(from, end - 1) : text.slice(from, end))
        if (to === -1) break
        from = to + 1
      }
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start)
      this.pending.push(rest)
      this.pendingBytes += rest.length
      if (this.pendingBytes > this.maxBytes) return tooLong(this.prefix(undefined), this.maxBytes, this.pendingBytes)
    }
    return lines
  }

  /** The complete last line of a stream that did not end with a newline. */
  flush(): string | undefined {
    if (this.pendingBytes === 0) return undefined
    const line = decoder.decode(joinPieces(this.pending, undefined, this.pendingBytes))
    this.pending = []
    this.pendingBytes = 0
    return stripCR(line)
  }
}

/**
 * Splits a byte stream into UTF-8 lines of at most `maxBytes` bytes each.
 *
 * @internal
 */
export const splitLines = (maxBytes: number) =>
<E, R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<string, E | CLIJSONDecodeError, R> =>
  Stream.suspend(() => {
    const splitter = new LineSplitter(maxBytes)
    return self.pipe(
      Stream.mapChunksEffect((chunks) => {
        let out: Array<string> = []
        for (const chunk of chunks) {
          const lines = splitter.push(chunk)
          if (lines instanceof CLIJSONDecodeError) return Effect.fail(lines)
          out = out.length === 0 ? lines : out.concat(lines)
        }
        return Effect.succeed(Chunk.unsafeFromArray(out))
      }),
      Stream.concat(Stream.suspend(() => {
        const last = splitter.flush()
        return last === undefined ? Stream.empty : Stream.make(last)
      }))
    )
  })

/**
 * The one place where JSON enters the library (stdout lines, and in the testing kit request
 * bodies and recordings): `JSON.parse` is typed `any`, and this narrows it to `unknown` so
 * nothing downstream can use it without decoding.
 *
 * @internal
 */
export const parseJsonBoundary = (line: string): unknown => JSON.parse(line)

/**
 * What a line of stdout turned out to be.
 *
 * @internal
 */
export type ParsedLine =
  | { readonly _tag: "Frame"; readonly frame: unknown }
  | { readonly _tag: "Noise"; readonly line: string }

/**
 * Parses one line. Blank lines and lines that do not start with `{` are noise (debug output some
 * CLI builds print); a `{` line that is not JSON is a protocol error.
 *
 * @internal
 */
export const parseLine = (line: string): ParsedLine | CLIJSONDecodeError => {
  let i = 0
  while (i < line.length && (line.charCodeAt(i) === 0x20 || line.charCodeAt(i) === 0x09)) i++
  if (i === line.length || line.charCodeAt(i) !== 0x7b /* { */) {
    return { _tag: "Noise", line }
  }
  try {
    return { _tag: "Frame", frame: parseJsonBoundary(line) }
  } catch (e) {
    return new CLIJSONDecodeError({
      reason: "InvalidJson",
      linePrefix: linePrefix(line),
      parseError: e instanceof Error ? e.message : String(e)
    })
  }
}

/**
 * Bytes → parsed JSON frames with their line sizes. Noise lines are logged at debug level and skipped.
 *
 * One channel stage does the splitting, the parsing and the flush of a last unterminated line:
 * every stage between stdout and the reader costs a trip through the channel executor per read,
 * and keeps parsed frames alive across more scavenges (see the README's Performance section).
 *
 * @internal
 */
export const frames = (maxBytes: number) =>
<E, R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Frame, E | CLIJSONDecodeError, R> =>
  framesMapError(maxBytes, (e: E) => e)(self)

/**
 * `frames`, with the source's failure mapped in the same stage (a `Stream.mapError` in front
 * would be one more stage for every read).
 *
 * @internal
 */
export const framesMapError = <E, E2>(maxBytes: number, onError: (error: E) => E2) =>
<R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Frame, E2 | CLIJSONDecodeError, R> =>
  Stream.suspend(() => {
    // Local to this one stream's run, and only ever touched by the fiber running it.
    const splitter = new LineSplitter(maxBytes)
    const emit = (
      lines: ReadonlyArray<string>,
      next: Channel.Channel<Chunk.Chunk<Frame>, Chunk.Chunk<Uint8Array>, E2 | CLIJSONDecodeError, E, unknown, unknown>
    ): Channel.Channel<Chunk.Chunk<Frame>, Chunk.Chunk<Uint8Array>, E2 | CLIJSONDecodeError, E, unknown, unknown> => {
      const out: Array<Frame> = []
      let noise: Array<string> | undefined
      for (const line of lines) {
        const parsed = parseLine(line)
        if (parsed instanceof CLIJSONDecodeError) return Channel.fail(parsed)
        // The line's length stands for its size: what is buffered is bounded by it, not billed.
        if (parsed._tag === "Frame") out.push({ value: parsed.frame, bytes: line.length + 1 })
        else if (parsed.line.length > 0) (noise ??= []).push(parsed.line)
      }
      const written = out.length === 0 ? next : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), next)
      return noise === undefined ? written : Channel.zipRight(
        Channel.fromEffect(
          Effect.logDebug("effect-claude-agent: skipped non-JSON stdout lines", noise.map(linePrefix))
        ),
        written
      )
    }
    const loop: Channel.Channel<
      Chunk.Chunk<Frame>,
      Chunk.Chunk<Uint8Array>,
      E2 | CLIJSONDecodeError,
      E,
      unknown,
      unknown
    > = Channel.readWithCause({
      onInput: (chunks: Chunk.Chunk<Uint8Array>) => {
        let lines: Array<string> | undefined
        for (const chunk of chunks) {
          const pushed = splitter.push(chunk)
          if (pushed instanceof CLIJSONDecodeError) return Channel.fail(pushed)
          lines = lines === undefined ? pushed : lines.concat(pushed)
        }
        return lines === undefined || lines.length === 0 ? loop : emit(lines, loop)
      },
      onFailure: (cause) => Channel.failCause(Cause.map(cause, onError)),
      onDone: () => {
        const last = splitter.flush()
        return last === undefined ? Channel.void : emit([last], Channel.void)
      }
    })
    return Stream.pipeThroughChannel(self, loop)
  })

/**
 * Serialises one outbound frame. U+2028/U+2029 are escaped because some JSON line readers treat
 * them as line terminators; `JSON.stringify` leaves them raw.
 *
 * @internal
 */
export const encodeFrame = (frame: unknown): string => {
  const json = JSON.stringify(frame)
  const safe = json.indexOf("\u2028") === -1 && json.indexOf("\u2029") === -1
    ? json
    : json.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")
  return safe + "\n"
}
