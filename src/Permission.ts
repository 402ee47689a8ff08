/**
 * Tool permissions as Effects: `options.canUseTool` answers the CLI's `can_use_tool` requests.
 *
 * Setting `canUseTool` launches the CLI with `--permission-prompt-tool=stdio`, so every tool use
 * that needs a decision comes to the callback with the CLI's suggestions. The callback returns
 * `Permission.allow(…)` or `Permission.deny(…)`. If the CLI withdraws the request (an interrupt
 * arrived), the callback's fiber is interrupted and nothing is answered.
 *
 * @since 0.1.0
 */
import { Effect, Predicate, Schema } from "effect"
import * as Guard from "./internal/schema/guard.js"
import {
  optionalBoolean,
  optionalString as OptionalString,
  optionalRawObject,
  Strings
} from "./internal/schema/schemas.js"
import type * as Control from "./schema/Control.js"
import { OptionsError } from "./SdkError.js"
import type { InboundHandler } from "./services/ControlChannel.js"
import { callbackEffect, providing } from "./internal/effect/captured.js"

const Destination = Schema.Literal("userSettings", "projectSettings", "localSettings", "session", "cliArg")

const RuleValue = Schema.Struct({ toolName: Schema.String, ruleContent: OptionalString })

/**
 * A change to the permission rules: what the CLI suggests, and what an `allow` may apply.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * const update: Permission.PermissionUpdate = {
 *   type: "addRules",
 *   rules: [{ toolName: "Bash", ruleContent: "npm test" }],
 *   behavior: "allow",
 *   destination: "session"
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PermissionUpdate = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("addRules", "replaceRules", "removeRules"),
    rules: Schema.Array(RuleValue),
    behavior: Schema.Literal("allow", "deny", "ask"),
    destination: Destination
  }),
  Schema.Struct({
    type: Schema.Literal("setMode"),
    mode: Schema.String,
    destination: Destination
  }),
  Schema.Struct({
    type: Schema.Literal("addDirectories", "removeDirectories"),
    directories: Strings,
    destination: Destination
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionUpdate = Schema.Schema.Type<typeof PermissionUpdate>

/**
 * Allow the tool use, optionally with rewritten input and rule updates.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * const result: Permission.PermissionAllow = { behavior: "allow", updatedInput: { command: "ls -la" } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PermissionAllow = Schema.Struct({
  behavior: Schema.Literal("allow"),
  updatedInput: optionalRawObject,
  updatedPermissions: Schema.optional(Schema.Array(PermissionUpdate)),
  /** How a person decided, for the CLI's records (`"user_temporary"`, `"user_permanent"`). */
  decisionClassification: Schema.optional(Schema.Literal("user_temporary", "user_permanent", "user_reject"))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PermissionAllow extends Schema.Schema.Type<typeof PermissionAllow> {}

/**
 * Deny the tool use; the model sees `message`. With `interrupt: true` the turn ends too.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * const result: Permission.PermissionDeny = { behavior: "deny", message: "not in production" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PermissionDeny = Schema.Struct({
  behavior: Schema.Literal("deny"),
  message: Schema.String,
  interrupt: optionalBoolean,
  /** How a person decided, for the CLI's records (`"user_reject"`). */
  decisionClassification: Schema.optional(Schema.Literal("user_temporary", "user_permanent", "user_reject"))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PermissionDeny extends Schema.Schema.Type<typeof PermissionDeny> {}

/**
 * The answer of a `canUseTool` callback.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * const decide = (tool: string): Permission.PermissionResult =>
 *   tool === "Bash" ? Permission.deny("no shell") : Permission.allow()
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PermissionResult = Schema.Union(PermissionAllow, PermissionDeny)

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionResult = Schema.Schema.Type<typeof PermissionResult>

/**
 * Allows the tool use. `updatedInput` replaces the tool's input; `updatedPermissions` applies
 * rule changes (e.g. one of the CLI's `suggestions`).
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * Permission.allow()
 * Permission.allow({ updatedInput: { file_path: "/tmp/out.txt", content: "safe" } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const allow = (
  options: {
    readonly updatedInput?: { readonly [key: string]: unknown } | undefined
    readonly updatedPermissions?: ReadonlyArray<PermissionUpdate> | undefined
  } = {}
): PermissionAllow => ({
  behavior: "allow",
  ...(options.updatedInput === undefined ? {} : { updatedInput: options.updatedInput }),
  ...(options.updatedPermissions === undefined ? {} : { updatedPermissions: options.updatedPermissions })
})

/**
 * Denies the tool use with a message for the model; `interrupt: true` also ends the turn.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * Permission.deny("Writing outside the workspace is not allowed")
 * Permission.deny("Stop.", { interrupt: true })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const deny = (message: string, options: { readonly interrupt?: boolean | undefined } = {}): PermissionDeny => ({
  behavior: "deny",
  message,
  ...(options.interrupt === undefined ? {} : { interrupt: options.interrupt })
})

/**
 * What the CLI tells the callback besides the tool name and input.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-claude-agent"
 * const explain = (c: Permission.CanUseToolContext) => `${c.toolUseID}: ${c.decisionReason ?? "no reason"}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CanUseToolContext {
  /** Rule updates the CLI suggests (pass one back in `allow({ updatedPermissions })`). */
  readonly suggestions: ReadonlyArray<PermissionUpdate>
  /** The path that triggered the request, for file tools outside the allowed directories. */
  readonly blockedPath: string | undefined
  /** Why the CLI asks. */
  readonly decisionReason: string | undefined
  /** The `tool_use` block's id. */
  readonly toolUseID: string
  /** The subagent asking, if not the main agent. */
  readonly agentID: string | undefined
  /** The tool's display name and a short description of this use (e.g. a file name). */
  readonly displayName: string | undefined
  readonly description: string | undefined
  /** For MCP tools: the server (`{ name, source }`). */
  readonly mcpServer: { readonly [key: string]: unknown } | undefined
  /** The control request id. */
  readonly requestId: string
  /** The whole request as the CLI sent it (fields this version does not model are here). */
  readonly raw: { readonly [key: string]: unknown }
}

/**
 * A permission callback. It may use services (`R`) provided where the session is built.
 *
 * It returns an `Effect`, not a Promise: from untyped JavaScript, a callback written as for the
 * official SDK (`async (toolName, input) => …`) is answered to the CLI as an error (the tool is not
 * run) and logged with an `OptionsError` that says so; wrap such a function with `Effect.promise`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission } from "effect-claude-agent"
 *
 * const onlyReads: Permission.CanUseTool = (toolName) =>
 *   Effect.succeed(toolName === "Read" ? Permission.allow() : Permission.deny(`${toolName} is not allowed`))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CanUseTool<E = unknown, R = never> = (
  toolName: string,
  input: { readonly [key: string]: unknown },
  context: CanUseToolContext
) => Effect.Effect<PermissionResult, E, R>

const optionalString = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const update = Guard.member(PermissionUpdate)
const permissionResult = Guard.member(PermissionResult)

/**
 * The request fields, decoded loosely: a suggestion this version cannot read is dropped from
 * `suggestions` (it stays in `raw`) rather than failing the permission prompt.
 *
 * @internal
 */
export const contextOf = (request: { readonly [key: string]: unknown }, requestId: string): CanUseToolContext => {
  const suggestions = Array.isArray(request.permission_suggestions)
    ? request.permission_suggestions.filter(update.is)
    : []
  return {
    suggestions,
    blockedPath: optionalString(request.blocked_path),
    decisionReason: optionalString(request.decision_reason),
    toolUseID: optionalString(request.tool_use_id) ?? "",
    agentID: optionalString(request.agent_id),
    displayName: optionalString(request.display_name),
    description: optionalString(request.description),
    mcpServer: Predicate.isRecord(request.mcp_server) ? request.mcp_server : undefined,
    requestId,
    raw: request
  }
}

/**
 * Builds the `can_use_tool` handler for a callback, capturing the services it needs. The answer
 * always carries `updatedInput` (the original input when the callback did not change it), which
 * every CLI version accepts.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission } from "effect-claude-agent"
 *
 * const handler = Permission.makeHandler(() => Effect.succeed(Permission.allow()))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeHandler = <E, R>(
  canUseTool: CanUseTool<E, R>
): Effect.Effect<InboundHandler<typeof Control.CanUseTool>, never, R> =>
  Effect.map(
    Effect.context<R>(),
    (services) =>
      providing((request: Control.Request.Payload<typeof Control.CanUseTool>, requestId: string) =>
        Effect.gen(function*() {
          const toolName = request.tool_name
          const input = request.input
          const result = yield* callbackEffect(canUseTool(toolName, input, contextOf(request, requestId)), "canUseTool")
          if (!permissionResult.is(result)) {
            return yield* new OptionsError({
              field: "canUseTool",
              detail: `returned an invalid result: ${permissionResult.explain(result)}`
            })
          }
          if (result.behavior === "allow") {
            return {
              behavior: "allow",
              updatedInput: result.updatedInput ?? input,
              ...(result.updatedPermissions === undefined ? {} : { updatedPermissions: result.updatedPermissions }),
              ...(result.decisionClassification === undefined
                ? {}
                : { decisionClassification: result.decisionClassification }),
              toolUseID: optionalString(request.tool_use_id)
            }
          }
          return { ...result, toolUseID: optionalString(request.tool_use_id) }
        }), services)
  )
