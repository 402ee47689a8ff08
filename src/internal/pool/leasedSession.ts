/**
 * A keyed session as one use (one lease) sees it.
 *
 * @internal
 */
import { Effect, Option, Stream } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type * as Message from "../../schema/Message.js"
import { type PoolClosedError, ProcessError, SessionClosedError } from "../../SdkError.js"
import type { ControlChannelShape } from "../../services/ControlChannel.js"
import * as Turns from "../session/turns.js"
import { isNoConversation } from "./options.js"
import { guardStream, type Shutdown } from "./shutdown.js"

/**
 * What one use of a keyed session did: the prompts it sent, the results it read, the session's
 * result count when it began; `ended` once its scope has closed.
 *
 * @internal
 */
export interface Use {
  sent: number
  read: number
  readonly resultsBefore: number
  ended: boolean
}

/**
 * The leased process, as far as a use sees it.
 *
 * @internal
 */
export interface LeasedProcess {
  readonly session: AgentSession.AgentSession
  /** Set when the CLI answered a prompt with "No conversation found". */
  resumeFailed: boolean
}

const ended = () => new SessionClosedError({ reason: "UseEnded" })

// The process goes on to the key's next use: a session kept after its use must not reach it.
const refusingAfter =
  (use: Use) => <A, E, R>(run: () => Effect.Effect<A, E, R>): Effect.Effect<A, E | SessionClosedError, R> =>
    Effect.suspend((): Effect.Effect<A, E | SessionClosedError, R> => (use.ended ? Effect.fail(ended()) : run()))

const controlOf = (control: ControlChannelShape, use: Use): ControlChannelShape => {
  const refuse = refusingAfter(use)
  return {
    ...control,
    request: (request, ...args) => refuse(() => control.request(request, ...args)),
    start: (request, ...args) => refuse(() => control.start(request, ...args)),
    handle: (request, handler) => (use.ended ? Effect.void : control.handle(request, handler))
  }
}

// Every method refuses once the use has ended.
const methodsOf = (s: AgentSession.AgentSession, use: Use) => {
  const refuse = refusingAfter(use)
  return {
    interrupt: (...a: Parameters<typeof s.interrupt>) => refuse(() => s.interrupt(...a)),
    setPermissionMode: (...a: Parameters<typeof s.setPermissionMode>) => refuse(() => s.setPermissionMode(...a)),
    setModel: (...a: Parameters<typeof s.setModel>) => refuse(() => s.setModel(...a)),
    setMaxThinkingTokens: (...a: Parameters<typeof s.setMaxThinkingTokens>) =>
      refuse(() => s.setMaxThinkingTokens(...a)),
    mcpServerStatus: (...a: Parameters<typeof s.mcpServerStatus>) => refuse(() => s.mcpServerStatus(...a)),
    getContextUsage: (...a: Parameters<typeof s.getContextUsage>) => refuse(() => s.getContextUsage(...a)),
    setMcpServers: <R = never>(servers: AgentSession.McpServers<R>, options?: AgentSession.SetMcpServersOptions) =>
      refuse(() => s.setMcpServers(servers, options)),
    supportedCommands: refuse(() => s.supportedCommands),
    supportedModels: refuse(() => s.supportedModels),
    supportedAgents: refuse(() => s.supportedAgents),
    accountInfo: refuse(() => s.accountInfo),
    reinitialize: (...a: Parameters<typeof s.reinitialize>) => refuse(() => s.reinitialize(...a)),
    readMcpResource: (...a: Parameters<typeof s.readMcpResource>) => refuse(() => s.readMcpResource(...a)),
    applyFlagSettings: (...a: Parameters<typeof s.applyFlagSettings>) => refuse(() => s.applyFlagSettings(...a)),
    updateSettings: (...a: Parameters<typeof s.updateSettings>) => refuse(() => s.updateSettings(...a)),
    reloadPlugins: (...a: Parameters<typeof s.reloadPlugins>) => refuse(() => s.reloadPlugins(...a)),
    reloadSkills: (...a: Parameters<typeof s.reloadSkills>) => refuse(() => s.reloadSkills(...a)),
    reloadOutputStyles: (...a: Parameters<typeof s.reloadOutputStyles>) => refuse(() => s.reloadOutputStyles(...a)),
    backgroundTasks: (...a: Parameters<typeof s.backgroundTasks>) => refuse(() => s.backgroundTasks(...a)),
    setMcpPermissionModeOverride: (...a: Parameters<typeof s.setMcpPermissionModeOverride>) =>
      refuse(() => s.setMcpPermissionModeOverride(...a)),
    rewindFiles: (...a: Parameters<typeof s.rewindFiles>) => refuse(() => s.rewindFiles(...a)),
    stopTask: (...a: Parameters<typeof s.stopTask>) => refuse(() => s.stopTask(...a)),
    reconnectMcpServer: (...a: Parameters<typeof s.reconnectMcpServer>) => refuse(() => s.reconnectMcpServer(...a)),
    toggleMcpServer: (...a: Parameters<typeof s.toggleMcpServer>) => refuse(() => s.toggleMcpServer(...a)),
    initializationResult: refuse(() => s.initializationResult),
    sessionId: refuse(() => s.sessionId),
    endInput: Effect.suspend(() => (use.ended ? Effect.void : s.endInput)),
    // The process's spend, the uses before this one included.
    usage: s.usage,
    control: controlOf(s.control, use)
  }
}

/**
 * The session as one use sees it: counting the prompts it sends and the results it read,
 * refusing every method once the use has ended, failing its streams if the pool stops the
 * process under it (closing the pool, past `shutdownTimeout`), and reporting the process's
 * death (`onCrash`) as soon as a stream fails with it.
 *
 * @internal
 */
export const leased = (
  live: LeasedProcess,
  use: Use,
  shutdown: Shutdown,
  onCrash: (error: ProcessError) => Effect.Effect<void>
): AgentSession.AgentSession => {
  const opened = live.session
  const refuse = refusingAfter(use)
  const countResults = <E>(messages: Stream.Stream<Message.Message, E>) =>
    guardStream(
      shutdown,
      messages.pipe(
        Stream.mapChunks((chunk) => {
          // Counted as they leave the session's queue: a result taken here is not the next use's.
          for (const m of chunk) {
            if (m.type !== "result") continue
            use.read++
            if (isNoConversation(m)) live.resumeFailed = true
          }
          return chunk
        }),
        // The use may end on this failure before the process's watcher has seen the exit.
        Stream.tapError((error) => (error instanceof ProcessError ? onCrash(error) : Effect.void))
      )
    )
  const ifInUse = <E>(messages: Stream.Stream<Message.Message, E>) =>
    Stream.unwrap(
      Effect.sync((): Stream.Stream<Message.Message, E | SessionClosedError | PoolClosedError> =>
        use.ended ? Stream.fail(ended()) : countResults(messages)
      )
    )
  return {
    ...opened,
    ...methodsOf(opened, use),
    send: (prompt) =>
      refuse(() => {
        use.sent++
        // The turn belongs to this use's trace (the session's span, the pool's, is linked).
        return Effect.flatMap(Effect.currentParentSpan.pipe(Effect.option), (span) =>
          Option.isSome(span) ? Effect.locally(opened.send(prompt), Turns.turnParent, span) : opened.send(prompt))
      }),
    messages: ifInUse(opened.messages),
    receiveResponse: ifInUse(opened.receiveResponse),
    stderr: Stream.unwrap(Effect.sync(() => (use.ended ? Stream.empty : opened.stderr)))
  }
}
