/**
 * `setMcpServers`: the bridge's in-process servers and the CLI's set changed together, and the
 * wait for the added servers to connect.
 *
 * @internal
 */
import { Duration, Effect, Schedule } from "effect"
import type { AgentSession, McpServers, SetMcpServersOptions } from "../../AgentSession.js"
import type * as McpServer from "../../McpServer.js"
import * as Control from "../../schema/Control.js"
import * as Options from "../../schema/Options.js"
import { McpServersPendingError } from "../../SdkError.js"
import type { ControlChannelShape, RequestError, RequestOptions } from "../../services/ControlChannel.js"
import type { McpBridgeShape } from "../../services/McpBridge.js"
import * as Defaults from "../defaults.js"

const connectPoll = Duration.millis(100)

const listChanged = { jsonrpc: "2.0", method: "notifications/tools/list_changed" }

/**
 * Waits until none of `names` is `pending` in `mcp_status`. The CLI connects added in-process
 * servers after its reply (external ones before it) and reports no event for it: polled.
 *
 * @internal
 */
export const awaitConnected = (
  control: ControlChannelShape,
  names: ReadonlyArray<string>,
  deadline: Duration.Duration,
  options: RequestOptions
): Effect.Effect<void, RequestError | McpServersPendingError> => {
  if (names.length === 0) return Effect.void
  let waiting: ReadonlyArray<string> = names
  const check = Effect.map(control.request(Control.McpStatus, {}, options), (status) => {
    waiting = names.filter((name) => {
      const server = status.mcpServers.find((s) => s.name === name)
      return server === undefined || server.status === "pending"
    })
    return waiting.length > 0
  })
  return check.pipe(
    Effect.repeat({ schedule: Schedule.spaced(connectPoll), while: (pending: boolean) => pending }),
    Effect.asVoid,
    Effect.timeoutFail({
      duration: deadline,
      onTimeout: () => new McpServersPendingError({ servers: waiting, timeoutMillis: Duration.toMillis(deadline) })
    })
  )
}

// The CLI connects the servers of a set one request at a time: while one has not connected, it
// holds the session's later control requests (an `mcpServerStatus` right after a timed-out wait
// took 27 s) until it gives up on it, after its MCP connection timeout (30 s by default). A
// caller who gave up sooner is told why what follows may wait.
const stillConnecting = (names: ReadonlyArray<string>) =>
  Effect.logWarning(
    `effect-claude-agent: setMcpServers gave up while the CLI was still connecting ${names.join(", ")}; ` +
      "the CLI may hold this session's later control requests (mcpServerStatus, setModel, interrupt, …) until it " +
      "gives up on them too, after its MCP connection timeout (30 s by default)"
  )

// The wire form of the set, and the in-process servers the bridge must serve.
const split = <R>(servers: McpServers<R>) => {
  const inProcess: Array<McpServer.McpServer<R>> = []
  const wire: Record<string, { readonly [key: string]: unknown }> = {}
  for (const [name, server] of Object.entries(servers)) {
    if (server.type === "sdk") {
      inProcess.push(server)
      wire[name] = { type: "sdk", name }
    } else {
      // The CLI 2.1.330 fails a stdio server set without `args` ("Spread syntax requires
      // ...iterable not be null or undefined"); `--mcp-config` does not need them.
      wire[name] = "command" in server && server.args === undefined ? { ...server, args: [] } : server
    }
  }
  return { inProcess, wire }
}

/**
 * Makes the session's `setMcpServers`: one call at a time, since the bridge's set and the CLI's
 * must change in the same order.
 *
 * @internal
 */
export const make = (
  control: ControlChannelShape,
  mcp: McpBridgeShape,
  controlTimeout: Duration.DurationInput | undefined
): Effect.Effect<AgentSession["setMcpServers"]> =>
  Effect.sync(() => {
    const lock = Effect.unsafeMakeSemaphore(1)
    return <R>(servers: McpServers<R>, options?: SetMcpServersOptions) =>
      Effect.gen(function*() {
        // The same checks as the `mcpServers` option, before anything is sent or changed.
        yield* Options.validate({ mcpServers: servers })
        const { inProcess, wire } = split(servers)
        // Served before the CLI hears of them: it connects to a new server at once. (If the
        // request then fails, the bridge keeps the new set: the CLI's state is unknown anyway.)
        const change = yield* mcp.setServers(inProcess)
        const reply = yield* control.request(Control.McpSetServers, { servers: wire }, options).pipe(
          Effect.tapErrorTag("TimeoutException", () => stillConnecting(Object.keys(wire)))
        )
        // The CLI keeps a server it already has and its tool list: a new definition under the
        // same name needs it to list the tools again.
        yield* Effect.forEach(
          change.replaced.filter((name) => !reply.added.includes(name)),
          (name) => control.request(Control.McpServerMessage, { server_name: name, message: listChanged }, options),
          { discard: true }
        )
        if (options?.awaitConnection === true) {
          const deadline = Duration.decode(options.timeout ?? controlTimeout ?? Defaults.controlTimeout)
          yield* awaitConnected(control, reply.added, deadline, options).pipe(
            Effect.tapErrorTag("McpServersPendingError", (error) => stillConnecting(error.servers))
          )
        }
        return reply
      }).pipe(lock.withPermits(1), Effect.withSpan("AgentSession.setMcpServers"))
  })
