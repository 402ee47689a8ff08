// The relay when things go wrong: the relay killed mid-turn, a host that goes away or falls
// silent, a line over the limit, a session the relay does not allow. The relay runs in its own
// process (effect-claude-agent-relay), the CLI is the real one, the model ScriptedModel.
import { NodeContext, NodeSocket } from "@effect/platform-node"
import * as Socket from "@effect/platform/Socket"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Either, Exit, Option, Stream } from "effect"
import * as Launch from "../../src/internal/cli/launch.js"
import * as Frames from "../../src/internal/relay/frames.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { isAlive } from "../support/processes.js"
import { goneWithin, relayAgent, startRelay, token } from "./relaySupport.js"

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

// A host written against the wire protocol directly: it says hello, waits for `started`, and then
// does nothing at all (no pongs, no input) until its scope closes the connection.
const rawHost = (url: string, options: { readonly env: Record<string, string>; readonly cwd: string }) =>
  Effect.gen(function*() {
    const socket = yield* Socket.makeWebSocket(url, { closeCodeIsError: () => true })
    const write = yield* socket.writer
    const started = yield* Deferred.make<number>()
    const closed = yield* Deferred.make<unknown>()
    yield* socket.runRaw((data) => {
      if (typeof data !== "string") return
      const frame = Frames.parseControl(data)
      if (frame._tag === "Right" && frame.right.type === "started") {
        Deferred.unsafeDone(started, Exit.succeed(frame.right.pid))
      }
    }, {
      onOpen: Effect.orDie(write(Frames.encodeControl({
        type: "hello",
        version: Frames.version,
        token,
        args: Launch.baseArgs,
        cwd: options.cwd,
        env: options.env
      })))
    }).pipe(
      Effect.exit,
      Effect.flatMap((exit) => Deferred.succeed(closed, Exit.isFailure(exit) ? Cause.squash(exit.cause) : "clean")),
      Effect.forkScoped
    )
    return { pid: yield* Deferred.await(started), closed: Deferred.await(closed) }
  }).pipe(Effect.provide(NodeSocket.layerWebSocketConstructor))

describe("e2e: relay faults (effect-claude-agent-relay in its own process)", () => {
  // The host's view of a relay that dies while the CLI is answering: the turn fails, typed.
  const killedMidTurn = (signal: NodeJS.Signals, reply: string) =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText(reply, { chunkSize: 3, delayMs: 25 }), times: Infinity }
      ])
      const options = yield* model.options()
      const outcome = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* relayAgent(relay.url).session({ ...options, includePartialMessages: true })
        const pid = Option.getOrThrow(session.pid)
        yield* session.send("Write a long poem.")
        const streaming = yield* Deferred.make<void>()
        const turn = yield* session.receiveResponse.pipe(
          Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
          Stream.filter(Message.isResult),
          Stream.runLast,
          Effect.exit,
          Effect.fork
        )
        yield* Deferred.await(streaming)
        relay.child.kill(signal)
        return { pid, exit: yield* turn.await.pipe(Effect.flatten) }
      }))
      expect(failureOf(outcome.exit)).toMatchObject({
        _tag: "CLIConnectionError",
        reason: "ReadFailed",
        description: expect.stringContaining("relay")
      })
      return outcome.pid
    })

  it.scopedLive("the relay stopped mid-turn (SIGTERM): a typed error on the host; the relay stops its CLI", () =>
    Effect.gen(function*() {
      const pid = yield* killedMidTurn("SIGTERM", "la ".repeat(400))
      // The relay's stop sequence: stdin closed, 5 s, SIGTERM to the group.
      expect(yield* goneWithin(pid, "20 seconds")).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("the relay killed mid-turn (SIGKILL): a typed error on the host; the CLI, its pipes gone, exits", () =>
    Effect.gen(function*() {
      const pid = yield* killedMidTurn("SIGKILL", "la ".repeat(150))
      // Nothing is left to signal it: the CLI sees its stdin end and exits once its turn is over.
      expect(yield* goneWithin(pid, "45 seconds")).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a relay that stops answering (SIGSTOP) fails the host's turn within the heartbeat timeout", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.slowText("la ".repeat(400), { chunkSize: 3, delayMs: 25 }), times: Infinity }
      ])
      const options = yield* model.options()
      const outcome = yield* Effect.scoped(Effect.gen(function*() {
        const agent = relayAgent(relay.url, { heartbeatInterval: "200 millis", heartbeatTimeout: "1 second" })
        const session = yield* agent.session({ ...options, includePartialMessages: true })
        yield* session.send("Write a long poem.")
        const streaming = yield* Deferred.make<void>()
        const turn = yield* session.receiveResponse.pipe(
          Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
          Stream.runDrain,
          Effect.exit,
          Effect.fork
        )
        yield* Deferred.await(streaming)
        relay.child.kill("SIGSTOP")
        const exit = yield* turn.await.pipe(
          Effect.flatten,
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "the host did not notice" })
        )
        return { pid: Option.getOrThrow(session.pid), exit }
      })).pipe(Effect.ensuring(Effect.sync(() => relay.child.kill("SIGCONT"))))
      expect(failureOf(outcome.exit)).toMatchObject({
        _tag: "CLIConnectionError",
        reason: "ReadFailed",
        description: expect.stringContaining("no message for 1000 ms")
      })
      // Woken up, the relay finds the connection gone and stops the CLI.
      expect(yield* goneWithin(outcome.pid)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a host that goes away: the relay stops its CLI", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("unused"), times: Infinity }])
      const options = yield* model.options()
      const pid = yield* Effect.scoped(Effect.map(rawHost(relay.url, options), (host) => host.pid))
      expect(yield* goneWithin(pid)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a host that falls silent is dropped after the heartbeat timeout, and its CLI stopped", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay({ CLAUDE_RELAY_HEARTBEAT: "300 millis" })
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("unused"), times: Infinity }])
      const options = yield* model.options()
      const host = yield* rawHost(relay.url, options)
      expect(isAlive(host.pid)).toBe(true)
      // Three intervals without a word from the host: the relay closes with its timeout code.
      const closed = yield* host.closed.pipe(
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "still open" })
      )
      expect(closed).toMatchObject({ reason: "Close", code: Frames.CloseCode.timeout })
      expect(yield* goneWithin(host.pid)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a connection that sends no hello is closed after the hello timeout; nothing is started", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay({ CLAUDE_RELAY_HELLO_TIMEOUT: "300 millis" })
      const socket = yield* Socket.makeWebSocket(relay.url, { closeCodeIsError: () => true })
      const received: Array<string> = []
      const closed = yield* socket.runRaw((data) => {
        if (typeof data === "string") received.push(data)
      }).pipe(
        Effect.flip,
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "still open" })
      )
      expect(closed).toMatchObject({ reason: "Close", code: Frames.CloseCode.timeout })
      expect(received.map((text) => Frames.parseControl(text))).toEqual([
        Either.right({ type: "error", code: "timeout", message: "no hello in time" })
      ])
    }).pipe(Effect.provide([NodeContext.layer, NodeSocket.layerWebSocketConstructor])))

  it.scopedLive("a 2 MB line fails the session with CLIJSONDecodeError, as it does locally", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("x".repeat(2 * 1024 * 1024)) }])
      const options = yield* model.options()
      const exit = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* relayAgent(relay.url).session(options)
        yield* session.send("Say a lot.")
        return yield* session.receiveResponse.pipe(Stream.runDrain)
      })).pipe(Effect.exit)
      const error = failureOf(exit)
      const decode = typeof error === "object" && error !== null && "cause" in error && error.cause !== undefined
        ? error.cause
        : error
      expect(decode).toMatchObject({ _tag: "CLIJSONDecodeError", reason: "LineTooLong" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a working directory outside the allowed roots, or an environment key not allowed, is refused", () =>
    Effect.gen(function*() {
      const relay = yield* startRelay()
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("never"), times: Infinity }])
      const options = yield* model.options()
      const refused = (description: string) => ({
        _tag: "CLIConnectionError",
        reason: "SpawnFailed",
        description: expect.stringContaining(description)
      })
      const outside = yield* Effect.scoped(relayAgent(relay.url).session({ ...options, cwd: "/" })).pipe(Effect.exit)
      expect(failureOf(outside)).toMatchObject(refused("not within the relay's allowed roots"))
      const escape = yield* Effect.scoped(relayAgent(relay.url).session({ ...options, cwd: `${options.cwd}/../../..` }))
        .pipe(Effect.exit)
      expect(failureOf(escape)).toMatchObject(refused("not within the relay's allowed roots"))
      const env = yield* Effect.scoped(
        relayAgent(relay.url).session({ ...options, env: { ...options.env, LD_PRELOAD: "/tmp/x.so" } })
      ).pipe(Effect.exit)
      expect(failureOf(env)).toMatchObject(refused("LD_PRELOAD"))
      expect(yield* model.requests).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
