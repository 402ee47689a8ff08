/**
 * An in-memory Claude Code CLI: a `Transport` test double with no process, no model and no
 * network. It answers the SDK's control requests, plays scripted turns for each user message, and
 * can itself send `can_use_tool` / `hook_callback` / `mcp_message` requests and check the answers.
 * Deterministic, and it runs under `TestClock`.
 *
 * Control requests are typed by the library's own `Control` descriptors: the fake answers each
 * SDK→CLI request from a table of `answer` entries (defaults that answer like the CLI 2.1.330,
 * overridden by a test's own), and `cli.request(descriptor, payload)` sends CLI→SDK requests.
 * Frames cross it as JSON text (encoded and parsed again), so a test catches anything the real
 * CLI could not receive.
 *
 * @since 0.1.0
 */
import {
  Context,
  Deferred,
  Effect,
  Either,
  FiberSet,
  Layer,
  Option,
  Predicate,
  Queue,
  Schema,
  type Scope
} from "effect"
import * as ClaudeAgent from "../ClaudeAgent.js"
import * as Defaults from "../internal/defaults.js"
import type * as Control from "../schema/Control.js"
import * as MemoryTransport from "./internal/memoryTransport.js"
import { Transport, type TransportShape } from "../services/Transport.js"
import * as CliAnswers from "./internal/cliAnswers.js"

/**
 * A JSON object as the fake CLI reads and writes it.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 * const frame: FakeCli.JsonObject = { type: "assistant" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * An error answer to a control request, returned by an `answer` entry or by `onControlRequest`.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 * const refused: FakeCli.ControlFailure = FakeCli.controlFailure("busy", "reload_plugins_busy")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ControlFailure {
  readonly _tag: "ControlFailure"
  readonly error: string
  readonly errorCode?: string | undefined
}

/**
 * Builds an error answer (`{"subtype":"error","error":…,"error_code":…}` on the wire).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const behaviour: FakeCli.Behaviour = {
 *   answers: [FakeCli.answer(Control.SetModel, (payload) => Effect.succeed(FakeCli.controlFailure(`no ${payload.model}`)))]
 * }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const controlFailure: (error: string, errorCode?: string) => ControlFailure = CliAnswers.controlFailure

/**
 * The error answer the SDK gave to a request made with `cli.request`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const refusal = Effect.gen(function*() {
 *   const cli = yield* FakeCli.FakeCli
 *   const error = yield* Effect.flip(cli.request(Control.HookCallback, { callback_id: "hook_9", input: {} }))
 *   return error.error // "No hook callback found for ID: hook_9"
 * })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ErrorAnswer extends Schema.TaggedError<ErrorAnswer>()("ErrorAnswer", {
  subtype: Schema.String,
  requestId: Schema.String,
  error: Schema.String,
  errorCode: Schema.optional(Schema.String)
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `${this.subtype} (${this.requestId}) answered with an error: ${this.error}`
  }
}

/**
 * Builders of frames shaped like the real CLI 2.1.330's, each with its own `uuid` counter.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const turn = (frames: FakeCli.Frames, text: string) => [frames.assistantText(text), frames.result(text)]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Frames {
  /** `system/init`, as the CLI writes it at the start of each turn. */
  readonly systemInit: (options?: { readonly model?: string; readonly permissionMode?: string }) => JsonObject
  /** An assistant message with one text block. */
  readonly assistantText: (text: string, options?: { readonly model?: string }) => JsonObject
  /** A `result`: `success` by default; another `subtype` carries `text` in `errors`. */
  readonly result: (text: string, options?: { readonly isError?: boolean; readonly subtype?: string }) => JsonObject
}

/**
 * The CLI's side of the conversation, handed to behaviours and to tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeCliHandle {
  /** Writes a frame to the SDK (the CLI's stdout). */
  readonly emit: (frame: JsonObject) => Effect.Effect<void>
  /**
   * Sends a CLI→SDK `control_request` typed by its descriptor and waits for the SDK's answer:
   * the success payload decoded with the descriptor's success Schema, or an `ErrorAnswer`.
   * `requestId` defaults to `cli-req-<n>`.
   */
  readonly request: <R extends Control.Request.Any>(
    descriptor: R,
    payload: Control.Request.Payload<R>,
    options?: { readonly requestId?: string }
  ) => Effect.Effect<Control.Request.Success<R>, ErrorAnswer>
  /**
   * Sends a `control_request` as given, untyped, and waits for the SDK's `control_response`: the
   * whole `response` object (`{subtype, request_id, response?}` or `{subtype:"error", error}`).
   * For subtypes with no descriptor and for checking the exact envelope.
   */
  readonly requestRaw: (
    request: { readonly subtype: string; readonly [key: string]: unknown },
    requestId?: string
  ) => Effect.Effect<JsonObject>
  /** Sends `control_cancel_request` for a request this CLI made. */
  readonly cancel: (requestId: string) => Effect.Effect<void>
  /** Writes a line to stderr. */
  readonly stderr: (line: string) => Effect.Effect<void>
  /** Ends stdout and reports this exit status. */
  readonly exit: (status?: { readonly exitCode?: number; readonly signal?: string }) => Effect.Effect<void>
  /** Writes a raw line to stdout (for noise or malformed-output tests). */
  readonly emitRaw: (line: string) => Effect.Effect<void>
  /** Every frame the SDK has written so far, parsed. */
  readonly sent: Effect.Effect<ReadonlyArray<JsonObject>>
  /** Waits for the next frame the SDK writes that satisfies `predicate` (including earlier ones not yet awaited). */
  readonly awaitSent: (predicate: (frame: JsonObject) => boolean) => Effect.Effect<JsonObject>
  /** Completes when the SDK has closed the CLI's input. */
  readonly inputEnded: Effect.Effect<void>
  /** The session id the fake reports. */
  readonly sessionId: string
  /** Frame builders whose `uuid`s count for this fake alone. */
  readonly frames: Frames
}

/**
 * Marks an `answer` entry.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 * const isAnswer = (u: object) => FakeCli.AnswerTypeId in u
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const AnswerTypeId: typeof CliAnswers.AnswerTypeId = CliAnswers.AnswerTypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type AnswerTypeId = typeof AnswerTypeId

/**
 * How the fake answers one SDK→CLI control request, made by `answer`. The fake picks the entry by
 * the descriptor's `subtype` (the wire carries nothing else); a test's entry replaces the default
 * one for that subtype.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const busy: FakeCli.Answer = FakeCli.answer(Control.ReloadPlugins, () =>
 *   Effect.succeed(FakeCli.controlFailure("session busy", "reload_plugins_busy")))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly [AnswerTypeId]: AnswerTypeId
  readonly descriptor: Control.Request.Any
  /** @internal */
  readonly run: (fields: JsonObject, context: CliAnswers.AnswerContext) => Effect.Effect<CliAnswers.Reply>
}

/**
 * An entry of the fake's answer table: answers the requests of `descriptor` with `handler`. The
 * handler gets the payload decoded with the descriptor's payload Schema, the fake, and the default
 * answer to the same request (an effect: run it to answer as the fake would, e.g. after recording
 * the payload); its answer is encoded with the descriptor's success Schema. Return
 * `controlFailure(…)` for an error answer. Each request is answered in its own fiber.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const behaviour: FakeCli.Behaviour = {
 *   answers: [
 *     FakeCli.answer(Control.McpStatus, () =>
 *       Effect.succeed({ mcpServers: [{ name: "github", status: "connected" }] })),
 *     FakeCli.answer(Control.SetModel, (payload, _cli, byDefault) =>
 *       payload.model === "opus" ? Effect.succeed(FakeCli.controlFailure("unknown model")) : byDefault)
 *   ]
 * }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const answer = <R extends Control.Request.Any>(
  descriptor: R,
  handler: (
    payload: Control.Request.Payload<R>,
    cli: FakeCliHandle,
    byDefault: Effect.Effect<Control.Request.Success<R> | ControlFailure>
  ) => Effect.Effect<Control.Request.Success<R> | ControlFailure>
): Answer => {
  const decodeSuccess = Schema.decodeUnknown(descriptor.success, CliAnswers.decodeOptions)
  const typedDefault = (reply: CliAnswers.Reply): Effect.Effect<Control.Request.Success<R> | ControlFailure> =>
    Either.isLeft(reply) ? Effect.succeed(reply.left) : Effect.orDie(decodeSuccess(reply.right))
  return CliAnswers.typed(
    descriptor,
    (payload, context) => handler(payload, context.cli, Effect.flatMap(context.byDefault, typedDefault))
  )
}

/**
 * How the fake CLI reacts. Every field is optional; the defaults behave like a healthy CLI whose
 * model echoes the prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Behaviour {
  /** Runs for each user message, one at a time, in order. Default: `echoTurn`. */
  readonly onUserMessage?: (message: JsonObject, cli: FakeCliHandle) => Effect.Effect<void>
  /**
   * Answers SDK→CLI control requests, typed: each entry replaces the default answer for its
   * descriptor's subtype (the last entry for a subtype wins). See `answer`.
   */
  readonly answers?: ReadonlyArray<Answer>
  /**
   * The raw escape hatch, consulted before `answers`: the request as sent (untyped), answered with
   * any value as the success payload (`undefined` for none) or a `controlFailure`;
   * `Option.none()` falls through to the answer table. For answers no descriptor admits (malformed
   * replies), requests that are never answered, and observing every request. Runs in its own fiber.
   */
  readonly onControlRequest?: (
    request: { readonly subtype: string; readonly [key: string]: unknown },
    cli: FakeCliHandle
  ) => Effect.Effect<Option.Option<unknown>>
  /** Runs when the SDK closes stdin, after queued user messages. Default: exit with 0 (1 after an error result). */
  readonly onInputEnd?: (cli: FakeCliHandle) => Effect.Effect<void>
  /** The `pid` reported in the initialize answer. Default 4242. */
  readonly pid?: number
}

// ---- frames -------------------------------------------------------------------------------------

const SESSION_ID = "00000000-0000-4000-8000-000000000001"

/**
 * Frame builders with a `uuid` counter of their own (ids `00000000-0000-4000-8000-<n>` from 1).
 * Each fake has such builders as `cli.frames`.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const frames = FakeCli.makeFrames()
 * const first = frames.systemInit() // uuid …000000000001
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFrames = (): Frames => {
  let counter = 0
  const uuid = (): string => {
    counter++
    return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`
  }
  return {
    systemInit: (options = {}) => ({
      type: "system",
      subtype: "init",
      cwd: "/fake",
      session_id: SESSION_ID,
      tools: ["Bash", "Read", "Write"],
      mcp_servers: [],
      model: options.model ?? "claude-fake-1",
      permissionMode: options.permissionMode ?? "default",
      slash_commands: [],
      apiKeySource: "ANTHROPIC_API_KEY",
      claude_code_version: "2.1.330",
      output_style: "default",
      agents: [],
      skills: [],
      plugins: [],
      uuid: uuid()
    }),
    assistantText: (text, options = {}) => ({
      type: "assistant",
      message: {
        id: `msg_${uuid()}`,
        type: "message",
        role: "assistant",
        model: options.model ?? "claude-fake-1",
        content: [{ type: "text", text }],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 }
      },
      parent_tool_use_id: null,
      session_id: SESSION_ID,
      uuid: uuid()
    }),
    result: (text, options = {}) => ({
      type: "result",
      subtype: options.subtype ?? "success",
      is_error: options.isError ?? false,
      duration_ms: 12,
      duration_api_ms: 10,
      num_turns: 1,
      ...(options.subtype === undefined || options.subtype === "success" ? { result: text } : { errors: [text] }),
      stop_reason: "end_turn",
      session_id: SESSION_ID,
      total_cost_usd: 0.001,
      usage: { input_tokens: 10, output_tokens: 5 },
      modelUsage: {},
      permission_denials: [],
      terminal_reason: options.isError === true ? "api_error" : "completed",
      uuid: uuid()
    })
  }
}

/**
 * Frame builders that match the real CLI 2.1.330's shapes, for use outside a fake (their `uuid`
 * counter is shared by every user of this value; a fake's own `cli.frames` count for it alone).
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const frame = FakeCli.frames.assistantText("hello")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const frames: Frames = makeFrames()

/**
 * The text of a user message frame (string content or its text blocks).
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * FakeCli.userText({ type: "user", message: { role: "user", content: "hi" } }) // "hi"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const userText = (frame: JsonObject): string => {
  const message = frame.message
  if (!Predicate.isRecord(message)) return ""
  const content = message.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((b: unknown) => (Predicate.isRecord(b) && typeof b.text === "string" ? b.text : "")).join("")
}

/**
 * The default turn: `system/init`, one assistant text block `echo: <prompt>`, then a success `result`.
 *
 * @example
 * ```ts
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const behaviour: FakeCli.Behaviour = { onUserMessage: FakeCli.echoTurn }
 * ```
 *
 * @since 0.1.0
 * @category behaviours
 */
export const echoTurn = (message: JsonObject, cli: FakeCliHandle): Effect.Effect<void> => {
  const reply = `echo: ${userText(message)}`
  return Effect.forEach(
    [cli.frames.systemInit(), cli.frames.assistantText(reply), cli.frames.result(reply)],
    cli.emit,
    { discard: true }
  )
}

/**
 * The handle of the fake CLI behind a `FakeCli.layer`, for tests that drive the CLI side.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Control } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const program = Effect.gen(function* () {
 *   const cli = yield* FakeCli.FakeCli
 *   const decision = yield* cli.request(Control.CanUseTool, { tool_name: "Bash", input: { command: "ls" } })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeCli extends Context.Tag("effect-claude-agent/testing/FakeCli")<FakeCli, FakeCliHandle>() {}

// The CLI side of CLI→SDK requests: ids, the waiters for their answers, the typed form.
const makeRequester = (emit: (frame: JsonObject) => Effect.Effect<void>) => {
  const awaiting = new Map<string, Deferred.Deferred<JsonObject>>()
  let counter = 0
  const requestRaw: FakeCliHandle["requestRaw"] = (request, requestId) =>
    Effect.gen(function*() {
      const id = requestId ?? `cli-req-${++counter}`
      const waiter = yield* Deferred.make<JsonObject>()
      awaiting.set(id, waiter)
      yield* emit({ type: "control_request", request_id: id, request })
      return yield* Deferred.await(waiter)
    })
  const request: FakeCliHandle["request"] = (descriptor, payload, options) =>
    Effect.gen(function*() {
      const fields = yield* Effect.orDie(Schema.encode(descriptor.payload)(payload))
      const response = yield* requestRaw({ ...fields, subtype: descriptor.subtype }, options?.requestId)
      if (response.subtype === "error") {
        return yield* new ErrorAnswer({
          subtype: descriptor.subtype,
          requestId: String(response.request_id),
          error: String(response.error),
          ...(typeof response.error_code === "string" ? { errorCode: response.error_code } : {})
        })
      }
      return yield* Effect.orDie(Schema.decodeUnknown(descriptor.success, CliAnswers.decodeOptions)(response.response))
    })
  const resolve = (response: unknown): Effect.Effect<void> => {
    if (!Predicate.isRecord(response) || typeof response.request_id !== "string") return Effect.void
    const waiter = awaiting.get(response.request_id)
    if (waiter === undefined) return Effect.void
    awaiting.delete(response.request_id)
    return Deferred.succeed(waiter, response)
  }
  return { request, requestRaw, resolve }
}

/**
 * Builds a fake CLI in the current scope: the `Transport` to give the SDK and the handle that
 * plays the CLI.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const { transport, cli } = yield* FakeCli.make()
 *   yield* transport.send({ type: "user", message: { role: "user", content: "hi" } })
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  behaviour: Behaviour = {}
): Effect.Effect<{ readonly transport: TransportShape; readonly cli: FakeCliHandle }, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Appended in place: copying the log per frame made a long session's frames cost O(n) each.
    const sentLog: Array<JsonObject> = []
    const sentQueue = yield* Queue.unbounded<JsonObject>()
    const userQueue = yield* Queue.unbounded<JsonObject | "end">()
    const inputEnded = yield* Deferred.make<void>()
    const fibers = yield* FiberSet.make()
    let lastResultWasError = false
    const pid = behaviour.pid ?? 4242
    const state: CliAnswers.DefaultState = { mcpServers: [], claimed: false }
    const table = behaviour.answers === undefined || behaviour.answers.length === 0
      ? CliAnswers.defaultTable
      : CliAnswers.tableOf([...CliAnswers.defaultAnswers, ...behaviour.answers])

    const memory = yield* MemoryTransport.make({
      onSend: (frame) => (Predicate.isRecord(frame) ? receive(frame) : Effect.void),
      onEndInput: Queue.offer(userQueue, "end").pipe(
        Effect.zipRight(Deferred.succeed(inputEnded, undefined)),
        Effect.asVoid
      ),
      maxBufferSize: Defaults.maxBufferSize,
      pid: Option.some(pid)
    })

    const emit = (frame: JsonObject): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (frame.type === "result") lastResultWasError = frame.is_error === true
        return memory.writeFrame(frame)
      })

    const exit = (status: { readonly exitCode?: number; readonly signal?: string } = {}) =>
      memory.exit({
        exitCode: status.signal !== undefined ? undefined : (status.exitCode ?? 0),
        signal: status.signal
      })

    const requester = makeRequester(emit)

    const answerFromTable = (request: JsonObject & { readonly subtype: string }): Effect.Effect<CliAnswers.Reply> => {
      const { subtype, ...fields } = request
      const run = (answers: ReadonlyMap<string, Answer>): Effect.Effect<CliAnswers.Reply> => {
        const found = answers.get(subtype)
        return found === undefined
          ? CliAnswers.unsupported(subtype)
          : found.run(fields, { cli, pid, state, byDefault: Effect.suspend(() => run(CliAnswers.defaultTable)) })
      }
      return run(table)
    }

    const answerControl = (requestId: string, request: JsonObject & { readonly subtype: string }) =>
      Effect.gen(function*() {
        const custom = behaviour.onControlRequest !== undefined
          ? yield* behaviour.onControlRequest(request, cli)
          : Option.none()
        const reply: CliAnswers.Reply = Option.isSome(custom)
          ? CliAnswers.isControlFailure(custom.value) ? Either.left(custom.value) : Either.right(custom.value)
          : yield* answerFromTable(request)
        yield* emit(CliAnswers.replyFrame(requestId, reply))
      })

    const receive = (frame: JsonObject): Effect.Effect<void> =>
      Effect.suspend(() => {
        sentLog.push(frame)
        const logged = Queue.offer(sentQueue, frame)
        switch (frame.type) {
          case "user":
            return Effect.zipRight(logged, Queue.offer(userQueue, frame))
          case "control_request": {
            const request = frame.request
            return typeof frame.request_id === "string" && Predicate.isRecord(request) &&
                typeof request.subtype === "string"
              ? Effect.zipRight(
                logged,
                FiberSet.run(fibers, answerControl(frame.request_id, { ...request, subtype: request.subtype }))
              )
              : logged
          }
          case "control_response":
            return Effect.zipRight(logged, requester.resolve(frame.response))
          default:
            return logged
        }
      }).pipe(Effect.asVoid)

    const cli: FakeCliHandle = {
      emit,
      emitRaw: memory.writeLine,
      request: requester.request,
      requestRaw: requester.requestRaw,
      cancel: (requestId) => emit({ type: "control_cancel_request", request_id: requestId }),
      stderr: memory.writeStderr,
      exit,
      sent: Effect.sync(() => sentLog.slice()),
      awaitSent: (predicate) =>
        Effect.gen(function*() {
          const earlier = sentLog.find(predicate)
          if (earlier !== undefined) return earlier
          while (true) {
            const next = yield* Queue.take(sentQueue)
            if (predicate(next)) return next
          }
        }),
      inputEnded: Deferred.await(inputEnded),
      sessionId: SESSION_ID,
      frames: makeFrames()
    }

    // The CLI's main loop: user messages one at a time, then the end of input.
    const onUser = behaviour.onUserMessage ?? echoTurn
    const mainLoop: Effect.Effect<void> = Effect.gen(function*() {
      while (true) {
        const next = yield* Queue.take(userQueue)
        if (next === "end") {
          if (behaviour.onInputEnd !== undefined) yield* behaviour.onInputEnd(cli)
          else yield* exit({ exitCode: lastResultWasError ? 1 : 0 })
          return
        }
        yield* onUser(next, cli)
      }
    })
    yield* FiberSet.run(fibers, mainLoop)

    return { transport: memory.transport, cli }
  })

/**
 * A layer providing `Transport` (the fake) and `FakeCli` (its handle).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { AgentSession, ControlChannel, HookRegistry, McpBridge } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * // A session's services over the fake CLI, built by hand (`FakeCli.layerClaudeAgent` does this per session).
 * const services = Layer.mergeAll(HookRegistry.HookRegistry.layerEmpty, McpBridge.McpBridge.layerEmpty).pipe(
 *   Layer.provideMerge(ControlChannel.ControlChannel.layer()),
 *   Layer.provideMerge(FakeCli.layer())
 * )
 * const program = Effect.scoped(AgentSession.make()).pipe(Effect.provide(services))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (behaviour: Behaviour = {}): Layer.Layer<Transport | FakeCli> =>
  Layer.scopedContext(
    Effect.map(make(behaviour), ({ cli, transport }) =>
      Context.make(Transport, transport).pipe(Context.add(FakeCli, cli)))
  )

/**
 * `ClaudeAgent` backed by the fake CLI: every session gets a fresh `FakeCli` with the given
 * behaviour (no process, no model, no network; runs under `TestClock`).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const test = ClaudeAgent.query("hi").pipe(
 *   Stream.runCollect,
 *   Effect.provide(FakeCli.layerClaudeAgent())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClaudeAgent = (behaviour: Behaviour = {}): Layer.Layer<ClaudeAgent.ClaudeAgent> =>
  Layer.succeed(ClaudeAgent.ClaudeAgent, ClaudeAgent.make({ transport: layer(behaviour) }))
