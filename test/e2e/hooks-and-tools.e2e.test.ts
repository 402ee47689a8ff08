// End-to-end facts about the CLI that the README states: which hook events an SDK host is called
// for, what a failing PreToolUse hook does with and without `onFailure: "block"`, when the CLI
// runs SDK MCP tool calls concurrently, and its API retry limit. Each test pins what the real
// `claude` binary does, so a CLI that changes it fails here first.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Layer, Ref, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import type * as Hook from "../../src/Hook.js"
import * as McpServer from "../../src/McpServer.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const afterToolResults = (n: number) => (req: ScriptedModel.RecordedRequest) => ScriptedModel.toolResultCount(req) === n

// A tool_result's content is a string or a list of blocks; the text either way.
const contentText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((block) => (typeof block?.text === "string" ? block.text : JSON.stringify(block))).join("")
    : JSON.stringify(content)

// "SessionStart:clear", "SessionEnd:clear", "Stop", …: the event and what started or ended it.
const describeCall = (input: Hook.HookInput): string => {
  switch (input.hook_event_name) {
    case "SessionStart":
      return `SessionStart:${input.source}`
    case "SessionEnd":
      return `SessionEnd:${input.reason}`
    default:
      return input.hook_event_name
  }
}

const recordingHooks = (calls: Ref.Ref<ReadonlyArray<string>>): Hook.Hooks => {
  const record: Hook.HookCallback = (input) =>
    Ref.update(calls, (all) => [...all, describeCall(input)]).pipe(Effect.as({}))
  return {
    SessionStart: [{ hooks: [record] }],
    SessionEnd: [{ hooks: [record] }],
    // The control: proves the callbacks are registered and reached at all.
    Stop: [{ hooks: [record] }]
  }
}

describe("e2e: hooks and SDK tools against the real claude CLI", () => {
  it.scopedLive("SessionStart and SessionEnd callbacks are not called at startup, on resume, or when the session closes", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("hello"), times: Infinity }])
      const options = yield* model.options()
      const calls = yield* Ref.make<ReadonlyArray<string>>([])
      const hooks = recordingHooks(calls)

      const first = yield* ClaudeAgent.query("hi", { ...options, hooks }).pipe(Stream.runCollect)
      const sessionId = Chunk.toArray(first).find(Message.isResult)?.session_id
      expect(sessionId).toBeDefined()
      expect(yield* Ref.getAndSet(calls, [])).toEqual(["Stop"])

      yield* ClaudeAgent.query("again", { ...options, hooks, resume: sessionId }).pipe(Stream.runDrain)
      expect(yield* Ref.get(calls)).toEqual(["Stop"])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("SessionEnd and SessionStart callbacks are called for /clear, SessionStart for /compact", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("ok"), times: Infinity }])
      const options = yield* model.options()
      const calls = yield* Ref.make<ReadonlyArray<string>>([])
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ ...options, hooks: recordingHooks(calls) })
        yield* session.send("one")
        yield* session.receiveResponse.pipe(Stream.runDrain)
        expect(yield* Ref.getAndSet(calls, [])).toEqual(["Stop"])

        yield* session.send("/clear")
        yield* session.receiveResponse.pipe(Stream.runDrain)
        expect(yield* Ref.getAndSet(calls, [])).toEqual(["SessionEnd:clear", "SessionStart:clear"])

        yield* session.send("two")
        yield* session.receiveResponse.pipe(Stream.runDrain)
        yield* Ref.set(calls, [])
        yield* session.send("/compact")
        yield* session.receiveResponse.pipe(Stream.runDrain)
        expect((yield* Ref.getAndSet(calls, [])).filter((call) => call.startsWith("Session"))).toEqual([
          "SessionStart:compact"
        ])
      }))
      // The session's scope is closed (stdin EOF, the CLI exited): no SessionEnd was asked for.
      expect(yield* Ref.get(calls)).toEqual([])
    }).pipe(Effect.provide(AgentLive)))

  const failingGuard = (onFailure: "block" | undefined) =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: afterToolResults(0),
          reply: ScriptedModel.toolUse("Bash", {
            command: "touch guarded_marker && echo touched",
            description: "touch"
          })
        },
        { match: afterToolResults(1), reply: ScriptedModel.text("done") }
      ])
      const options = yield* model.options()
      const guardRan = yield* Deferred.make<void>()
      yield* ClaudeAgent.query("touch the marker", {
        ...options,
        // The permission rules allow Bash: only the hook stands between the model and the command.
        allowedTools: ["Bash"],
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            onFailure,
            hooks: [() => Deferred.succeed(guardRan, undefined).pipe(Effect.zipRight(Effect.fail("the guard is down")))]
          }]
        }
      }).pipe(Stream.runDrain)
      expect(yield* Deferred.isDone(guardRan)).toBe(true)
      const [result] = (yield* model.mainRequests).flatMap(ScriptedModel.toolResults)
      return { ran: fs.existsSync(path.join(options.cwd, "guarded_marker")), result }
    })

  it.scopedLive("a failing PreToolUse hook does not stop the tool without onFailure: the command runs", () =>
    Effect.gen(function*() {
      const { ran, result } = yield* failingGuard(undefined)
      expect(ran).toBe(true)
      expect(result?.is_error).toBe(false)
      expect(contentText(result?.content)).toContain("touched")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("a failing PreToolUse hook with onFailure: \"block\" blocks the tool; the model sees a hook error", () =>
    Effect.gen(function*() {
      const { ran, result } = yield* failingGuard("block")
      expect(ran).toBe(false)
      expect(result?.is_error).toBe(true)
      expect(contentText(result?.content)).toContain("blocking because onFailure is")
    }).pipe(Effect.provide(AgentLive)))

  // Four calls of one SDK tool in one assistant message; each handler logs its start and end.
  const fourCalls = (
    annotations: Tool.ToolAnnotations | undefined,
    work: (started: number) => Effect.Effect<void, string>
  ) =>
    Effect.gen(function*() {
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      const starts = yield* Ref.make(0)
      const probe = Tool.make("probe", {
        description: "Probes one thing",
        parameters: Schema.Struct({ n: Schema.Number }),
        annotations,
        handler: ({ n }) =>
          Effect.gen(function*() {
            yield* Ref.update(log, (all) => [...all, `start ${n}`])
            yield* work(yield* Ref.updateAndGet(starts, (k) => k + 1))
            yield* Ref.update(log, (all) => [...all, `end ${n}`])
            return `probed ${n}`
          })
      })
      const model = yield* ScriptedModel.make([
        {
          match: afterToolResults(0),
          reply: ScriptedModel.sequence(
            ...[0, 1, 2, 3].map((n) => ScriptedModel.toolUse("mcp__lab__probe", { n }))
          )
        },
        { match: afterToolResults(4), reply: ScriptedModel.text("all probed") }
      ])
      yield* ClaudeAgent.query("probe four things", {
        ...(yield* model.options()),
        mcpServers: { lab: McpServer.make({ name: "lab", tools: [probe] }) },
        allowedTools: ["mcp__lab__probe"]
      }).pipe(Stream.runDrain)
      const results = (yield* model.mainRequests).flatMap(ScriptedModel.toolResults)
      return { log: yield* Ref.get(log), results: results.map((r) => contentText(r.content)) }
    })

  it.scopedLive("four calls of a readOnlyHint tool in one message run concurrently", () =>
    Effect.gen(function*() {
      const allStarted = yield* Deferred.make<void, string>()
      // Each call waits until all four have started: that can only finish if the CLI sent the
      // four tools/call requests without waiting for answers. The deadline only turns a serial
      // CLI into a failed test instead of a hung one.
      const { log, results } = yield* fourCalls({ readOnlyHint: true }, (started) =>
        Effect.gen(function*() {
          if (started === 4) yield* Deferred.succeed(allStarted, undefined)
          yield* Deferred.await(allStarted).pipe(
            Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => `only ${started} call(s) had started` }),
            Effect.tapError((reason) => Deferred.fail(allStarted, reason))
          )
        }))
      // The CLI sends the results back in the order the calls finished.
      expect([...results].sort()).toEqual(["probed 0", "probed 1", "probed 2", "probed 3"])
      expect(log.slice(0, 4).every((entry) => entry.startsWith("start"))).toBe(true)
      expect(log.slice(4).every((entry) => entry.startsWith("end"))).toBe(true)
      expect(log).toHaveLength(8)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("four calls of a tool without readOnlyHint run one after another, in message order", () =>
    Effect.gen(function*() {
      // 300 ms of work per call: were the calls concurrent, the second would start during the
      // first. No step of the test waits on this delay; serial execution can never interleave.
      const { log, results } = yield* fourCalls(undefined, () => Effect.sleep("300 millis"))
      expect(results).toEqual(["probed 0", "probed 1", "probed 2", "probed 3"])
      expect(log).toEqual(["start 0", "end 0", "start 1", "end 1", "start 2", "end 2", "start 3", "end 3"])
    }).pipe(Effect.provide(AgentLive)))

  const firstRetry = (maxRetries: string | undefined) =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.httpError(500, "api_error", "fake internal error"), times: Infinity }
      ])
      const options = yield* model.options()
      // Only the first api_retry message is needed: taking it ends the query and stops the CLI.
      const [retry] = yield* ClaudeAgent.query("hi", {
        ...options,
        env: { ...options.env, CLAUDE_CODE_MAX_RETRIES: maxRetries }
      }).pipe(
        Stream.filter((m) => m.type === "system" && "subtype" in m && m.subtype === "api_retry"),
        Stream.take(1),
        Stream.runCollect,
        Effect.map(Chunk.toArray)
      )
      return retry !== undefined && "max_retries" in retry ? retry.max_retries : undefined
    })

  it.scopedLive("CLAUDE_CODE_MAX_RETRIES: 10 retries by default, at most 15", () =>
    Effect.gen(function*() {
      expect(yield* firstRetry(undefined)).toBe(10)
      expect(yield* firstRetry("50")).toBe(15)
    }).pipe(Effect.provide(AgentLive)))
})
