/**
 * The frame reader: bytes in, JSON frames out. Push-fed and free of I/O (no Effect, no timers),
 * so every transport (the subprocess, the testing kit's in-memory CLI, replay) feeds the same
 * one, and the shell decides what a problem or a noise line becomes.
 *
 * The rules: lines split on `0x0A` over raw bytes, a multi-byte character cut by a chunk boundary
 * survives, `\r\n` counts as `\n`, the line limit is checked while a line is still partial, a line
 * spanning chunks is decoded once. Blank lines and lines whose first non-blank character is not
 * `{` are noise (debug output some CLI builds print); a `{` line that is not JSON is a problem.
 *
 * @internal
 */
import { LineSplitter, linePrefix, type LineTooLong } from "./lineSplitter.js"
import { parseJsonBoundary } from "./json.js"

/**
 * One JSON value with the size of the line it came in: its UTF-8 bytes plus its newline (a last
 * line without a newline counts only its bytes), so the sizes of a stream's frames and noise add
 * up to the stream's length.
 *
 * @internal
 */
export interface Frame {
  readonly value: unknown
  readonly bytes: number
}

/**
 * A `{` line that is not JSON, as plain data.
 *
 * @internal
 */
export interface InvalidJson {
  readonly reason: "InvalidJson"
  readonly linePrefix: string
  /** The JSON parser's message. */
  readonly parseError: string
}

/**
 * What ends a stream of frames early, as plain data (the shell maps it to `CLIJSONDecodeError`).
 *
 * @internal
 */
export type ReadProblem = LineTooLong | InvalidJson

export type { LineTooLong }

const invalid = (line: string, error: unknown): InvalidJson => ({
  reason: "InvalidJson",
  linePrefix: linePrefix(line),
  parseError: error instanceof Error ? error.message : String(error)
})

// The index of the first character that is not a space or a tab.
const firstNonBlank = (line: string): number => {
  let i = 0
  while (i < line.length && (line.charCodeAt(i) === 0x20 || line.charCodeAt(i) === 0x09)) i++
  return i
}

/**
 * The push-fed reader. Frames and noise lines accumulate until taken; after a problem the reader
 * ignores everything (the frames before the problem are still there to take).
 *
 * @internal
 */
export class FrameReader {
  private readonly splitter: LineSplitter
  // Reused for every chunk: the lines a chunk completes and their sizes.
  private readonly lines: Array<string> = []
  private readonly sizes: Array<number> = []
  private frames: Array<Frame> = []
  private noise: Array<string> | undefined
  private stopped = false

  constructor(readonly maxBytes: number) {
    this.splitter = new LineSplitter(maxBytes)
  }

  /** Reads a chunk; returns the problem it ends the stream with, if any (once). */
  push(chunk: Uint8Array): ReadProblem | undefined {
    if (this.stopped) return undefined
    const lines = this.lines
    const sizes = this.sizes
    const tooLong = this.splitter.split(chunk, lines, sizes)
    const problem = this.parse(lines, sizes) ?? tooLong
    lines.length = 0
    sizes.length = 0
    if (problem !== undefined) this.stopped = true
    return problem
  }

  /** Reads the last line of a stream that did not end with a newline; the reader takes no more. */
  end(): ReadProblem | undefined {
    if (this.stopped) return undefined
    this.stopped = true
    const bytes = this.splitter.partialBytes
    const last = this.splitter.flush()
    return last === undefined ? undefined : this.parse([last], [bytes])
  }

  /**
   * The frames read since the last call, in order. The next array is made by `Array.of`, not a
   * literal: it waits for the next read, and V8 allocates a literal's arrays in the old generation
   * once enough of them have outlived a young collection; an old array would keep every frame
   * parsed into it alive until the next full collection.
   */
  takeFrames(): Array<Frame> {
    const frames = this.frames
    if (frames.length > 0) this.frames = Array.of()
    return frames
  }

  /** Whether there are frames or noise lines to take. */
  hasOutput(): boolean {
    return this.frames.length > 0 || this.noise !== undefined
  }

  /** The prefixes of the non-blank noise lines read since the last call, if any. */
  takeNoise(): Array<string> | undefined {
    const noise = this.noise
    this.noise = undefined
    return noise
  }

  private parse(lines: ReadonlyArray<string>, sizes: ReadonlyArray<number>): InvalidJson | undefined {
    let i = 0
    for (const line of lines) {
      // `sizes` runs beside `lines`, one entry per line.
      const bytes = sizes[i++] ?? 0
      const at = firstNonBlank(line)
      if (at === line.length || line.charCodeAt(at) !== 0x7b /* { */) {
        if (line.length > 0) (this.noise ??= []).push(linePrefix(line))
        continue
      }
      let value: unknown
      try {
        value = parseJsonBoundary(line)
      } catch (error) {
        return invalid(line, error)
      }
      this.frames.push({ value, bytes })
    }
    return undefined
  }
}
