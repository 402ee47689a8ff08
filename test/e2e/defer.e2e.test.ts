// What Claude Code 2.1.330 does with a PreToolUse hook's `defer` (docs/protocol-defer.md): the
// turn ends at the call without running it, and resuming the session runs that call first, at
// start-up and before any prompt, through `canUseTool`. Pinned here so that a CLI that changes
// it fails first.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Ref, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Hook from "../../src/Hook.js"
import type * as Permission from "../../src/Permission.js"
import * as Message from "../../src/schema/Message.js"
import type * as Options from "../../src/schema/Options.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const CALL_ID = "toolu_deferred_append"

// One Bash call that appends a line to log.txt, then a text reply once its result is back.
const appendsALine = ScriptedModel.make([
  {
    match: (r) => ScriptedModel.toolResultCount(r) === 0,
    reply: ScriptedModel.toolUse("Bash", { command: "echo ran >> log.txt", description: "append" }, { id: CALL_ID })
  },
  { match: (r) => ScriptedModel.toolResultCount(r) === 1, reply: ScriptedModel.text("appended"), times: Infinity }
])

const deferEverything: Hook.Hooks = { PreToolUse: [{ hooks: [() => Effect.succeed(Hook.defer("needs a human"))] }] }

const readLog = (cwd: string): string | undefined => {
  const file = path.join(cwd, "log.txt")
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
}

// The first run: the hook defers the call; returns the turn's result.
const deferredTurn = (options: Options.Options) =>
  ClaudeAgent.query("append a line", { ...options, hooks: deferEverything }).pipe(
    Stream.filter(Message.isResult),
    Stream.runHead,
    Effect.flatMap(Effect.orDieWith(() => "no result"))
  )

describe("e2e: a deferred tool call (PreToolUse defer) on the real claude CLI", () => {
  it.scopedLive("the turn ends at the call without running it: tool_deferred, with the call on the result", () =>
    Effect.gen(function*() {
      const model = yield* appendsALine
      const options = yield* model.options()
      const asked = yield* Ref.make(0)
      const canUseTool: Permission.CanUseTool = () =>
        Ref.update(asked, (n) => n + 1).pipe(Effect.as({ behavior: "allow" as const }))
      const result = yield* ClaudeAgent.query("append a line", { ...options, hooks: deferEverything, canUseTool }).pipe(
        Stream.filter(Message.isResult),
        Stream.runHead,
        Effect.flatMap(Effect.orDieWith(() => "no result"))
      )
      expect(result.subtype).toBe("success")
      expect(result.terminal_reason).toBe("tool_deferred")
      expect(result.subtype === "success" ? result.deferred_tool_use : undefined).toEqual({
        id: CALL_ID,
        name: "Bash",
        input: { command: "echo ran >> log.txt", description: "append" }
      })
      expect(readLog(options.cwd ?? ".")).toBeUndefined()
      expect(yield* Ref.get(asked)).toBe(0)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("resuming runs the call first, before any prompt, through canUseTool: edited input, run once", () =>
    Effect.gen(function*() {
      const model = yield* appendsALine
      const options = yield* model.options()
      const first = yield* deferredTurn(options)
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      const canUseTool: Permission.CanUseTool = (_tool, input, context) =>
        Ref.update(asked, (ids) => [...ids, context.toolUseID]).pipe(
          Effect.as({ behavior: "allow" as const, updatedInput: { ...input, command: "echo edited >> log.txt" } })
        )
      const session = yield* ClaudeAgent.session({ ...options, canUseTool, resume: first.session_id })

      // Before anything is sent, the CLI has run the deferred call and reports its result.
      const atStart = yield* session.messages.pipe(Stream.take(1), Stream.runCollect)
      const toolResult = Chunk.toArray(atStart).find(Message.isUser)
      expect(JSON.stringify(toolResult?.message.content)).toContain(CALL_ID)
      expect(readLog(options.cwd ?? ".")).toBe("edited\n")
      // Asked for this call only (2.1.330 sometimes asks twice for it; it runs once).
      const ids = yield* Ref.get(asked)
      expect(ids.length).toBeGreaterThanOrEqual(1)
      expect(new Set(ids)).toEqual(new Set([CALL_ID]))

      // The first prompt after the resume: the interrupted turn is finished first (the model sees
      // the tool's result), then the prompt's own turn.
      yield* session.send("go on")
      const continued = Chunk.toArray(yield* session.receiveResponse.pipe(Stream.runCollect)).find(Message.isResult)
      expect(continued?.subtype === "success" ? continued.result : undefined).toBe("appended")
      const own = Chunk.toArray(yield* session.receiveResponse.pipe(Stream.runCollect)).find(Message.isResult)
      expect(own?.subtype).toBe("success")
      const requests = yield* model.mainRequests
      const finishing = JSON.stringify(requests[1]?.messages)
      expect(finishing).toContain(CALL_ID)
      expect(finishing).toContain("Continue from where you left off.")
      expect(JSON.stringify(requests.at(-1)?.messages)).toContain("go on")
      expect(readLog(options.cwd ?? ".")).toBe("edited\n")
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("resuming with a denial: the call never runs and the model sees the reason", () =>
    Effect.gen(function*() {
      const model = yield* appendsALine
      const options = yield* model.options()
      const first = yield* deferredTurn(options)
      const canUseTool: Permission.CanUseTool = () =>
        Effect.succeed({ behavior: "deny" as const, message: "refused by a reviewer" })
      const session = yield* ClaudeAgent.session({ ...options, canUseTool, resume: first.session_id })
      yield* session.send("go on")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      expect(readLog(options.cwd ?? ".")).toBeUndefined()
      const requests = yield* model.mainRequests
      expect(JSON.stringify(requests[1]?.messages)).toContain("refused by a reviewer")
    }).pipe(Effect.provide(AgentLive)))
})
