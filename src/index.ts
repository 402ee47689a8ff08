/**
 * effect-claude-agent: the Effect-TS SDK for driving the Claude Code CLI.
 *
 * @since 0.1.0
 */

/**
 * Run agents: `query`, `session`, `structured`, `layer`, `make`, `failOnErrorResult`.
 *
 * @since 0.1.0
 */
export * as ClaudeAgent from "./ClaudeAgent.js"

/**
 * Many agents within limits: bounded concurrency, a FIFO queue, warm spares, the `ClaudeAgent` API.
 *
 * @since 0.1.0
 */
export * as AgentPool from "./AgentPool.js"

/**
 * Telemetry: the metrics every session records (sessions, turns, tokens, cost, tool calls, callback latency).
 *
 * @since 0.1.0
 */
export * as Telemetry from "./Telemetry.js"

/**
 * Who spent it: tokens and cost per agent, subagent, tool call and model, for a turn
 * (`Usage.ofResult`) or a session (`session.usage`).
 *
 * @since 0.1.0
 */
export * as Usage from "./Usage.js"

/**
 * Budgets that are enforced: caps in dollars and/or tokens per conversation key, pool and tenant,
 * over the whole time or per day, kept in memory or in SQL; a turn over a cap does not start, and
 * one that crosses it is interrupted.
 *
 * @since 0.1.0
 */
export * as Budget from "./Budget.js"

/**
 * The spans of a run as a tree, for development: `SpanTree.print` writes session → turn → tool
 * call / hook / permission with durations, tokens and cost when the run ends.
 *
 * @since 0.1.0
 */
export * as SpanTree from "./SpanTree.js"

/**
 * A live session: `send`, `messages`, `receiveResponse`, `interrupt`, `setModel`, …
 *
 * @since 0.1.0
 */
export * as AgentSession from "./AgentSession.js"

/**
 * Messages from the CLI, as Schemas: `Message`, `decode`, guards.
 *
 * @since 0.1.0
 */
export * as Message from "./schema/Message.js"

/**
 * Content blocks inside messages.
 *
 * @since 0.1.0
 */
export * as ContentBlock from "./schema/ContentBlock.js"

/**
 * Control-protocol envelopes, requests and replies.
 *
 * @since 0.1.0
 */
export * as Control from "./schema/Control.js"

/**
 * Session options and their validation.
 *
 * @since 0.1.0
 */
export * as Options from "./schema/Options.js"

/**
 * The `SdkError` union and its members.
 *
 * @since 0.1.0
 */
export * as SdkError from "./SdkError.js"

/**
 * The `Transport` service: one connection to one CLI process.
 *
 * @since 0.1.0
 */
export * as Transport from "./services/Transport.js"

/**
 * The `ControlChannel` service: the control protocol over a transport.
 *
 * @since 0.1.0
 */
export * as ControlChannel from "./services/ControlChannel.js"

/**
 * A session's services built in one step: the `Layers` that replace each of them, `SessionLaunch`, `build`.
 *
 * @since 0.1.0
 */
export * as SessionServices from "./layers/SessionServices.js"

/**
 * The `SessionStore` service: conversations kept outside the local disk (append-only, fenced),
 * for the `sessionStore` option.
 *
 * @since 0.1.0
 */
export * as SessionStore from "./services/SessionStore.js"

/**
 * `SessionStore` implementations: `layerMemory`, `layerFiles(dir)`, `layerSql(client)`.
 *
 * @since 0.1.0
 */
export * as SessionStores from "./layers/SessionStores.js"

/**
 * The `ApprovalStore` service: deferred tool calls waiting for a person, decided once, for the
 * `approvalStore` option.
 *
 * @since 0.1.0
 */
export * as ApprovalStore from "./services/ApprovalStore.js"

/**
 * `ApprovalStore` implementations: `layerMemory`, `layerSql(client)`.
 *
 * @since 0.1.0
 */
export * as ApprovalStores from "./layers/ApprovalStores.js"

/**
 * Human approval that survives a restart: `approve`, `deny` or `edit` a deferred tool call from
 * any process, which resumes its session and finishes the turn.
 *
 * @since 0.1.0
 */
export * as Approvals from "./Approvals.js"

/**
 * The `HookRegistry` service: answers `hook_callback` requests.
 *
 * @since 0.1.0
 */
export * as HookRegistry from "./services/HookRegistry.js"

/**
 * The `McpBridge` service: serves in-process MCP servers over `mcp_message`.
 *
 * @since 0.1.0
 */
export * as McpBridge from "./services/McpBridge.js"

/**
 * The `PermissionHandler` service: answers `can_use_tool` requests.
 *
 * @since 0.1.0
 */
export * as PermissionHandler from "./services/PermissionHandler.js"

/**
 * Tool permissions: `canUseTool` callbacks, `Permission.allow` / `Permission.deny`.
 *
 * @since 0.1.0
 */
export * as Permission from "./Permission.js"

/**
 * Hook events, typed hook inputs and outputs, and hook callbacks.
 *
 * @since 0.1.0
 */
export * as Hook from "./Hook.js"

/**
 * Tools for in-process MCP servers: a Schema for the input, an Effect for the handler.
 *
 * @since 0.1.0
 */
export * as Tool from "./Tool.js"

/**
 * In-process MCP servers: group `Tool`s and put the server in `options.mcpServers`.
 *
 * @since 0.1.0
 */
export * as McpServer from "./McpServer.js"

/**
 * Structured output typed by a Schema: `Structured.decode` for a `result`, `Structured.outputs`
 * for a message stream (and `ClaudeAgent.structured` for one call).
 *
 * @since 0.1.0
 */
export * as Structured from "./Structured.js"

/**
 * The CLI's session files: `listSessions`, `getSessionMessages`, `forkSession`, `renameSession`,
 * `tagSession`, `archiveSession`, `deleteSession`, … on `@effect/platform`'s `FileSystem`.
 *
 * @since 0.1.0
 */
export * as Sessions from "./Sessions.js"
