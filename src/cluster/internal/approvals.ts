/**
 * The entity's durable wait for a person (an approval store given to `AgentEntity.layer`): a tool
 * use the client decides is deferred by a `PreToolUse` hook instead of waiting in memory, so the
 * session records it in the approval store (the turn ends awaiting approval, the CLI may exit), and
 * the decision and the continuation go through the store, from whichever runner owns the
 * conversation then.
 *
 * @internal
 */
import { Effect, Predicate } from "effect"
import * as Hook from "../../Hook.js"
import type * as Permission from "../../Permission.js"
import type { Approval, ApprovalStoreShape, Decision } from "../../services/ApprovalStore.js"

/**
 * Which tool uses the client decides.
 *
 * @internal
 */
export type Ask = (toolName: string, input: { readonly [key: string]: unknown }) => boolean

/**
 * What the entity needs for the durable wait.
 *
 * @internal
 */
export interface Durable {
  readonly store: ApprovalStoreShape
  readonly ask: Ask
}

/**
 * The session's hooks with one more `PreToolUse` callback: it defers the calls the client decides.
 * A hook runs before the permission rules, so every such call waits for the client, also one the
 * CLI would have allowed by itself.
 *
 * @internal
 */
export const withDeferral = <R>(hooks: Hook.Hooks<R> | undefined, ask: Ask): Hook.Hooks<R> => ({
  ...hooks,
  PreToolUse: [
    {
      hooks: [Hook.on("PreToolUse", (input) =>
        Effect.succeed(
          ask(input.tool_name, Predicate.isRecord(input.tool_input) ? input.tool_input : {})
            ? Hook.defer("waiting for the client's decision")
            : {}
        ))]
    },
    ...(hooks?.PreToolUse ?? [])
  ]
})

/**
 * The approval store's decision for the client's answer: `updatedPermissions` have no place in a
 * stored decision and are not applied.
 *
 * @internal
 */
export const decisionOf = (result: Permission.PermissionResult): Decision =>
  result.behavior === "deny"
    ? { state: "denied", message: result.message }
    : result.updatedInput === undefined
    ? { state: "approved" }
    : { state: "edited", updatedInput: result.updatedInput }

/**
 * A stored approval as `Status.pendingPermissions` lists it.
 *
 * @internal
 */
export const pendingOf = (approval: Approval) => ({
  toolUseId: approval.toolUseId,
  toolName: approval.toolName,
  input: approval.input,
  decisionReason: null,
  blockedPath: null,
  suggestions: [],
  since: approval.createdAt,
  approvalId: approval.id,
  expiresAt: approval.expiresAt
})

/**
 * The turn id a continuation is recorded under in the session store, beside the `Send` turns.
 *
 * @internal
 */
export const continuationTurnId = (toolUseId: string): string => `approval:${toolUseId}`
