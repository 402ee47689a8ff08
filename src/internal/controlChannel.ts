/**
 * The control channel's implementation. See `services/ControlChannel.ts` for the contract.
 *
 * @internal
 */
import {
  Cause,
  Chunk,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberMap,
  Mailbox,
  Option,
  Predicate,
  Stream,
  SubscriptionRef
} from "effect"
import {
  CLIConnectionError,
  ControlError,
  ProcessError,
  type SdkError,
  TimeoutException
} from "../SdkError.js"
import type {
  RunState,
  ControlChannelConfig,
  ControlChannelShape,
  InboundHandler,
  RequestOptions
} from "../services/ControlChannel.js"
import { Transport } from "../services/Transport.js"

const DEFAULT_TIMEOUT = Duration.seconds(60)
const DEFAULT_BUFFER = 4096
/** How long to wait for the exit status once stdout has closed. */
const EXIT_WAIT = Duration.seconds(10)

interface Pending {
  readonly subtype: string
  readonly deferred: Deferred.Deferred<unknown, SdkError>
}

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const errorText = (e: unknown): string => {
  if (Predicate.hasProperty(e, "message") && typeof e.message === "string" && e.message.length > 0) return e.message
  if (typeof e === "string") return e
  try {
    return JSON.stringify(e) ?? String(e)
  } catch {
    return String(e)
  }
}

let idCounter = 0
const nextRequestId = (): string => `req_${++idCounter}_${Math.random().toString(36).slice(2, 10)}`

/** @internal */
export const make = (config: ControlChannelConfig) =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const defaultTimeout = config.controlTimeout !== undefined
      ? Duration.decode(config.controlTimeout)
      : DEFAULT_TIMEOUT
    const pending = new Map<string, Pending>()
    const handlers = new Map<string, InboundHandler>()
    const running = yield* FiberMap.make<string>()
    const inFlightRef = yield* SubscriptionRef.make(0)
    const messages = yield* Mailbox.make<unknown, SdkError>({
      capacity: config.messageBufferSize ?? DEFAULT_BUFFER
    })
    const terminal = yield* Deferred.make<void, SdkError>()
    const sessionId = yield* SubscriptionRef.make<string | undefined>(undefined)
    let lastResult: { readonly [key: string]: unknown } | undefined
    // The run's state as the CLI reports it (`session_state_changed`), and whether the last
    // message was a `result`: together they tell a finished turn from one still running.
    const runState = yield* SubscriptionRef.make<RunState>({ state: undefined, afterResult: false, results: 0 })
    let failedWith: SdkError | undefined

    const failAllPending = (error: SdkError) =>
      Effect.forEach(
        Array.from(pending.values()),
        (p) => Deferred.fail(p.deferred, error),
        { discard: true }
      )

    // ---- inbound control requests -------------------------------------------------------------

    const respond = (frame: unknown) =>
      transport.send(frame).pipe(
        Effect.catchAll((e) => Effect.logDebug(`effect-claude-agent: could not answer a control request: ${e.message}`))
      )

    const runInbound = (requestId: string, request: { readonly subtype: string; readonly [key: string]: unknown }) => {
      const handler = handlers.get(request.subtype)
      if (handler === undefined) {
        return respond({
          type: "control_response",
          response: {
            subtype: "error",
            request_id: requestId,
            error: `Unsupported control request subtype: ${request.subtype}`
          }
        })
      }
      const work = Effect.suspend(() => handler(request, requestId)).pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          if (Exit.isSuccess(exit)) {
            const response = exit.value
            return respond({
              type: "control_response",
              response: response === undefined
                ? { subtype: "success", request_id: requestId }
                : { subtype: "success", request_id: requestId, response }
            })
          }
          // An interrupted handler was cancelled: the CLI expects no answer, and answering
          // "success" could let a gated tool run.
          if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
          const failure = Cause.failureOption(exit.cause)
          const text = Option.isSome(failure)
            ? errorText(failure.value)
            : `handler defect: ${errorText(Cause.squash(exit.cause))}`
          return Effect.logWarning(
            `effect-claude-agent: ${request.subtype} handler failed (request ${requestId}): ${text}`
          ).pipe(
            Effect.zipRight(respond({
              type: "control_response",
              response: { subtype: "error", request_id: requestId, error: text }
            }))
          )
        }),
        Effect.ensuring(SubscriptionRef.update(inFlightRef, (n) => n - 1))
      )
      return SubscriptionRef.update(inFlightRef, (n) => n + 1).pipe(
        Effect.zipRight(FiberMap.run(running, requestId, work)),
        Effect.asVoid
      )
    }

    // ---- the reader ---------------------------------------------------------------------------

    const routeControl = (frame: { readonly [key: string]: unknown }): Effect.Effect<void> => {
      switch (frame.type) {
        case "control_response": {
          const response = frame.response
          if (!isRecord(response) || typeof response.request_id !== "string") {
            return Effect.logDebug("effect-claude-agent: malformed control_response ignored", frame)
          }
          const entry = pending.get(response.request_id)
          if (entry === undefined) {
            return Effect.logDebug(`effect-claude-agent: control_response for unknown request ${response.request_id}`)
          }
          pending.delete(response.request_id)
          if (response.subtype === "error") {
            return Deferred.fail(
              entry.deferred,
              new ControlError({
                subtype: entry.subtype,
                requestId: response.request_id,
                error: typeof response.error === "string" ? response.error : errorText(response.error),
                ...(typeof response.error_code === "string" ? { errorCode: response.error_code } : {})
              })
            )
          }
          return Deferred.succeed(entry.deferred, response.response)
        }
        case "control_request": {
          const request = frame.request
          if (typeof frame.request_id !== "string" || !isRecord(request) || typeof request.subtype !== "string") {
            return Effect.logWarning("effect-claude-agent: malformed control_request ignored", frame)
          }
          const subtype = request.subtype
          return runInbound(frame.request_id, { ...request, subtype })
        }
        default: {
          if (typeof frame.request_id !== "string") return Effect.void
          return FiberMap.remove(running, frame.request_id)
        }
      }
    }

    // The hot path: one pass over a chunk of frames with plain bookkeeping, then at most one
    // effect per kind of change and a single `offerAll` for the messages. Control frames are acted
    // on before the chunk's messages are queued, so a slow consumer never delays a reply.
    let currentSessionId: string | undefined
    let currentRun: RunState = { state: undefined, afterResult: false, results: 0 }
    const routeChunk = (chunk: Chunk.Chunk<unknown>): Effect.Effect<void> => {
      const out: Array<unknown> = []
      let control: Array<Effect.Effect<void>> | undefined
      let newSessionId: string | undefined
      let runChanged = false
      for (const frame of chunk) {
        if (!isRecord(frame)) {
          out.push(frame)
          continue
        }
        const type = frame.type
        if (type === "control_response" || type === "control_request" || type === "control_cancel_request") {
          ;(control ??= []).push(routeControl(frame))
          continue
        }
        if (type === "result") {
          lastResult = frame
          currentRun = { ...currentRun, afterResult: true, results: currentRun.results + 1 }
          runChanged = true
        } else if (type === "assistant" || type === "stream_event") {
          if (currentRun.afterResult) {
            currentRun = { ...currentRun, afterResult: false }
            runChanged = true
          }
        } else if (type === "system" && frame.subtype === "session_state_changed" && typeof frame.state === "string") {
          currentRun = { ...currentRun, state: frame.state }
          runChanged = true
        }
        const id = frame.session_id
        if (typeof id === "string" && id.length > 0 && id !== currentSessionId) {
          currentSessionId = id
          newSessionId = id
        }
        out.push(frame)
      }
      const effects: Array<Effect.Effect<unknown>> = control ?? []
      if (runChanged) effects.push(SubscriptionRef.set(runState, currentRun))
      // Before the messages: whoever sees a message can already read its session id.
      if (newSessionId !== undefined) effects.push(SubscriptionRef.set(sessionId, newSessionId))
      if (out.length > 0) effects.push(messages.offerAll(out))
      return effects.length === 1 && effects[0] !== undefined
        ? Effect.asVoid(effects[0])
        : Effect.all(effects, { discard: true })
    }

    // What ended the stream, once stdout is closed: a clean exit, an exit explained by an error
    // `result` the user already has, or a crash.
    const onStdoutEnd = Effect.gen(function*() {
      const status = yield* transport.exitStatus.pipe(Effect.timeout(EXIT_WAIT), Effect.option)
      const stderrTail = yield* transport.stderrTail
      if (Option.isNone(status)) {
        return Option.some<SdkError>(
          new CLIConnectionError({ reason: "The Claude Code CLI closed its stdout but did not exit" })
        )
      }
      const { exitCode, signal } = status.value
      const lastWasError = lastResult !== undefined && lastResult.is_error === true
      if (exitCode === 0 || (exitCode === 1 && lastWasError)) return Option.none<SdkError>()
      return Option.some<SdkError>(
        new ProcessError({
          ...(exitCode !== undefined ? { exitCode } : {}),
          ...(signal !== undefined ? { signal } : {}),
          stderrTail,
          ...(lastWasError ? { lastErrorResult: lastResult } : {})
        })
      )
    })

    const finish = (error: Option.Option<SdkError>) =>
      Effect.gen(function*() {
        if (Option.isSome(error)) {
          failedWith = error.value
          yield* failAllPending(error.value)
          yield* messages.fail(error.value)
          yield* Deferred.fail(terminal, error.value)
        } else {
          const closedError = new CLIConnectionError({
            reason: "The Claude Code CLI exited before answering this control request"
          })
          failedWith = closedError
          yield* failAllPending(closedError)
          yield* messages.end
          yield* Deferred.succeed(terminal, undefined)
        }
      })

    yield* transport.frames.pipe(
      Stream.runForEachChunk(routeChunk),
      Effect.matchEffect({
        onFailure: (e) => finish(Option.some(e)),
        onSuccess: () => Effect.flatMap(onStdoutEnd, finish)
      }),
      Effect.forkScoped
    )

    // Requests still waiting when the session's scope closes must not hang their callers.
    yield* Effect.addFinalizer(() =>
      failAllPending(new CLIConnectionError({ reason: "The session was closed" }))
    )

    // ---- outbound requests --------------------------------------------------------------------

    const requestWith = (
      req: { readonly subtype: string; readonly [key: string]: unknown },
      options: RequestOptions | undefined,
      written: Deferred.Deferred<void, SdkError> | undefined
    ): Effect.Effect<unknown, SdkError> =>
      Effect.gen(function*() {
        if (failedWith !== undefined) return yield* Effect.fail(failedWith)
        const requestId = nextRequestId()
        const timeout = options?.timeout !== undefined ? Duration.decode(options.timeout) : defaultTimeout
        const deferred = yield* Deferred.make<unknown, SdkError>()
        pending.set(requestId, { subtype: req.subtype, deferred })
        const cancel = respond({ type: "control_cancel_request", request_id: requestId })
        return yield* transport.send({ type: "control_request", request_id: requestId, request: req }).pipe(
          Effect.zipRight(written === undefined ? Effect.void : Deferred.succeed(written, undefined)),
          Effect.zipRight(Deferred.await(deferred)),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new TimeoutException({ requestId, subtype: req.subtype, timeoutMillis: Duration.toMillis(timeout) })
          }),
          Effect.tapErrorTag("TimeoutException", () => cancel),
          Effect.onInterrupt(() => cancel),
          Effect.ensuring(Effect.sync(() => pending.delete(requestId)))
        )
      })

    const request = (
      req: { readonly subtype: string; readonly [key: string]: unknown },
      options?: RequestOptions
    ): Effect.Effect<unknown, SdkError> => requestWith(req, options, undefined)

    const start = (
      req: { readonly subtype: string; readonly [key: string]: unknown },
      options?: RequestOptions
    ) =>
      Effect.gen(function*() {
        const written = yield* Deferred.make<void, SdkError>()
        const fiber = yield* requestWith(req, options, written).pipe(
          Effect.tapError((e) => Deferred.fail(written, e)),
          Effect.forkScoped
        )
        yield* Deferred.await(written)
        return Fiber.join(fiber)
      })

    const shape: ControlChannelShape = {
      request,
      start,
      handle: (subtype, handler) => Effect.sync(() => void handlers.set(subtype, handler)),
      send: transport.send,
      endInput: transport.endInput,
      messages: Mailbox.toStream(messages),
      inFlight: SubscriptionRef.get(inFlightRef),
      awaitNoneInFlight: inFlightRef.changes.pipe(
        Stream.filter((n) => n === 0),
        Stream.take(1),
        Stream.runDrain
      ),
      lastSessionId: SubscriptionRef.get(sessionId),
      awaitSessionId: Effect.gen(function*() {
        const current = yield* SubscriptionRef.get(sessionId)
        if (current !== undefined) return current
        const noId = new CLIConnectionError({ reason: "The session ended before the CLI reported a session id" })
        const fromChanges = sessionId.changes.pipe(
          Stream.filter((id): id is string => id !== undefined),
          Stream.runHead,
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(noId), onSome: Effect.succeed }))
        )
        const atEnd = Deferred.await(terminal).pipe(
          Effect.zipRight(SubscriptionRef.get(sessionId)),
          Effect.flatMap((id) => (id !== undefined ? Effect.succeed(id) : Effect.fail(noId)))
        )
        return yield* Effect.raceFirst(fromChanges, atEnd)
      }),
      closed: Deferred.await(terminal),
      runState: SubscriptionRef.get(runState),
      awaitRunState: (predicate) =>
        runState.changes.pipe(
          Stream.filter(predicate),
          Stream.take(1),
          Stream.runDrain,
          Effect.raceFirst(Deferred.await(terminal).pipe(Effect.ignore))
        )
    }
    return shape
  })
