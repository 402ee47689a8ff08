/**
 * The deciding side: a decided approval's session resumed from its `SessionStore`, the CLI's
 * start-up `canUseTool` for the deferred call answered with the decision (the same answer however
 * often it asks), and the interrupted turn finished at once (`CLAUDE_CODE_RESUME_INTERRUPTED_TURN`:
 * the CLI re-runs the turn the deferral cut short, no prompt needed); its messages, up to its
 * `result`, are the stream.
 *
 * @internal
 */
import { Effect, Option, Predicate, Ref, Stream } from "effect"
import * as ClaudeAgent from "../../ClaudeAgent.js"
import type * as Hook from "../../Hook.js"
import * as Permission from "../../Permission.js"
import * as Message from "../../schema/Message.js"
import type * as Options from "../../schema/Options.js"
import { OptionsError, type SdkError } from "../../SdkError.js"
import { type Approval, ApprovalAlreadyApplied, type Decision } from "../../services/ApprovalStore.js"
import type { Entry } from "../../services/SessionStore.js"
import { projectKeyOf } from "../session/storedSession.js"

/**
 * The environment that makes a resumed CLI finish the turn it was resumed in the middle of,
 * however long ago that was.
 *
 * @internal
 */
export const resumeEnv = {
  CLAUDE_CODE_RESUME_INTERRUPTED_TURN: "1",
  CLAUDE_CODE_RESUME_INTERRUPTED_TURN_MAX_AGE_MS: "0"
} as const

/**
 * The `canUseTool` answer for a decision.
 *
 * @internal
 */
export const answerFor = (decision: Decision): Permission.PermissionResult => {
  switch (decision.state) {
    case "approved":
      return Permission.allow()
    case "edited":
      return Permission.allow({ updatedInput: decision.updatedInput })
    case "denied":
    case "expired":
      return Permission.deny(decision.message)
  }
}

// The caller's hooks, minus any opinion on the deferred call itself (`PreToolUse`,
// `PermissionRequest`): the decision is taken, and a hook that defers every call would stop it again.
const sparing = <R>(hooks: Hook.Hooks<R>, toolUseId: string): Hook.Hooks<R> => {
  const spare = (matchers: ReadonlyArray<Hook.HookMatcher<R>> | undefined) =>
    matchers?.map((m) => ({
      ...m,
      hooks: m.hooks.map((callback): Hook.HookCallback<unknown, R> => (input, id) =>
        id === toolUseId ? Effect.succeed({}) : callback(input, id)
      )
    }))
  const preToolUse = spare(hooks.PreToolUse)
  const permissionRequest = spare(hooks.PermissionRequest)
  return {
    ...hooks,
    ...(preToolUse === undefined ? {} : { PreToolUse: preToolUse }),
    ...(permissionRequest === undefined ? {} : { PermissionRequest: permissionRequest })
  }
}

const toolOf = (rule: string): string => {
  const at = rule.indexOf("(")
  return at < 0 ? rule : rule.slice(0, at)
}

/**
 * The resumed session's options: the caller's, resuming the approval's session in its directory,
 * with the decision answering the deferred call. Settings that would let the CLI run the call
 * without asking (a permission mode other than `default`, an `allowedTools` rule for the tool) are
 * dropped for this session.
 *
 * @internal
 */
export const sessionOptions = <R>(
  approval: Approval,
  decision: Decision,
  options: Options.Options<R>,
  asked: Ref.Ref<number>
): Options.Options<R> => {
  const {
    continue: _continue,
    forkSession: _fork,
    permissionPromptToolName: _tool,
    permissionPrompts: _prompts,
    resumeSessionAt: _at,
    resumeDropsTurn: _drops,
    sessionId: _id,
    ...rest
  } = options
  const answer = answerFor(decision)
  const fallback = options.canUseTool
  const canUseTool: Permission.CanUseTool<unknown, R> = (toolName, input, context) =>
    context.toolUseID === approval.toolUseId
      ? Effect.as(Ref.update(asked, (n) => n + 1), answer)
      : fallback !== undefined
      ? fallback(toolName, input, context)
      : Effect.succeed(Permission.deny(`${toolName} needs a decision and this session has no canUseTool`))
  const allowedTools = options.allowedTools?.filter((rule) => toolOf(rule) !== approval.toolName)
  return {
    ...rest,
    ...(approval.cwd === undefined || options.cwd !== undefined ? {} : { cwd: approval.cwd }),
    ...(allowedTools === undefined ? {} : { allowedTools }),
    ...(options.hooks === undefined ? {} : { hooks: sparing(options.hooks, approval.toolUseId) }),
    resume: approval.sessionId,
    permissionMode: "default",
    canUseTool,
    env: { ...options.env, ...resumeEnv }
  }
}

/**
 * Whether a transcript already holds the answer to the call (a `tool_result` for its id).
 *
 * @internal
 */
export const answered = (entries: ReadonlyArray<Entry>, toolUseId: string): boolean =>
  entries.some((entry) => {
    const content = entry.type === "user" && Predicate.isRecord(entry.message) ? entry.message.content : undefined
    return Array.isArray(content) && content.some((block: unknown) =>
      Predicate.isRecord(block) && block.type === "tool_result" && block.tool_use_id === toolUseId
    )
  })

/**
 * The continuation of a decided approval's turn: its messages up to its `result`.
 *
 * @internal
 */
export const continued = <R>(
  approval: Approval,
  options: Options.Options<R>
): Stream.Stream<Message.Message, SdkError | ApprovalAlreadyApplied, ClaudeAgent.ClaudeAgent | R> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const decision = approval.decision
      if (decision === undefined) {
        return yield* new OptionsError({ field: "approval", detail: `approval ${approval.id} is still pending` })
      }
      if (options.sessionStore === undefined) {
        return yield* new OptionsError({
          field: "sessionStore",
          detail: "continuing an approval resumes its session from the session store it was kept in"
        })
      }
      const cwd = options.cwd ?? approval.cwd
      if (cwd !== undefined && (yield* projectKeyOf(cwd)) !== approval.projectKey) {
        return yield* new OptionsError({
          field: "cwd",
          detail: `${cwd} is not the project the approval's session ran in (${approval.projectKey})`
        })
      }
      // Continued before: the CLI would find no interrupted turn, and the stream would wait for ever.
      const stored = yield* options.sessionStore.load({
        projectKey: approval.projectKey,
        sessionId: approval.sessionId
      })
      if (Option.isSome(stored) && answered(stored.value, approval.toolUseId)) {
        return yield* new ApprovalAlreadyApplied({ approval })
      }
      const asked = yield* Ref.make(0)
      const session = yield* ClaudeAgent.session(sessionOptions(approval, decision, options, asked))
      const notAsked = Effect.flatMap(Ref.get(asked), (n) =>
        n > 0 ? Effect.void : Effect.logWarning(
          `effect-claude-agent: the resumed CLI did not ask for the deferred ${approval.toolName} call ` +
            `${approval.toolUseId}: the decision was not applied by this session`
        ))
      return session.messages.pipe(
        Stream.takeUntil(Message.isResult),
        Stream.concat(Stream.execute(notAsked))
      )
    }).pipe(Effect.withSpan("Approvals.continue", {
      captureStackTrace: false,
      attributes: { "claude.approval.id": approval.id, "claude.tool.name": approval.toolName }
    }))
  )
