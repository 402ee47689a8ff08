/**
 * The bookkeeping of message frames: the session id, the run's state, the `result` frames and the
 * tools the model called. Plain TypeScript: the reader feeds it a chunk's messages one by one and
 * takes what changed once per chunk, so the shell does at most one effect per kind of change.
 *
 * @internal
 */
import { Tally } from "../usage/tally.js"
import { isObject, type RawObject } from "./router.js"

/**
 * The run's state: the CLI's last `session_state_changed`, whether a `result` came after the
 * last assistant output, and how many results came so far.
 *
 * @internal
 */
export interface RunState {
  readonly state: string | undefined
  readonly afterResult: boolean
  readonly results: number
}

/**
 * What changed since the last `takeChanges`: each field `undefined` when that kind did not change.
 *
 * @internal
 */
export interface Changes {
  /** The new session id, when a message carried one different from the last. */
  readonly sessionId: string | undefined
  /** The new run state, when it changed. */
  readonly run: RunState | undefined
  /** The `result` frames, in order. */
  readonly results: ReadonlyArray<RawObject> | undefined
  /** The names of the `tool_use` blocks of assistant messages, in order. */
  readonly tools: ReadonlyArray<string> | undefined
}

/**
 * The initial run state.
 *
 * @internal
 */
export const initialRun: RunState = { state: undefined, afterResult: false, results: 0 }

const toolNames = (frame: RawObject, into: Array<string> | undefined): Array<string> | undefined => {
  const message = frame.message
  const content: unknown = isObject(message) ? message.content : undefined
  if (!Array.isArray(content)) return into
  let names = into
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (isObject(block) && block.type === "tool_use" && typeof block.name === "string") {
      ;(names ??= []).push(block.name)
    }
  }
  return names
}

/**
 * The state of one session as its messages tell it.
 *
 * @internal
 */
export class SessionState {
  /** The session id of the latest message that carried a non-empty one. */
  sessionId: string | undefined = undefined
  run: RunState = initialRun
  /** The latest `result` frame. */
  lastResult: RawObject | undefined = undefined
  /** The spend of the session's turns, settled at each `result` before it is queued. */
  readonly usage = new Tally()

  private newSessionId: string | undefined = undefined
  // The id last reported: a chunk that goes from it to another id and back reports nothing.
  private reportedSessionId: string | undefined = undefined
  private runChanged = false
  private results: Array<RawObject> | undefined = undefined
  private tools: Array<string> | undefined = undefined

  /** Takes one message frame into account. */
  observe(frame: RawObject): void {
    const type = frame.type
    this.usage.observe(frame)
    if (type === "result") {
      this.lastResult = frame
      ;(this.results ??= []).push(frame)
      this.run = { ...this.run, afterResult: true, results: this.run.results + 1 }
      this.runChanged = true
    } else if (type === "assistant" || type === "stream_event") {
      if (type === "assistant") this.tools = toolNames(frame, this.tools)
      if (this.run.afterResult) {
        this.run = { ...this.run, afterResult: false }
        this.runChanged = true
      }
    } else if (type === "system" && frame.subtype === "session_state_changed" && typeof frame.state === "string") {
      this.run = { ...this.run, state: frame.state }
      this.runChanged = true
    }
    const id = frame.session_id
    if (typeof id === "string" && id.length > 0 && id !== this.sessionId) {
      this.sessionId = id
      this.newSessionId = id
    }
  }

  /** What changed since the last call, or `undefined` when nothing did. */
  takeChanges(): Changes | undefined {
    const sessionId = this.newSessionId === this.reportedSessionId ? undefined : this.newSessionId
    this.newSessionId = undefined
    if (sessionId === undefined && !this.runChanged && this.results === undefined && this.tools === undefined) {
      return undefined
    }
    if (sessionId !== undefined) this.reportedSessionId = sessionId
    const changes: Changes = {
      sessionId,
      run: this.runChanged ? this.run : undefined,
      results: this.results,
      tools: this.tools
    }
    this.runChanged = false
    this.results = undefined
    this.tools = undefined
    return changes
  }

  /** Whether the last `result` reported an error. */
  get lastWasError(): boolean {
    return this.lastResult !== undefined && this.lastResult.is_error === true
  }
}
