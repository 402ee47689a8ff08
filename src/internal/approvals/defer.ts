/**
 * The deferring side: a session with the `approvalStore` option records the call a turn stopped
 * at (`terminal_reason: "tool_deferred"`, `deferred_tool_use` on the `result`) as a pending
 * approval, after the mirror has stored the turn and before the `result` is delivered, and
 * delivers a `system/awaiting_approval` message naming it.
 *
 * @internal
 */
import { Clock, Context, Duration, Effect, Schedule } from "effect"
import type { Approval, ApprovalStoreShape } from "../../services/ApprovalStore.js"
import type { RawObject } from "../protocol/router.js"

/**
 * What the reader needs to record deferred calls.
 *
 * @internal
 */
export interface DeferConfig {
  readonly store: ApprovalStoreShape
  readonly timeout: Duration.Duration
  /** The store key's project, as the session store has it (the CLI's folder name for `cwd`). */
  readonly projectKey: string
  readonly cwd: string
}

/**
 * The configuration in a session's context when the session has an approval store.
 *
 * @internal
 */
export class DeferSettings extends Context.Tag("effect-claude-agent/internal/DeferSettings")<
  DeferSettings,
  DeferConfig
>() {}

/**
 * How long an approval waits by default.
 *
 * @internal
 */
export const DEFAULT_TIMEOUT = Duration.hours(24)

/**
 * The id of the approval for a call: derived from the session and the call, so that whoever knows
 * the call (the cluster entity answering `AnswerPermission` by tool use id) finds its approval in
 * one read, decided or not, and a call recorded twice is one approval.
 *
 * @internal
 */
export const approvalIdFor = (sessionId: string, toolUseId: string): string => `${sessionId}:${toolUseId}`

// Made on first use: the first Schedule a process builds compiles Schedule's code, ~0.4 ms that an
// import of the barrel would otherwise pay for a store's retries.
const makeRetry = () => Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
let retry: ReturnType<typeof makeRetry> | undefined

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The reader's step for a `result` frame: `undefined` unless the turn stopped at a deferred call;
 * else the effect that records it and delivers the message (through `emit`, before the result).
 *
 * @internal
 */
export const make = (
  config: DeferConfig,
  emit: (messages: Array<unknown>) => Effect.Effect<void>
) =>
(frame: RawObject): Effect.Effect<void> | undefined => {
  if (frame.terminal_reason !== "tool_deferred") return undefined
  const call = frame.deferred_tool_use
  const sessionId = frame.session_id
  if (!isRecord(call) || typeof sessionId !== "string") return undefined
  const { id, input, name } = call
  if (typeof id !== "string" || typeof name !== "string" || !isRecord(input)) return undefined
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const approval: Approval = {
      id: approvalIdFor(sessionId, id),
      projectKey: config.projectKey,
      sessionId,
      cwd: config.cwd,
      toolUseId: id,
      toolName: name,
      input,
      createdAt: now,
      expiresAt: now + Duration.toMillis(config.timeout),
      state: "pending"
    }
    const message = (error: string | undefined) => ({
      type: "system",
      subtype: "awaiting_approval",
      approval,
      ...(error === undefined ? {} : { error }),
      session_id: sessionId,
      uuid: crypto.randomUUID()
    })
    return config.store.create(approval).pipe(
      Effect.retry({ schedule: retry ??= makeRetry(), while: (e) => e.reason === "Unavailable" }),
      Effect.matchEffect({
        onSuccess: () => emit([message(undefined)]),
        onFailure: (e) =>
          Effect.zipRight(
            Effect.logWarning(`effect-claude-agent: could not record the deferred ${name} call: ${e.message}`),
            emit([message(e.message)])
          )
      })
    )
  })
}
