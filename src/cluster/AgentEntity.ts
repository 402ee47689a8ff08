/**
 * `AgentEntity`: a conversation with Claude Code as an `@effect/cluster` entity.
 *
 * The entity is keyed by a conversation id of yours and sharded over the cluster's runners. Its
 * instance opens one CLI session through the `ClaudeAgent` in its context (give it
 * `AgentPool.layer` for limits and warm processes) inside the instance's scope: passivation
 * (`maxIdleTime`), a shard moving away and runner shutdown stop the CLI. The CLI session id is
 * derived from the conversation id (`sessionIdFor`), so every runner resumes the same conversation:
 * the conversation lives in the `SessionStore` in context. The CLI mirrors each turn's transcript
 * entries into it (`sessionStore`), recorded together with the turn's reply when the turn is over;
 * an instance whose conversation the store has `resume`s it from the store (loaded into a
 * temporary config directory), on whichever runner it runs, and starts it with `sessionId`
 * otherwise. Each instance acquires the session's generation when it opens its CLI: a runner that
 * lost the conversation (frozen, partitioned) cannot append to it once the new owner has opened it.
 *
 * `Send` is persisted (`ClusterSchema.Persisted`) and keyed by its turn id: when a runner dies
 * mid-turn, the turn is re-run from its prompt by the conversation's next owner, and a client
 * reading the reply keeps reading. The other RPCs are volatile and forked, so they run while a
 * `Send` streams, except `Continue`, persisted as `Send` is.
 *
 * Tool uses the client decides (`askClient`) wait in the runner's memory, or, with an approval
 * store (`approvalStore`), in the store: the turn ends awaiting approval, `AnswerPermission`
 * decides once from any runner, and `Continue` finishes the turn on the conversation's owner
 * (docs/protocol-defer.md, "In the cluster").
 *
 * @since 0.1.0
 */
import { ClusterSchema, Entity } from "@effect/cluster"
import type { AlreadyProcessingMessage, MailboxFull, PersistenceError } from "@effect/cluster/ClusterError"
import { Sharding } from "@effect/cluster/Sharding"
import * as Snowflake from "@effect/cluster/Snowflake"
import { FileSystem, Path } from "@effect/platform"
import { PlatformError } from "@effect/platform/Error"
import { Rpc } from "@effect/rpc"
import {
  Cause,
  Clock,
  type Context,
  Deferred,
  Duration,
  Effect,
  Either,
  ExecutionStrategy,
  Exit,
  Fiber,
  Mailbox,
  Metric,
  Option,
  ParseResult,
  Predicate,
  Schedule,
  Schema,
  Scope,
  Stream
} from "effect"
import type * as AgentSession from "../AgentSession.js"
import * as Approvals from "../Approvals.js"
import * as ClaudeAgent from "../ClaudeAgent.js"
import * as Permission from "../Permission.js"
import * as ContentBlock from "../schema/ContentBlock.js"
import * as Control from "../schema/Control.js"
import * as Message from "../schema/Message.js"
import type * as Options from "../schema/Options.js"
import * as SdkError from "../SdkError.js"
import { approvalIdFor } from "../internal/approvals/defer.js"
import * as Resume from "../internal/approvals/resume.js"
import * as StoredSession from "../internal/session/storedSession.js"
import * as ConfigDir from "../internal/transcripts/configDir.js"
import {
  ApprovalAlreadyApplied,
  ApprovalAlreadyDecided,
  ApprovalNotFound,
  ApprovalStore,
  ApprovalStoreError,
  type ApprovalStoreShape
} from "../services/ApprovalStore.js"
import {
  type Entry,
  type SessionRef,
  SessionStore,
  SessionStoreError,
  type SessionStoreShape
} from "../services/SessionStore.js"
import * as AgentMetrics from "./AgentMetrics.js"
import * as Durable from "./internal/approvals.js"
import { namespaceOf } from "./internal/keys.js"
import * as TurnStore from "./internal/turnStore.js"
import { v4, v5 } from "./internal/uuid.js"
import { OrphanGuard, type OrphanGuardShape } from "./OrphanGuard.js"

// ---------------------------------------------------------------------------------------------
// Wire schemas
// ---------------------------------------------------------------------------------------------

const RawObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const MessageSelf = Schema.declare(
  (u: unknown): u is Message.Message => Predicate.isRecord(u) && typeof u.type === "string",
  { identifier: "Message" }
)

/**
 * A `Message` on the wire: the CLI's own JSON object, decoded back with `Message.decode` (unknown
 * fields kept), so replies stored by the cluster read back as the messages the CLI wrote.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const message = Schema.decodeUnknownSync(AgentEntity.MessageWire)({ type: "assistant", message: { content: [] } })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageWire: Schema.Schema<Message.Message, { readonly [key: string]: unknown }> = Schema.transformOrFail(
  RawObject,
  MessageSelf,
  {
    strict: true,
    decode: (raw, _, ast) =>
      Either.match(Message.decode(raw), {
        onLeft: (e) => ParseResult.fail(new ParseResult.Type(ast, raw, e.message)),
        onRight: ParseResult.succeed
      }),
    encode: (message) => {
      if (message.type !== "unknown") return ParseResult.succeed({ ...message })
      return ParseResult.succeed(Predicate.isRecord(message.raw) ? message.raw : { type: "unknown" })
    }
  }
)

/**
 * A turn that failed with no typed error (`reason: "Defect"`: something died, a bug), carried
 * across the wire as its message. Every typed failure travels as itself (`AgentFailure`).
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const isBug = (e: AgentEntity.AgentError) => e.reason === "Defect"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AgentError extends Schema.TaggedError<AgentError>("effect-claude-agent/cluster/AgentError")(
  "AgentError",
  { reason: Schema.Literal("Defect"), message: Schema.String }
) {}

/**
 * A turn that had not started by its `deadline` (see `send`): it was never run. Its reply is
 * stored, so the same `turnId` sent again fails the same way; send a new turn if it still matters.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const reply = AgentEntity.send("user-1", "hi", { deadline: "1 minute" }).pipe(
 *   Stream.runCollect,
 *   Effect.catchTag("TurnExpiredError", (e) => Effect.logWarning(`turn ${e.turnId} expired`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class TurnExpiredError extends Schema.TaggedError<TurnExpiredError>(
  "effect-claude-agent/cluster/TurnExpiredError"
)("TurnExpiredError", {
  turnId: Schema.String,
  /** The deadline, in milliseconds since the epoch (the client's clock). */
  deadline: Schema.Number
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `turn ${this.turnId} not started by its deadline (${new Date(this.deadline).toISOString()})`
  }
}

/**
 * A turn sent while the conversation waits for a decision in the approval store (see `layer`'s
 * `approvalStore`): it was not run. Its prompt would reach a conversation whose last turn stopped
 * at the call; decide it first (`answer`), then send a new turn. Its reply is stored, so the same
 * `turnId` sent again fails the same way.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const reply = AgentEntity.send("user-1", "and then?").pipe(
 *   Stream.runCollect,
 *   Effect.catchTag("AwaitingApprovalError", (e) => Effect.logWarning(`decide ${e.toolUseIds.join(", ")} first`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AwaitingApprovalError extends Schema.TaggedError<AwaitingApprovalError>(
  "effect-claude-agent/cluster/AwaitingApprovalError"
)("AwaitingApprovalError", {
  turnId: Schema.String,
  /** The tool uses waiting (`AnswerPermission` takes them). */
  toolUseIds: Schema.Array(Schema.String)
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `turn ${this.turnId} not run: the conversation waits for a decision on ${this.toolUseIds.join(", ")}`
  }
}

/**
 * What a conversation's RPCs fail with, across the wire: the same tagged errors as a local session
 * (every `SdkError` member, `ResultError`, `ClaimRefused`, …), the session store's and the file
 * system's, and `AgentError` for a defect. A client matches them with `Effect.catchTag` as it would
 * locally: `ProcessError` (the CLI crashed), `PoolClosedError`, `TimeoutException`, `ControlError`,
 * `SessionStoreError` (the conversation's store refused or failed), …
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const reply = AgentEntity.send("user-1", "hi").pipe(
 *   Stream.runCollect,
 *   Effect.catchTag("ProcessError", (e) => Effect.logError(e.stderrTail))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const AgentFailure = Schema.Union(
  SdkError.CLINotFoundError,
  SdkError.CLIConnectionError,
  SdkError.SessionClosedError,
  SdkError.CLIEndedError,
  SdkError.ProcessError,
  SdkError.CLIJSONDecodeError,
  SdkError.MessageParseError,
  SdkError.ControlError,
  SdkError.TimeoutException,
  SdkError.OptionsError,
  SdkError.McpServersPendingError,
  SdkError.PoolFullError,
  SdkError.PoolTimeoutError,
  SdkError.PoolClosedError,
  SdkError.ResultError,
  SdkError.StructuredOutputError,
  SdkError.SessionNotFoundError,
  SdkError.ClaimRefused,
  SdkError.BudgetExceededError,
  SessionStoreError,
  PlatformError,
  TurnExpiredError,
  AwaitingApprovalError,
  ApprovalStoreError,
  AgentError
)

/**
 * @since 0.1.0
 * @category errors
 */
export type AgentFailure = typeof AgentFailure.Type

/**
 * What deciding and continuing a call that waits in the approval store (see `layer`'s
 * `approvalStore`) fail with, across the wire: `ApprovalAlreadyDecided` (a second answer, or one
 * after `permissionTimeout`: `approval.state` is `"expired"`), `ApprovalNotFound`,
 * `ApprovalAlreadyApplied` (the call's continuation already ran) and `ApprovalStoreError`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const once = (answer: Effect.Effect<boolean, AgentEntity.ApprovalFailure>) =>
 *   answer.pipe(Effect.catchTag("ApprovalAlreadyDecided", (e) => Effect.succeed(e.approval.state === "approved")))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const ApprovalFailure = Schema.Union(
  ApprovalAlreadyDecided,
  ApprovalNotFound,
  ApprovalAlreadyApplied,
  ApprovalStoreError
)

/**
 * @since 0.1.0
 * @category errors
 */
export type ApprovalFailure = typeof ApprovalFailure.Type

// A turn's defect, made serialisable; typed failures go through as they are.
const defectOf = (defect: unknown): AgentError =>
  new AgentError({
    reason: "Defect",
    message: Predicate.hasProperty(defect, "message") && typeof defect.message === "string"
      ? defect.message
      : String(defect)
  })

/**
 * A prompt on the wire: text, or content blocks (text, images, documents).
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const prompt: AgentEntity.Prompt = [{ type: "text", text: "What is in this picture?" }]
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Prompt = Schema.Union(Schema.String, Schema.Array(ContentBlock.ContentBlockParam))

/**
 * @since 0.1.0
 * @category models
 */
export type Prompt = typeof Prompt.Type

/**
 * A tool use waiting for the client's decision (`askClient`), answered with `AnswerPermission`.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const describe = (p: AgentEntity.PendingPermission) => `${p.toolName} wants ${JSON.stringify(p.input)}`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingPermission = Schema.Struct({
  /** The tool use's id: what `AnswerPermission` takes. */
  toolUseId: Schema.String,
  toolName: Schema.String,
  input: RawObject,
  decisionReason: Schema.NullOr(Schema.String),
  blockedPath: Schema.NullOr(Schema.String),
  /** Rule updates the CLI suggests (give one back in an `allow`'s `updatedPermissions`). */
  suggestions: Schema.Array(Permission.PermissionUpdate),
  /** When the CLI asked, in milliseconds since the epoch. */
  since: Schema.Number,
  /** With an approval store: the approval the call waits in (it survives its runner). */
  approvalId: Schema.optional(Schema.String),
  /** With an approval store: when the call is decided `expired` (`permissionTimeout`). */
  expiresAt: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PendingPermission extends Schema.Schema.Type<typeof PendingPermission> {}

/**
 * What `Status` answers.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const waitingForMe = (s: AgentEntity.Status) => s.pendingPermissions.length > 0
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Struct({
  conversationId: Schema.String,
  /** The CLI session id (`sessionIdFor(conversationId)`). */
  sessionId: Schema.String,
  /** Whether this instance has a CLI process open. */
  running: Schema.Boolean,
  /** Whether a turn is in flight, and its id. */
  busy: Schema.Boolean,
  turnId: Schema.NullOr(Schema.String),
  /** Turns this instance completed (since it started: a passivated or moved entity counts afresh). */
  turns: Schema.Number,
  /** The model the CLI reported last, or the one set with `SetModel` (`null`: the default). */
  model: Schema.NullOr(Schema.String),
  permissionMode: Schema.NullOr(Schema.String),
  pendingPermissions: Schema.Array(PendingPermission)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Status extends Schema.Schema.Type<typeof Status> {}

// ---------------------------------------------------------------------------------------------
// The entity
// ---------------------------------------------------------------------------------------------

/**
 * One turn: sends `prompt` and streams the turn's messages up to its `result`. Persisted and
 * deduplicated by `turnId` (see `send`). `deadline` (milliseconds since the epoch, by the
 * client's clock) is when the turn must have started: a turn still queued then (behind the
 * conversation's earlier turns, or waiting for a runner) is not run, and its reply is a
 * `TurnExpiredError`. A re-run of a turn its client had read part of (its
 * runner stopped mid-turn) runs whatever the time.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.Send._tag // "Send"
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const Send = Rpc.make("Send", {
  payload: { turnId: Schema.String, prompt: Prompt, deadline: Schema.optional(Schema.Number) },
  primaryKey: ({ turnId }) => turnId,
  success: MessageWire,
  error: AgentFailure,
  stream: true
}).annotate(ClusterSchema.Persisted, true)

/**
 * Interrupts the running turn (its `Send` ends with the CLI's `error_during_execution` result).
 * `interrupted: false` when no turn was running.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.Interrupt._tag
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const Interrupt = Rpc.make("Interrupt", {
  success: Schema.Struct({ interrupted: Schema.Boolean }),
  error: AgentFailure
})

/**
 * Sets the model for the next turns (`null`: the default), also for a CLI started later by this
 * instance.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.SetModel._tag
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const SetModel = Rpc.make("SetModel", {
  payload: { model: Schema.NullOr(Schema.String) },
  error: AgentFailure
})

/**
 * Sets the permission mode, also for a CLI started later by this instance.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.SetPermissionMode._tag
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const SetPermissionMode = Rpc.make("SetPermissionMode", {
  payload: { mode: Control.PermissionMode },
  error: AgentFailure
})

/**
 * The conversation's state on its runner (never starts a CLI).
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.GetStatus._tag // "Status"
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const GetStatus = Rpc.make("Status", { success: Status, error: ApprovalStoreError })

/**
 * Answers a pending permission request (see `Status.pendingPermissions`); `false` when no request
 * with that tool use id is waiting (answered already, withdrawn, or its turn ended). A call that
 * waits in the approval store (`layer`'s `approvalStore`) is decided there, once, whichever runner
 * answers: a second answer fails with `ApprovalAlreadyDecided`, and one after `permissionTimeout`
 * too (the approval decided `expired`). Its turn then goes on with `Continue` (see `answer`).
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.AnswerPermission._tag
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const AnswerPermission = Rpc.make("AnswerPermission", {
  payload: { toolUseId: Schema.String, result: Permission.PermissionResult },
  success: Schema.Boolean,
  error: Schema.Union(ApprovalAlreadyDecided, ApprovalStoreError)
})

/**
 * Finishes the turn a call waiting in the approval store interrupted, with the decision recorded
 * for it (`AnswerPermission`, or `expired`): the conversation is resumed from the session store on
 * the runner that owns it now, the CLI's start-up permission request for the call is answered with
 * the decision, and the interrupted turn's messages are streamed up to its `result`. Persisted and
 * keyed by the tool use id, as `Send` by its turn id: a runner that stops mid-way leaves the turn
 * to the conversation's next owner, and sent again, the reply is the same one. Fails with
 * `OptionsError` while the call is undecided, and with `ApprovalAlreadyApplied` once the
 * transcript has the call's result from elsewhere (`Approvals.resume`).
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.Continue._tag
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const Continue = Rpc.make("Continue", {
  payload: { toolUseId: Schema.String },
  primaryKey: ({ toolUseId }) => toolUseId,
  success: MessageWire,
  error: Schema.Union(AgentFailure, ApprovalAlreadyDecided, ApprovalNotFound, ApprovalAlreadyApplied),
  stream: true
}).annotate(ClusterSchema.Persisted, true)

/**
 * Stops the conversation's CLI on its runner, if one runs: a turn in flight ends with an
 * `AgentError`, pending permission requests are withdrawn, and the next turn starts a new CLI
 * (resuming the stored transcript, if any). `stopped: false` when no CLI was running.
 * `AgentAdmin.remove` sends it before it deletes a conversation.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const tag: string = AgentEntity.Stop._tag
 * ```
 *
 * @since 0.1.0
 * @category rpcs
 */
export const Stop = Rpc.make("Stop", { success: Schema.Struct({ stopped: Schema.Boolean }) })

/**
 * The entity: `Send`, `Interrupt`, `SetModel`, `SetPermissionMode`, `Status`, `AnswerPermission`,
 * `Continue`, `Stop`, keyed by a conversation id. Its type is `AgentSession`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const program = Effect.gen(function*() {
 *   const conversation = (yield* AgentEntity.AgentEntity.client)("user-42")
 *   const status = yield* conversation.Status()
 *   yield* conversation.SetModel({ model: "claude-haiku-4-5" })
 *   yield* conversation.Send({ turnId: "turn-1", prompt: "Hello" }).pipe(Stream.runDrain)
 * })
 * ```
 *
 * @since 0.1.0
 * @category entities
 */
export const AgentEntity = Entity.make("AgentSession", [
  Send,
  Interrupt,
  SetModel,
  SetPermissionMode,
  GetStatus,
  AnswerPermission,
  Continue,
  Stop
])

/**
 * The CLI session id of a conversation: a name-based (version 5) UUID of the conversation id, the
 * same on every runner of a cluster, in the namespace named by the entity layer's `namespace`
 * option (give the same one here), or the cluster's own without one. Applications that share a
 * `SessionStore` give themselves different namespaces, so their conversation ids never meet.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const sessionId = AgentEntity.sessionIdFor("user-42")
 * const inBilling = AgentEntity.sessionIdFor("user-42", "billing")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionIdFor = (conversationId: string, namespace?: string | undefined): string =>
  v5(namespaceOf(namespace), conversationId)

/**
 * Where a conversation lives in the `SessionStore`: the CLI's project folder name for the
 * conversations' working directory (the entity's `options.cwd`, default this process's) and
 * `sessionIdFor(conversationId, namespace)`.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { SessionStore } from "effect-claude-agent"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const storedEntries = (conversationId: string) =>
 *   Effect.gen(function*() {
 *     const store = yield* SessionStore.SessionStore
 *     const ref = yield* AgentEntity.sessionRefFor(conversationId, { cwd: "/srv/work" })
 *     return Option.match(yield* store.load(ref), { onNone: () => 0, onSome: (entries) => entries.length })
 *   })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionRefFor = (
  conversationId: string,
  options: { readonly cwd?: string | undefined; readonly namespace?: string | undefined } = {}
): Effect.Effect<SessionRef> =>
  Effect.map(
    StoredSession.projectKeyOf(options.cwd ?? "."),
    (projectKey) => ({ projectKey, sessionId: sessionIdFor(conversationId, options.namespace) })
  )

// ---------------------------------------------------------------------------------------------
// Behaviour
// ---------------------------------------------------------------------------------------------

/**
 * Which tool uses go to the client for a decision: all of them (`true`), or those the predicate
 * picks; the others go to the options' `canUseTool` (denied without one).
 *
 * @since 0.1.0
 * @category models
 */
export type AskClient = boolean | ((toolName: string, input: { readonly [key: string]: unknown }) => boolean)

/**
 * Options of `layer`.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const options: AgentEntity.LayerOptions = {
 *   options: (conversationId) => ({ cwd: `/srv/work/${conversationId}`, maxTurns: 20 }),
 *   askClient: (toolName) => toolName === "Bash",
 *   permissionTimeout: "10 minutes",
 *   maxIdleTime: "5 minutes"
 * }
 * ```
 *
 * @since 0.1.0
 * @category options
 */
export interface LayerOptions<R = never> {
  /**
   * The session options, or a function of the conversation id giving them. `sessionId`, `resume`,
   * `continue`, `forkSession`, `resumeSessionAt`, `resumeDropsTurn`, `sessionStore` and
   * `resumeMissing` are the entity's to set and are ignored. Callbacks (hooks,
   * `canUseTool`, in-process tools) run on the runner that owns the conversation, with the
   * services `R` given to the layer.
   */
  readonly options?: Options.Options<R> | ((conversationId: string) => Options.Options<R>) | undefined
  /** Tool uses decided by the client (`Status.pendingPermissions`, `AnswerPermission`). Default `false`. */
  readonly askClient?: AskClient | undefined
  /**
   * How long a tool use waits for the client before it is denied. Default: no limit in memory;
   * with an approval store, its approvals' expiry (24 hours by default), after which the call is
   * decided `expired`.
   */
  readonly permissionTimeout?: Duration.DurationInput | undefined
  /**
   * Where tool uses the client decides wait, so that the wait survives its runner: this store, or
   * the `ApprovalStore` service in context (`ApprovalStores.layerSql` on the cluster's database). A
   * call then ends its turn awaiting approval (the reply's `system/awaiting_approval` message, then
   * a `result` with `terminal_reason: "tool_deferred"`), the CLI may exit, `AnswerPermission`
   * decides it in the store from any runner, and `Continue` finishes the turn on the conversation's
   * owner. Without one, the wait is in the runner's memory and ends with it.
   */
  readonly approvalStore?: ApprovalStoreShape | undefined
  /** How long an idle conversation keeps its CLI before the entity is passivated. Default: the cluster's (1 minute). */
  readonly maxIdleTime?: Duration.DurationInput | undefined
  /** Requests that may wait per conversation. Default: the cluster's (4096). */
  readonly mailboxCapacity?: number | undefined
  /**
   * Names this application's conversations within its `SessionStore`, for applications that share
   * a store: session ids are derived from it (`sessionIdFor`). Default: the cluster's namespace.
   */
  readonly namespace?: string | undefined
  /**
   * How long the reply of a completed turn waits for a client to read it to its end (a client
   * acknowledges each chunk it receives) before the request is ended; its messages stay stored
   * for a client that asks again with the same turn id. A client that went away, or stopped
   * reading at the `result`, holds nothing up meanwhile: the conversation's next turns run.
   * Default 30 seconds.
   */
  readonly replyTimeout?: Duration.DurationInput | undefined
}

interface Live {
  readonly session: AgentSession.AgentSession
  readonly scope: Scope.CloseableScope
  /** Keeps the turn's mirrored entries until `commit` records them with the turn's reply. */
  readonly turns: TurnStore.TurnWriter
}

interface Pending {
  readonly info: PendingPermission
  readonly answer: Deferred.Deferred<Permission.PermissionResult>
}

// What an entity instance works with: fixed when the instance starts.
interface Instance<R> {
  readonly conversationId: string
  readonly sessionId: string
  /** The conversation's session in the store: the CLI's project key for `cwd`, and `sessionId`. */
  readonly ref: SessionRef
  /** The runner's address (host:port), as the metrics tag it. */
  readonly runner: string
  readonly agent: ClaudeAgent.ClaudeAgentShape
  readonly store: SessionStoreShape
  readonly guard: Option.Option<OrphanGuardShape>
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly services: Context.Context<R | FileSystem.FileSystem | Path.Path>
  /**
   * The parent of the instance's CLI sessions: forked from the instance's scope when the entity is
   * built, before the cluster creates the entity's RPC server in that scope, so it closes after the
   * server has interrupted the requests in flight. A session closed first would fail its turn, and
   * the failure would be stored as the turn's final reply instead of the turn re-running elsewhere.
   */
  readonly sessions: Scope.Scope
  /**
   * Whether the runner is stopping. A turn that fails then (its CLI got the stop signal too, say)
   * waits for the runner to interrupt it, so that it re-runs on the next owner rather than being
   * stored as failed.
   */
  readonly shuttingDown: Effect.Effect<boolean>
  /** How long a completed turn's reply waits for its client before the request is ended. */
  readonly replyTimeout: Duration.Duration
  /** The session options given to the layer, without what the entity sets itself. */
  readonly base: Options.Options<R>
  /** The durable wait, with an approval store and `askClient`. */
  readonly durable: Durable.Durable | undefined
  readonly permissionTimeout: Duration.DurationInput | undefined
}

// What an instance knows of its conversation now: the RPC handlers read and change it.
interface Conversation {
  live: Live | undefined
  busy: boolean
  turnId: string | null
  turns: number
  model: string | null
  modelOverride: string | null | undefined
  permissionMode: string | null
  permissionOverride: Control.PermissionMode | undefined
  readonly pending: Map<string, Pending>
  /** The ids of the turns the store has recorded, read at the instance's first turn. */
  committed: Set<string> | undefined
  /** The calls waiting for a decision or their continuation (with an approval store). */
  outstanding: Set<string> | undefined
}

// A tool use the client decides: it waits in `pending` for `AnswerPermission`, or is denied once
// `permissionTimeout` has passed.
const askClient = (
  state: Conversation,
  permissionTimeout: Duration.DurationInput | undefined,
  toolName: string,
  input: { readonly [key: string]: unknown },
  context: Permission.CanUseToolContext
): Effect.Effect<Permission.PermissionResult> =>
  Effect.gen(function*() {
    const answer = yield* Deferred.make<Permission.PermissionResult>()
    const since = yield* Clock.currentTimeMillis
    state.pending.set(context.toolUseID, {
      answer,
      info: {
        toolUseId: context.toolUseID,
        toolName,
        input,
        decisionReason: context.decisionReason ?? null,
        blockedPath: context.blockedPath ?? null,
        suggestions: context.suggestions,
        since
      }
    })
    const wait = Deferred.await(answer)
    return yield* permissionTimeout === undefined ? wait : wait.pipe(
      Effect.timeoutTo({
        duration: permissionTimeout,
        onTimeout: () => Permission.deny(`${toolName}: no answer from the client in time`),
        onSuccess: (result) => result
      })
    )
  }).pipe(Effect.ensuring(Effect.sync(() => state.pending.delete(context.toolUseID))))

// The session's `canUseTool`: the client's decision for the tools `askClient` names, the
// options' own callback (or a denial) for the others.
const permissionsFor = <R>(
  state: Conversation,
  options: LayerOptions<R>,
  own: Options.Options<R>["canUseTool"]
): Permission.CanUseTool<unknown, R> | undefined => {
  const ask = options.askClient ?? false
  if (ask === false) return own
  return (toolName, input, context) =>
    ask === true || ask(toolName, input)
      ? askClient(state, options.permissionTimeout, toolName, input, context)
      : own !== undefined
      ? own(toolName, input, context)
      : Effect.succeed(Permission.deny(`${toolName} is not allowed`))
}

// The options of the conversation's CLI sessions. With the durable wait, the calls the client
// decides are deferred by a hook and recorded in the approval store, with `permissionTimeout` as
// their expiry.
const sessionOptionsOf = <R>(
  instance: Instance<R>,
  state: Conversation,
  canUseTool: Permission.CanUseTool<unknown, R> | undefined,
  sessionStore: SessionStoreShape
): Options.Options<R> => {
  const { base, durable, permissionTimeout } = instance
  return {
    ...base,
    sessionStore,
    ...(state.modelOverride === undefined ? {} : { model: state.modelOverride ?? undefined }),
    ...(state.permissionOverride === undefined ? {} : { permissionMode: state.permissionOverride }),
    ...(durable === undefined ? {} : {
      hooks: Durable.withDeferral(base.hooks, durable.ask),
      approvalStore: durable.store,
      ...(permissionTimeout === undefined ? {} : { approvalTimeout: permissionTimeout })
    }),
    canUseTool
  }
}

const nonEmpty = (s: string | undefined): string | undefined => (s !== undefined && s.length > 0 ? s : undefined)

// The CLI refuses `--session-id` for a session it has a transcript of under its own config
// directory: one left there by a conversation the store no longer has (deleted, or its first turn
// never recorded) is removed before the conversation starts again.
const removeLeftover = <R>(instance: Instance<R>) =>
  Effect.gen(function*() {
    const env = instance.base.env ?? {}
    const configDir = yield* ConfigDir.resolve({ configDir: nonEmpty(env.CLAUDE_CONFIG_DIR), home: nonEmpty(env.HOME) })
    const file = instance.path.join(configDir, "projects", instance.ref.projectKey, `${instance.sessionId}.jsonl`)
    if (yield* instance.fs.exists(file)) {
      yield* instance.fs.remove(file)
      yield* Effect.logDebug("AgentEntity: a local transcript the store does not have was removed").pipe(
        Effect.annotateLogs({ conversationId: instance.conversationId, file })
      )
    }
  })

// Opens the conversation's CLI session in a scope of the instance's: the stored conversation
// resumed from the store, or a new one when the store does not have it.
const openSession = <R>(
  instance: Instance<R>,
  state: Conversation,
  canUseTool: Permission.CanUseTool<unknown, R> | undefined
) =>
  Effect.gen(function*() {
    const { conversationId, guard, ref, sessionId, store } = instance
    // From here on, the appends of an earlier owner of the conversation are refused.
    const turns = TurnStore.make(store, ref, yield* store.acquire(ref))
    const scope = yield* Scope.fork(instance.sessions, ExecutionStrategy.sequential)
    // Forked first, so it closes last: the guard forgets the process after it has exited.
    const guardScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const sessionOptions = sessionOptionsOf(instance, state, canUseTool, turns.store)
    // Each attempt in a scope of its own, closed if it fails: a pool holds a session's slot until
    // the scope it was opened in closes, also when the session failed to open.
    const open = (options: Options.Options<R>) =>
      Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (attempt) =>
        instance.agent.session(options).pipe(
          Scope.extend(attempt),
          Effect.onError(() => Scope.close(attempt, Exit.void))
        ))
    const { resumed, session } = yield* open({ ...sessionOptions, resume: sessionId }).pipe(
      Effect.map((session) => ({ resumed: true, session })),
      Effect.catchTag("SessionNotFoundError", () =>
        removeLeftover(instance).pipe(
          Effect.zipRight(open({ ...sessionOptions, sessionId })),
          Effect.map((session) => ({ resumed: false, session }))
        )),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    if (Option.isSome(guard) && Option.isSome(session.pid)) {
      yield* guard.value.watch(session.pid.value).pipe(Scope.extend(guardScope))
    }
    yield* Effect.logDebug(resumed ? "AgentEntity: session resumed from the store" : "AgentEntity: session started")
      .pipe(Effect.annotateLogs({ conversationId, sessionId }))
    const opened: Live = { session, scope, turns }
    state.live = opened
    return opened
  }).pipe(Effect.provide(instance.services))

// A session whose turn did not complete (interrupted, failed, the CLI died) is not reused:
// the next turn resumes the conversation on a new process.
const drop = (state: Conversation, current: Live) =>
  Effect.suspend(() => {
    if (state.live === current) state.live = undefined
    return Scope.close(current.scope, Exit.void)
  })

const observe = (state: Conversation, message: Message.Message) => {
  if (Message.isSystemInit(message)) {
    state.model = message.model
    state.permissionMode = message.permissionMode
  }
}

const Reply = Schema.Array(MessageWire)
const encodeReply = Schema.encodeSync(Reply)
const decodeReply = Schema.decodeUnknownOption(Reply)
// A store that is briefly unavailable should not fail the turn that reads it.
const storeRetry = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

// The turn's mirrored entries, its id and its reply, recorded together: a turn that completed on a
// runner that stopped before its client had read the whole reply is answered from the store by the
// next owner, which must not send the prompt a second time (the transcript has the turn).
const commitTurn = (
  current: Live,
  turnId: string,
  messages: ReadonlyArray<Message.Message>,
  approvals?: ReadonlyArray<Entry>
) => current.turns.commit(turnId, encodeReply(messages), approvals)

// The calls of the conversation that wait for a decision or their continuation, read from the
// store at the instance's first turn and kept up to date by its turns.
const outstandingOf = <R>(instance: Instance<R>, state: Conversation) =>
  state.outstanding !== undefined
    ? Effect.succeed(state.outstanding)
    : Effect.map(
      TurnStore.awaiting(instance.store, instance.ref).pipe(
        Effect.retry({ schedule: storeRetry, while: (e) => e.reason === "Unavailable" })
      ),
      (loaded) => {
        // A turn of this instance may have recorded calls meanwhile: kept.
        for (const id of state.outstanding ?? []) loaded.add(id)
        state.outstanding = loaded
        return loaded
      }
    )

// The reply of `turnId`, if the store recorded the turn (completed here, or on a runner that
// stopped before its client had read it): the messages its client has not acknowledged.
const storedReply = <R>(instance: Instance<R>, state: Conversation, request: TurnRequest, turnId: string) =>
  Effect.gen(function*() {
    const { ref, store } = instance
    if (state.committed === undefined) {
      const loaded = yield* TurnStore.committed(store, ref)
      // A turn of this instance may have completed meanwhile: kept.
      for (const id of state.committed ?? []) loaded.add(id)
      state.committed = loaded
    }
    if (!state.committed.has(turnId)) return Option.none()
    const stored = Option.flatMap(yield* TurnStore.reply(store, ref, turnId), decodeReply)
    return Option.map(stored, (messages) => {
      const sent = Option.map(request.lastSentChunkValue, (m) => JSON.stringify(Schema.encodeSync(MessageWire)(m)))
      const at = Option.match(sent, {
        onNone: () => -1,
        onSome: (json) => messages.findIndex((m) => JSON.stringify(Schema.encodeSync(MessageWire)(m)) === json)
      })
      return messages.slice(at + 1)
    })
  }).pipe(Effect.retry({ schedule: storeRetry, while: (e) => e.reason === "Unavailable" }))

// A turn that has not started by its deadline is not started: its client has likely gone, and
// the prompt would reach the model minutes or hours after it was sent. A re-run of a turn whose
// client had read part of it (its runner stopped mid-turn) started in time, and runs.
const refuseExpired = (request: Entity.Request<typeof Send>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const deadline = request.payload.deadline
    const inTime = deadline === undefined || now <= deadline || Option.isSome(request.lastSentChunk)
    return inTime ? Effect.void : Effect.fail(new TurnExpiredError({ turnId: request.payload.turnId, deadline }))
  })

// What a turn runs on: its messages up to the `result`, how it is recorded, and what is left to
// undo when it does not complete.
interface TurnRun<E> {
  readonly messages: Stream.Stream<Message.Message, E>
  readonly commit: (turnId: string, messages: ReadonlyArray<Message.Message>) => Effect.Effect<void, SessionStoreError>
  readonly abandon: Effect.Effect<void>
}

const enter = (state: Conversation, turnId: string) =>
  Effect.sync(() => {
    state.busy = true
    state.turnId = turnId
  })

// A turn's messages: those of the run `start` begins, the turn recorded in the store before the
// `result` is passed on; a defect becomes an `AgentError`, and a run that did not complete is
// abandoned.
const turnMessages = <E, E2>(
  state: Conversation,
  turnId: string,
  start: Effect.Effect<TurnRun<E>, E2>
): Stream.Stream<Message.Message, E | E2 | SessionStoreError | AgentError> =>
  Stream.suspend(() => {
    let run: TurnRun<E> | undefined
    let completed = false
    const messages: Array<Message.Message> = []
    const begin = Effect.map(start, (started) => {
      run = started
      return started.messages.pipe(
        Stream.tap((message) =>
          Effect.sync(() => {
            observe(state, message)
            messages.push(message)
          })
        ),
        Stream.mapEffect((message): Effect.Effect<Message.Message, SessionStoreError> =>
          Message.isResult(message)
            ? started.commit(turnId, messages).pipe(
              Effect.tapError(() => Metric.increment(AgentMetrics.mirrorFailures)),
              Effect.zipRight(Effect.sync(() => {
                completed = true
                state.turns++
                state.committed?.add(turnId)
              })),
              Effect.as(message)
            )
            : Effect.succeed(message)
        )
      )
    })
    return Stream.unwrap(begin).pipe(
      Stream.catchAllCause((cause): Stream.Stream<never, E | E2 | SessionStoreError | AgentError> => {
        if (Option.isSome(Cause.failureOption(cause))) return Stream.failCause(cause)
        const defect = Cause.dieOption(cause)
        return Option.isSome(defect) ? Stream.fail(defectOf(defect.value)) : Stream.failCause(cause)
      }),
      Stream.ensuring(Effect.suspend(() => {
        state.busy = false
        state.turnId = null
        return run !== undefined && !completed ? run.abandon : Effect.void
      }))
    )
  })

// A turn sent while a call of the conversation waits in the approval store is not run: the CLI
// would first finish the turn that stopped at the call, with a result of its own.
const refuseAwaiting = <R>(instance: Instance<R>, state: Conversation, turnId: string) =>
  instance.durable === undefined ?
    Effect.void :
    Effect.flatMap(outstandingOf(instance, state), (waiting) =>
      waiting.size === 0
        ? Effect.void
        : Effect.fail(new AwaitingApprovalError({ turnId, toolUseIds: [...waiting] })))

// The calls a turn stopped at, recorded with it (with the durable wait).
const awaitingIn = <R>(instance: Instance<R>, messages: ReadonlyArray<Message.Message>): Array<string> =>
  instance.durable === undefined
    ? []
    : messages.flatMap((m) => Option.toArray(Approvals.awaitingApproval(m))).map((a) => a.toolUseId)

// A `Send`: the prompt sent on the conversation's session (opened if need be).
const prompted = <R>(
  instance: Instance<R>,
  state: Conversation,
  ensureOpen: Effect.Effect<Live, SdkError.SdkError | SessionStoreError | PlatformError>,
  request: Entity.Request<typeof Send>
): Effect.Effect<
  TurnRun<AgentSession.MessageError | SessionStoreError>,
  SdkError.SdkError | SessionStoreError | PlatformError | TurnExpiredError | AwaitingApprovalError | ApprovalStoreError
> =>
  Effect.gen(function*() {
    yield* refuseExpired(request)
    yield* refuseAwaiting(instance, state, request.payload.turnId)
    const current = yield* ensureOpen
    // From here on, a turn that does not complete leaves its session behind.
    return yield* Effect.zipRight(enter(state, request.payload.turnId), current.session.send(request.payload.prompt))
      .pipe(
        Effect.as<TurnRun<AgentSession.MessageError | SessionStoreError>>({
          messages: current.session.receiveResponse,
          commit: (turnId, messages) => {
            const waiting = awaitingIn(instance, messages)
            return commitTurn(current, turnId, messages, waiting.map((id) => TurnStore.approvalEntry("awaiting", id)))
              .pipe(Effect.zipRight(Effect.sync(() => waiting.forEach((id) => state.outstanding?.add(id)))))
          },
          abandon: drop(state, current)
        }),
        Effect.onError(() => drop(state, current))
      )
  })

// A `Continue`: the decided call's session resumed on a CLI of its own, fenced as a session the
// entity opens (the CLI that stopped at the call, if this instance still has it, is closed first:
// one process per conversation); the interrupted turn streamed to its `result` (resume.ts).
const continued = <R>(
  instance: Instance<R>,
  state: Conversation,
  canUseTool: Permission.CanUseTool<unknown, R> | undefined,
  store: ApprovalStoreShape,
  toolUseId: string
): Effect.Effect<
  TurnRun<SdkError.SdkError | ApprovalAlreadyApplied | SessionStoreError>,
  ApprovalNotFound | ApprovalStoreError | SessionStoreError
> =>
  Effect.gen(function*() {
    const id = approvalIdFor(instance.sessionId, toolUseId)
    const approval = yield* Effect.flatMap(
      store.get(id),
      Option.match({ onNone: () => Effect.fail(new ApprovalNotFound({ id })), onSome: Effect.succeed })
    )
    if (state.live !== undefined) yield* drop(state, state.live)
    // The transcript is stored as the CLI writes it: once the tool has run, its result is in the
    // store, and an attempt cut short after that does not make the next one run the tool again.
    const generation = yield* instance.store.acquire(instance.ref)
    const turns = TurnStore.direct(instance.store, instance.ref, generation)
    const options: Options.Options<R> = {
      ...sessionOptionsOf(instance, state, canUseTool, turns.store),
      sessionStoreFlush: "eager"
    }
    yield* enter(state, Durable.continuationTurnId(toolUseId))
    yield* Effect.logDebug("AgentEntity: continuing a decided call").pipe(
      Effect.annotateLogs({ conversationId: instance.conversationId, toolUseId, decision: approval.state })
    )
    const done = TurnStore.approvalEntry("continued", toolUseId)
    const settled = Effect.sync(() => state.outstanding?.delete(toolUseId))
    // An attempt cut short after the tool ran left its result in the store: `continued` refuses
    // (`ApprovalAlreadyApplied`), the tool does not run again, and the conversation takes turns again.
    const run = Resume.continued(approval, options).pipe(
      Stream.tapError((e) =>
        e._tag !== "ApprovalAlreadyApplied" ? Effect.void : instance.store.appendAll(
          instance.ref,
          [{ subpath: TurnStore.APPROVALS, entries: [done] }],
          { generation }
        ).pipe(
          Effect.zipRight(settled),
          Effect.catchAll((cause) => Effect.logWarning("AgentEntity: could not record a call as continued", cause))
        )
      )
    )
    return {
      messages: run.pipe(
        Stream.provideService(ClaudeAgent.ClaudeAgent, instance.agent),
        Stream.provideContext(instance.services)
      ),
      commit: (turnId, reply) => Effect.zipRight(turns.commit(turnId, encodeReply(reply), [done]), settled),
      abandon: Effect.void
    }
  })

/**
 * What a reply carries first when its turn is run again after its runner stopped, if the client
 * had read part of the earlier attempt: from here on, the messages are the new attempt's (see
 * `isRetry`). On the wire: `{ type: "system", subtype: "turn_retry", turn_id, reason }`; it reads
 * back as a `Message` of type `"unknown"` whose `raw` is that object.
 */
const retryMarker = (turnId: string): Message.Message => ({
  type: "unknown",
  raw: { type: "system", subtype: "turn_retry", turn_id: turnId, reason: "runner_stopped" }
})

/**
 * Whether a message of a `Send` reply marks a new attempt of the turn: its runner stopped
 * mid-turn, the next owner runs the turn again from its prompt, and the messages before the mark
 * belong to an attempt that never completed. A client showing the reply as it streams should
 * discard what it showed of the earlier attempt (the new attempt starts with a new `system/init`).
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Message } from "effect-claude-agent"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * // The assistant text of the attempt that completed.
 * const finalText = (conversationId: string, prompt: string) =>
 *   AgentEntity.send(conversationId, prompt).pipe(
 *     Stream.runFold([] as Array<string>, (texts, m) =>
 *       AgentEntity.isRetry(m) ? [] : Message.isAssistant(m) ? [...texts, Message.assistantText(m)] : texts
 *     )
 *   )
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetry = (message: Message.Message): boolean =>
  message.type === "unknown" && Predicate.isRecord(message.raw) && message.raw.type === "system" &&
  message.raw.subtype === "turn_retry"

const takeoverCounter = <R>(instance: Instance<R>, reason: "runner_stopped" | "reply_replayed") =>
  AgentMetrics.turnTakeovers.pipe(Metric.tagged("reason", reason), Metric.tagged("runner", instance.runner))

// Runs a turn once the conversation's earlier turns are over, counting it in the runner's
// backlog (`AgentMetrics.turnsQueued`) while it waits.
const inTurn = <R>(instance: Instance<R>, turnLock: Effect.Semaphore) => <A, E, R2>(turn: Effect.Effect<A, E, R2>) =>
  Effect.suspend(() => {
    const queued = AgentMetrics.turnsQueued.pipe(Metric.tagged("runner", instance.runner))
    let waiting = true
    const leave = Effect.suspend(() => {
      if (!waiting) return Effect.void
      waiting = false
      return Metric.modify(queued, -1)
    })
    return Metric.modify(queued, 1).pipe(
      Effect.zipRight(turnLock.withPermits(1)(Effect.zipRight(leave, turn))),
      Effect.ensuring(leave)
    )
  })

// What a turn's reply needs of its request: what its client has acknowledged.
interface TurnRequest {
  readonly lastSentChunk: Option.Option<{ readonly id: Snowflake.Snowflake }>
  readonly lastSentChunkValue: Option.Option<Message.Message>
}

// One `Send` or `Continue`. The turn runs in a fiber of its own, one turn of the conversation at a time
// (`turnLock`), into a mailbox the reply streams from: a reply waits for its client to
// acknowledge each chunk, and a client that stops reading (it went away, or stopped at the
// `result`) must hold up neither the turn nor the conversation's next ones. Once the turn is over,
// its reply has `replyTimeout` to be read to its end before the request is ended (interrupted:
// its messages stay stored for a client that asks again with the same turn id).
const runTurn = <R, E>(
  instance: Instance<R>,
  state: Conversation,
  turnLock: Effect.Semaphore,
  request: TurnRequest,
  turnId: string,
  turn: Stream.Stream<Message.Message, E>
): Stream.Stream<Message.Message, E | SessionStoreError> =>
  Stream.suspend(() => {
    // The first attempt's `result` reached the client, only the end of the reply was lost.
    if (Option.exists(request.lastSentChunkValue, Message.isResult)) return Stream.empty
    return Stream.unwrapScoped(Effect.gen(function*() {
      const { conversationId, replyTimeout, shuttingDown } = instance
      const requestFiber = yield* Effect.withFiberRuntime<Fiber.RuntimeFiber<unknown, unknown>>((fiber) =>
        Effect.succeed(fiber)
      )
      const scope = yield* Effect.scope
      const mailbox = yield* Mailbox.make<Message.Message, E>()
      if (Option.isSome(request.lastSentChunk)) {
        const gap = (yield* Clock.currentTimeMillis) - Snowflake.timestamp(request.lastSentChunk.value.id)
        yield* Metric.update(AgentMetrics.takeoverTime, Math.max(0, gap))
      }
      // A turn the store has recorded is never run again (its prompt would reach the model twice):
      // its runner stopped before its client had read the reply, or the client sent it again.
      const stored = yield* storedReply(instance, state, request, turnId)
      if (Option.isSome(stored)) {
        yield* Metric.increment(takeoverCounter(instance, "reply_replayed"))
        return Stream.fromIterable(stored.value)
      }
      if (Option.isSome(request.lastSentChunk)) {
        yield* Metric.increment(takeoverCounter(instance, "runner_stopped"))
        yield* Effect.logInfo("AgentEntity: re-running a turn whose runner stopped").pipe(
          Effect.annotateLogs({ conversationId, turnId })
        )
        yield* mailbox.offer(retryMarker(turnId))
      }
      const unread = Effect.sleep(replyTimeout).pipe(
        Effect.zipRight(
          Effect.logInfo("AgentEntity: no client read the end of a turn's reply; request ended").pipe(
            Effect.annotateLogs({ conversationId, turnId })
          )
        ),
        Effect.zipRight(Fiber.interruptFork(requestFiber)),
        Effect.forkIn(scope),
        Effect.asVoid
      )
      yield* turn.pipe(
        Stream.runForEachChunk((chunk) => mailbox.offerAll(chunk)),
        Effect.zipRight(mailbox.end),
        // A turn that fails while the runner stops (its CLI got the stop signal too, say) waits
        // for the runner to interrupt it: it re-runs on the next owner instead of being stored as failed.
        Effect.catchAll((error) => Effect.flatMap(shuttingDown, (down) => down ? Effect.never : mailbox.fail(error))),
        inTurn(instance, turnLock),
        Effect.zipRight(unread),
        Effect.forkIn(scope)
      )
      return Mailbox.toStream(mailbox)
    }))
  })

// The calls of the conversation waiting in the approval store, as `Status` lists them.
const storedPending = <R>(instance: Instance<R>): Effect.Effect<Array<PendingPermission>, ApprovalStoreError> =>
  instance.durable === undefined
    ? Effect.succeed([])
    : Effect.map(
      instance.durable.store.listPending({ projectKey: instance.ref.projectKey, sessionId: instance.sessionId }),
      (approvals) => approvals.map(Durable.pendingOf)
    )

// The volatile RPCs: they act on the session that is open, if any, and on what the next one
// is opened with.
const controlHandlers = <R>(instance: Instance<R>, state: Conversation) => ({
  Interrupt: () =>
    Rpc.fork(Effect.suspend(() => {
      const current = state.live
      if (!state.busy || current === undefined) return Effect.succeed({ interrupted: false })
      return current.session.interrupt().pipe(
        Effect.as({ interrupted: true })
      )
    })),
  SetModel: ({ payload }: { readonly payload: { readonly model: string | null } }) =>
    Rpc.fork(Effect.suspend(() => {
      state.modelOverride = payload.model
      if (payload.model !== null) state.model = payload.model
      const current = state.live
      return current === undefined
        ? Effect.void
        : current.session.setModel(payload.model ?? undefined).pipe(Effect.asVoid)
    })),
  SetPermissionMode: ({ payload }: { readonly payload: { readonly mode: Control.PermissionMode } }) =>
    Rpc.fork(Effect.suspend(() => {
      state.permissionOverride = payload.mode
      state.permissionMode = payload.mode
      const current = state.live
      return current === undefined
        ? Effect.void
        : current.session.setPermissionMode(payload.mode).pipe(Effect.asVoid)
    })),
  Status: () =>
    Rpc.fork(Effect.map(storedPending(instance), (stored) => ({
      conversationId: instance.conversationId,
      sessionId: instance.sessionId,
      running: state.live !== undefined,
      busy: state.busy,
      turnId: state.turnId,
      turns: state.turns,
      model: state.model,
      permissionMode: state.permissionMode,
      pendingPermissions: [...Array.from(state.pending.values(), (p) => p.info), ...stored].sort((a, b) =>
        a.since - b.since
      )
    }))),
  AnswerPermission: (
    { payload }: { readonly payload: { readonly toolUseId: string; readonly result: Permission.PermissionResult } }
  ) =>
    Rpc.fork(Effect.suspend(() => {
      const waiting = state.pending.get(payload.toolUseId)
      if (waiting !== undefined) return Deferred.succeed(waiting.answer, payload.result)
      const durable = instance.durable
      if (durable === undefined) return Effect.succeed(false)
      // Decided once in the store (compare-and-set), whichever runner answers.
      return durable.store.decide(
        approvalIdFor(instance.sessionId, payload.toolUseId),
        Durable.decisionOf(payload.result)
      )
        .pipe(
          Effect.as(true),
          Effect.catchTag("ApprovalNotFound", () => Effect.succeed(false))
        )
    })),
  Stop: () =>
    Rpc.fork(Effect.suspend(() => {
      const current = state.live
      return current === undefined
        ? Effect.succeed({ stopped: false })
        : Effect.as(drop(state, current), { stopped: true })
    }))
})

// The instance's environment, read from the entity's context.
const makeInstance = <R>(options: LayerOptions<R>) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const conversationId = address.entityId
    const given = typeof options.options === "function" ? options.options(conversationId) : options.options ?? {}
    const {
      continue: _continue,
      forkSession: _fork,
      resume: _resume,
      resumeDropsTurn: _drops,
      resumeMissing: _missing,
      resumeSessionAt: _at,
      sessionId: _sessionId,
      sessionStore: _store,
      ...base
    } = given
    const path = yield* Path.Path
    const sessionId = sessionIdFor(conversationId, options.namespace)
    // The CLI files the session under its project folder for the working directory: the store's key.
    const projectKey = yield* StoredSession.projectKeyOf(base.cwd ?? path.resolve("."))
    const approvals = options.approvalStore ?? Option.getOrUndefined(yield* Effect.serviceOption(ApprovalStore))
    const ask = options.askClient ?? false
    const instance: Instance<R> = {
      conversationId,
      sessionId,
      ref: { projectKey, sessionId },
      runner: yield* Effect.map(Entity.CurrentRunnerAddress, (address) => `${address.host}:${address.port}`),
      agent: yield* ClaudeAgent.ClaudeAgent,
      store: yield* SessionStore,
      guard: yield* Effect.serviceOption(OrphanGuard),
      fs: yield* FileSystem.FileSystem,
      path,
      services: yield* Effect.context<R | FileSystem.FileSystem | Path.Path>(),
      sessions: yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential),
      replyTimeout: Duration.decode(options.replyTimeout ?? "30 seconds"),
      shuttingDown: Option.match(yield* Effect.serviceOption(Sharding), {
        onNone: () => Effect.succeed(false),
        onSome: (sharding) => sharding.isShutdown
      }),
      base,
      durable: approvals === undefined || ask === false
        ? undefined
        : { store: approvals, ask: ask === true ? () => true : ask },
      permissionTimeout: options.permissionTimeout
    }
    return instance
  })

/**
 * The entity's behaviour: registers `AgentEntity` with the `Sharding` in context. Needs
 * `ClaudeAgent` (`AgentPool.layer` for limits and warm spares, `ClaudeAgent.layer`, or the fake
 * CLI in tests), the `SessionStore` the conversations live in (`SessionStores.layerSql` on the
 * cluster's database; `AgentCluster.layerSqlite` provides one), `FileSystem` and `Path`, and
 * optionally an `OrphanGuard`. The conversations' working directory (`cwd`) must be the same path
 * on every runner: the store keys a session by the CLI's project folder for it.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { AgentPool, SessionStores } from "effect-claude-agent"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * // On each runner: at most 4 CLIs, conversations in a store the runners share.
 * const Agents = AgentEntity.layer({ options: { model: "claude-sonnet-4-5" }, maxIdleTime: "5 minutes" }).pipe(
 *   Layer.provide(AgentPool.layer({ maxConcurrent: 4 })),
 *   Layer.provide(SessionStores.layerFiles("/mnt/shared/sessions")),
 *   Layer.provide(NodeContext.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R = never>(options: LayerOptions<R> = {}) =>
  AgentEntity.toLayer(
    Effect.gen(function*() {
      const instance = yield* makeInstance(options)
      const state: Conversation = {
        live: undefined,
        busy: false,
        turnId: null,
        turns: 0,
        model: instance.base.model ?? null,
        modelOverride: undefined,
        permissionMode: instance.base.permissionMode ?? null,
        permissionOverride: undefined,
        pending: new Map(),
        committed: undefined,
        outstanding: undefined
      }
      const canUseTool = permissionsFor(state, options, instance.base.canUseTool)
      const openLock = yield* Effect.makeSemaphore(1)
      const turnLock = yield* Effect.makeSemaphore(1)
      const ensureOpen = openLock.withPermits(1)(
        Effect.suspend(() =>
          state.live !== undefined ? Effect.succeed(state.live) : openSession(instance, state, canUseTool)
        )
      )
      return AgentEntity.of({
        Send: (request) =>
          runTurn(
            instance,
            state,
            turnLock,
            request,
            request.payload.turnId,
            turnMessages(state, request.payload.turnId, prompted(instance, state, ensureOpen, request))
          ),
        Continue: (request) => {
          const { toolUseId } = request.payload
          const durable = instance.durable
          if (durable === undefined) {
            return Stream.fail(new ApprovalNotFound({ id: approvalIdFor(instance.sessionId, toolUseId) }))
          }
          const turnId = Durable.continuationTurnId(toolUseId)
          return runTurn(
            instance,
            state,
            turnLock,
            request,
            turnId,
            turnMessages(state, turnId, continued(instance, state, canUseTool, durable.store, toolUseId))
          )
        },
        ...controlHandlers(instance, state)
      })
    }),
    {
      // Turns take `turnLock` in the order they arrive; a reply waiting for its client holds no slot.
      concurrency: "unbounded",
      ...(options.maxIdleTime === undefined ? {} : { maxIdleTime: options.maxIdleTime }),
      ...(options.mailboxCapacity === undefined ? {} : { mailboxCapacity: options.mailboxCapacity })
    }
  )

// ---------------------------------------------------------------------------------------------
// Client helpers
// ---------------------------------------------------------------------------------------------

// How long a turn may wait to start, unless `send` is told otherwise: long enough for a queue of
// turns or a runner's takeover, short enough that a turn whose client has gone does not run later.
const defaultDeadline = Duration.minutes(10)

/**
 * What `send` can fail with: the turn's failure (`AgentFailure`), or the cluster's own failures.
 *
 * @since 0.1.0
 * @category models
 */
export type SendError = AgentFailure | MailboxFull | AlreadyProcessingMessage | PersistenceError

/**
 * One turn of a conversation, from anywhere in the cluster: sends `prompt` to the conversation's
 * entity and streams the turn's messages up to its `result`. `turnId` (default: a random UUID)
 * names the turn, and a turn runs once per id: sent again while it runs (by a client that
 * restarted, say), the stream goes on with the messages no client has acknowledged yet; sent again
 * after it completed, the stream ends at once, empty. If the conversation's runner dies mid-turn, the turn
 * is re-run from its prompt on the next owner and the stream goes on with that run's messages
 * (after those of the first attempt it had already delivered, which never end with a `result`).
 * `deadline` (default 10 minutes, `Duration.infinity` for none) bounds how long the turn may wait
 * to start: a turn not started by then is never run, and fails with a `TurnExpiredError`.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Message } from "effect-claude-agent"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const reply = (userId: string, text: string) =>
 *   AgentEntity.send(userId, text).pipe(
 *     Stream.filter(Message.isAssistant),
 *     Stream.map(Message.assistantText),
 *     Stream.runCollect
 *   )
 * ```
 *
 * @since 0.1.0
 * @category clients
 */
export const send = (
  conversationId: string,
  prompt: Prompt,
  options: { readonly turnId?: string | undefined; readonly deadline?: Duration.DurationInput | undefined } = {}
): Stream.Stream<Message.Message, SendError, Sharding> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = yield* AgentEntity.client
    const turnId = options.turnId ?? (yield* v4)
    const within = Duration.decode(options.deadline ?? defaultDeadline)
    const deadline = Duration.isFinite(within)
      ? (yield* Clock.currentTimeMillis) + Duration.toMillis(within)
      : undefined
    return client(conversationId).Send({ turnId, prompt, deadline })
  }))

/**
 * What `answer` can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type AnswerError = SendError | ApprovalFailure

/**
 * Decides a call that waits in the approval store (an entity layer with `approvalStore` and
 * `askClient`) and streams the turn it interrupted to its end: `AnswerPermission`, then
 * `Continue`. The decision is recorded once `AnswerPermission` has answered; `Continue` is
 * persisted, so the turn is finished by whichever runner owns the conversation, also when its
 * runner stops mid-way (send `Continue` again to read the reply: see `continueTurn`). Fails with
 * `ApprovalAlreadyDecided` for a call decided before (by another client, or `expired` after
 * `permissionTimeout`), and with `ApprovalNotFound` when no call with that tool use id waits
 * (`namespace`: the entity layer's, for the approval id the error names).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Permission } from "effect-claude-agent"
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const approveAll = (conversationId: string) =>
 *   Effect.gen(function*() {
 *     const status = yield* (yield* AgentEntity.AgentEntity.client)(conversationId).Status()
 *     for (const pending of status.pendingPermissions) {
 *       yield* AgentEntity.answer(conversationId, pending.toolUseId, Permission.allow()).pipe(Stream.runDrain)
 *     }
 *   })
 * ```
 *
 * @since 0.1.0
 * @category clients
 */
export const answer = (
  conversationId: string,
  toolUseId: string,
  result: Permission.PermissionResult,
  options: { readonly namespace?: string | undefined } = {}
): Stream.Stream<Message.Message, AnswerError, Sharding> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = (yield* AgentEntity.client)(conversationId)
    const answered = yield* client.AnswerPermission({ toolUseId, result })
    return answered
      ? client.Continue({ toolUseId })
      : Stream.fail(
        new ApprovalNotFound({ id: approvalIdFor(sessionIdFor(conversationId, options.namespace), toolUseId) })
      )
  }))

/**
 * The rest of a decided call's turn (`Continue`): streamed as it runs, or replayed from the store
 * once it has run. For a client that decided with `AnswerPermission` and went away before it read
 * the continuation.
 *
 * @example
 * ```ts
 * import { AgentEntity } from "effect-claude-agent/cluster"
 *
 * const rest = AgentEntity.continueTurn("user-42", "toolu_01")
 * ```
 *
 * @since 0.1.0
 * @category clients
 */
export const continueTurn = (
  conversationId: string,
  toolUseId: string
): Stream.Stream<Message.Message, AnswerError, Sharding> =>
  Stream.unwrap(Effect.map(AgentEntity.client, (client) => client(conversationId).Continue({ toolUseId })))
