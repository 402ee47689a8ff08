/**
 * `ApprovalStore`: tool calls waiting for a person, kept outside the process that stopped at them.
 *
 * A session with the `approvalStore` option whose turn ends at a deferred tool call (a
 * `PreToolUse` hook answered `Hook.defer()`) records the call here as a pending `Approval`; any
 * process can later list it and decide it once (`Approvals.approve` / `deny` / `edit`), which
 * resumes the session from its `SessionStore` with that decision.
 *
 * Decisions are compare-and-set: of two decisions racing for one approval, the first is recorded
 * and the second fails with `ApprovalAlreadyDecided`, which carries the approval as decided. A
 * pending approval past its `expiresAt` is decided `expired` by `expireDue`, or by the first
 * decision attempted after the deadline (which then fails with `ApprovalAlreadyDecided`).
 *
 * Implementations: `ApprovalStores.layerMemory` and `ApprovalStores.layerSql(client)` (SQLite or
 * PostgreSQL through `@effect/sql`).
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { RawObject, optionalNumber, optionalString } from "../internal/schema/schemas.js"
import { TypeId } from "../SdkError.js"

/**
 * Where an approval stands: `pending` until decided, then one of the four decisions' states for
 * good.
 *
 * @example
 * ```ts
 * import type { ApprovalStore } from "effect-claude-agent"
 *
 * const open = (state: ApprovalStore.ApprovalState) => state === "pending"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalState = typeof ApprovalState.Type

/**
 * The schema of `ApprovalState`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ApprovalStore } from "effect-claude-agent"
 *
 * const isState = Schema.is(ApprovalStore.ApprovalState)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApprovalState = Schema.Literal("pending", "approved", "denied", "edited", "expired")

/**
 * A decision on a deferred tool call: run it as asked (`approved`), run it with other input
 * (`edited`), or do not run it (`denied` by a person, `expired` by the clock); the model sees a
 * denial's `message` as the tool's error.
 *
 * @example
 * ```ts
 * import type { ApprovalStore } from "effect-claude-agent"
 *
 * const approved: ApprovalStore.Decision = { state: "approved" }
 * const edited: ApprovalStore.Decision = { state: "edited", updatedInput: { file_path: "out.txt", content: "safe" } }
 * const denied: ApprovalStore.Decision = { state: "denied", message: "not on a Friday" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = typeof Decision.Type

/**
 * The schema of `Decision`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ApprovalStore } from "effect-claude-agent"
 *
 * const decode = Schema.decodeUnknown(ApprovalStore.Decision)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decision = Schema.Union(
  Schema.Struct({ state: Schema.Literal("approved") }),
  Schema.Struct({ state: Schema.Literal("edited"), updatedInput: RawObject }),
  Schema.Struct({ state: Schema.Literal("denied"), message: Schema.String }),
  Schema.Struct({ state: Schema.Literal("expired"), message: Schema.String })
)

/**
 * One deferred tool call and what became of it. Times are Unix epoch milliseconds (the deciding
 * process's `Clock`).
 *
 * @example
 * ```ts
 * import type { ApprovalStore } from "effect-claude-agent"
 *
 * const line = (a: ApprovalStore.Approval) => `${a.toolName} ${JSON.stringify(a.input)}: ${a.state}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Approval extends Schema.Schema.Type<typeof Approval> {}

/**
 * The schema of `Approval` (how the SQL store reads its rows back).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ApprovalStore } from "effect-claude-agent"
 *
 * const toJson = Schema.encodeSync(ApprovalStore.Approval)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Approval = Schema.Struct({
  /** The approval's id: `<sessionId>:<toolUseId>`, set by the session that deferred the call. */
  id: Schema.String,
  /** The session the call belongs to, as the `SessionStore` keys it. */
  projectKey: Schema.String,
  sessionId: Schema.String,
  /** The working directory the session ran in, to resume it there. */
  cwd: optionalString,
  /** The model's `tool_use` block: its id, the tool and the input as the model asked. */
  toolUseId: Schema.String,
  toolName: Schema.String,
  input: RawObject,
  createdAt: Schema.Number,
  expiresAt: Schema.Number,
  state: ApprovalState,
  /** Absent while pending. */
  decision: Schema.optional(Decision),
  decidedBy: optionalString,
  decidedAt: optionalNumber
})

/**
 * Which pending approvals to list: a project's, or one session's.
 *
 * @example
 * ```ts
 * import type { ApprovalStore } from "effect-claude-agent"
 *
 * const inProject: ApprovalStore.PendingFilter = { projectKey: "-srv-app" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingFilter {
  readonly projectKey: string
  readonly sessionId?: string | undefined
}

/**
 * The approval store's backend failed (`Unavailable`) or holds data it cannot read (`Corrupt`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { ApprovalStore } from "effect-claude-agent"
 *
 * const orNone = (get: Effect.Effect<unknown, ApprovalStore.ApprovalStoreError>) =>
 *   get.pipe(Effect.catchTag("ApprovalStoreError", () => Effect.succeed(undefined)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalStoreError extends Schema.TaggedError<ApprovalStoreError>(
  "effect-claude-agent/ApprovalStoreError"
)("ApprovalStoreError", {
  reason: Schema.Literal("Unavailable", "Corrupt"),
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `ApprovalStore.${this.operation} failed: ${this.reason}: ${this.detail}`
  }
}

/**
 * No approval has this id.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Approvals } from "effect-claude-agent"
 *
 * const quiet = Approvals.expire("no-such-id").pipe(Effect.catchTag("ApprovalNotFound", () => Effect.void))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalNotFound extends Schema.TaggedError<ApprovalNotFound>(
  "effect-claude-agent/ApprovalNotFound"
)("ApprovalNotFound", { id: Schema.String }) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `No approval ${this.id}`
  }
}

/**
 * The approval was decided before this decision (by another process, or by its deadline):
 * nothing was changed, and `approval` is the approval as decided.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Approvals, SessionStore } from "effect-claude-agent"
 *
 * const approveOnce = (id: string, sessionStore: SessionStore.SessionStoreShape) =>
 *   Approvals.approve(id, { sessionStore }).pipe(
 *     Stream.runDrain,
 *     Effect.catchTag("ApprovalAlreadyDecided", (e) => Effect.logInfo(`already ${e.approval.state}`))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalAlreadyDecided extends Schema.TaggedError<ApprovalAlreadyDecided>(
  "effect-claude-agent/ApprovalAlreadyDecided"
)("ApprovalAlreadyDecided", { approval: Approval }) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const by = this.approval.decidedBy === undefined ? "" : ` by ${this.approval.decidedBy}`
    const at = this.approval.decidedAt === undefined ? "" : ` at ${new Date(this.approval.decidedAt).toISOString()}`
    return `Approval ${this.approval.id} (${this.approval.toolName}) was already decided: ${this.approval.state}${by}${at}`
  }
}

/**
 * The approval's call was already answered in its session's stored transcript: its continuation
 * ran, so resuming the session would find no interrupted turn to finish. Nothing was started.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Approvals, SessionStore } from "effect-claude-agent"
 *
 * const continueOnce = (id: string, sessionStore: SessionStore.SessionStoreShape) =>
 *   Approvals.resume(id, { sessionStore }).pipe(
 *     Stream.runDrain,
 *     Effect.catchTag("ApprovalAlreadyApplied", (e) => Effect.logInfo(`${e.approval.toolName} already ran or was refused`))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalAlreadyApplied extends Schema.TaggedError<ApprovalAlreadyApplied>(
  "effect-claude-agent/ApprovalAlreadyApplied"
)("ApprovalAlreadyApplied", { approval: Approval }) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Approval ${this.approval.id}: the ${this.approval.toolName} call ${this.approval.toolUseId} was already ` +
      `answered in session ${this.approval.sessionId}`
  }
}

/**
 * Who decided, for the record.
 *
 * @example
 * ```ts
 * import type { ApprovalStore } from "effect-claude-agent"
 *
 * const by: ApprovalStore.DecideOptions = { decidedBy: "ada" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface DecideOptions {
  readonly decidedBy?: string | undefined
}

/**
 * What an approval store does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApprovalStore } from "effect-claude-agent"
 *
 * const waiting = Effect.flatMap(ApprovalStore.ApprovalStore, (store) => store.listPending({ projectKey: "-srv-app" }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalStoreShape {
  /** Records a pending approval; a second `create` with the same id changes nothing. */
  readonly create: (approval: Approval) => Effect.Effect<void, ApprovalStoreError>
  /** The approval with this id, whatever its state. */
  readonly get: (id: string) => Effect.Effect<Option.Option<Approval>, ApprovalStoreError>
  /** The pending approvals of a project or session, oldest first (those past their deadline too). */
  readonly listPending: (filter: PendingFilter) => Effect.Effect<ReadonlyArray<Approval>, ApprovalStoreError>
  /**
   * Decides a pending approval (compare-and-set) and returns it as decided. Past its deadline it
   * is decided `expired` instead, and the call fails with `ApprovalAlreadyDecided`.
   */
  readonly decide: (
    id: string,
    decision: Decision,
    options?: DecideOptions
  ) => Effect.Effect<Approval, ApprovalStoreError | ApprovalNotFound | ApprovalAlreadyDecided>
  /** Decides `expired` every pending approval whose deadline has passed; returns them. */
  readonly expireDue: Effect.Effect<ReadonlyArray<Approval>, ApprovalStoreError>
}

/**
 * The approval store service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApprovalStore, ApprovalStores } from "effect-claude-agent"
 *
 * const one = Effect.flatMap(ApprovalStore.ApprovalStore, (store) => store.get("a1b2")).pipe(
 *   Effect.provide(ApprovalStores.layerMemory)
 * )
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class ApprovalStore extends Context.Tag("effect-claude-agent/ApprovalStore")<
  ApprovalStore,
  ApprovalStoreShape
>() {}
