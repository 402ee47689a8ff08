import Anthropic from "@anthropic-ai/sdk"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, HashMap, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const client = (model: ScriptedModel.ScriptedModelShape) =>
  new Anthropic({ apiKey: "x", baseURL: model.url, maxRetries: 0 })

const tools: Array<Anthropic.Tool> = [
  { name: "Bash", description: "run", input_schema: { type: "object", properties: {} } },
  { name: "Write", description: "write", input_schema: { type: "object", properties: {} } }
]

// A request shaped like a CLI main-loop turn: tools offered, max_tokens > 1.
const mainParams = (content: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: "claude-test",
  max_tokens: 1024,
  system: "You are scripted.",
  tools,
  messages: [{ role: "user", content }]
})

const streamMain = (model: ScriptedModel.ScriptedModelShape, content: string) =>
  Effect.promise(() => client(model).messages.stream(mainParams(content)).finalMessage())

const createMain = (model: ScriptedModel.ScriptedModelShape, content: string) =>
  Effect.promise(() => client(model).messages.create(mainParams(content)))

const textOf = (m: Anthropic.Message): string => m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")

describe("ScriptedModel", () => {
  it.scopedLive("a streamed text reply parses to the scripted text", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("Hello from the script.") }])
      const message = yield* streamMain(model, "hi")
      expect(textOf(message)).toBe("Hello from the script.")
      expect(message.stop_reason).toBe("end_turn")
      expect(message.model).toBe("claude-test")
      expect(message.id).toMatch(/^msg_scripted_/)
    }))

  it.scopedLive("slowText arrives as several text deltas that join to the text", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("abcdefghij", { chunkSize: 3, delayMs: 2 }) }
      ])
      const deltas = yield* Effect.promise(async () => {
        const out: Array<string> = []
        const stream = client(model).messages.stream(mainParams("go"))
        stream.on("text", (delta) => out.push(delta))
        await stream.finalMessage()
        return out
      })
      expect(deltas).toEqual(["abc", "def", "ghi", "j"])
    }))

  it.scopedLive("toolUse streams input_json_delta that parses to the input object", () =>
    Effect.gen(function*() {
      const input = { command: "echo \"hi\" && ls -la /tmp", nested: { n: 1, list: [1, 2, 3] } }
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.toolUse("Bash", input, { id: "toolu_fixed" }) },
        { reply: ScriptedModel.toolUse("Write", { file_path: "a.txt" }) }
      ])
      const first = yield* streamMain(model, "run it")
      expect(first.stop_reason).toBe("tool_use")
      expect(first.content).toEqual([{ type: "tool_use", id: "toolu_fixed", name: "Bash", input }])
      const second = yield* streamMain(model, "again")
      const [block] = second.content
      expect(block?.type === "tool_use" ? block.id : undefined).toMatch(/^toolu_scripted_/)
    }))

  it.scopedLive("thinking precedes the reply it wraps, with a signature", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.thinking("Let me think.", ScriptedModel.text("Answer.")) }
      ])
      const message = yield* streamMain(model, "think")
      expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"])
      const [first] = message.content
      expect(first?.type === "thinking" ? first.thinking : undefined).toBe("Let me think.")
      expect(first?.type === "thinking" ? first.signature.length : 0).toBeGreaterThan(0)
      expect(textOf(message)).toBe("Answer.")
    }))

  it.scopedLive("sequence joins text and a tool call in one message", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{
        reply: ScriptedModel.sequence(ScriptedModel.text("Looking."), ScriptedModel.toolUse("Bash", { command: "ls" }))
      }])
      const message = yield* createMain(model, "x")
      expect(message.content.map((b) => b.type)).toEqual(["text", "tool_use"])
      expect(message.stop_reason).toBe("tool_use")
    }))

  it.scopedLive("non-streaming create returns the same content as one JSON message", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.thinking("hm", ScriptedModel.toolUse("Write", { file_path: "x" }, { id: "toolu_a" })) }
      ])
      const message = yield* createMain(model, "hi")
      expect(message.content).toEqual([
        { type: "thinking", thinking: "hm", signature: "scripted-signature" },
        { type: "tool_use", id: "toolu_a", name: "Write", input: { file_path: "x" } }
      ])
      expect(message.stop_reason).toBe("tool_use")
      const [req] = yield* model.mainRequests
      expect(req?.stream).toBe(false)
    }))

  it.scopedLive("httpError surfaces as an APIError with the status and error type", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.httpError(529, "overloaded_error", "too busy"), times: 2 }
      ])
      const err = yield* Effect.promise(() =>
        client(model).messages.create(mainParams("hi")).then(() => undefined, (e: unknown) => e)
      )
      expect(err).toBeInstanceOf(Anthropic.APIError)
      expect(err instanceof Anthropic.APIError ? err.status : undefined).toBe(529)
      expect(err instanceof Anthropic.APIError ? JSON.stringify(err.error) : "").toContain("overloaded_error")
      // The rule had times: 2, the third request falls through to the default reply.
      yield* Effect.promise(() => client(model).messages.create(mainParams("hi")).catch(() => undefined))
      expect(textOf(yield* createMain(model, "hi"))).toBe("(scripted model: no rule matched)")
    }))

  it.scopedLive("sseError and truncated make the streamed request fail", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.sseError("overloaded_error", "Overloaded") },
        { reply: ScriptedModel.truncated("half an ans") }
      ])
      const sse = yield* Effect.promise(() =>
        client(model).messages.stream(mainParams("a")).finalMessage().then(() => "ok", (e: unknown) => String(e))
      )
      expect(sse).toContain("Overloaded")
      const cut = yield* Effect.promise(() =>
        client(model).messages.stream(mainParams("b")).finalMessage().then(() => "ok", (e: unknown) => String(e))
      )
      expect(cut).not.toBe("ok")
    }))

  it.scopedLive("truncated: the first delta arrives, then the connection is cut before the message ends", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.truncated("half an ans"), times: 2 }
      ])
      const streamed = yield* Effect.promise(async () => {
        const deltas: Array<string> = []
        const stream = client(model).messages.stream(mainParams("a"))
        stream.on("text", (delta) => deltas.push(delta))
        const outcome = await stream.finalMessage().then(() => "completed", () => "failed")
        return { deltas, outcome }
      })
      expect(streamed).toEqual({ deltas: ["half an ans"], outcome: "failed" })

      // Not streamed: a 200 whose JSON body stops halfway.
      const response = yield* Effect.promise(() =>
        fetch(`${model.url}/v1/messages`, {
          method: "POST",
          body: JSON.stringify({ ...mainParams("b"), stream: false })
        })
      )
      expect(response.status).toBe(200)
      const body = yield* Effect.promise(() => response.text().then(() => "read", () => "cut"))
      expect(body).toBe("cut")
    }))

  it.scopedLive("recorded requests carry the request headers", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("k") }])
      const beta = new Anthropic({
        apiKey: "x",
        baseURL: model.url,
        maxRetries: 0,
        defaultHeaders: { "anthropic-beta": "scripted-beta-2025-01-01", "X-Trace-Id": "trace-1" }
      })
      yield* Effect.promise(() => beta.messages.create(mainParams("hi")))
      const [req] = yield* model.mainRequests
      expect(req?.headers["anthropic-beta"]).toBe("scripted-beta-2025-01-01")
      expect(req?.headers["x-trace-id"]).toBe("trace-1")
      expect(req?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    }))

  it.scopedLive("requests are handled in the owner's runtime: its logger sees them", () => {
    const logged: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
    const capture = Logger.make(({ annotations, message }) => {
      logged.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
    })
    return Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("k") }])
      yield* streamMain(model, "hi")
      expect(logged).toContainEqual({
        message: ["ScriptedModel: request"],
        annotations: { kind: "main", path: "/v1/messages", request: 1 }
      })
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)), Logger.withMinimumLogLevel(LogLevel.Debug))
  })

  it.scopedLive("predicates pick the matching rule regardless of order; times and defaultReply apply", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { match: (r) => ScriptedModel.lastUserText(r).includes("weather"), reply: ScriptedModel.text("Sunny.") },
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("time"),
          reply: ScriptedModel.text("Noon."),
          times: Infinity
        }
      ], { defaultReply: ScriptedModel.text("fallback") })
      expect(textOf(yield* streamMain(model, "what time is it"))).toBe("Noon.")
      expect(textOf(yield* streamMain(model, "and the weather?"))).toBe("Sunny.")
      expect(textOf(yield* streamMain(model, "weather again?"))).toBe("fallback")
      expect(textOf(yield* streamMain(model, "time again?"))).toBe("Noon.")
    }))

  it.scopedLive("side requests (model probe, title generation, compaction) don't consume rules", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("the real answer") }])
      const c = client(model)
      const probe = yield* Effect.promise(() =>
        c.messages.create({ model: "claude-haiku", max_tokens: 1, messages: [{ role: "user", content: "Hi" }] })
      )
      expect(textOf(probe)).toBe("ok")
      const title = yield* Effect.promise(() =>
        c.messages.stream({ model: "m", max_tokens: 32000, tools: [], messages: [{ role: "user", content: "t" }] })
          .finalMessage()
      )
      expect(textOf(title)).toBe("ok")
      const compact = yield* streamMain(model, "CRITICAL: Respond with TEXT ONLY. Summarize.")
      expect(textOf(compact)).toBe("ok")
      expect(textOf(yield* streamMain(model, "hi"))).toBe("the real answer")
      const all = yield* model.requests
      expect(all.map((r) => r.kind)).toEqual(["side", "side", "side", "main"])
      expect((yield* model.mainRequests).length).toBe(1)
    }))

  it.scopedLive("count_tokens answers an estimate and is recorded as count_tokens", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("unused") }])
      const counted = yield* Effect.promise(() =>
        client(model).messages.countTokens({ model: "m", messages: [{ role: "user", content: "count me" }] })
      )
      expect(counted.input_tokens).toBeGreaterThan(0)
      const all = yield* model.requests
      expect(all.map((r) => [r.kind, r.path])).toEqual([["count_tokens", "/v1/messages/count_tokens"]])
      // The rule is still there for the next main request.
      expect(textOf(yield* streamMain(model, "hi"))).toBe("unused")
    }))

  it.scopedLive("unknown paths get a 404 JSON error", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([])
      const res = yield* Effect.promise(() => fetch(`${model.url}/v1/models`))
      expect(res.status).toBe(404)
      expect(yield* Effect.promise(() => res.json())).toMatchObject({
        type: "error",
        error: { type: "not_found_error" }
      })
    }))

  it.scopedLive("requests are recorded: model, system, tool names, lastUserText, toolResults", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([], { defaultReply: ScriptedModel.text("k") })
      yield* streamMain(model, "first question")
      yield* Effect.promise(() =>
        client(model).messages.create({
          model: "claude-other",
          max_tokens: 10,
          system: [{ type: "text", text: "block system" }],
          tools,
          messages: [
            { role: "user", content: "q" },
            { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }] },
            {
              role: "user",
              content: [
                { type: "tool_result", tool_use_id: "toolu_1", content: "file.txt", is_error: true },
                { type: "text", text: "and more" }
              ]
            }
          ]
        })
      )
      const [one, two] = yield* model.mainRequests
      expect(one?.model).toBe("claude-test")
      expect(one?.system).toBe("You are scripted.")
      expect(one?.tools).toEqual(["Bash", "Write"])
      expect(one?.stream).toBe(true)
      expect(one?.maxTokens).toBe(1024)
      expect(one === undefined ? "" : ScriptedModel.lastUserText(one)).toBe("first question")
      expect(one === undefined ? [] : ScriptedModel.toolResults(one)).toEqual([])
      expect(two?.model).toBe("claude-other")
      expect(two?.system).toBe("block system")
      expect(two === undefined ? "" : ScriptedModel.lastUserText(two)).toBe("file.txt\nand more")
      expect(two === undefined ? [] : ScriptedModel.toolResults(two)).toEqual([
        { tool_use_id: "toolu_1", content: "file.txt", is_error: true }
      ])
    }))

  it.scopedLive("waitForRequests resolves once enough matching main requests arrived", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([], { defaultReply: ScriptedModel.text("k") })
      const waiter = yield* model.waitForRequests(2, (r) => ScriptedModel.lastUserText(r).startsWith("go")).pipe(
        Effect.fork
      )
      yield* streamMain(model, "go 1")
      yield* streamMain(model, "stop")
      expect(waiter.unsafePoll()).toBeNull()
      yield* streamMain(model, "go 2")
      const got = yield* Fiber.join(waiter)
      expect(got.map(ScriptedModel.lastUserText)).toEqual(["go 1", "go 2"])
      // Already satisfied: returns at once.
      expect((yield* model.waitForRequests(3)).length).toBe(3)
    }))

  it.scopedLive("options gives an isolated HOME and cwd, removed with the scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const model = yield* ScriptedModel.make([]).pipe(Scope.extend(scope))
      const options = yield* model.options()
      expect(options.env.ANTHROPIC_BASE_URL).toBe(model.url)
      expect(options.env.ANTHROPIC_API_KEY).toBe("sk-ant-test-dummy")
      expect(options.env.CLAUDE_CONFIG_DIR?.startsWith(options.env.HOME ?? "?")).toBe(true)
      expect(options.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe("1")
      expect(options.settingSources).toEqual([])
      expect(fs.statSync(options.cwd).isDirectory()).toBe(true)
      expect(fs.statSync(options.env.HOME ?? "").isDirectory()).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(fs.existsSync(options.cwd)).toBe(false)
      expect(fs.existsSync(options.env.HOME ?? "")).toBe(false)
    }))

  it.scopedLive("the port is closed after the scope closes, even mid-stream", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("y".repeat(2000), { chunkSize: 2, delayMs: 50 }) }
      ]).pipe(Scope.extend(scope))
      // A slow stream holds a connection open while the scope closes.
      const pending = client(model).messages.stream(mainParams("go")).finalMessage().then(() => "ok", () => "failed")
      yield* model.waitForRequests(1)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Effect.promise(() => pending)).toBe("failed")
      const after = yield* Effect.promise(() =>
        fetch(`${model.url}/v1/messages`, { method: "POST", body: "{}" }).then(() => "reached", () => "refused")
      )
      expect(after).toBe("refused")
    }))

  it.scoped("layer provides the service", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.ScriptedModel
      expect(model.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(yield* model.requests).toEqual([])
    }).pipe(Effect.provide(ScriptedModel.layer([{ reply: ScriptedModel.text("x") }]))))
})
