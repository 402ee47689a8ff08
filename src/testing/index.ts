/**
 * `effect-claude-agent/testing`: test agents without a model, a key or a network.
 *
 * @since 0.1.0
 */

/**
 * An in-memory Claude Code CLI (a `Transport` test double).
 *
 * @since 0.1.0
 */
export * as FakeCli from "./FakeCli.js"

/**
 * A scripted Anthropic Messages API server for driving the real CLI offline. It runs on
 * `@effect/platform-node`'s HTTP server, an optional peer dependency this entry point needs.
 *
 * @since 0.1.0
 */
export * as ScriptedModel from "./ScriptedModel.js"

/**
 * Record a real session to JSONL and replay it as the CLI, deterministically.
 *
 * @since 0.1.0
 */
export * as Recording from "./Recording.js"

/**
 * A tracer that keeps the spans made under it, for asserting span trees in tests.
 *
 * @since 0.1.0
 */
export * as SpanRecorder from "./SpanRecorder.js"
