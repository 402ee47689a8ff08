/**
 * Every way an `effect-claude-agent` operation can fail, as one tagged union.
 *
 * All public errors are `Schema.TaggedError`s: they are serialisable, can be matched with
 * `Effect.catchTag`, and carry what a caller needs to act (where the CLI was searched for, the
 * line-size limit and the option that raises it, the stderr tail of a dead process, …).
 *
 * @since 0.1.0
 */
import { Predicate, Schema } from "effect"
import type { SessionStoreError } from "./services/SessionStore.js"
import { optionalNumber, optionalString, optionalUnknown, Strings } from "./internal/schema/schemas.js"

const TypeIdKey = "effect-claude-agent/SdkError"

/**
 * The brand every error of this library carries (`isSdkError` checks it).
 *
 * @example
 * ```ts
 * import { SdkError } from "effect-claude-agent"
 * const isOurs = (u: unknown) => typeof u === "object" && u !== null && SdkError.TypeId in u
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for(TypeIdKey)

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The `claude` executable could not be found or started.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const program = ClaudeAgent.query("hi").pipe(
 *   Stream.runCollect,
 *   Effect.catchTag("CLINotFoundError", (e) => Effect.logError(`searched: ${e.searched.join(", ")}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CLINotFoundError extends Schema.TaggedError<CLINotFoundError>(
  "effect-claude-agent/CLINotFoundError"
)("CLINotFoundError", {
  /** Every location that was tried, in order. */
  searched: Strings,
  /** Why the last candidate failed (e.g. `ENOENT`, `EACCES`, exec format error). */
  reason: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Claude Code CLI not found (${this.reason}). Searched: ${this.searched.join(", ") || "nothing"}. ` +
      `Install it with \`npm install @anthropic-ai/claude-code\`, or set the option ` +
      `\`pathToClaudeCodeExecutable\` or the environment variable CLAUDE_CODE_PATH.`
  }
}

/**
 * Why the pipe to the CLI broke (`CLIConnectionError.reason`):
 *
 * - `SpawnFailed`: the process could not be started for a reason other than a missing binary (a
 *   working directory that is missing or not a directory, no pipes, no process id, `EACCES`, …).
 * - `InputClosed`: a write after the CLI's stdin was ended (by `endInput`, or because the process
 *   is gone).
 * - `WriteFailed`: writing to the CLI's stdin failed.
 * - `ReadFailed`: reading the CLI's stdout failed (an I/O error, or a line that could not be
 *   framed: the `cause` is then the `CLIJSONDecodeError`).
 * - `OutputClosed`: the CLI closed its stdout but did not exit.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SdkError } from "effect-claude-agent"
 *
 * const isClosed = Schema.is(SdkError.CLIConnectionReason)("InputClosed") // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const CLIConnectionReason = Schema.Literal(
  "SpawnFailed",
  "InputClosed",
  "WriteFailed",
  "ReadFailed",
  "OutputClosed"
)

/**
 * @since 0.1.0
 * @category models
 */
export type CLIConnectionReason = typeof CLIConnectionReason.Type

/**
 * The pipe to the CLI process broke or is closed: the process could not be started, its stdin
 * cannot be written, or its stdout cannot be read. `reason` says which, `description` says what
 * happened. The session cannot go on: start another one.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const send: Effect.Effect<void, SdkError.CLIConnectionError>
 * send.pipe(Effect.catchTag("CLIConnectionError", (e) =>
 *   e.reason === "InputClosed" ? Effect.void : Effect.logWarning(e.message)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CLIConnectionError extends Schema.TaggedError<CLIConnectionError>(
  "effect-claude-agent/CLIConnectionError"
)("CLIConnectionError", {
  reason: CLIConnectionReason,
  /** A human readable explanation. */
  description: Schema.String,
  /** The underlying error, if any. */
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return this.description
  }
}

/**
 * Why a session can no longer serve a call (`SessionClosedError.reason`):
 *
 * - `ScopeClosed`: the session's scope closed (its owner ended it) before the call was answered,
 *   or while messages were still being read.
 * - `UseEnded`: a keyed session of an `AgentPool` was used after its `withSession` returned (the
 *   process has gone on to the key's next use).
 *
 * @example
 * ```ts
 * import { SdkError } from "effect-claude-agent"
 *
 * const reasons = SdkError.SessionClosedReason.literals // ["ScopeClosed", "UseEnded"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const SessionClosedReason = Schema.Literal("ScopeClosed", "UseEnded")

/**
 * @since 0.1.0
 * @category models
 */
export type SessionClosedReason = typeof SessionClosedReason.Type

/**
 * The session was closed on this side, by its owner: its scope ended, or (for a keyed session of
 * an `AgentPool`) its use ended. Nothing is wrong with the CLI: the call came too late. Use the
 * session inside its scope (or `withSession`); during a shutdown this is expected.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const status: Effect.Effect<void, SdkError.SessionClosedError>
 * status.pipe(Effect.catchTag("SessionClosedError", () => Effect.void))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionClosedError extends Schema.TaggedError<SessionClosedError>(
  "effect-claude-agent/SessionClosedError"
)("SessionClosedError", {
  reason: SessionClosedReason
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return this.reason === "ScopeClosed"
      ? "The session was closed"
      : "This use of the keyed session has ended: use the session inside withSession"
  }
}

/**
 * What the CLI ended without (`CLIEndedError.reason`):
 *
 * - `NoResult`: a run's messages ended without a `result` message.
 * - `NoSessionId`: the session ended before the CLI reported its session id.
 * - `NoAnswer`: the CLI exited before answering a control request.
 *
 * @example
 * ```ts
 * import { SdkError } from "effect-claude-agent"
 *
 * const reasons = SdkError.CLIEndedReason.literals // ["NoResult", "NoSessionId", "NoAnswer"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const CLIEndedReason = Schema.Literal("NoResult", "NoSessionId", "NoAnswer")

/**
 * @since 0.1.0
 * @category models
 */
export type CLIEndedReason = typeof CLIEndedReason.Type

/**
 * The CLI ended its output on its own, without a crash, before giving what the call waits for: a
 * `result`, a session id, or the answer to a control request (`reason` says which). The prompt may
 * not have run: look at the messages that came (was the input ended too early?), and start a new
 * session to try again.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const result = ClaudeAgent.query("hi").pipe(
 *   ClaudeAgent.lastResult,
 *   Effect.catchTag("CLIEndedError", (e) => Effect.logWarning(e.reason))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CLIEndedError extends Schema.TaggedError<CLIEndedError>(
  "effect-claude-agent/CLIEndedError"
)("CLIEndedError", {
  reason: CLIEndedReason
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    switch (this.reason) {
      case "NoResult":
        return "The run ended without a result message"
      case "NoSessionId":
        return "The session ended before the CLI reported a session id"
      case "NoAnswer":
        return "The Claude Code CLI exited before answering this control request"
    }
  }
}

/**
 * The CLI process died before the work asked of it was done (a crash, a signal, a malformed
 * stdin line). Carries the exit code or signal, the last 2 KiB of stderr and, when one came, the
 * last error `result` message. A CLI that exits normally too early is a `CLIEndedError`.
 *
 * Note: the CLI exits with code 1 whenever its last `result` was an error (an API error, an
 * interrupt, max turns). That `result` is delivered as a message; a query that already received
 * its `result` does not fail with `ProcessError`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.ProcessError>
 * run.pipe(Effect.catchTag("ProcessError", (e) => Effect.logError(e.exitCode, e.stderrTail)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ProcessError extends Schema.TaggedError<ProcessError>(
  "effect-claude-agent/ProcessError"
)("ProcessError", {
  /** The exit code, when the process exited normally. */
  exitCode: optionalNumber,
  /** The signal, when the process was killed by one. */
  signal: optionalString,
  /** The last 2 KiB of what the CLI wrote to stderr. */
  stderrTail: Schema.String,
  /** The last `result` message with `is_error: true`, if one was received. */
  lastErrorResult: optionalUnknown
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const how = this.signal !== undefined
      ? `was killed by ${this.signal}`
      : `exited with code ${this.exitCode ?? "unknown"}`
    const tail = this.stderrTail.trim()
    return `Claude Code CLI ${how}` + (tail.length > 0 ? `; stderr: ${tail}` : "; stderr was empty")
  }
}

/**
 * A line on the CLI's stdout could not be framed or parsed as JSON: it was longer than
 * `maxBufferSize`, or it started with `{` but was not valid JSON.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.CLIJSONDecodeError>
 * run.pipe(Effect.catchTag("CLIJSONDecodeError", (e) => Effect.logError(e.message)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CLIJSONDecodeError extends Schema.TaggedError<CLIJSONDecodeError>(
  "effect-claude-agent/CLIJSONDecodeError"
)("CLIJSONDecodeError", {
  reason: Schema.Literal("LineTooLong", "InvalidJson"),
  /** The first characters of the offending line (at most 200). */
  linePrefix: Schema.String,
  /** The line-size limit in bytes, for `LineTooLong`. */
  limit: optionalNumber,
  /** How many bytes of the line had been seen when the limit was exceeded. */
  observed: optionalNumber,
  /** The JSON parser's message, for `InvalidJson`. */
  parseError: optionalString
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    if (this.reason === "LineTooLong") {
      return `A line from the Claude Code CLI exceeded the ${this.limit ?? "?"}-byte limit ` +
        `(at least ${this.observed ?? "?"} bytes seen). Raise the \`maxBufferSize\` option ` +
        `(in bytes), e.g. \`maxBufferSize: 16 * 1024 * 1024\`. Line starts with: ${this.linePrefix}`
    }
    return `The Claude Code CLI wrote a line that is not valid JSON (${this.parseError ?? "parse error"}): ` +
      this.linePrefix
  }
}

/**
 * A message claims a known `type` (and `subtype`) but does not have that type's shape.
 * Messages of unknown types are not errors: they are delivered as `UnknownMessage`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.MessageParseError>
 * run.pipe(Effect.catchTag("MessageParseError", (e) => Effect.logError(e.message, e.raw)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class MessageParseError extends Schema.TaggedError<MessageParseError>(
  "effect-claude-agent/MessageParseError"
)("MessageParseError", {
  /** What was wrong, as the Schema parser reported it. */
  detail: Schema.String,
  /** The message exactly as the CLI sent it. */
  raw: Schema.Unknown
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Could not decode a message from the Claude Code CLI: ${this.detail}`
  }
}

/**
 * The CLI answered a control request with an error (its `errorCode` when it sent one:
 * `invalid_mode`, `unsupported_request`, …), or with a reply that does not have the shape the
 * request expects (`errorCode: "invalid_response"`). Always an answer of the CLI, to the request
 * `requestId`: a request refused before it was sent is an `OptionsError`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const setMode: Effect.Effect<void, SdkError.ControlError>
 * setMode.pipe(Effect.catchTag("ControlError", (e) =>
 *   e.errorCode === "invalid_mode" ? Effect.void : Effect.fail(e)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ControlError extends Schema.TaggedError<ControlError>(
  "effect-claude-agent/ControlError"
)("ControlError", {
  /** The subtype of the request that failed, e.g. `set_permission_mode`. */
  subtype: Schema.String,
  requestId: Schema.String,
  /** The CLI's error text. */
  error: Schema.String,
  /** The CLI's machine-readable code (`invalid_mode`, `unsupported_request`, …), when it sent one. */
  errorCode: optionalString
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Control request ${this.subtype} (${this.requestId}) failed: ${this.error}` +
      (this.errorCode !== undefined ? ` [${this.errorCode}]` : "")
  }
}

/**
 * A control request got no answer within its deadline (default 60 s; option `controlTimeout`,
 * or per call). A `control_cancel_request` was sent to the CLI for it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const status: Effect.Effect<unknown, SdkError.TimeoutException>
 * status.pipe(Effect.catchTag("TimeoutException", (e) => Effect.logWarning(e.message)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class TimeoutException extends Schema.TaggedError<TimeoutException>(
  "effect-claude-agent/TimeoutException"
)("TimeoutException", {
  requestId: Schema.String,
  subtype: Schema.String,
  /** The deadline that passed, in milliseconds. */
  timeoutMillis: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Control request ${this.subtype} (${this.requestId}) got no answer within ${this.timeoutMillis} ms. ` +
      `Raise the \`controlTimeout\` option if the CLI is legitimately slow.`
  }
}

/**
 * An option or an argument is invalid, or the CLI in use cannot honour it. Raised before any
 * process is spawned for the options of a session; before anything is sent for the arguments of
 * a session's method (an empty model name, a `timeout` that is not a positive duration); after
 * `initialize` when the CLI's reply shows it cannot honour an option (a CLI too old for MCP
 * servers sent in `initialize`, or for `onFailure: "block"`); and for a callback that returns
 * something else than an Effect of what it must produce. Fix the option, or update the CLI.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.OptionsError>
 * run.pipe(Effect.catchTag("OptionsError", (e) => Effect.logError(`${e.field}: ${e.detail}`)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class OptionsError extends Schema.TaggedError<OptionsError>(
  "effect-claude-agent/OptionsError"
)("OptionsError", {
  /** The option's path, e.g. `maxTurns` or `systemPrompt.preset`. */
  field: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Invalid option \`${this.field}\`: ${this.detail}`
  }
}

/**
 * An `AgentPool` request could not even wait for a process: `maxPending` requests were already
 * waiting. Retry later, or raise `maxPending` / `maxConcurrent`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.PoolFullError>
 * run.pipe(Effect.catchTag("PoolFullError", (e) => Effect.logWarning(`${e.pending} already waiting`)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class PoolFullError extends Schema.TaggedError<PoolFullError>(
  "effect-claude-agent/PoolFullError"
)("PoolFullError", {
  /** How many requests were waiting (the pool's `maxPending`). */
  pending: Schema.Number,
  /** How many processes the pool runs at most. */
  maxConcurrent: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `The agent pool is full: ${this.maxConcurrent} processes are busy and ${this.pending} requests ` +
      `are already waiting (maxPending). Retry later, or raise \`maxPending\` or \`maxConcurrent\`.`
  }
}

/**
 * A `Budget` cap stopped a turn: it would have started over the cap (`stage: "start"`, nothing
 * was sent), its spend crossed the cap while it ran (`"running"`: the turn was interrupted
 * through the protocol and its message stream ends with this error), or a pool request's tenant
 * was already over it (`"queued"`: no process was started). `spent` and `limit` are in the
 * cap's `unit`: US dollars or tokens.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.BudgetExceededError>
 * run.pipe(Effect.catchTag("BudgetExceededError", (e) => Effect.logWarning(`${e.scope} ${e.id}: ${e.spent} of ${e.limit}`)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetExceededError extends Schema.TaggedError<BudgetExceededError>(
  "effect-claude-agent/BudgetExceededError"
)("BudgetExceededError", {
  /** What the cap is kept for: a conversation key, a pool, or a tenant. */
  scope: Schema.Literal("key", "pool", "tenant"),
  /** The key, pool name or tenant id. */
  id: Schema.String,
  /** Dollars or tokens. */
  unit: Schema.Literal("usd", "tokens"),
  /** The window the spend counts over: the whole time, or the current UTC day. */
  window: Schema.Literal("total", "day"),
  /** The spend in the window when the turn was stopped. */
  spent: Schema.Number,
  limit: Schema.Number,
  /** Where the turn was stopped. */
  stage: Schema.Literal("start", "running", "queued")
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const amount = (n: number) => this.unit === "usd" ? `$${n.toFixed(4)}` : `${Math.round(n)} tokens`
    return `The ${this.window === "day" ? "daily " : ""}budget of ${this.scope} "${this.id}" is spent: ` +
      `${amount(this.spent)} of ${amount(this.limit)} (${
        this.stage === "running" ? "the running turn was interrupted" : "the turn was not started"
      })`
  }
}

/**
 * An `AgentPool` request waited longer than `pendingTimeout` for a process.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.PoolTimeoutError>
 * run.pipe(Effect.catchTag("PoolTimeoutError", (e) => Effect.logWarning(e.message)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class PoolTimeoutError extends Schema.TaggedError<PoolTimeoutError>(
  "effect-claude-agent/PoolTimeoutError"
)("PoolTimeoutError", {
  /** The wait that ran out, in milliseconds. */
  timeoutMillis: Schema.Number,
  maxConcurrent: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `No agent process became free within ${this.timeoutMillis} ms (all ${this.maxConcurrent} busy). ` +
      `Raise \`pendingTimeout\` or \`maxConcurrent\`.`
  }
}

/**
 * The `AgentPool` was closed: a request made after, or still waiting for a process when, its
 * scope closed, or a turn the pool had to stop because it outlived the pool's `shutdownTimeout`.
 * `stage` says which.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const run: Effect.Effect<void, SdkError.PoolClosedError>
 * run.pipe(Effect.catchTag("PoolClosedError", (e) => Effect.logInfo(`pool closed (${e.stage})`)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class PoolClosedError extends Schema.TaggedError<PoolClosedError>(
  "effect-claude-agent/PoolClosedError"
)("PoolClosedError", {
  /**
   * `refused`: made after the pool closed; `waiting`: was waiting for a process (or for its key);
   * `stopped`: was running and did not finish within `shutdownTimeout`.
   */
  stage: Schema.Literal("refused", "waiting", "stopped")
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    switch (this.stage) {
      case "refused":
        return "The agent pool is closed: it takes no more requests."
      case "waiting":
        return "The agent pool was closed while this request waited for a process."
      case "stopped":
        return "The agent pool was closed and this turn did not end within its `shutdownTimeout`: it was interrupted."
    }
  }
}

/**
 * `setMcpServers(…, { awaitConnection: true })`: servers the CLI added were still connecting when
 * the wait's deadline passed (`timeout`, else the session's `controlTimeout`). The CLI may hold the
 * session's later control requests until it gives up on them (its MCP connection timeout, 30 s by
 * default).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const set: Effect.Effect<void, SdkError.McpServersPendingError>
 * set.pipe(Effect.catchTag("McpServersPendingError", (e) => Effect.logWarning(e.servers.join(", "))))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpServersPendingError extends Schema.TaggedError<McpServersPendingError>(
  "effect-claude-agent/McpServersPendingError"
)("McpServersPendingError", {
  /** The servers still `pending` at the deadline. */
  servers: Strings,
  /** The deadline that passed, in milliseconds. */
  timeoutMillis: Schema.Number
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `MCP servers still connecting after ${this.timeoutMillis} ms: ${this.servers.join(", ")}`
  }
}

/**
 * A `result` message with `is_error: true`, turned into a failure by `ClaudeAgent.failOnErrorResult`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * ClaudeAgent.query("hi").pipe(
 *   ClaudeAgent.failOnErrorResult,
 *   Stream.runDrain,
 *   Effect.catchTag("ResultError", (e) => Effect.logError(e.subtype, e.terminalReason))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultError extends Schema.TaggedError<ResultError>(
  "effect-claude-agent/ResultError"
)("ResultError", {
  /** `success` (with `is_error`, e.g. API errors), `error_during_execution`, `error_max_turns`, … */
  subtype: Schema.String,
  terminalReason: optionalString,
  apiErrorStatus: optionalNumber,
  /** `result` text or the `errors` list, joined. */
  detail: Schema.String,
  /** The whole `result` message. */
  raw: Schema.Unknown
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    // The CLI reports API errors as `subtype: "success"` with `is_error: true`: name the error,
    // never "success".
    const what = this.apiErrorStatus !== undefined
      ? `API error (HTTP ${this.apiErrorStatus})`
      : this.subtype === "success"
      ? this.terminalReason === "api_error" ? "API error" : (this.terminalReason ?? "error")
      : this.terminalReason !== undefined && !this.subtype.includes(this.terminalReason)
      ? `${this.subtype} (${this.terminalReason})`
      : this.subtype
    return `The Claude Code run failed: ${what}: ${this.detail}`
  }
}

/**
 * A `result`'s `structured_output` that the Schema given as `outputSchema` (or to
 * `ClaudeAgent.structured` / `Structured.decode`) does not decode: the CLI checked the output
 * against the JSON Schema, but the Schema asks more (a refinement, a transformation such as a date
 * string that must parse, a field JSON Schema cannot express), or the `result` carries no
 * structured output at all (`value` is then `undefined`).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * ClaudeAgent.structured("When is the launch?", Schema.Struct({ at: Schema.Date })).pipe(
 *   Effect.catchTag("StructuredOutputError", (e) => Effect.logError(e.issue, e.value))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StructuredOutputError extends Schema.TaggedError<StructuredOutputError>(
  "effect-claude-agent/StructuredOutputError"
)("StructuredOutputError", {
  /** The `structured_output` as the CLI sent it (`undefined` when there was none). */
  value: Schema.Unknown,
  /** What is wrong, on one line, field by field: `at: Expected a valid Date, actual Invalid Date`. */
  issue: Schema.String,
  /** The session the `result` belongs to. */
  sessionId: optionalString
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    if (this.value === undefined) return `The result has no structured output: ${this.issue}`
    let shown: string
    try {
      shown = JSON.stringify(this.value) ?? String(this.value)
    } catch {
      shown = String(this.value)
    }
    if (shown.length > 500) shown = `${shown.slice(0, 499)}…`
    return `The structured output does not match the schema: ${this.issue}. Value: ${shown}`
  }
}

/**
 * A session's transcript (or a sub-agent's) is not on disk where the `Sessions` functions looked:
 * under `<config dir>/projects/<project>/<sessionId>.jsonl` for the project `dir` named (and its git
 * worktrees), or in any project when no `dir` was given. Also raised for a transcript that holds no
 * conversation (nothing to list or fork).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sessions } from "effect-claude-agent"
 *
 * const program = Sessions.getSessionInfo("6f1c0c5e-3b1f-4d59-9a51-2f6d1f0e4a10").pipe(
 *   Effect.map((info) => info.summary),
 *   Effect.catchTag("SessionNotFoundError", (e) => Effect.succeed(`none: ${e.message}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionNotFoundError extends Schema.TaggedError<SessionNotFoundError>(
  "effect-claude-agent/SessionNotFoundError"
)("SessionNotFoundError", {
  sessionId: Schema.String,
  /** The sub-agent asked for, when it was a sub-agent's transcript that is missing. */
  agentId: optionalString,
  /** The project directory searched (`options.dir`); absent when every project was searched. */
  dir: optionalString,
  /** Why a transcript that exists does not count (e.g. it holds no messages). */
  reason: optionalString
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const what = this.agentId === undefined
      ? `Session ${this.sessionId}`
      : `Sub-agent ${this.agentId} of session ${this.sessionId}`
    if (this.reason !== undefined) return `${what}: ${this.reason}`
    return this.dir === undefined
      ? `${what} not found in any project directory`
      : `${what} not found in the project directory for ${this.dir}`
  }
}

/**
 * Why a parked spare's claim was refused (`ClaudeAgent.park`):
 *
 * - `not_claimed`: the CLI refused the claim before binding it (`code` says why: `cwd_not_found`,
 *   `env_key_not_claimable`, `project_settings_not_claimable`, `not_a_spare`, …), or the spare had
 *   already been claimed (`code: "already_claimed"`).
 * - `permission_mode_not_claimable`: the process cannot take the permission mode asked for.
 * - `settings_not_applied`: the CLI refused the `settings` overlay.
 * - `option_not_applied`: the CLI refused `model` or `maxThinkingTokens`.
 * - `claim_failed`: the claim broke while in flight (the process died, the reply never came).
 *
 * @since 0.1.0
 * @category models
 */
export const ClaimRefusalReason = Schema.Literal(
  "not_claimed",
  "option_not_applied",
  "permission_mode_not_claimable",
  "settings_not_applied",
  "claim_failed"
)

/**
 * @since 0.1.0
 * @category models
 */
export type ClaimRefusalReason = typeof ClaimRefusalReason.Type

/**
 * A parked spare's claim was refused. Whatever the reason, the prompt has not been sent and the
 * spare's process is being stopped (a spare is claimed once): start the session cold, with
 * `ClaudeAgent.session` or `ClaudeAgent.query` and the same options.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SdkError } from "effect-claude-agent"
 *
 * declare const claim: Effect.Effect<string, SdkError.ClaimRefused>
 * declare const coldStart: Effect.Effect<string>
 * const program = claim.pipe(Effect.catchTag("ClaimRefused", (e) => Effect.zipRight(Effect.logInfo(e.message), coldStart)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ClaimRefused extends Schema.TaggedError<ClaimRefused>(
  "effect-claude-agent/ClaimRefused"
)("ClaimRefused", {
  reason: ClaimRefusalReason,
  /** The CLI's code for the refusal (the text before `:` in its answer), when it gave one. */
  code: optionalString,
  /** What the CLI (or this library) said. */
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `The spare's claim was refused (${this.reason}): ${this.detail}. ` +
      `The prompt was not sent; start the session without the spare.`
  }
}

/**
 * Every error an `effect-claude-agent` operation can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type SdkError =
  | CLINotFoundError
  | CLIConnectionError
  | SessionClosedError
  | CLIEndedError
  | ProcessError
  | CLIJSONDecodeError
  | MessageParseError
  | ControlError
  | TimeoutException
  | OptionsError
  | McpServersPendingError
  | PoolFullError
  | PoolTimeoutError
  | PoolClosedError
  | SessionNotFoundError
  | SessionStoreError
  | BudgetExceededError

/**
 * Whether a value is one of this library's errors.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SdkError } from "effect-claude-agent"
 *
 * const describe = (e: unknown) => (SdkError.isSdkError(e) ? Effect.log(e._tag) : Effect.void)
 * ```
 *
 * @since 0.1.0
 * @category refinements
 */
export const isSdkError = (
  u: unknown
): u is SdkError | ResultError | StructuredOutputError | SessionNotFoundError | ClaimRefused =>
  Predicate.hasProperty(u, TypeId)
