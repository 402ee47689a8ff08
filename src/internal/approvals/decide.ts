/**
 * The decide-once rule every approval store applies: a pending approval takes the first decision,
 * or `expired` once its deadline has passed; a decided one takes none.
 *
 * @internal
 */
import type { Approval, DecideOptions, Decision } from "../../services/ApprovalStore.js"

/**
 * The model's message for a call whose approval expired.
 *
 * @internal
 */
export const expiredMessage = (expiresAt: number): string =>
  `The approval for this tool call expired at ${new Date(expiresAt).toISOString()} without a decision: ` +
  "the tool was not run."

/**
 * The expiry decision for an approval.
 *
 * @internal
 */
export const expiry = (approval: Approval): Decision => ({
  state: "expired",
  message: expiredMessage(approval.expiresAt)
})

/**
 * `approval` decided with `decision` at `now`.
 *
 * @internal
 */
export const applied = (approval: Approval, decision: Decision, now: number, options?: DecideOptions): Approval => ({
  ...approval,
  state: decision.state,
  decision,
  decidedAt: now,
  ...(options?.decidedBy === undefined || decision.state === "expired" ? {} : { decidedBy: options.decidedBy })
})

/**
 * What a decision on `current` at `now` does: `Decide` records `approval` if `current` is still
 * pending (the compare-and-set), and returns it; `Expire` records `approval` (the expiry) and
 * refuses the decision; `Refuse` changes nothing.
 *
 * @internal
 */
export type Step =
  | { readonly _tag: "Decide"; readonly approval: Approval }
  | { readonly _tag: "Expire"; readonly approval: Approval }
  | { readonly _tag: "Refuse"; readonly approval: Approval }

/**
 * The step for a decision.
 *
 * @internal
 */
export const step = (current: Approval, decision: Decision, now: number, options?: DecideOptions): Step => {
  if (current.state !== "pending") return { _tag: "Refuse", approval: current }
  if (decision.state !== "expired" && now >= current.expiresAt) {
    return { _tag: "Expire", approval: applied(current, expiry(current), now) }
  }
  return { _tag: "Decide", approval: applied(current, decision, now, options) }
}

/**
 * Whether a pending approval is due to expire at `now`.
 *
 * @internal
 */
export const isDue = (approval: Approval, now: number): boolean =>
  approval.state === "pending" && now >= approval.expiresAt
