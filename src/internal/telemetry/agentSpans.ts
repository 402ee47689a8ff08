/**
 * The GenAI spans a turn's messages describe: a child `invoke_agent` span per subagent (an
 * `Agent` / `Task` tool use) and an `execute_tool` span per tool call (a `tool_use` block to its
 * `tool_result`), each under the agent that made the call. Plain code over the raw frames the
 * reader hands it one by one, in order, with no effect and no fiber: the spans are made and ended
 * with the tracer's own `span` and `end`.
 *
 * Subagents run in the background: the `Agent` tool's result only says one was launched, and its
 * `task_notification` says when it ended, perhaps after the turn's `result`. A subagent's span
 * ends at its notification (or at its tool result when it was not backgrounded) with that time,
 * once a `result` has settled its spend: its tokens and cost are the `Usage` of the turns its
 * responses fell in.
 *
 * @internal
 */
import { type Context, Exit, Option, type Tracer } from "effect"
import type { Spend } from "../../Usage.js"
import { isObject, type Raw, str } from "../usage/raw.js"
import { settledFor } from "../usage/tally.js"
import * as GenAi from "./genai.js"

/**
 * What the spans need from the session.
 *
 * @internal
 */
export interface Settings {
  readonly tracer: Tracer.Tracer
  readonly context: Context.Context<never>
  /** The current time in nanoseconds, as `Effect.makeSpan` would read it. */
  readonly now: () => bigint
  /** The running turn's span, the parent of the main agent's calls. */
  readonly turn: () => Tracer.Span | undefined
  /** The parent of calls made while no turn is tracked (turns the CLI starts on its own). */
  readonly fallback: Tracer.AnySpan | undefined
}

interface OpenTool {
  readonly span: Tracer.Span
  /** The subagent that made the call (its tool use id); `undefined` for the main agent. */
  readonly agent: string | undefined
}

interface Ended {
  readonly at: bigint
  readonly errorType: string | undefined
}

interface OpenAgent {
  readonly span: Tracer.Span
  backgrounded: boolean
  ended: Ended | undefined
  spend: Spend
  models: { [model: string]: Spend }
}

const zero: Spend = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0
}

const add = (a: Spend, b: Spend): Spend => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  costUsd: a.costUsd + b.costUsd
})

const exitOf = (errorType: string | undefined): Exit.Exit<unknown, unknown> =>
  errorType === undefined ? Exit.void : Exit.fail(errorType)

/**
 * The tool use a control request is about: `can_use_tool` and tool hooks name it, an SDK MCP
 * `tools/call` carries it in its `_meta`.
 *
 * @internal
 */
export const toolUseIdOf = (request: Raw): string | undefined => {
  const direct = str(request.tool_use_id)
  if (direct !== undefined) return direct
  const message = request.message
  const params = isObject(message) ? message.params : undefined
  const meta = isObject(params) ? params._meta : undefined
  return isObject(meta) ? str(meta["claudecode/toolUseId"]) : undefined
}

/**
 * One session's subagent and tool call spans.
 *
 * @internal
 */
export class AgentSpans {
  private readonly tools = new Map<string, OpenTool>()
  private readonly agents = new Map<string, OpenAgent>()
  private readonly denied = new Set<string>()
  // When each result's turn began: its first message after the result before it.
  private readonly began = new WeakMap<object, bigint>()
  private beganAt: bigint | undefined = undefined
  private conversationId: string | undefined
  // Once closed, frames the reader still hands over start nothing that would never end.
  private closed = false

  constructor(private readonly settings: Settings) {}

  /** Takes one message frame into account, after the session's usage tally has seen it. */
  frame(frame: Raw): void {
    if (this.closed) return
    this.beganAt ??= this.settings.now()
    switch (frame.type) {
      case "assistant":
        return this.assistant(frame)
      case "user":
        return this.user(frame)
      case "system":
        return this.system(frame)
      case "result":
        return this.result(frame)
    }
  }

  /** The span a control request about a tool call sits under: the call's, while it runs. */
  parentFor(request: Raw): Tracer.Span | undefined {
    const id = toolUseIdOf(request)
    if (id === undefined) return undefined
    return this.tools.get(id)?.span ?? this.agents.get(id)?.span
  }

  /**
   * A span for the turn `result` ends, which no prompt started (the CLI runs one on its own when
   * a background subagent ends): from the turn's first message, ended by the caller.
   */
  unprompted(result: object, name: string, parent: Tracer.AnySpan | undefined): Tracer.Span {
    const { context, now, tracer } = this.settings
    return tracer.span(name, Option.fromNullable(parent), context, [], this.began.get(result) ?? now(), "client")
  }

  /** Ends every span still open: a subagent that had ended as it did, the rest with `errorType`. */
  close(errorType: string): void {
    this.closed = true
    const now = this.settings.now()
    for (const [id, tool] of this.tools) this.endTool(id, tool, now, errorType)
    for (const [id, agent] of this.agents) {
      this.endAgent(id, agent, agent.ended ?? { at: now, errorType })
    }
  }

  /** How many spans are open (for tests). */
  get open(): number {
    return this.tools.size + this.agents.size
  }

  private start(name: string, parent: Tracer.AnySpan | undefined, attributes: Record<string, unknown>): Tracer.Span {
    const { context, now, tracer } = this.settings
    const span = tracer.span(name, Option.fromNullable(parent), context, [], now(), "internal")
    for (const key in attributes) span.attribute(key, attributes[key])
    return span
  }

  private parentOf(agent: string | undefined): Tracer.AnySpan | undefined {
    const owner = agent === undefined ? undefined : this.agents.get(agent)
    return owner?.span ?? this.settings.turn() ?? this.settings.fallback
  }

  private assistant(frame: Raw): void {
    const message = frame.message
    const content = isObject(message) ? message.content : undefined
    if (!Array.isArray(content)) return
    const agent = str(frame.parent_tool_use_id)
    for (const block of content) {
      if (!isObject(block) || block.type !== "tool_use") continue
      const id = str(block.id)
      const name = str(block.name)
      if (id === undefined || name === undefined || this.tools.has(id) || this.agents.has(id)) continue
      if (GenAi.SUBAGENT_TOOLS.has(name)) {
        const type = (isObject(block.input) ? str(block.input.subagent_type) : undefined) ?? "general-purpose"
        this.openAgent(id, type, agent)
      } else {
        const span = this.start(`${GenAi.EXECUTE_TOOL} ${name}`, this.parentOf(agent), {
          [GenAi.OPERATION]: GenAi.EXECUTE_TOOL,
          [GenAi.TOOL_NAME]: name,
          [GenAi.TOOL_CALL_ID]: id,
          [GenAi.TOOL_TYPE]: GenAi.toolType(name)
        })
        this.tools.set(id, { span, agent })
      }
    }
  }

  private openAgent(id: string, type: string, parent: string | undefined): void {
    const attributes: Record<string, unknown> = {
      [GenAi.OPERATION]: GenAi.INVOKE_AGENT,
      [GenAi.PROVIDER]: GenAi.ANTHROPIC,
      [GenAi.SYSTEM]: GenAi.ANTHROPIC,
      [GenAi.AGENT_NAME]: type,
      [GenAi.AGENT_ID]: id
    }
    if (this.conversationId !== undefined) attributes[GenAi.CONVERSATION_ID] = this.conversationId
    const span = this.start(`${GenAi.INVOKE_AGENT} ${type}`, this.parentOf(parent), attributes)
    this.agents.set(id, { span, backgrounded: false, ended: undefined, spend: zero, models: {} })
  }

  private user(frame: Raw): void {
    const message = frame.message
    const content = isObject(message) ? message.content : undefined
    if (!Array.isArray(content)) return
    for (const block of content) {
      if (!isObject(block) || block.type !== "tool_result") continue
      const id = str(block.tool_use_id)
      if (id === undefined) continue
      const errorType = block.is_error === true
        ? (this.denied.delete(id) ? GenAi.ErrorType.permissionDenied : GenAi.ErrorType.toolError)
        : undefined
      const tool = this.tools.get(id)
      if (tool !== undefined) {
        this.endTool(id, tool, this.settings.now(), errorType)
        continue
      }
      // A backgrounded subagent's result only says it started: its notification ends it.
      const agent = this.agents.get(id)
      if (agent !== undefined && agent.ended === undefined && (!agent.backgrounded || errorType !== undefined)) {
        agent.ended = { at: this.settings.now(), errorType }
      }
    }
  }

  private system(frame: Raw): void {
    switch (frame.subtype) {
      case "init": {
        this.conversationId = str(frame.session_id) ?? this.conversationId
        return
      }
      case "task_started": {
        const agent = this.agentOf(frame)
        if (agent === undefined) return
        agent.backgrounded = frame.is_backgrounded === true
        const type = str(frame.subagent_type)
        if (type !== undefined) agent.span.attribute(GenAi.AGENT_NAME, type)
        return
      }
      case "task_notification": {
        const agent = this.agentOf(frame)
        if (agent === undefined || agent.ended !== undefined) return
        const status = str(frame.status)
        agent.span.attribute("claude.task.status", status ?? "unknown")
        agent.ended = { at: this.settings.now(), errorType: status === "completed" ? undefined : status ?? "_OTHER" }
        return
      }
      case "permission_denied": {
        const id = str(frame.tool_use_id)
        if (id !== undefined && this.tools.has(id)) this.denied.add(id)
        return
      }
    }
  }

  private agentOf(frame: Raw): OpenAgent | undefined {
    const id = str(frame.tool_use_id)
    return id === undefined ? undefined : this.agents.get(id)
  }

  // A result settles the turn's spend: each subagent's share goes to its span, and the spans of
  // subagents that have ended end now, at the time they ended. The main agent's calls still open
  // never finished.
  private result(frame: Raw): void {
    if (this.beganAt !== undefined) this.began.set(frame, this.beganAt)
    this.beganAt = undefined
    const turn = settledFor(frame)?.turn
    if (turn !== undefined) {
      for (const usage of turn.subagents) {
        const agent = usage.toolUseId === undefined ? undefined : this.agents.get(usage.toolUseId)
        if (agent === undefined) continue
        agent.spend = add(agent.spend, usage)
        for (const model in usage.models) {
          const spend = usage.models[model]
          if (spend !== undefined) agent.models[model] = add(agent.models[model] ?? zero, spend)
        }
      }
    }
    const now = this.settings.now()
    for (const [id, tool] of this.tools) {
      const owner = tool.agent === undefined ? undefined : this.agents.get(tool.agent)
      if (owner === undefined || owner.ended !== undefined) this.endTool(id, tool, now, GenAi.ErrorType.unfinished)
    }
    for (const [id, agent] of this.agents) {
      if (agent.ended !== undefined) this.endAgent(id, agent, agent.ended)
    }
  }

  private endTool(id: string, tool: OpenTool, at: bigint, errorType: string | undefined): void {
    this.tools.delete(id)
    this.denied.delete(id)
    if (errorType !== undefined) tool.span.attribute(GenAi.ERROR_TYPE, errorType)
    tool.span.end(at, exitOf(errorType))
  }

  private endAgent(id: string, agent: OpenAgent, ended: Ended): void {
    this.agents.delete(id)
    const span = agent.span
    GenAi.setSpend(span, agent.spend)
    const model = GenAi.mainModel(agent.models)
    if (model !== undefined) span.attribute(GenAi.RESPONSE_MODEL, model)
    if (ended.errorType !== undefined) span.attribute(GenAi.ERROR_TYPE, ended.errorType)
    span.end(ended.at, exitOf(ended.errorType))
  }
}
