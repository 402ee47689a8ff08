// The README's multi-agent example: a planner splits a task, workers run on an AgentPool in
// parallel, each with its own in-process tool, and a reviewer merges their findings.
//
//   npm run example:fanout                 offline: the real claude CLI against ScriptedModel on 127.0.0.1
//   npm run example:fanout -- --live       the real Anthropic API (needs ANTHROPIC_API_KEY; also chosen when it is set)
//
// It prints each agent's progress as it happens (prefixed with the agent's name), the merged
// answer, a cost and usage table, and the span tree the library recorded (collected by a small
// in-memory Tracer here; any @effect/opentelemetry exporter receives the same spans). The test
// suite runs `runOffline` so it cannot rot.
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Clock, Effect, Fiber, Layer, Option, Predicate, Schema, Stream, type Tracer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { AgentPool, ClaudeAgent, McpServer, Message, Structured, Tool } from "../../src/index.js"
import type { Options } from "../../src/index.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as SpanRecorder from "../../src/testing/SpanRecorder.js"

const TASK = "Plan a weekend in Lisbon for two people with 600 EUR: check the weather, " +
  "convert the budget to USD, and pick three sights."

/** At most this many CLI processes at once: with three workers, one of them waits for a slot. */
export const MAX_CONCURRENT = 2

// ---- The planner's output, typed by a Schema (the CLI checks it against its JSON Schema) ----

const WorkerName = Schema.Literal("weather", "budget", "sights")
type WorkerName = typeof WorkerName.Type

const Plan = Schema.Struct({
  subtasks: Schema.Array(Schema.Struct({ worker: WorkerName, brief: Schema.String })).pipe(Schema.minItems(1))
})
type Plan = typeof Plan.Type

// ---- The workers: each has one in-process tool of its own ----

const forecasts: Record<string, ReadonlyArray<string>> = {
  lisbon: ["Saturday: 24°C, sunny", "Sunday: 21°C, breezy", "Monday: 19°C, showers"]
}
const forecast = Tool.make("forecast", {
  description: "The weather forecast for a city, day by day",
  parameters: Schema.Struct({ city: Schema.String, days: Schema.Int.pipe(Schema.between(1, 3)) }),
  annotations: { readOnlyHint: true },
  handler: ({ city, days }) => {
    const days_ = forecasts[city.toLowerCase()]
    return days_ === undefined
      ? Effect.fail({ message: `no forecast for ${city}` })
      : Effect.succeed(days_.slice(0, days).join("; "))
  }
})

const eurTo: Record<string, number> = { USD: 1.08, GBP: 0.85 }
const convert = Tool.make("convert", {
  description: "Converts an amount of euros to another currency",
  parameters: Schema.Struct({ amount: Schema.Number, to: Schema.String }),
  annotations: { readOnlyHint: true },
  handler: ({ amount, to }) => {
    const rate = eurTo[to.toUpperCase()]
    return rate === undefined
      ? Effect.fail({ message: `no rate for ${to}` })
      : Effect.succeed(`${amount} EUR = ${(amount * rate).toFixed(2)} ${to.toUpperCase()} (rate ${rate})`)
  }
})

const sightsByInterest: Record<string, ReadonlyArray<string>> = {
  history: ["Belém Tower", "Jerónimos Monastery", "São Jorge Castle", "Carmo Convent"],
  food: ["Time Out Market", "Pastéis de Belém"]
}
const searchSights = Tool.make("search", {
  description: "Finds sights in Lisbon for an interest",
  parameters: Schema.Struct({ interest: Schema.String, limit: Schema.Int.pipe(Schema.positive()) }),
  annotations: { readOnlyHint: true },
  handler: ({ interest, limit }) =>
    Effect.succeed((sightsByInterest[interest.toLowerCase()] ?? []).slice(0, limit).join(", ") || "nothing found")
})

interface Worker {
  readonly role: string
  readonly server: McpServer.McpServer
}

const workers: Record<WorkerName, Worker> = {
  weather: {
    role: "weather researcher",
    server: McpServer.make({ name: "weather", version: "1.0.0", alwaysLoad: true, tools: [forecast] })
  },
  budget: {
    role: "budget analyst",
    server: McpServer.make({ name: "budget", version: "1.0.0", alwaysLoad: true, tools: [convert] })
  },
  sights: {
    role: "sights guide",
    server: McpServer.make({ name: "sights", version: "1.0.0", alwaysLoad: true, tools: [searchSights] })
  }
}

const plannerPrompt = (task: string) =>
  `You are the planner. Split this task into subtasks for the workers weather, budget and sights ` +
  `(one subtask each, with a short brief):\n\n${task}`

const workerPrompt = (name: WorkerName, brief: string) =>
  `You are the ${workers[name].role}. Use your ${name} tool, then answer in one or two sentences.\n\n${brief}`

const reviewerPrompt = (task: string, findings: ReadonlyArray<readonly [WorkerName, string]>) =>
  `You are the reviewer. Merge the workers' findings into one short plan for this task:\n\n${task}\n\n` +
  findings.map(([name, text]) => `## ${name}\n${text}`).join("\n\n")

// ---- The scripted model: one set of rules per agent, told apart by the agent's prompt ----

// The text of the first user message: the prompt the agent was started with.
const agentPrompt = (req: ScriptedModel.RecordedRequest): string => {
  const first = req.messages.find((m) => Predicate.isRecord(m) && m.role === "user")
  if (!Predicate.isRecord(first)) return ""
  const content = first.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((b: unknown) => (Predicate.isRecord(b) && typeof b.text === "string" ? b.text : "")).join("\n")
}
const asks = (role: string, toolResults: (n: number) => boolean) => (req: ScriptedModel.RecordedRequest) =>
  agentPrompt(req).includes(`You are the ${role}.`) && toolResults(ScriptedModel.toolResultCount(req))
const none = (n: number) => n === 0
const some = (n: number) => n > 0

const scriptedPlan: Plan = {
  subtasks: [
    { worker: "weather", brief: "Get the forecast for Lisbon for Saturday and Sunday." },
    { worker: "budget", brief: "Convert the 600 EUR budget to USD." },
    { worker: "sights", brief: "Pick three historic sights in Lisbon." }
  ]
}

export const FINAL_PLAN = "Weekend in Lisbon for two: Saturday (24°C, sunny) Belém Tower and the Jerónimos " +
  "Monastery; Sunday (21°C, breezy) São Jorge Castle. Budget: 600 EUR, about 648 USD, 324 USD each."

const script: ReadonlyArray<ScriptedModel.Rule> = [
  {
    match: asks("planner", none),
    reply: ScriptedModel.thinking(
      "Three independent subtasks: weather, budget, sights.",
      ScriptedModel.toolUse("StructuredOutput", scriptedPlan)
    )
  },
  {
    match: asks("weather researcher", none),
    reply: ScriptedModel.toolUse("mcp__weather__forecast", { city: "Lisbon", days: 2 })
  },
  {
    match: asks("weather researcher", some),
    reply: ScriptedModel.text("Saturday 24°C and sunny, Sunday 21°C and breezy: a dry weekend.")
  },
  {
    match: asks("budget analyst", none),
    reply: ScriptedModel.toolUse("mcp__budget__convert", { amount: 600, to: "USD" })
  },
  { match: asks("budget analyst", some), reply: ScriptedModel.text("600 EUR is 648 USD, so 324 USD per person.") },
  {
    match: asks("sights guide", none),
    reply: ScriptedModel.toolUse("mcp__sights__search", { interest: "history", limit: 3 })
  },
  {
    match: asks("sights guide", some),
    reply: ScriptedModel.text("Belém Tower, the Jerónimos Monastery and São Jorge Castle.")
  },
  { match: asks("reviewer", none), reply: ScriptedModel.slowText(FINAL_PLAN, { chunkSize: 12, delayMs: 10 }) }
]

// ---- Running it ----

/** One agent's run, for the usage table. */
export interface AgentRun {
  readonly agent: string
  readonly result: Message.ResultMessage
  readonly answer: string
}

export interface FanoutResult {
  readonly plan: Plan
  readonly runs: ReadonlyArray<AgentRun>
  readonly final: string
  /** The most CLI processes the pool ran at once. */
  readonly peakProcesses: number
  /** The spans of the run, as a tree (only the kinds `shownSpan` keeps). */
  readonly spans: SpanNode
}

// ---- The span tree: every span the run made, collected in memory ----

/** A span and the spans under it. */
export interface SpanNode {
  readonly name: string
  readonly span: Tracer.Span
  readonly children: ReadonlyArray<SpanNode>
}

// A Tracer that keeps every span it makes (the runtime's own tracer makes them).
const collectingTracer = SpanRecorder.make

// The spans worth drawing: the agents, their sessions and turns, and what ran in them (tool calls,
// hooks, permission prompts). The rest (the MCP handshake, set-up steps) is left out, and a kept
// span hangs under its nearest kept ancestor.
const shownSpan = (span: Tracer.Span): boolean =>
  span.name === "fanout" || span.name.startsWith("agent ") || span.name === "ClaudeAgent.session" ||
  span.name === "invoke_agent claude-code" || span.name.startsWith("Tool.") ||
  (span.name.startsWith("ControlChannel.") && span.name !== "ControlChannel.mcp_message")

const spanTree = (spans: ReadonlyArray<Tracer.Span>, root: Tracer.Span): SpanNode => {
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  const children = new Map<string, Array<Tracer.Span>>()
  for (const span of spans) {
    if (span === root || !shownSpan(span)) continue
    let parent = span.parent
    while (Option.isSome(parent) && parent.value.spanId !== root.spanId) {
      const above = byId.get(parent.value.spanId)
      if (above === undefined) break
      if (shownSpan(above)) break
      parent = above.parent
    }
    if (Option.isNone(parent) || !byId.has(parent.value.spanId)) continue
    const list = children.get(parent.value.spanId) ?? []
    list.push(span)
    children.set(parent.value.spanId, list)
  }
  const node = (span: Tracer.Span): SpanNode => ({
    name: span.name,
    span,
    children: (children.get(span.spanId) ?? [])
      .sort((a, b) => (a.status.startTime < b.status.startTime ? -1 : 1))
      .map(node)
  })
  return node(root)
}

const spanLabel = (span: Tracer.Span): string => {
  const millis = span.status._tag === "Ended" ? Number(span.status.endTime - span.status.startTime) / 1e6 : undefined
  const attr = (key: string) => span.attributes.get(key)
  const details = span.name === "invoke_agent claude-code"
    ? [
      String(attr("claude.result.subtype") ?? "unfinished"),
      `${attr("claude.usage.input_tokens") ?? 0} in / ${attr("claude.usage.output_tokens") ?? 0} out tokens`,
      `$${Number(attr("claude.result.cost_usd") ?? 0).toFixed(4)}`
    ]
    : span.name === "ClaudeAgent.session" && attr("claude.model") !== undefined
    ? [String(attr("claude.model"))]
    : []
  const time = millis === undefined ? [] : [`${millis < 10 ? millis.toFixed(1) : Math.round(millis)} ms`]
  return [span.name, ...time, ...details].join("  ")
}

/** Draws a span tree, one span a line. */
export const drawSpanTree = (root: SpanNode): string => {
  const lines = [spanLabel(root.span)]
  const walk = (node: SpanNode, prefix: string) =>
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1
      lines.push(`${prefix}${last ? "└─ " : "├─ "}${spanLabel(child.span)}`)
      walk(child, `${prefix}${last ? "   " : "│  "}`)
    })
  walk(root, "")
  return lines.join("\n") + "\n"
}

const short = (text: string, max = 90) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

// One agent on the pool, printing its progress as its messages arrive.
const runAgent = (
  agent: string,
  prompt: string,
  options: Options.Options,
  say: (agent: string, text: string) => void
) =>
  Effect.gen(function*() {
    say(agent, "waiting for a process…")
    let answer = ""
    const result = yield* ClaudeAgent.query(prompt, options).pipe(
      Stream.tap((m) =>
        Effect.sync(() => {
          if (m.type === "system" && m.subtype === "init") say(agent, `started (${m.model})`)
          if (Message.isAssistant(m)) {
            for (const block of m.message.content) {
              if (block.type === "thinking") say(agent, `thinks: ${short(block.thinking)}`)
              if (block.type === "tool_use") say(agent, `→ ${block.name} ${JSON.stringify(block.input)}`)
            }
            const text = Message.assistantText(m)
            if (text.length > 0) {
              answer = text
              say(agent, `says: ${short(text)}`)
            }
          }
          if (Message.isUser(m) && typeof m.message.content !== "string") {
            for (const block of m.message.content) {
              if (block.type === "tool_result") say(agent, `← ${short(toolResultText(block.content))}`)
            }
          }
          if (Message.isResult(m)) {
            say(agent, `done: ${m.subtype}${m.is_error ? " (error)" : ""}, ${m.num_turns} turns, ${m.duration_ms} ms`)
          }
        })
      ),
      ClaudeAgent.lastResult
    )
    return { agent, result, answer } satisfies AgentRun
  }).pipe(Effect.withSpan(`agent ${agent}`))

// A tool result's text blocks, joined (anything else as JSON).
const toolResultText = (content: unknown): string => {
  if (typeof content === "string") return content
  const texts = Array.isArray(content)
    ? content.flatMap((b: unknown) => (Predicate.isRecord(b) && typeof b.text === "string" ? [b.text] : []))
    : []
  return texts.length > 0 ? texts.join(" ") : JSON.stringify(content)
}

const usageTable = (runs: ReadonlyArray<AgentRun>): string => {
  const rows = runs.map((r) => {
    const usage = r.result.usage
    return [
      r.agent,
      String(r.result.num_turns),
      `${r.result.duration_ms} ms`,
      String(usage?.input_tokens ?? 0),
      String(usage?.output_tokens ?? 0),
      `$${(r.result.total_cost_usd ?? 0).toFixed(4)}`
    ]
  })
  const sum = (f: (r: AgentRun) => number) => runs.reduce((n, r) => n + f(r), 0)
  const total = [
    "total",
    String(sum((r) => r.result.num_turns)),
    `${sum((r) => r.result.duration_ms)} ms`,
    String(sum((r) => r.result.usage?.input_tokens ?? 0)),
    String(sum((r) => r.result.usage?.output_tokens ?? 0)),
    `$${sum((r) => r.result.total_cost_usd ?? 0).toFixed(4)}`
  ]
  const header = ["agent", "turns", "time", "tokens in", "tokens out", "cost"]
  const all = [header, ...rows, total]
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ")
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  return [line(header), rule, ...rows.map(line), rule, line(total)].join("\n") + "\n"
}

/**
 * Plans, fans out and merges `task` with the agents on the `AgentPool` in context (which also
 * provides the `ClaudeAgent` they use), printing through `write`.
 */
export const runFanout = (task: string, base: Options.Options, write: (text: string) => void) =>
  Effect.gen(function*() {
    const { spans, tracer } = yield* collectingTracer
    const run = yield* fanout(task, base, write).pipe(Effect.withSpan("fanout"), Effect.withTracer(tracer))
    const root = spans.find((span) => span.name === "fanout")
    if (root === undefined) return yield* Effect.dieMessage("the run recorded no span")
    const tree = spanTree(spans, root)
    write(`\nSpans (${spans.length} recorded; the agents, their sessions, turns and tool calls):\n`)
    write(drawSpanTree(tree))
    return { ...run, spans: tree } satisfies FanoutResult
  })

const fanout = (task: string, base: Options.Options, write: (text: string) => void) =>
  Effect.gen(function*() {
    const pool = yield* AgentPool.AgentPool
    const width = Math.max(...["planner", "reviewer", ...Object.keys(workers)].map((n) => n.length))
    const say = (agent: string, text: string) => write(`[${agent.padEnd(width)}] ${text}\n`)

    // The pool's events, to report how many processes ran at once.
    let processes = 0
    let peakProcesses = 0
    const watching = yield* pool.events.pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event._tag === "Started" || event._tag === "ClaimedWarm") {
            peakProcesses = Math.max(peakProcesses, ++processes)
          }
          if (event._tag === "Released") {
            processes--
          }
        })
      ),
      Effect.fork
    )
    // The watcher counts from its subscription on: wait for it before the first agent starts.
    yield* Effect.repeat(Effect.zipLeft(Fiber.status(watching), Effect.yieldNow()), {
      until: (status) => status._tag === "Suspended"
    })

    write(`Task: ${task}\n\n`)
    const startedAt = yield* Clock.currentTimeMillis
    const planning = yield* runAgent("planner", plannerPrompt(task), { ...base, outputSchema: Plan }, say)
    const plan = yield* Structured.decode(Plan)(planning.result)
    say("planner", `plan: ${plan.subtasks.map((s) => s.worker).join(", ")}`)

    // The workers in parallel: the pool, not this `concurrency`, bounds the processes.
    const findings = yield* Effect.forEach(
      plan.subtasks,
      (subtask) =>
        runAgent(subtask.worker, workerPrompt(subtask.worker, subtask.brief), {
          ...base,
          mcpServers: { [subtask.worker]: workers[subtask.worker].server },
          allowedTools: McpServer.toolNames(workers[subtask.worker].server)
        }, say).pipe(Effect.map((run) => [subtask.worker, run] as const)),
      { concurrency: "unbounded" }
    )

    const reviewing = yield* runAgent(
      "reviewer",
      reviewerPrompt(task, findings.map(([name, run]) => [name, run.answer] as const)),
      base,
      say
    )
    yield* Fiber.interrupt(watching)
    const elapsed = (yield* Clock.currentTimeMillis) - startedAt

    const runs = [planning, ...findings.map(([, run]) => run), reviewing]
    write(`\nPlan:\n${reviewing.answer}\n\n`)
    write(usageTable(runs))
    write(
      `\n${elapsed} ms in all, the workers in parallel; at most ${peakProcesses} CLI processes ran at once ` +
        `(the pool's limit: ${MAX_CONCURRENT}).\n`
    )
    return { plan, runs, final: reviewing.answer, peakProcesses }
  })

/** The pool the example runs on: `AgentPool.layer` provides `AgentPool` and `ClaudeAgent`. */
export const PoolLive = AgentPool.layer({ maxConcurrent: MAX_CONCURRENT }).pipe(Layer.provide(NodeContext.layer))

/** The offline run: a ScriptedModel and its isolated HOME / working directory. */
export const runOffline = (write: (text: string) => void) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(script)
    const options = yield* model.options()
    const result = yield* runFanout(TASK, options, write)
    return { ...result, requests: yield* model.mainRequests, home: options.env.HOME }
  })

const main = Effect.gen(function*() {
  const live = process.argv.includes("--live") ||
    (process.env.ANTHROPIC_API_KEY !== undefined && !process.argv.includes("--offline"))
  const write = (text: string) => void process.stdout.write(text)
  if (live) {
    write("(live: the real Anthropic API)\n")
    const cwd = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "fanout-"))
    yield* runFanout(TASK, { cwd }, write)
  } else {
    write("(offline: the real claude CLI against a scripted model on 127.0.0.1; --live for the real API)\n")
    yield* Effect.scoped(runOffline(write))
  }
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main.pipe(Effect.provide(PoolLive), NodeRuntime.runMain)
}
