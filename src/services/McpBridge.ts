/**
 * `McpBridge`: serves in-process (SDK) MCP servers to the CLI over `mcp_message` control requests.
 *
 * The bridge answers each `mcp_message` as the named MCP server would (JSON-RPC 2.0 inside the
 * control response's `mcp_response`). This version ships the seam and the empty bridge (no SDK
 * servers: every message is answered with JSON-RPC error `-32601` naming the unknown server);
 * Schema-typed tools come with the callbacks feature.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { InboundHandler } from "./ControlChannel.js"

/**
 * What an MCP bridge does for one session.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpBridgeShape {
  /** The SDK server names, sent in `initialize` as `sdkMcpServers`. */
  readonly serverNames: ReadonlyArray<string>
  /** The handler for the `mcp_message` control subtype. */
  readonly handleMessage: InboundHandler
}

const jsonRpcId = (message: unknown): unknown =>
  typeof message === "object" && message !== null && "id" in message ? message.id : null

/**
 * The MCP bridge service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpBridge } from "effect-claude-agent"
 *
 * const names = Effect.map(McpBridge.McpBridge, (bridge) => bridge.serverNames)
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class McpBridge extends Context.Tag("effect-claude-agent/McpBridge")<McpBridge, McpBridgeShape>() {
  /**
   * A bridge with no servers: every `mcp_message` gets JSON-RPC error `-32601` naming the server.
   *
   * @example
   * ```ts
   * import { McpBridge } from "effect-claude-agent"
   * const names = McpBridge.McpBridge.empty.serverNames // []
   * ```
   *
   * @since 0.1.0
   */
  static readonly empty: McpBridgeShape = {
    serverNames: [],
    handleMessage: (request) =>
      Effect.succeed({
        mcp_response: {
          jsonrpc: "2.0",
          id: jsonRpcId(request.message),
          error: { code: -32601, message: `no SDK MCP server named ${String(request.server_name)}` }
        }
      })
  }

  /**
   * The empty bridge as a layer.
   *
   * @example
   * ```ts
   * import { McpBridge } from "effect-claude-agent"
   * const layer = McpBridge.McpBridge.layerEmpty
   * ```
   *
   * @since 0.1.0
   */
  static readonly layerEmpty: Layer.Layer<McpBridge> = Layer.succeed(McpBridge, McpBridge.empty)
}
