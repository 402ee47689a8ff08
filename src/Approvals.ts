/**
 * `Approvals`: human approval of a tool call that survives a restart.
 *
 * A session with `sessionStore` and `approvalStore` whose `PreToolUse` hook answers `Hook.defer()`
 * stops its turn at the call without running it (`terminal_reason: "tool_deferred"`), records the
 * call as a pending approval and delivers a `system/awaiting_approval` message before the turn's
 * `result`; the CLI process may then exit. Later, from any process sharing both stores,
 * `approve`, `deny` or `edit` decides the approval once (a second decision is refused with
 * `ApprovalAlreadyDecided` before any CLI starts), resumes the session from the session store,
 * answers the CLI's start-up permission request for that call with the decision, and streams the
 * interrupted turn to its end: the model sees the tool's real result, or the denial.
 *
 * Approvals expire (`approvalTimeout`, default 24 hours): `expireDue` decides every overdue one
 * `expired`, as does any decision attempted after the deadline; `resume` then continues the
 * session with a denial saying it expired. docs/protocol-defer.md has what the CLI does.
 *
 * @since 0.1.0
 */
import { Effect, Option, Stream } from "effect"
import * as Resume from "./internal/approvals/resume.js"
import type * as ClaudeAgent from "./ClaudeAgent.js"
import type * as Message from "./schema/Message.js"
import type * as Options from "./schema/Options.js"
import type { SdkError } from "./SdkError.js"
import {
  type Approval,
  type ApprovalAlreadyApplied,
  type ApprovalAlreadyDecided,
  ApprovalNotFound,
  ApprovalStore,
  type ApprovalStoreError,
  type ApprovalStoreShape,
  type DecideOptions,
  type Decision,
  type PendingFilter
} from "./services/ApprovalStore.js"

/**
 * What deciding and continuing an approval may fail with.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Approvals } from "effect-claude-agent"
 *
 * const report = (e: Approvals.ApprovalError) => Effect.logWarning(e.message)
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export type ApprovalError = ApprovalStoreError | ApprovalNotFound | ApprovalAlreadyDecided | ApprovalAlreadyApplied

/**
 * The approval a `system/awaiting_approval` message names, if `message` is one.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Approvals, ClaudeAgent } from "effect-claude-agent"
 *
 * const pending = ClaudeAgent.query("Write the report").pipe(Stream.filterMap(Approvals.awaitingApproval), Stream.runCollect)
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const awaitingApproval = (message: Message.Message): Option.Option<Approval> =>
  message.type === "system" && message.subtype === "awaiting_approval" && message.error === undefined
    ? Option.some(message.approval)
    : Option.none()

const decideAndContinue = <R>(
  id: string,
  decision: Decision,
  options: Options.Options<R>,
  decideOptions: DecideOptions | undefined
): Stream.Stream<Message.Message, ApprovalError | SdkError, ApprovalStore | ClaudeAgent.ClaudeAgent | R> =>
  Stream.unwrap(
    Effect.flatMap(ApprovalStore, (store) =>
      Effect.map(
        store.decide(id, decision, decideOptions),
        (approval) => Resume.continued(approval, recording(options, store))
      ))
  )

// The continuation records a call it stops at in turn, in the same store unless told otherwise.
const recording = <R>(options: Options.Options<R>, store: ApprovalStoreShape): Options.Options<R> =>
  options.approvalStore === undefined ? { ...options, approvalStore: store } : options

/**
 * Approves a pending call and continues its session: the tool runs with the input the model gave,
 * and the interrupted turn's messages are streamed up to its `result`. `options` are the resumed
 * session's (its `sessionStore` is required; `cwd` defaults to where the call was deferred).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Approvals, ClaudeAgent, SessionStores } from "effect-claude-agent"
 *
 * const program = Effect.gen(function* () {
 *   const sessionStore = yield* SessionStores.makeMemory
 *   const result = yield* Approvals.approve("a1b2", { sessionStore }, { decidedBy: "ada" }).pipe(ClaudeAgent.lastResult)
 *   return result.subtype
 * })
 * ```
 *
 * @since 0.1.0
 * @category deciding
 */
export const approve = <R = never>(
  id: string,
  options: Options.Options<R>,
  decideOptions?: DecideOptions
): Stream.Stream<Message.Message, ApprovalError | SdkError, ApprovalStore | ClaudeAgent.ClaudeAgent | R> =>
  decideAndContinue(id, { state: "approved" }, options, decideOptions)

/**
 * Denies a pending call and continues its session: the tool does not run, and the model sees
 * `message` as the tool's error.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Approvals, SessionStore } from "effect-claude-agent"
 *
 * const refuse = (id: string, sessionStore: SessionStore.SessionStoreShape) =>
 *   Approvals.deny(id, "Not before the release is tagged", { sessionStore }).pipe(Stream.runDrain)
 * ```
 *
 * @since 0.1.0
 * @category deciding
 */
export const deny = <R = never>(
  id: string,
  message: string,
  options: Options.Options<R>,
  decideOptions?: DecideOptions
): Stream.Stream<Message.Message, ApprovalError | SdkError, ApprovalStore | ClaudeAgent.ClaudeAgent | R> =>
  decideAndContinue(id, { state: "denied", message }, options, decideOptions)

/**
 * Approves a pending call with other input (it replaces the model's) and continues its session.
 *
 * @example
 * ```ts
 * import { Approvals, ClaudeAgent, SessionStore } from "effect-claude-agent"
 *
 * const safer = (id: string, sessionStore: SessionStore.SessionStoreShape) =>
 *   Approvals.edit(id, { file_path: "out.txt", content: "reviewed" }, { sessionStore }).pipe(ClaudeAgent.lastResult)
 * ```
 *
 * @since 0.1.0
 * @category deciding
 */
export const edit = <R = never>(
  id: string,
  updatedInput: { readonly [key: string]: unknown },
  options: Options.Options<R>,
  decideOptions?: DecideOptions
): Stream.Stream<Message.Message, ApprovalError | SdkError, ApprovalStore | ClaudeAgent.ClaudeAgent | R> =>
  decideAndContinue(id, { state: "edited", updatedInput }, options, decideOptions)

/**
 * Continues the session of an approval already decided (an expired one, or one whose
 * continuation was cut short) with its recorded decision. Fails with `OptionsError` for a
 * pending one.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Approvals, SessionStore } from "effect-claude-agent"
 *
 * // Tell each overdue call's model that nobody answered in time.
 * const sweep = (sessionStore: SessionStore.SessionStoreShape) =>
 *   Effect.flatMap(Approvals.expireDue, (expired) =>
 *     Effect.forEach(expired, (a) => Approvals.resume(a.id, { sessionStore }).pipe(Stream.runDrain), { discard: true }))
 * ```
 *
 * @since 0.1.0
 * @category deciding
 */
export const resume = <R = never>(
  id: string,
  options: Options.Options<R>
): Stream.Stream<
  Message.Message,
  ApprovalStoreError | ApprovalNotFound | ApprovalAlreadyApplied | SdkError,
  ApprovalStore | ClaudeAgent.ClaudeAgent | R
> =>
  Stream.unwrap(
    Effect.flatMap(ApprovalStore, (store) =>
      Effect.map(
        Effect.flatMap(
          store.get(id),
          Option.match({
            onNone: () => Effect.fail(new ApprovalNotFound({ id })),
            onSome: Effect.succeed
          })
        ),
        (approval) => Resume.continued(approval, recording(options, store))
      ))
  )

/**
 * Decides a pending approval `expired` now (the model will see that nobody approved it in time).
 *
 * @example
 * ```ts
 * import { Approvals } from "effect-claude-agent"
 *
 * const withdraw = (id: string) => Approvals.expire(id)
 * ```
 *
 * @since 0.1.0
 * @category deciding
 */
export const expire = (
  id: string
): Effect.Effect<Approval, ApprovalError, ApprovalStore> =>
  Effect.flatMap(ApprovalStore, (store) =>
    Effect.flatMap(store.get(id), (found) =>
      Option.isNone(found)
        ? Effect.fail(new ApprovalNotFound({ id }))
        : store.decide(id, { state: "expired", message: expiredNow(found.value) })))

const expiredNow = (approval: Approval): string =>
  `The approval for this ${approval.toolName} call expired (withdrawn) without a decision: the tool was not run.`

/**
 * Decides `expired` every pending approval past its deadline; returns them (continue each with
 * `resume` to tell its model).
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { Approvals } from "effect-claude-agent"
 *
 * const sweeper = Approvals.expireDue.pipe(Effect.repeat(Schedule.spaced("1 minute")))
 * ```
 *
 * @since 0.1.0
 * @category deciding
 */
export const expireDue: Effect.Effect<ReadonlyArray<Approval>, ApprovalStoreError, ApprovalStore> = Effect.flatMap(
  ApprovalStore,
  (store) => store.expireDue
)

/**
 * The pending approvals of a project (the session store's `projectKey`) or of one session.
 *
 * @example
 * ```ts
 * import { Approvals } from "effect-claude-agent"
 *
 * const inbox = Approvals.listPending({ projectKey: "-srv-app" })
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const listPending = (
  filter: PendingFilter
): Effect.Effect<ReadonlyArray<Approval>, ApprovalStoreError, ApprovalStore> =>
  Effect.flatMap(ApprovalStore, (store) => store.listPending(filter))

/**
 * One approval, whatever its state.
 *
 * @example
 * ```ts
 * import { Approvals } from "effect-claude-agent"
 *
 * const state = (id: string) => Approvals.get(id)
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const get = (id: string): Effect.Effect<Option.Option<Approval>, ApprovalStoreError, ApprovalStore> =>
  Effect.flatMap(ApprovalStore, (store) => store.get(id))
