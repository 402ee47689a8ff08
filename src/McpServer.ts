/**
 * `McpServer`: an in-process (SDK) MCP server, a named set of `Tool`s served to the CLI over the
 * control protocol (`mcp_message`) instead of a subprocess or an HTTP endpoint.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import type * as Tool from "./Tool.js"

/**
 * An in-process MCP server. `R` is what its tools' handlers need from the environment; the
 * session provides it from the services available where the session is built.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { McpServer, Tool } from "effect-claude-agent"
 *
 * const calc: McpServer.McpServer = McpServer.make({
 *   name: "calc",
 *   tools: [Tool.make("add", {
 *     description: "Add two numbers",
 *     parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *     handler: ({ a, b }) => Effect.succeed(`sum=${a + b}`)
 *   })]
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface McpServer<R = never> {
  readonly type: "sdk"
  /** The server name: the key under `mcpServers` and the middle of `mcp__<server>__<tool>`. */
  readonly name: string
  /** Reported as `serverInfo.version` in the MCP handshake. */
  readonly version: string
  readonly tools: ReadonlyArray<Tool.Tool<R>>
  /** Reported as `instructions` in the MCP handshake: the CLI adds them to the model's context. */
  readonly instructions?: string | undefined
  /** The default `alwaysLoad` of its tools (a tool's own `alwaysLoad` wins). */
  readonly alwaysLoad?: boolean | undefined
  /** How long the CLI lets one tool call run before failing it (sent in `initialize`). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Builds an in-process MCP server. Pure: names are checked (non-empty, unique) and `timeout`
 * validated when the session starts, which fails with `OptionsError`. `version` defaults to
 * `"1.0.0"`.
 *
 * The extras are those of the official SDK's `createSdkMcpServer`:
 * - `instructions`: sent as `instructions` in the MCP `initialize` result; the CLI puts them in
 *   the model's context (under "# MCP Server Instructions", "## <name>"), so the model reads them
 *   before using the tools.
 * - `alwaysLoad`: the default of every tool's `alwaysLoad` (see `Tool.make`): `true` offers all
 *   the server's tools up front instead of deferring them behind the CLI's tool search; a tool's
 *   own `alwaysLoad: false` keeps that tool deferred.
 * - `timeout`: a wall-clock limit per tool call that the CLI enforces (sent in `initialize` as
 *   `sdkMcpServerConfigs.<name>.timeout`, in milliseconds); the CLI then fails the call for the
 *   model and cancels it (`notifications/cancelled`), which interrupts the handler's fiber. At
 *   least one second (the CLI ignores shorter ones); unset, the CLI's `MCP_TOOL_TIMEOUT` applies.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { ClaudeAgent, McpServer, Tool } from "effect-claude-agent"
 *
 * const calc = McpServer.make({
 *   name: "calc",
 *   instructions: "Use calc for all arithmetic; never compute in your head.",
 *   alwaysLoad: true,
 *   timeout: "30 seconds",
 *   tools: [Tool.make("add", {
 *     description: "Add two numbers",
 *     parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *     handler: ({ a, b }) => Effect.succeed(`sum=${a + b}`)
 *   })]
 * })
 * const stream = ClaudeAgent.query("What is 2+3?", {
 *   mcpServers: { calc },
 *   allowedTools: [McpServer.toolName("calc", "add")]
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export function make<const Tools extends ReadonlyArray<Tool.Tool<unknown>>>(options: {
  readonly name: string
  readonly version?: string | undefined
  readonly tools: Tools
  readonly instructions?: string | undefined
  readonly alwaysLoad?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
}): McpServer<Tool.Context<Tools[number]>>
// An overload rather than `<R>(… tools: ReadonlyArray<Tool<R>>)`: from tools needing different
// services TypeScript would pick one service and reject the rest; inferring the tuple and
// extracting the union of its requirements gives `McpServer<A | B>`.
export function make(options: {
  readonly name: string
  readonly version?: string | undefined
  readonly tools: ReadonlyArray<Tool.Tool<unknown>>
  readonly instructions?: string | undefined
  readonly alwaysLoad?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
}): McpServer<unknown> {
  return {
    type: "sdk",
    name: options.name,
    version: options.version ?? "1.0.0",
    tools: options.tools,
    instructions: options.instructions,
    alwaysLoad: options.alwaysLoad,
    timeout: options.timeout
  }
}

/**
 * The name the model (and `allowedTools`, `canUseTool`, hooks) sees for a tool of an MCP server.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-claude-agent"
 *
 * const name = McpServer.toolName("calc", "add") // "mcp__calc__add"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const toolName = (server: string, tool: string): string => `mcp__${server}__${tool}`

/**
 * The model-visible names of every tool of a server, e.g. for `allowedTools`. In-process tools
 * are denied unless `allowedTools` or `canUseTool` allows them (the CLI tells the model it
 * "hasn't granted" the tool, and the handler never runs); `permissionRule` allows a whole server
 * in one rule.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-claude-agent"
 *
 * declare const calc: McpServer.McpServer
 * const allowedTools = McpServer.toolNames(calc) // ["mcp__calc__add", …]
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const toolNames = <R>(server: McpServer<R>): ReadonlyArray<string> =>
  server.tools.map((tool) => toolName(server.name, tool.name))

/**
 * The permission rule that allows every tool of a server in one entry: `mcp__<name>`, for
 * `allowedTools` (or `disallowedTools`). In-process tools are denied unless a rule or
 * `canUseTool` allows them; `toolNames` lists them one by one instead.
 *
 * @example
 * ```ts
 * import { Effect, Schema, Stream } from "effect"
 * import { ClaudeAgent, McpServer, Tool } from "effect-claude-agent"
 *
 * const add = Tool.make("add", {
 *   description: "Adds two numbers",
 *   parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *   handler: ({ a, b }) => Effect.succeed(`${a + b}`)
 * })
 * const calc = McpServer.make({ name: "calc", tools: [add] })
 * const run = ClaudeAgent.query("What is 2 + 3?", {
 *   mcpServers: { calc },
 *   allowedTools: [McpServer.permissionRule(calc)] // "mcp__calc"
 * }).pipe(Stream.runDrain)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const permissionRule = <R>(server: McpServer<R>): string => `mcp__${server.name}`
