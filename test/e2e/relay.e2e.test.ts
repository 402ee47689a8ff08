// The relay end to end: the real CLI started by `effect-claude-agent-relay` (a separate process on
// 127.0.0.1), driven by a host through `Transport.layerWebSocket`, against ScriptedModel.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Option, Redacted, Schema, Stream } from "effect"
import * as Hook from "../../src/Hook.js"
import * as McpServer from "../../src/McpServer.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import * as Tool from "../../src/Tool.js"
import { isAlive } from "../support/processes.js"
import { goneWithin, relayAgent, startRelay } from "./relaySupport.js"

const resultOf = (messages: ReadonlyArray<Message.Message>) => messages.find(Message.isResult)

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("e2e: the CLI behind a relay (effect-claude-agent-relay in its own process)", () => {
  it.scopedLive("a conversation with a hook, an MCP tool and an interrupt; the CLI stops with the session", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([
        {
          match: (req) => ScriptedModel.lastUserText(req).includes("probe") && ScriptedModel.toolResultCount(req) === 0,
          reply: ScriptedModel.toolUse("mcp__lab__probe", { n: 7 })
        },
        {
          match: (req) => ScriptedModel.toolResultCount(req) === 1 && !ScriptedModel.lastUserText(req).includes("poem"),
          reply: ScriptedModel.text("probed through the relay")
        },
        {
          match: (req) => ScriptedModel.lastUserText(req).includes("poem"),
          reply: ScriptedModel.slowText("la ".repeat(200), { chunkSize: 3, delayMs: 25 })
        }
      ])
      const options = yield* model.options()
      const hooked: Array<string> = []
      const probe = Tool.make("probe", {
        description: "Probes one thing",
        parameters: Schema.Struct({ n: Schema.Number }),
        handler: ({ n }) => Effect.succeed(`probe ${n} answered by the host`)
      })
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* relayAgent(relay.url).session({
          ...options,
          includePartialMessages: true,
          mcpServers: { lab: McpServer.make({ name: "lab", tools: [probe] }) },
          allowedTools: ["mcp__lab__probe"],
          hooks: {
            PreToolUse: [{
              hooks: [
                Hook.on("PreToolUse", (input) => Effect.sync(() => hooked.push(input.tool_name)).pipe(Effect.as({})))
              ]
            }]
          }
        })
        yield* session.send("Please probe 7")
        const first = yield* session.receiveResponse.pipe(Stream.runCollect)
        const result = resultOf([...first])
        expect(result?.subtype === "success" ? result.result : result?.subtype).toBe("probed through the relay")
        expect(hooked).toEqual(["mcp__lab__probe"])
        const toolResults = (yield* model.mainRequests).flatMap(ScriptedModel.toolResults)
        expect(JSON.stringify(toolResults.map((r) => r.content))).toContain("probe 7 answered by the host")

        yield* session.send("Write a long poem.")
        const streaming = yield* Deferred.make<void>()
        const turn = yield* session.receiveResponse.pipe(
          Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
          Stream.filter(Message.isResult),
          Stream.runLast,
          Effect.fork
        )
        yield* Deferred.await(streaming)
        yield* session.interrupt()
        const second = yield* turn.await.pipe(Effect.flatten)
        expect(Option.map(second, (m) => m.subtype)).toEqual(Option.some("error_during_execution"))
        const remote = Option.getOrThrow(session.pid)
        expect(isAlive(remote)).toBe(true)
        return remote
      }))
      // The relay ran the CLI on this machine: its pid is one we can check.
      expect(yield* goneWithin(pid)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a missing or wrong token is refused with a typed error; no CLI is started", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("never"), times: Infinity }])
      const options = yield* model.options()
      for (const token of ["", "relay-test-token-0123456789-but-wrong"]) {
        const exit = yield* Effect.scoped(
          relayAgent(relay.url, { token: Redacted.make(token) }).session(options)
        ).pipe(Effect.exit)
        expect(failureOf(exit)).toMatchObject({
          _tag: "CLIConnectionError",
          reason: "SpawnFailed",
          description: expect.stringContaining("unauthorized")
        })
      }
      expect(yield* model.requests).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
