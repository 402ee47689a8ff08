/**
 * `AgentEntity`: a conversation with Claude Code as an `@effect/cluster` entity.
 *
 * The entity is keyed by a conversation id of yours and sharded over the cluster's runners. Its
 * instance opens one CLI session through the `ClaudeAgent` in its context (give it
 * `AgentPool.layer` for limits and warm processes) inside the instance's scope: passivation
 * (`maxIdleTime`), a shard moving away and runner shutdown stop the CLI. The CLI session id is
 * derived from the conversation id (`sessionIdFor`), so every runner resumes the same conversation:
 * the first turn starts it with `sessionId`, every later instance `resume`s it, restoring the
 * transcript from the `TranscriptStore` when the runner has no copy.
 *
 * `Send` is persisted (`ClusterSchema.Persisted`) and keyed by its turn id: when a runner dies
 * mid-turn, the turn is re-run from its prompt by the conversation's next owner, and a client
 * reading the reply keeps reading. The other RPCs are volatile and forked, so they run while a
 * `Send` streams.
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
import * as ClaudeAgent from "../ClaudeAgent.js"
import * as Permission from "../Permission.js"
import * as ContentBlock from "../schema/ContentBlock.js"
import * as Control from "../schema/Control.js"
import * as Message from "../schema/Message.js"
import type * as Options from "../schema/Options.js"
import * as SdkError from "../SdkError.js"
import { SessionStoreError } from "../services/SessionStore.js"
import * as AgentMetrics from "./AgentMetrics.js"
import { lastTurnKey, namespaceOf } from "./internal/keys.js"
import { transcriptPath } from "./internal/transcriptFile.js"
import { v4, v5 } from "./internal/uuid.js"
import { OrphanGuard, type OrphanGuardShape } from "./OrphanGuard.js"
import { TranscriptStore, TranscriptStoreError, type TranscriptStoreShape } from "./TranscriptStore.js"

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
 * What a conversation's RPCs fail with, across the wire: the same tagged errors as a local session
 * (every `SdkError` member, `ResultError`, `ClaimRefused`, …), the transcript store's and the file
 * system's, and `AgentError` for a defect. A client matches them with `Effect.catchTag` as it would
 * locally: `ProcessError` (the CLI crashed), `PoolClosedError`, `TimeoutException`, `ControlError`, …
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
  TranscriptStoreError,
  PlatformError,
  TurnExpiredError,
  AgentError
)

/**
 * @since 0.1.0
 * @category errors
 */
export type AgentFailure = typeof AgentFailure.Type

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
  since: Schema.Number
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
export const GetStatus = Rpc.make("Status", { success: Status })

/**
 * Answers a pending permission request (see `Status.pendingPermissions`); `false` when no request
 * with that tool use id is waiting (answered already, withdrawn, or its turn ended).
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
  success: Schema.Boolean
})

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
 * `Stop`, keyed by a conversation id. Its type is `AgentSession`.
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
  Stop
])

/**
 * The CLI session id of a conversation: a name-based (version 5) UUID of the conversation id in
 * the namespace of the conversation's store (`TranscriptStoreShape.namespace`), the same on every
 * runner of a cluster. Two stores (two databases, a fresh one, two applications on one machine)
 * give a conversation id different session ids, so they never read each other's transcripts.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentEntity, TranscriptStore } from "effect-claude-agent/cluster"
 *
 * const sessionId = Effect.map(TranscriptStore.TranscriptStore, (store) => AgentEntity.sessionIdFor("user-42", store.namespace))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionIdFor = (conversationId: string, namespace: string): string => v5(namespace, conversationId)

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
   * `continue` and `forkSession` are the entity's to set and are ignored. Callbacks (hooks,
   * `canUseTool`, in-process tools) run on the runner that owns the conversation, with the
   * services `R` given to the layer.
   */
  readonly options?: Options.Options<R> | ((conversationId: string) => Options.Options<R>) | undefined
  /** Tool uses decided by the client (`Status.pendingPermissions`, `AnswerPermission`). Default `false`. */
  readonly askClient?: AskClient | undefined
  /** How long a tool use waits for the client before it is denied. Default: no limit. */
  readonly permissionTimeout?: Duration.DurationInput | undefined
  /** How long an idle conversation keeps its CLI before the entity is passivated. Default: the cluster's (1 minute). */
  readonly maxIdleTime?: Duration.DurationInput | undefined
  /** Requests that may wait per conversation. Default: the cluster's (4096). */
  readonly mailboxCapacity?: number | undefined
  /**
   * Names this application's conversations within its store, for applications that share a store
   * (or, with `TranscriptStore.layerLocal`, a machine): session ids are derived from it and the
   * store's namespace. Default: the store's namespace alone.
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
  readonly file: string
}

interface Pending {
  readonly info: PendingPermission
  readonly answer: Deferred.Deferred<Permission.PermissionResult>
}

// What an entity instance works with: fixed when the instance starts.
interface Instance<R> {
  readonly conversationId: string
  readonly sessionId: string
  /** The runner's address (host:port), as the metrics tag it. */
  readonly runner: string
  readonly agent: ClaudeAgent.ClaudeAgentShape
  readonly store: TranscriptStoreShape
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
}

// Mirroring is retried briefly: a database blip should not fail a turn that the model completed.
const mirrorRetry = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(4)))
const transcriptSettle = Schedule.spaced("20 millis").pipe(Schedule.intersect(Schedule.recurs(50)))

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

// Decides between a new session and `resume`, putting the stored transcript in place first.
// The store is the authority: a local file that differs from it holds a turn that never
// completed (the runner died in it), and that turn is about to be re-run.
const prepareTranscript = <R>(instance: Instance<R>, file: string) =>
  Effect.gen(function*() {
    const { conversationId, fs, sessionId, store } = instance
    const stored = yield* store.load(sessionId)
    const local = yield* fs.readFileString(file).pipe(Effect.option)
    if (Option.isSome(stored)) {
      if (stored.value.length === 0) {
        if (Option.isSome(local)) yield* fs.remove(file)
        return false
      }
      if (!(Option.isSome(local) && local.value === stored.value)) {
        yield* fs.makeDirectory(instance.path.dirname(file), { recursive: true })
        yield* fs.writeFileString(file, stored.value)
        yield* Effect.logDebug("AgentEntity: transcript restored from the store").pipe(
          Effect.annotateLogs({ conversationId, sessionId, file })
        )
      }
      return true
    }
    // A store that keeps transcripts knows every conversation it has: a local file it does not
    // know belongs to a conversation deleted from it, or to another store's.
    if (!store.durable && Option.isSome(local) && local.value.length > 0) return true
    if (Option.isSome(local)) yield* fs.remove(file)
    // Started: until a turn completes, a later instance starts the conversation afresh.
    yield* store.save(sessionId, "")
    return false
  })

// The CLI writes an assistant message to the transcript before it reports the turn's
// `result`; reading again briefly covers a write still in flight. No file, nothing to mirror:
// `persistSession: false`, or a CLI that is not the real one.
const mirror = <R>(instance: Instance<R>, current: Live, lastAssistant: string | undefined) =>
  instance.fs.readFileString(current.file).pipe(
    Effect.option,
    Effect.flatMap((read) =>
      lastAssistant !== undefined && Option.isSome(read) && !read.value.includes(lastAssistant)
        ? Effect.fail(read)
        : Effect.succeed(read)
    ),
    Effect.retry(transcriptSettle),
    Effect.catchAll((read) => Effect.succeed(read)),
    Effect.flatMap(Option.match({
      onNone: () => Effect.void,
      onSome: (transcript) => instance.store.save(instance.sessionId, transcript).pipe(Effect.retry(mirrorRetry))
    }))
  )

// Opens the conversation's CLI session in a scope of the instance's: a new conversation, or the
// stored one resumed.
const openSession = <R>(
  instance: Instance<R>,
  state: Conversation,
  canUseTool: Permission.CanUseTool<unknown, R> | undefined
) =>
  Effect.gen(function*() {
    const { base, conversationId, guard, sessionId } = instance
    const file = yield* transcriptPath(sessionId, base)
    const resume = yield* prepareTranscript(instance, file)
    const scope = yield* Scope.fork(instance.sessions, ExecutionStrategy.sequential)
    // Forked first, so it closes last: the guard forgets the process after it has exited.
    const guardScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const sessionOptions: Options.Options<R> = {
      ...base,
      ...(resume ? { resume: sessionId } : { sessionId }),
      ...(state.modelOverride === undefined ? {} : { model: state.modelOverride ?? undefined }),
      ...(state.permissionOverride === undefined ? {} : { permissionMode: state.permissionOverride }),
      canUseTool
    }
    const session = yield* instance.agent.session(sessionOptions).pipe(
      Scope.extend(scope),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    if (Option.isSome(guard) && Option.isSome(session.pid)) {
      yield* guard.value.watch(session.pid.value).pipe(Scope.extend(guardScope))
    }
    yield* Effect.logDebug(resume ? "AgentEntity: session resumed" : "AgentEntity: session started").pipe(
      Effect.annotateLogs({ conversationId, sessionId })
    )
    const opened: Live = { session, scope, file }
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

// The last completed turn of a conversation, kept in the store beside its transcript: a turn that
// completed on a runner that stopped before its client had read the whole reply is run again by
// the next owner, which must not send the prompt a second time (the transcript has the turn).
const LastTurn = Schema.parseJson(Schema.Struct({ turnId: Schema.String, messages: Schema.Array(MessageWire) }))

const saveLastTurn = <R>(instance: Instance<R>, turnId: string, messages: ReadonlyArray<Message.Message>) =>
  Schema.encode(LastTurn)({ turnId, messages }).pipe(
    Effect.orDie,
    Effect.flatMap((json) => instance.store.save(lastTurnKey(instance), json).pipe(Effect.retry(mirrorRetry)))
  )

// The messages of `turnId` that its client has not read, if it is the conversation's last completed turn.
const unreadOfCompleted = <R>(instance: Instance<R>, request: Entity.Request<typeof Send>) =>
  instance.store.load(lastTurnKey(instance)).pipe(
    Effect.map(Option.flatMap((json) => Either.getRight(Schema.decodeEither(LastTurn)(json)))),
    Effect.map(Option.filter((last) => last.turnId === request.payload.turnId)),
    Effect.map(Option.map(({ messages }) => {
      const sent = Option.map(request.lastSentChunkValue, (m) => JSON.stringify(Schema.encodeSync(MessageWire)(m)))
      const at = Option.match(sent, {
        onNone: () => -1,
        onSome: (json) => messages.findIndex((m) => JSON.stringify(Schema.encodeSync(MessageWire)(m)) === json)
      })
      return messages.slice(at + 1)
    }))
  )

// A turn that has not started by its deadline is not started: its client has likely gone, and
// the prompt would reach the model minutes or hours after it was sent. A re-run of a turn whose
// client had read part of it (its runner stopped mid-turn) started in time, and runs.
const refuseExpired = (request: Entity.Request<typeof Send>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const deadline = request.payload.deadline
    const inTime = deadline === undefined || now <= deadline || Option.isSome(request.lastSentChunk)
    return inTime ? Effect.void : Effect.fail(new TurnExpiredError({ turnId: request.payload.turnId, deadline }))
  })

// A turn's messages: the prompt sent on the conversation's session (opened if need be), its
// messages up to the `result`, the transcript mirrored to the store before the `result` is
// passed on.
const turnMessages = <R>(
  instance: Instance<R>,
  state: Conversation,
  ensureOpen: Effect.Effect<Live, SdkError.SdkError | TranscriptStoreError | PlatformError>,
  request: Entity.Request<typeof Send>
): Stream.Stream<Message.Message, AgentFailure> =>
  Stream.suspend(() => {
    let current: Live | undefined
    let completed = false
    let lastAssistant: string | undefined
    const messages: Array<Message.Message> = []
    const start: Effect.Effect<
      Stream.Stream<Message.Message, AgentSession.MessageError | TranscriptStoreError | PlatformError>,
      SdkError.SdkError | TranscriptStoreError | PlatformError | TurnExpiredError
    > = Effect.gen(function*() {
      yield* refuseExpired(request)
      current = yield* ensureOpen
      state.busy = true
      state.turnId = request.payload.turnId
      yield* current.session.send(request.payload.prompt)
      const session = current
      return session.session.receiveResponse.pipe(
        Stream.tap((message) =>
          Effect.sync(() => {
            observe(state, message)
            messages.push(message)
            if (Message.isAssistant(message) && message.uuid !== undefined) lastAssistant = message.uuid
          })
        ),
        Stream.mapEffect((message): Effect.Effect<Message.Message, TranscriptStoreError | PlatformError> =>
          Message.isResult(message)
            ? mirror(instance, session, lastAssistant).pipe(
              Effect.zipRight(saveLastTurn(instance, request.payload.turnId, messages)),
              Effect.tapError(() => Metric.increment(AgentMetrics.mirrorFailures)),
              Effect.zipRight(Effect.sync(() => {
                completed = true
                state.turns++
              })),
              Effect.as(message)
            )
            : Effect.succeed(message)
        )
      )
    })
    return Stream.unwrap(start).pipe(
      Stream.catchAllCause((cause): Stream.Stream<never, AgentFailure> => {
        if (Option.isSome(Cause.failureOption(cause))) return Stream.failCause(cause)
        const defect = Cause.dieOption(cause)
        return Option.isSome(defect) ? Stream.fail(defectOf(defect.value)) : Stream.failCause(cause)
      }),
      Stream.ensuring(Effect.suspend(() => {
        state.busy = false
        state.turnId = null
        return current !== undefined && !completed ? drop(state, current) : Effect.void
      }))
    )
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

// One `Send`. The turn runs in a fiber of its own, one turn of the conversation at a time
// (`turnLock`), into a mailbox the reply streams from: a reply waits for its client to
// acknowledge each chunk, and a client that stops reading (it went away, or stopped at the
// `result`) must hold up neither the turn nor the conversation's next ones. Once the turn is over,
// its reply has `replyTimeout` to be read to its end before the request is ended (interrupted:
// its messages stay stored for a client that asks again with the same turn id).
const runTurn = <R>(
  instance: Instance<R>,
  state: Conversation,
  ensureOpen: Effect.Effect<Live, SdkError.SdkError | TranscriptStoreError | PlatformError>,
  turnLock: Effect.Semaphore,
  request: Entity.Request<typeof Send>
): Stream.Stream<Message.Message, AgentFailure> =>
  Stream.suspend(() => {
    // The first attempt's `result` reached the client, only the end of the reply was lost.
    if (Option.exists(request.lastSentChunkValue, Message.isResult)) return Stream.empty
    return Stream.unwrapScoped(Effect.gen(function*() {
      const { conversationId, replyTimeout, shuttingDown } = instance
      const turnId = request.payload.turnId
      const requestFiber = yield* Effect.withFiberRuntime<Fiber.RuntimeFiber<unknown, unknown>>((fiber) =>
        Effect.succeed(fiber)
      )
      const scope = yield* Effect.scope
      const mailbox = yield* Mailbox.make<Message.Message, AgentFailure>()
      if (Option.isSome(request.lastSentChunk)) {
        const gap = (yield* Clock.currentTimeMillis) - Snowflake.timestamp(request.lastSentChunk.value.id)
        yield* Metric.update(AgentMetrics.takeoverTime, Math.max(0, gap))
        const unread = yield* unreadOfCompleted(instance, request)
        if (Option.isSome(unread)) {
          yield* Metric.increment(takeoverCounter(instance, "reply_replayed"))
          return Stream.fromIterable(unread.value)
        }
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
      yield* turnMessages(instance, state, ensureOpen, request).pipe(
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
    Rpc.fork(Effect.sync(() => ({
      conversationId: instance.conversationId,
      sessionId: instance.sessionId,
      running: state.live !== undefined,
      busy: state.busy,
      turnId: state.turnId,
      turns: state.turns,
      model: state.model,
      permissionMode: state.permissionMode,
      pendingPermissions: Array.from(state.pending.values(), (p) => p.info).sort((a, b) => a.since - b.since)
    }))),
  AnswerPermission: (
    { payload }: { readonly payload: { readonly toolUseId: string; readonly result: Permission.PermissionResult } }
  ) =>
    Rpc.fork(Effect.suspend(() => {
      const waiting = state.pending.get(payload.toolUseId)
      return waiting === undefined ? Effect.succeed(false) : Deferred.succeed(waiting.answer, payload.result)
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
    const { continue: _continue, forkSession: _fork, resume: _resume, sessionId: _sessionId, ...base } = given
    const store = yield* TranscriptStore
    const instance: Instance<R> = {
      conversationId,
      sessionId: sessionIdFor(conversationId, namespaceOf(store, options.namespace)),
      runner: yield* Effect.map(Entity.CurrentRunnerAddress, (address) => `${address.host}:${address.port}`),
      agent: yield* ClaudeAgent.ClaudeAgent,
      store,
      guard: yield* Effect.serviceOption(OrphanGuard),
      fs: yield* FileSystem.FileSystem,
      path: yield* Path.Path,
      services: yield* Effect.context<R | FileSystem.FileSystem | Path.Path>(),
      sessions: yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential),
      replyTimeout: Duration.decode(options.replyTimeout ?? "30 seconds"),
      shuttingDown: Option.match(yield* Effect.serviceOption(Sharding), {
        onNone: () => Effect.succeed(false),
        onSome: (sharding) => sharding.isShutdown
      }),
      base
    }
    return instance
  })

/**
 * The entity's behaviour: registers `AgentEntity` with the `Sharding` in context. Needs
 * `ClaudeAgent` (`AgentPool.layer` for limits and warm spares, `ClaudeAgent.layer`, or the fake
 * CLI in tests), a `TranscriptStore`, `FileSystem` and `Path`, and optionally an `OrphanGuard`.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 * import { AgentEntity, TranscriptStore } from "effect-claude-agent/cluster"
 *
 * // On each runner: at most 4 CLIs, transcripts mirrored to the cluster's database.
 * const Agents = AgentEntity.layer({ options: { model: "claude-sonnet-4-5" }, maxIdleTime: "5 minutes" }).pipe(
 *   Layer.provide(AgentPool.layer({ maxConcurrent: 4 })),
 *   Layer.provide(TranscriptStore.layerSql()),
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
        pending: new Map()
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
        Send: (request) => runTurn(instance, state, ensureOpen, turnLock, request),
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
