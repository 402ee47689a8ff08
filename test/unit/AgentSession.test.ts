// Unit tests of sessions and queries over the in-memory fake CLI (a mock transport, no process).
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Deferred,
  Duration,
  Either,
  Effect,
  ExecutionStrategy,
  Exit,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  Option,
  Ref,
  Scope,
  Stream
} from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Control from "../../src/schema/Control.js"
import { CLIEndedError } from "../../src/SdkError.js"
import * as Message from "../../src/schema/Message.js"
import { Transport } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as Query from "../../src/internal/session/query.js"

const types = (messages: Chunk.Chunk<Message.Message>) =>
  Chunk.toArray(messages).map((
    m
  ) => ("subtype" in m && typeof m.subtype === "string" ? `${m.type}/${m.subtype}` : m.type))

describe("ClaudeAgent.query (fake CLI)", () => {
  it.effect("a string prompt streams init, assistant and result, then ends", () =>
    Effect.gen(function*() {
      const messages = yield* ClaudeAgent.query("hello").pipe(Stream.runCollect)
      expect(types(messages)).toEqual(["system/init", "assistant", "result/success"])
      const result = Chunk.toArray(messages).find(Message.isResult)
      expect(result !== undefined && "result" in result ? result.result : undefined).toBe("echo: hello")
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent())))

  it.effect("writes initialize first, then the user message, then closes stdin", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<ReadonlyArray<{ readonly [k: string]: unknown }>>()
      const layer = FakeCli.layerClaudeAgent({
        onInputEnd: (cli) =>
          Effect.gen(function*() {
            yield* Deferred.succeed(seen, yield* cli.sent)
            yield* cli.exit({ exitCode: 0 })
          })
      })
      yield* ClaudeAgent.query("hi", { systemPrompt: "be brief" }).pipe(Stream.runDrain, Effect.provide(layer))
      const sent = yield* Deferred.await(seen)
      expect(sent[0]?.type).toBe("control_request")
      const init = sent[0]?.request
      expect(typeof init === "object" && init !== null && "subtype" in init ? init.subtype : undefined).toBe(
        "initialize"
      )
      expect(typeof init === "object" && init !== null && "systemPrompt" in init ? init.systemPrompt : undefined)
        .toEqual(["be brief"])
      expect(sent[1]?.type).toBe("user")
      expect(FakeCli.userText(sent[1] ?? {})).toBe("hi")
    }))

  it.effect("verbatimPrompts marks every user message client_composed; without it nothing is added", () =>
    Effect.gen(function*() {
      const userFrames = (options: { readonly verbatimPrompts?: boolean }) =>
        Effect.gen(function*() {
          const seen = yield* Deferred.make<ReadonlyArray<{ readonly [k: string]: unknown }>>()
          const layer = FakeCli.layerClaudeAgent({
            onInputEnd: (cli) =>
              Effect.gen(function*() {
                yield* Deferred.succeed(seen, yield* cli.sent)
                yield* cli.exit({ exitCode: 0 })
              })
          })
          yield* ClaudeAgent.query(Stream.make("one", "/two"), options).pipe(Stream.runDrain, Effect.provide(layer))
          return (yield* Deferred.await(seen)).filter((frame) => frame.type === "user")
        })
      const verbatim = yield* userFrames({ verbatimPrompts: true })
      expect(verbatim.map((frame) => frame.client_composed)).toEqual([true, true])
      const plain = yield* userFrames({})
      expect(plain).toHaveLength(2)
      expect(plain.some((frame) => "client_composed" in frame)).toBe(false)
    }))

  it.effect("a stream of prompts runs one turn each and ends when input ends", () =>
    Effect.gen(function*() {
      const messages = yield* ClaudeAgent.query(Stream.make("one", "two")).pipe(Stream.runCollect)
      const results = Chunk.toArray(messages).filter(Message.isResult)
      expect(results.map((r) => ("result" in r ? r.result : undefined))).toEqual(["echo: one", "echo: two"])
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent())))

  it.effect("an error result is data by default and a ResultError with failOnErrorResult", () =>
    Effect.gen(function*() {
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (_m, cli) => cli.emit(FakeCli.frames.result("API Error: 500 boom", { isError: true }))
      })
      const messages = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.provide(layer))
      expect(Chunk.toArray(messages).filter(Message.isErrorResult)).toHaveLength(1)
      const error = yield* ClaudeAgent.query("x").pipe(
        ClaudeAgent.failOnErrorResult,
        Stream.runDrain,
        Effect.flip,
        Effect.provide(layer)
      )
      expect(error._tag).toBe("ResultError")
      if (error._tag === "ResultError") {
        expect(error.detail).toBe("API Error: 500 boom")
        expect(error.terminalReason).toBe("api_error")
        // The CLI says `subtype: "success"` for API errors: the message never does.
        expect(error.message).toBe("The Claude Code run failed: API error: API Error: 500 boom")
      }
    }))

  it.effect("failOnErrorResult delivers what comes before the first error result, in any chunking, and nothing after", () =>
    Effect.gen(function*() {
      const decode = (frame: unknown): Message.Message => {
        const decoded = Message.decode(frame)
        if (Either.isLeft(decoded)) throw decoded.left
        return decoded.right
      }
      const first = decode(FakeCli.frames.assistantText("one"))
      const second = decode(FakeCli.frames.assistantText("two"))
      const failed = decode(FakeCli.frames.result("API Error: 500 boom", { isError: true }))
      const after = decode(FakeCli.frames.assistantText("after"))
      const all = [first, second, failed, after]
      for (const chunkSize of [1, 2, 3, 4]) {
        const seen: Array<Message.Message> = []
        const error = yield* Stream.fromIterable(all).pipe(
          Stream.rechunk(chunkSize),
          ClaudeAgent.failOnErrorResult,
          Stream.runForEach((m) => Effect.sync(() => seen.push(m))),
          Effect.flip
        )
        expect(seen).toEqual([first, second])
        expect(error._tag).toBe("ResultError")
        expect(error.raw).toBe(failed)
      }
      const ok = decode(FakeCli.frames.result("fine"))
      const passed = yield* Stream.make(first, ok, second).pipe(ClaudeAgent.failOnErrorResult, Stream.runCollect)
      expect(Chunk.toArray(passed)).toEqual([first, ok, second])
      // The stream's own failure passes through, after what came before it.
      const upstream = new CLIEndedError({ reason: "NoResult" })
      const delivered: Array<Message.Message> = []
      const passedFailure = yield* Stream.make(first).pipe(
        Stream.concat(Stream.fail(upstream)),
        ClaudeAgent.failOnErrorResult,
        Stream.runForEach((m) => Effect.sync(() => delivered.push(m))),
        Effect.flip
      )
      expect(delivered).toEqual([first])
      expect(passedFailure).toBe(upstream)
    }))

  it.effect("a CLI that exits before the result fails the query with ProcessError", () =>
    Effect.gen(function*() {
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (_m, cli) =>
          cli.stderr("Error parsing streaming input line").pipe(Effect.zipRight(cli.exit({ exitCode: 1 })))
      })
      const error = yield* ClaudeAgent.query("x").pipe(Stream.runDrain, Effect.flip, Effect.provide(layer))
      expect(error._tag).toBe("ProcessError")
      expect(error.message).toContain("Error parsing streaming input line")
    }))

  it.effect("a run whose messages end before the result fails a query, and lastResult, with CLIEndedError NoResult", () =>
    Effect.gen(function*() {
      const ended = yield* Query.requireResult(Stream.empty).pipe(Stream.runDrain, Effect.flip)
      expect(ended._tag === "CLIEndedError" && ended.reason).toBe("NoResult")
      const none = yield* ClaudeAgent.lastResult(Stream.empty).pipe(Effect.flip)
      expect(none._tag === "CLIEndedError" && none.reason).toBe("NoResult")
      expect(none.message).toBe("The run ended without a result message")
    }))

  it.effect("a bad option fails with OptionsError before anything starts", () =>
    Effect.gen(function*() {
      const error = yield* ClaudeAgent.query("x", { maxTurns: -1 }).pipe(Stream.runDrain, Effect.flip)
      expect(error._tag).toBe("OptionsError")
      if (error._tag === "OptionsError") expect(error.field).toBe("maxTurns")
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent())))

  it.effect("interrupting the consumer closes the session (the fake CLI sees stdin end)", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const inputEnded = yield* Deferred.make<void>()
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (_m, cli) =>
          cli.emit(FakeCli.frames.systemInit()).pipe(
            Effect.zipRight(Deferred.succeed(started, undefined)),
            Effect.zipRight(cli.inputEnded),
            Effect.zipRight(Deferred.succeed(inputEnded, undefined)),
            Effect.zipRight(cli.exit({ exitCode: 0 }))
          )
      })
      const fiber = yield* ClaudeAgent.query("x").pipe(Stream.runDrain, Effect.provide(layer), Effect.fork)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Deferred.isDone(inputEnded)).toBe(true)
    }))
})

describe("closing a session", () => {
  const stateFrame = (state: string) => ({
    type: "system",
    subtype: "session_state_changed",
    state,
    session_id: "00000000-0000-4000-8000-000000000001"
  })

  it.effect("mid-turn: sends the protocol's interrupt, then closes stdin once the CLI is idle", () =>
    Effect.gen(function*() {
      const interruptSeenAtEof = yield* Deferred.make<boolean>()
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (_m, cli) =>
          Effect.gen(function*() {
            yield* cli.emit(stateFrame("running"))
            yield* cli.emit(FakeCli.frames.assistantText("partial"))
            yield* cli.awaitSent((f) =>
              f.type === "control_request" && typeof f.request === "object" && f.request !== null &&
              "subtype" in f.request && f.request.subtype === "interrupt"
            )
            yield* cli.emit(FakeCli.frames.result("interrupted", { isError: true, subtype: "error_during_execution" }))
            yield* cli.emit(stateFrame("idle"))
          }),
        onInputEnd: (cli) =>
          Effect.gen(function*() {
            const sent = yield* cli.sent
            const sawInterrupt = sent.some((f) =>
              f.type === "control_request" && typeof f.request === "object" && f.request !== null &&
              "subtype" in f.request && f.request.subtype === "interrupt"
            )
            yield* Deferred.succeed(interruptSeenAtEof, sawInterrupt)
            yield* cli.exit({ exitCode: 1 })
          })
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        yield* session.send("long task")
        yield* session.messages.pipe(Stream.filter(Message.isAssistant), Stream.take(1), Stream.runDrain)
      })).pipe(Effect.provide(layer))
      expect(yield* Deferred.await(interruptSeenAtEof)).toBe(true)
    }))

  // The close reads the CLI's `idle` through the channel's reader, so the reader and the process
  // must outlive it even when the caller's scope runs its finalizers in parallel. The CLI here
  // never reports idle: the close waits its grace period and then ends stdin, and only then may
  // the transport stop (in a parallel race the transport stopped first and the close waited on).
  it.live("in a scope closed in parallel, stdin ends from the close before the transport stops", () =>
    Effect.gen(function*() {
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      const record = (event: string) => Ref.update(log, (all) => [...all, event])
      const transport = Layer.scoped(
        Transport,
        Effect.gen(function*() {
          const { transport } = yield* FakeCli.make({
            onUserMessage: (m, cli) => Effect.zipRight(cli.emit(stateFrame("running")), FakeCli.echoTurn(m, cli)),
            onInputEnd: () => record("stdin ended")
          })
          yield* Effect.addFinalizer(() => record("transport stopping"))
          return transport
        })
      )
      const agent = ClaudeAgent.make({ transport })
      const scope = yield* Scope.make(ExecutionStrategy.parallel)
      const session = yield* Scope.extend(agent.session({ closeGracePeriod: "200 millis" }), scope)
      yield* session.send("hello")
      yield* session.messages.pipe(Stream.takeUntil(Message.isResult), Stream.runDrain)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Ref.get(log)).toEqual(["stdin ended", "transport stopping"])
    }))

  it.effect("after the result: no interrupt; stdin closes once the CLI reports idle", () =>
    Effect.gen(function*() {
      const idleSent = yield* Deferred.make<void>()
      const eofAfterIdle = yield* Deferred.make<boolean>()
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (m, cli) =>
          Effect.gen(function*() {
            yield* cli.emit(stateFrame("running"))
            yield* FakeCli.echoTurn(m, cli)
            // A late callback after the result still gets its answer: stdin is open until idle.
            const reply = yield* cli.requestRaw({
              subtype: "mcp_message",
              server_name: "x",
              message: { jsonrpc: "2.0", id: 1, method: "ping" }
            })
            expect(reply.subtype).toBe("success")
            yield* cli.emit(stateFrame("idle"))
            yield* Deferred.succeed(idleSent, undefined)
          }),
        onInputEnd: (cli) =>
          Effect.gen(function*() {
            const sent = yield* cli.sent
            const interrupts = sent.filter((f) =>
              f.type === "control_request" && typeof f.request === "object" && f.request !== null &&
              "subtype" in f.request && f.request.subtype === "interrupt"
            )
            yield* Deferred.succeed(eofAfterIdle, (yield* Deferred.isDone(idleSent)) && interrupts.length === 0)
            yield* cli.exit({ exitCode: 0 })
          })
      })
      const messages = yield* ClaudeAgent.query("hi").pipe(Stream.runCollect, Effect.provide(layer))
      expect(Chunk.toArray(messages).some(Message.isResult)).toBe(true)
      expect(yield* Deferred.await(eofAfterIdle)).toBe(true)
    }))
})

describe("AgentSession (fake CLI)", () => {
  it.scoped("multi-turn: receiveResponse stops at each result and keeps what follows", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      yield* session.send("first")
      yield* session.send("second")
      const first = yield* session.receiveResponse.pipe(Stream.runCollect)
      const second = yield* session.receiveResponse.pipe(Stream.runCollect)
      expect(types(first)).toEqual(["system/init", "assistant", "result/success"])
      expect(Message.assistantText(Chunk.toArray(second).find(Message.isAssistant)!)).toBe("echo: second")
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent())))

  it.scoped("control methods send the protocol's requests and decode the replies", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      expect((yield* session.setModel("claude-haiku-4-5")).model).toBe("claude-haiku-4-5")
      expect((yield* session.setPermissionMode("plan")).mode).toBe("plan")
      expect((yield* session.interrupt()).still_queued).toEqual([])
      expect((yield* session.mcpServerStatus()).mcpServers).toEqual([])
      expect((yield* session.getContextUsage()).maxTokens).toBe(200000)
      const rewind = yield* session.rewindFiles("uuid-1", { dryRun: true })
      expect(rewind.canRewind).toBe(false)
      yield* session.setMaxThinkingTokens(1024)
      yield* session.stopTask("task-1")
      yield* session.toggleMcpServer("calc", false)
      const reconnect = yield* session.reconnectMcpServer("calc").pipe(Effect.flip)
      expect(reconnect._tag).toBe("ControlError")
      const init = yield* session.initializationResult
      expect(init.pid).toBe(4242)
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent())))

  it.scoped("sessionId resolves from the first message that carries one", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      const fiber = yield* Effect.fork(session.sessionId)
      yield* session.send("hi")
      expect(yield* Fiber.join(fiber)).toBe("00000000-0000-4000-8000-000000000001")
      expect(Option.isSome(session.pid)).toBe(true)
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent())))

  it.scoped("unknown message types from a newer CLI are delivered, not dropped", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      yield* session.send("hi")
      const messages = yield* session.receiveResponse.pipe(Stream.runCollect)
      const unknown = Chunk.toArray(messages).find((m) => m.type === "unknown")
      expect(unknown !== undefined && "raw" in unknown ? unknown.raw : undefined).toEqual({
        type: "brand_new_type",
        payload: 1
      })
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent({
      onUserMessage: (m, cli) =>
        cli.emit({ type: "brand_new_type", payload: 1 }).pipe(Effect.zipRight(FakeCli.echoTurn(m, cli)))
    }))))

  it.scoped("a message violating its known schema fails with MessageParseError carrying the raw value", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      yield* session.send("hi")
      const error = yield* session.receiveResponse.pipe(Stream.runDrain, Effect.flip)
      expect(error._tag).toBe("MessageParseError")
      if (error._tag === "MessageParseError") {
        expect(error.raw).toEqual({ type: "result", subtype: "success", is_error: "yes" })
      }
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent({
      onUserMessage: (_m, cli) => cli.emit({ type: "result", subtype: "success", is_error: "yes" })
    }))))

  it.scoped("hook_callback and mcp_message without registered callbacks get error answers, not silence", () =>
    Effect.gen(function*() {
      const replies = yield* Deferred.make<
        readonly [FakeCli.ErrorAnswer, Control.Request.Success<typeof Control.McpMessage>]
      >()
      const session = yield* ClaudeAgent.session().pipe(
        Effect.provide(FakeCli.layerClaudeAgent({
          onUserMessage: (m, cli) =>
            Effect.gen(function*() {
              // Answered with an error: a success here fails the test.
              const hook = yield* cli.request(Control.HookCallback, { callback_id: "hook_9", input: {} }).pipe(
                Effect.flip,
                Effect.orDie
              )
              const mcp = yield* cli.request(Control.McpMessage, {
                server_name: "calc",
                message: { jsonrpc: "2.0", id: 7, method: "tools/list" }
              }).pipe(Effect.orDie)
              yield* Deferred.succeed(replies, [hook, mcp])
              yield* FakeCli.echoTurn(m, cli)
            })
        }))
      )
      yield* session.send("hi")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      const [hook, mcp] = yield* Deferred.await(replies)
      expect(hook.error).toContain("hook_9")
      expect(mcp).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 7, error: { code: -32601, message: "SDK MCP server not found: calc" } }
      })
    }))

  it.scoped("stderr is a stream of lines from when it is run, ending when the CLI exits", () =>
    Effect.gen(function*() {
      const subscribed = yield* Deferred.make<void>()
      const session = yield* ClaudeAgent.session().pipe(
        Effect.provide(FakeCli.layerClaudeAgent({
          onUserMessage: (_m, cli) =>
            Effect.gen(function*() {
              // Until the reader has seen a line, it may not have subscribed yet: keep writing.
              while (!(yield* Deferred.isDone(subscribed))) {
                yield* cli.stderr("tick")
                yield* Effect.yieldNow()
              }
              yield* cli.stderr("last words")
              yield* cli.exit({ exitCode: 0 })
            })
        }))
      )
      const lines = yield* session.stderr.pipe(
        Stream.tap(() => Deferred.succeed(subscribed, undefined)),
        Stream.runCollect,
        Effect.fork
      )
      yield* session.send("hi")
      const collected = Chunk.toArray(yield* Fiber.join(lines))
      expect(collected[0]).toBe("tick")
      expect(collected[collected.length - 1]).toBe("last words")
    }))
})

describe("session method arguments are checked before anything is sent (fake CLI)", () => {
  it.effect("an empty model, a negative thinking budget and a bad timeout are OptionsError, and nothing is written", () =>
    Effect.gen(function*() {
      const sent = yield* Deferred.make<ReadonlyArray<FakeCli.JsonObject>>()
      const layer = FakeCli.layerClaudeAgent({
        onInputEnd: (cli) =>
          Effect.flatMap(cli.sent, (frames) => Deferred.succeed(sent, frames)).pipe(
            Effect.zipRight(cli.exit({ exitCode: 0 }))
          )
      })
      const errors = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        const timeout: unknown = "banana"
        return yield* Effect.all([
          Effect.flip(session.setModel("")),
          Effect.flip(session.setMaxThinkingTokens(-5)),
          Effect.flip(session.mcpServerStatus({ timeout: Duration.isDuration(timeout) ? timeout : -1 })),
          Effect.flip(Reflect.apply(session.mcpServerStatus, undefined, [{ timeout }]))
        ])
      })).pipe(Effect.provide(layer))
      expect(errors.map((e) => e._tag === "OptionsError" && e.field)).toEqual([
        "set_model",
        "set_max_thinking_tokens",
        "mcp_status timeout",
        "mcp_status timeout"
      ])
      expect(String(errors[0]?.message)).toContain("model")
      expect(String(errors[1]?.message)).toContain("max_thinking_tokens")
      expect(String(errors[2]?.message)).toContain("timeout")
      expect(String(errors[3]?.message)).toContain("banana")
      const subtypes = (yield* Deferred.await(sent)).filter((f) => f.type === "control_request").map((f) =>
        typeof f.request === "object" && f.request !== null && "subtype" in f.request ? f.request.subtype : undefined
      )
      expect(subtypes).toEqual(["initialize"])
    }))
})

describe("callback failures are logged once, in one short line naming the field (fake CLI)", () => {
  const captureLogs = () => {
    const warnings: Array<string> = []
    const debug: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      const text = [message].flat().map(String).join(" ")
      if (logLevel._tag === "Warning") warnings.push(text)
      if (logLevel._tag === "Debug") debug.push(text)
    })
    return { warnings, debug, layer: Logger.replace(Logger.defaultLogger, logger) }
  }

  it.effect("a hook returning an invalid output, and a canUseTool returning an invalid result", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const invalidOutput: unknown = JSON.parse("{\"decision\":\"nonsense\"}")
      const invalidResult: unknown = JSON.parse("{\"behavior\":\"maybe\"}")
      const answers = yield* Deferred.make<ReadonlyArray<FakeCli.JsonObject>>()
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (_message, cli) =>
          Effect.all([
            cli.requestRaw({
              subtype: "hook_callback",
              callback_id: "hook_0",
              input: {
                hook_event_name: "Stop",
                session_id: "s",
                transcript_path: "/t",
                cwd: "/",
                stop_hook_active: false
              }
            }),
            cli.requestRaw({ subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" } })
          ]).pipe(Effect.flatMap((all) => Deferred.succeed(answers, all)))
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({
          hooks: { Stop: [{ hooks: [() => Effect.succeed(Object.assign({}, invalidOutput))] }] },
          canUseTool: () => Effect.succeed(Object.assign({ behavior: "allow" as const }, invalidResult))
        })
        yield* session.send("go")
        const [hook, permission] = yield* Deferred.await(answers)
        expect(hook).toMatchObject({ subtype: "error" })
        expect(permission).toMatchObject({ subtype: "error" })
      })).pipe(Effect.provide(layer), Effect.provide(logs.layer), Logger.withMinimumLogLevel(LogLevel.Debug))
      expect(logs.warnings).toHaveLength(2)
      const [hookWarning, permissionWarning] = logs.warnings
      expect(hookWarning).toContain("hook_callback failed")
      expect(hookWarning).toContain("Stop hook callback hook_0")
      expect(hookWarning).toContain("decision")
      expect(permissionWarning).toContain("can_use_tool failed")
      expect(permissionWarning).toContain("behavior")
      for (const line of logs.warnings) {
        expect(line.length).toBeLessThanOrEqual(500)
        expect(line).not.toContain("\n")
      }
      // The details are at debug level.
      expect(logs.debug.filter((line) => line.includes("failure in full"))).toHaveLength(2)
    }))
})

describe("user message ids and rewinding (fake CLI)", () => {
  it.scoped("send returns the uuid it wrote; a full frame keeps its own", () =>
    Effect.gen(function*() {
      const written = yield* Deferred.make<ReadonlyArray<FakeCli.JsonObject>>()
      const layer = FakeCli.layerClaudeAgent({
        onInputEnd: (cli) =>
          Effect.flatMap(cli.sent, (all) => Deferred.succeed(written, all)).pipe(Effect.zipRight(cli.exit()))
      })
      const ids = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        const generated = yield* session.send("hello")
        yield* session.receiveResponse.pipe(Stream.runDrain)
        const own = yield* session.send(Message.userMessage("again", { uuid: "0b6f2a53-8d7e-4b1c-9a2e-5f3c1d7e9a10" }))
        yield* session.receiveResponse.pipe(Stream.runDrain)
        return [generated, own]
      })).pipe(Effect.provide(layer))
      expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(ids[1]).toBe("0b6f2a53-8d7e-4b1c-9a2e-5f3c1d7e9a10")
      const users = (yield* Deferred.await(written)).filter((f) => f.type === "user").map((f) => f.uuid)
      expect(users).toEqual(ids)
    }))

  it.scoped("send writes a frame's priority and origin as given, with its uuid", () =>
    Effect.gen(function*() {
      const written = yield* Deferred.make<ReadonlyArray<FakeCli.JsonObject>>()
      const layer = FakeCli.layerClaudeAgent({
        onInputEnd: (cli) =>
          Effect.flatMap(cli.sent, (all) => Deferred.succeed(written, all)).pipe(Effect.zipRight(cli.exit()))
      })
      const id = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        const id = yield* session.send(Message.userMessage("use tabs", { priority: "now", origin: { kind: "human" } }))
        yield* session.receiveResponse.pipe(Stream.runDrain)
        return id
      })).pipe(Effect.provide(layer))
      const user = (yield* Deferred.await(written)).find((f) => f.type === "user")
      expect(user).toMatchObject({ priority: "now", origin: { kind: "human" }, uuid: id })
    }))

  it.scoped("rewindFiles: 'cannot rewind' is data with and without dryRun; the files are restored only after a dry run says they can be", () =>
    Effect.gen(function*() {
      const rewinds = yield* Ref.make<ReadonlyArray<unknown>>([])
      const canRewind = yield* Ref.make(false)
      const layer = FakeCli.layerClaudeAgent({
        answers: [
          FakeCli.answer(
            Control.RewindFiles,
            (request) =>
              Ref.update(rewinds, (all) => [...all, request.dry_run ?? false]).pipe(
                Effect.zipRight(Ref.get(canRewind)),
                Effect.map((can) =>
                  can
                    ? request.dry_run === true ? { canRewind: true, filesChanged: ["/w/a.txt"] } : { canRewind: true }
                    : request.dry_run === true
                    ? { canRewind: false, error: "File rewinding is not enabled." }
                    : FakeCli.controlFailure("File rewinding is not enabled.")
                )
              )
          )
        ]
      })
      yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        const refused = yield* session.rewindFiles("4f1c0000-0000-4000-8000-000000000000")
        expect(refused).toEqual({ canRewind: false, error: "File rewinding is not enabled." })
        expect(yield* Ref.get(rewinds)).toEqual([true])
        yield* Ref.set(canRewind, true)
        const done = yield* session.rewindFiles("4f1c0000-0000-4000-8000-000000000000")
        expect(done.canRewind).toBe(true)
        expect(yield* Ref.get(rewinds)).toEqual([true, true, false])
        const dry = yield* session.rewindFiles("4f1c0000-0000-4000-8000-000000000000", { dryRun: true })
        expect(dry.filesChanged).toEqual(["/w/a.txt"])
        expect(yield* Ref.get(rewinds)).toEqual([true, true, false, true])
      }).pipe(Effect.provide(layer))
    }))
})

// As the CLI 2.1.330 does for a prompt with a uuid: `queued` and `started` before the turn,
// `completed` after its result; and run states for the SDK alone around it.
const lifecycleTurn: FakeCli.Behaviour["onUserMessage"] = (message, cli) =>
  Effect.gen(function*() {
    const lifecycle = (state: string) =>
      cli.emit({ type: "command_lifecycle", command_uuid: String(message.uuid), state, session_id: "s", uuid: "u" })
    const runState = (state: string) =>
      cli.emit({
        type: "system",
        subtype: "session_state_changed",
        state,
        sdk_host_only: true,
        session_id: "s",
        uuid: "u"
      })
    yield* lifecycle("queued")
    yield* runState("running")
    yield* lifecycle("started")
    yield* FakeCli.echoTurn(message, cli)
    yield* lifecycle("completed")
    yield* runState("idle")
  })

describe("command_lifecycle messages (fake CLI)", () => {
  const twoTurns = (options: { readonly includeCommandLifecycle?: boolean }) =>
    Effect.scoped(Effect.gen(function*() {
      const session = yield* ClaudeAgent.session(options)
      const first = yield* session.send("one")
      const turn1 = yield* Stream.runCollect(session.receiveResponse)
      const second = yield* session.send("two")
      const turn2 = yield* Stream.runCollect(session.receiveResponse)
      return { ids: [first, second], turns: [turn1, turn2] }
    })).pipe(Effect.provide(FakeCli.layerClaudeAgent({ onUserMessage: lifecycleTurn })))

  const lifecycles = (messages: Chunk.Chunk<Message.Message>) =>
    Chunk.toArray(messages).flatMap((m) => (m.type === "command_lifecycle" ? [`${m.command_uuid}:${m.state}`] : []))

  it.effect("are left out by default, as the official SDK delivers none, and so are run states for the SDK alone; send still returns the uuid", () =>
    Effect.gen(function*() {
      const { ids, turns } = yield* twoTurns({})
      for (const turn of turns) expect(types(turn)).toEqual(["system/init", "assistant", "result/success"])
      expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(ids[1]).not.toBe(ids[0])
    }))

  it.effect("are delivered in order with includeCommandLifecycle: true, naming the uuid send returned", () =>
    Effect.gen(function*() {
      const { ids, turns } = yield* twoTurns({ includeCommandLifecycle: true })
      const [turn1 = Chunk.empty(), turn2 = Chunk.empty()] = turns
      expect(types(turn1)).toEqual([
        "command_lifecycle",
        "command_lifecycle",
        "system/init",
        "assistant",
        "result/success"
      ])
      expect(lifecycles(turn1)).toEqual([`${ids[0]}:queued`, `${ids[0]}:started`])
      // The first prompt's `completed` follows its result, so the next turn's stream has it first.
      expect(types(turn2)).toEqual([
        "command_lifecycle",
        "command_lifecycle",
        "command_lifecycle",
        "system/init",
        "assistant",
        "result/success"
      ])
      expect(lifecycles(turn2)).toEqual([`${ids[0]}:completed`, `${ids[1]}:queued`, `${ids[1]}:started`])
    }))

  it.effect("a query's stream of prompts has none by default and every one with the option", () =>
    Effect.gen(function*() {
      const run = (options: { readonly includeCommandLifecycle?: boolean }) =>
        ClaudeAgent.query(Stream.make("one", "two"), options).pipe(
          Stream.runCollect,
          Effect.provide(FakeCli.layerClaudeAgent({ onUserMessage: lifecycleTurn }))
        )
      expect(lifecycles(yield* run({}))).toEqual([])
      expect(lifecycles(yield* run({ includeCommandLifecycle: true })).map((s) => s.split(":")[1])).toEqual([
        "queued",
        "started",
        "completed",
        "queued",
        "started",
        "completed"
      ])
    }))

  it.effect("includeSessionState delivers the run states the CLI writes for the SDK alone", () =>
    Effect.gen(function*() {
      const messages = yield* ClaudeAgent.query("hi", { includeSessionState: true }).pipe(
        Stream.runCollect,
        Effect.provide(FakeCli.layerClaudeAgent({ onUserMessage: lifecycleTurn }))
      )
      // The query ends at the result: `idle` comes after it.
      expect(types(messages)).toEqual(["system/session_state_changed", "system/init", "assistant", "result/success"])
    }))

  it.effect("the option is validated like the others", () =>
    Effect.gen(function*() {
      const error = yield* ClaudeAgent.query("hi", { includeCommandLifecycle: JSON.parse("\"yes\"") }).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(FakeCli.layerClaudeAgent())
      )
      expect(error._tag).toBe("OptionsError")
      if (error._tag === "OptionsError") expect(error.field).toBe("includeCommandLifecycle")
    }))
})

describe("closing a session under a reader (fake CLI)", () => {
  it.effect("a consumer still reading messages when the session's scope closes ends with a typed error, never a hang", () =>
    Effect.gen(function*() {
      // A CLI that ignores the end of its input: only the stop sequence ends it.
      const layer = FakeCli.layerClaudeAgent({ onInputEnd: () => Effect.never })
      const scope = yield* Scope.make()
      const session = yield* ClaudeAgent.session().pipe(Scope.extend(scope), Effect.provide(layer))
      const reading = yield* session.messages.pipe(Stream.runDrain, Effect.flip, Effect.fork)
      yield* Scope.close(scope, Exit.void)
      const error = yield* Fiber.join(reading)
      // The stop sequence's SIGTERM ends the fake CLI (ProcessError), or the channel closes first.
      expect(["ProcessError", "SessionClosedError"]).toContain(error._tag)
    }))
})
