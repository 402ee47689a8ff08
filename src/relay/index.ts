/**
 * effect-claude-agent/relay: a WebSocket relay that runs next to the Claude Code CLI, for hosts
 * that drive it from elsewhere with `Transport.layerWebSocket`. Needs the optional peer dependency
 * `@effect/platform-node`. Also a command: `effect-claude-agent-relay` (configured by environment).
 *
 * @since 0.1.0
 */

/**
 * The relay: `make`, `config` (from the environment), `RelayConfig`, `RelayError`.
 *
 * @since 0.1.0
 */
export * as Relay from "./Relay.js"
