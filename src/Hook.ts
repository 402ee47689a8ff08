/**
 * Hook callbacks: the CLI calls back into the SDK at fixed points of a session (before a tool
 * runs, after it ran, when a prompt is submitted, before the agent stops, …) and acts on the
 * answer.
 *
 * This is the module for writing callbacks: `on` types a callback for one event, `allow`, `deny`,
 * `ask`, `addContext` and `stop` build the common answers, and `Hooks` is the `hooks` option. The
 * events, inputs and outputs it works with are Schemas (`src/schema/Hook.ts`), re-exported here
 * so that the `Hook` namespace offers both.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import { Effect } from "effect"
import type {
  HookEvent,
  HookInput,
  HookInputFor,
  HookOutput,
  HookSpecificOutput,
  SyncHookOutput
} from "./schema/Hook.js"

/**
 * The events, inputs and outputs callbacks work with, as Schemas and types (defined in
 * `src/schema/Hook.ts`): `HookEvent`, every hook event the CLI knows; `HookInput`, what a callback
 * receives, discriminated by `hook_event_name`, with one Schema per event (`PreToolUseInput`, …)
 * and `HookInputFor<"…">` for the input of one event; `HookOutput`, what a callback answers,
 * synchronous (`SyncHookOutput`, with the event-specific `HookSpecificOutput`) or asynchronous
 * (`AsyncHookOutput`); and the wire side, for testing a callback outside a session: `decodeInput`
 * reads a `hook_callback` input, `encodeOutput` checks an answer and gives the object the CLI
 * receives.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const known = (name: string) => Hook.HookEvent.literals.some((event) => event === name)
 * ```
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const tool = (input: Hook.HookInput) =>
 *   input.hook_event_name === "PreToolUse" ? input.tool_name : undefined
 * const command = (input: Hook.HookInputFor<"PreToolUse">) => input.tool_input
 * ```
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer: Hook.HookOutput = {
 *   hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "the build is green" }
 * }
 * ```
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Hook } from "effect-claude-agent"
 *
 * const input = Hook.decodeInput({
 *   hook_event_name: "Stop",
 *   session_id: "s",
 *   transcript_path: "/tmp/t.jsonl",
 *   cwd: "/tmp",
 *   stop_hook_active: false
 * })
 * Either.isRight(input) // true
 * Hook.encodeOutput(Hook.stop("done")) // Either.right({ continue: false, stopReason: "done" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export * from "./schema/Hook.js"

// ---------------------------------------------------------------------------------------------
// callbacks and matchers
// ---------------------------------------------------------------------------------------------

/**
 * A hook callback: gets the decoded input and the request's `tool_use_id`, answers a
 * `HookOutput`. A failure or defect is answered to the CLI as an error (the CLI then treats the
 * hook's answer as empty, or blocks with `onFailure: "block"`); if the CLI withdraws the request
 * the callback's fiber is interrupted and nothing is answered. A callback that returns something
 * other than an Effect (from untyped JavaScript, an `async` function as the official SDK takes)
 * fails the same way, with an `OptionsError` saying an Effect is expected.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-claude-agent"
 *
 * const noRm: Hook.HookCallback = (input) =>
 *   Effect.succeed(
 *     input.hook_event_name === "PreToolUse" && JSON.stringify(input.tool_input).includes("rm -rf")
 *       ? Hook.deny("rm -rf is not allowed")
 *       : {}
 *   )
 * ```
 *
 * @since 0.1.0
 * @category callbacks
 */
export type HookCallback<E = never, R = never> = (
  input: HookInput,
  toolUseId: string | undefined
) => Effect.Effect<HookOutput, E, R>

/**
 * Callbacks for one event, optionally restricted by a `matcher` (for tool events, a tool name or
 * a pattern such as `"Bash"` or `"Write|Edit"`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-claude-agent"
 *
 * const bashOnly: Hook.HookMatcher = {
 *   matcher: "Bash",
 *   hooks: [() => Effect.succeed(Hook.allow("trusted"))],
 *   timeout: "30 seconds"
 * }
 * ```
 *
 * @since 0.1.0
 * @category callbacks
 */
export interface HookMatcher<R = never> {
  readonly matcher?: string | undefined
  readonly hooks: ReadonlyArray<HookCallback<unknown, R>>
  /** How long the CLI waits for these callbacks; sent to the CLI in seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * What the CLI does when a callback fails, dies or answers an invalid output. `"continue"` (the
   * CLI's default, also when omitted) goes on as if the callback answered `{}`: a failing
   * `PreToolUse` guard lets the tool run. `"block"` blocks the guarded action instead: the tool
   * does not run and the model gets an error result ("… blocking because onFailure is \"block\"").
   * Give `"block"` to every hook that enforces a policy. The CLI ignores it for `Stop`,
   * `SubagentStop`, `TaskCompleted` and `TeammateIdle`.
   */
  readonly onFailure?: "continue" | "block" | undefined
}

/**
 * Hook matchers by event: the `hooks` option.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-claude-agent"
 *
 * const hooks: Hook.Hooks = {
 *   PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(Hook.deny("no shell"))] }],
 *   Stop: [{ hooks: [() => Effect.succeed({})] }]
 * }
 * ```
 *
 * @since 0.1.0
 * @category callbacks
 */
export type Hooks<R = never> = { readonly [K in HookEvent]?: ReadonlyArray<HookMatcher<R>> | undefined }

const isInputFor = <K extends HookEvent>(event: K, input: HookInput): input is HookInputFor<K> =>
  input.hook_event_name === event

/**
 * A callback for one event, with the input typed for it. Registering it under another event is
 * a programming error: the callback dies naming both events.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-claude-agent"
 *
 * const logPrompts = Hook.on("UserPromptSubmit", (input) =>
 *   Effect.as(Effect.log(`prompt: ${input.prompt}`), {}))
 * const hooks: Hook.Hooks = { UserPromptSubmit: [{ hooks: [logPrompts] }] }
 * ```
 *
 * @since 0.1.0
 * @category callbacks
 */
export const on = <K extends HookEvent, E = never, R = never>(
  event: K,
  f: (input: HookInputFor<K>, toolUseId: string | undefined) => Effect.Effect<HookOutput, E, R>
): HookCallback<E, R> =>
(input, toolUseId) =>
  isInputFor(event, input)
    ? f(input, toolUseId)
    : Effect.dieMessage(`a hook callback for ${event} was called with a ${input.hook_event_name} input`)

// ---------------------------------------------------------------------------------------------
// answers
// ---------------------------------------------------------------------------------------------

// An absent reason is no member at all, rather than one set to `undefined`: the answer then goes on
// the wire as it is, where `encodeOutput` copies an answer with an `undefined` member to drop it.
const reasonOf = (reason: string | undefined): { readonly permissionDecisionReason?: string } =>
  reason === undefined ? {} : { permissionDecisionReason: reason }

/**
 * `PreToolUse`: allow the tool use without a permission prompt, optionally replacing its input.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer = Hook.allow("read-only command", { command: "ls -la" })
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export const allow = (reason?: string, updatedInput?: { readonly [key: string]: unknown }): SyncHookOutput => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "allow",
    ...reasonOf(reason),
    ...(updatedInput === undefined ? {} : { updatedInput })
  }
})

/**
 * `PreToolUse`: stop the turn at this tool call without running it. The turn ends with a `result`
 * whose `terminal_reason` is `tool_deferred` and whose `deferred_tool_use` (`{ id, name, input }`)
 * names the call. Resuming the session later runs that call first, as soon as the CLI starts and
 * before any prompt, through the permission flow (`canUseTool`; hooks are registered too late to be
 * asked reliably), so the decision can be taken then; docs/protocol-defer.md has what Claude Code
 * 2.1.330 does. With the `approvalStore` option the call is recorded as a pending approval that
 * `Approvals.approve` / `deny` / `edit` decide later, from any process.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-claude-agent"
 * const holdWrites: Hook.HookCallback = Hook.on("PreToolUse", (input) =>
 *   Effect.succeed(input.tool_name === "Write" ? Hook.defer() : {}))
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export const defer = (reason?: string): SyncHookOutput => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "defer",
    ...reasonOf(reason)
  }
})

/**
 * `PreToolUse`: deny the tool use; the model sees `reason` as the tool's error.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer = Hook.deny("writes outside the workspace are not allowed")
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export const deny = (reason: string): SyncHookOutput => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason }
})

/**
 * `PreToolUse`: ask the user (the normal permission prompt) whatever the rules say.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer = Hook.ask("touches production config")
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export const ask = (reason?: string): SyncHookOutput => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", ...reasonOf(reason) }
})

/**
 * The events whose answer can add context for the model.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const event: Hook.ContextEvent = "PostToolUse"
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export type ContextEvent = Extract<
  HookSpecificOutput,
  { readonly additionalContext?: string | undefined }
>["hookEventName"]

/**
 * Adds text to the model's context (`hookSpecificOutput.additionalContext`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer = Hook.addContext("UserPromptSubmit", "The repository uses pnpm, not npm.")
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export const addContext = (event: ContextEvent, text: string): SyncHookOutput => ({
  hookSpecificOutput: { hookEventName: event, additionalContext: text }
})

/**
 * Stops the session after this hook, showing `reason` to the user (`continue: false`).
 *
 * @example
 * ```ts
 * import { Hook } from "effect-claude-agent"
 * const answer = Hook.stop("budget reached")
 * ```
 *
 * @since 0.1.0
 * @category answers
 */
export const stop = (reason: string): SyncHookOutput => ({ continue: false, stopReason: reason })
