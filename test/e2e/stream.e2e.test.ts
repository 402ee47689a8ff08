// End-to-end: the messages a query delivers, next to what the official SDK delivers, both driving
// the real `claude` binary against ScriptedModel: the same types in the same order (no
// `system/session_state_changed` the CLI marks `sdk_host_only`), and `command_lifecycle` only with
// `includeCommandLifecycle`.
import * as Official from "@anthropic-ai/claude-agent-sdk"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Discovery from "../../src/internal/cli/discovery.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = Layer.merge(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)), NodeContext.layer)

interface Run {
  readonly prompts: ReadonlyArray<string>
  readonly partial: boolean
  /** The model's replies; by default one text answer per prompt. */
  readonly rules?: ReadonlyArray<ScriptedModel.Rule>
}

// `type`, `type/subtype`, or for a stream event `stream_event/<event type>`.
const label = (m: { readonly type: string; readonly subtype?: unknown; readonly event?: unknown }): string => {
  if (typeof m.subtype === "string") return `${m.type}/${m.subtype}`
  if (m.type === "stream_event" && typeof m.event === "object" && m.event !== null && "type" in m.event) {
    return `stream_event/${String(m.event.type)}`
  }
  return m.type
}

const replies = (run: Run): ReadonlyArray<ScriptedModel.Rule> =>
  run.rules ??
    Array.from(
      { length: run.prompts.length },
      (_, i) => ({ reply: ScriptedModel.text(`answer ${i + 1}: short and plain`), times: 1 })
    )

const afterToolResults = (n: number) => (req: ScriptedModel.RecordedRequest) => ScriptedModel.toolResultCount(req) === n

// Thinking, then a tool call the CLI runs without asking (a read in the working directory), then text.
const toolRun: Run = {
  prompts: ["What does the README say?"],
  partial: true,
  rules: [
    {
      match: afterToolResults(0),
      reply: ScriptedModel.thinking("The user wants the README.", ScriptedModel.toolUse("Glob", { pattern: "*.md" }))
    },
    { match: afterToolResults(1), reply: ScriptedModel.text("There is no README here.") }
  ]
}

// What the official SDK delivers for the prompts (one string prompt, or a stream of them).
const official = (run: Run) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(replies(run))
    const options = yield* model.options()
    const cli = yield* Discovery.findCli(undefined, process.env)
    const userMessages = async function*(): AsyncGenerator<Official.SDKUserMessage> {
      for (const text of run.prompts) {
        yield { type: "user", message: { role: "user", content: [{ type: "text", text }] }, parent_tool_use_id: null }
      }
    }
    const [first] = run.prompts
    return yield* Effect.promise(async () => {
      const q = Official.query({
        prompt: run.prompts.length === 1 && first !== undefined ? first : userMessages(),
        options: {
          pathToClaudeCodeExecutable: cli,
          env: { ...process.env, ...options.env },
          cwd: options.cwd,
          settingSources: [],
          includePartialMessages: run.partial
        }
      })
      const seen: Array<string> = []
      for await (const m of q) seen.push(label(m))
      return seen
    })
  })

const ours = (run: Run, includeCommandLifecycle?: boolean) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(replies(run))
    const options = {
      ...(yield* model.options()),
      includePartialMessages: run.partial,
      ...(includeCommandLifecycle === undefined ? {} : { includeCommandLifecycle })
    }
    const [first] = run.prompts
    const prompt = run.prompts.length === 1 && first !== undefined ? first : Stream.fromIterable(run.prompts)
    const messages = yield* ClaudeAgent.query(prompt, options).pipe(Stream.runCollect)
    return Chunk.toArray(messages)
  })

const labels = (messages: ReadonlyArray<Message.Message>) => messages.map(label)

describe("e2e: the official SDK's stream by default", () => {
  for (
    const [name, run] of [
      ["a plain prompt", { prompts: ["hi"], partial: false }],
      ["a plain prompt with partial messages", { prompts: ["hi"], partial: true }],
      ["two prompts in a stream", { prompts: ["one", "two"], partial: false }],
      ["thinking and a tool call with partial messages", toolRun]
    ] as const
  ) {
    it.scopedLive(`${name}: the same message types in the same order as the official SDK`, () =>
      Effect.gen(function*() {
        const expected = yield* official(run)
        expect(expected).toContain("system/init")
        expect(expected).not.toContain("command_lifecycle")
        const delivered = yield* ours(run)
        expect(labels(delivered)).toEqual(expected)
        // Every stream event is typed: none of the CLI's events, deltas or blocks arrives as `unknown`.
        const parts = new Set(delivered.flatMap((m) => {
          if (m.type !== "stream_event") return []
          const e = m.event
          if (e.type === "content_block_delta") return [e.delta.type]
          if (e.type === "content_block_start") return [`start:${e.content_block.type}`]
          return [e.type]
        }))
        expect(parts.has("unknown") || parts.has("start:unknown")).toBe(false)
        if (run === toolRun) {
          for (const part of ["start:thinking", "thinking_delta", "start:tool_use", "input_json_delta", "text_delta"]) {
            expect(parts).toContain(part)
          }
        }
      }).pipe(Effect.provide(AgentLive)))
  }

  it.scopedLive("includeCommandLifecycle adds the CLI's command_lifecycle messages, and nothing else", () =>
    Effect.gen(function*() {
      const run = { prompts: ["one", "two"], partial: false }
      const plain = labels(yield* ours(run))
      const delivered = yield* ours(run, true)
      const states = delivered.flatMap((m) => (m.type === "command_lifecycle" ? [m.state] : []))
      expect(states).toEqual(["queued", "started", "completed", "queued", "started", "completed"])
      expect(labels(delivered).filter((l) => l !== "command_lifecycle")).toEqual(plain)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("includeSessionState adds the run states the CLI writes for the SDK, and nothing else", () =>
    Effect.gen(function*() {
      const run = { prompts: ["one", "two"], partial: false }
      const plain = labels(yield* ours(run))
      const model = yield* ScriptedModel.make(replies(run))
      const delivered = yield* ClaudeAgent.query(Stream.fromIterable(run.prompts), {
        ...(yield* model.options()),
        includeSessionState: true
      }).pipe(Stream.runCollect, Effect.map(Chunk.toArray))
      const states = delivered.flatMap((
        m
      ) => (m.type === "system" && m.subtype === "session_state_changed" ? [m.state] : []))
      expect(states).toEqual(["running", "idle", "running", "idle"])
      expect(labels(delivered).filter((l) => l !== "system/session_state_changed")).toEqual(plain)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a message sent with priority now and an origin while a turn runs reaches the model in that session", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("z".repeat(200), { chunkSize: 4, delayMs: 20 }), times: 1 },
        { reply: ScriptedModel.text("steered"), times: Infinity }
      ])
      const session = yield* ClaudeAgent.session({ ...(yield* model.options()), includePartialMessages: true })
      yield* session.send("write slowly")
      // Once the first reply streams, steer the running turn.
      yield* session.messages.pipe(Stream.takeUntil((m) => m.type === "stream_event"), Stream.runDrain)
      const id = yield* session.send(
        Message.userMessage("use capitals", { priority: "now", origin: { kind: "human" } })
      )
      const rest = yield* session.messages.pipe(
        Stream.takeUntil((m) => m.type === "result" && "result" in m && m.result === "steered"),
        Stream.runCollect,
        Effect.map(Chunk.toArray)
      )
      expect(rest.filter((m) => m.type === "result").every((m) => m.type === "result" && !m.is_error)).toBe(true)
      const requests = yield* model.mainRequests
      expect(requests.some((r) => JSON.stringify(r.body).includes("use capitals"))).toBe(true)
      expect(id).toMatch(/^[0-9a-f-]{36}$/)
    }).pipe(Effect.provide(AgentLive)))
})
