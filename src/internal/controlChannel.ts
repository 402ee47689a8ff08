/**
 * The control channel's implementation. See `services/ControlChannel.ts` for the contract.
 *
 * @internal
 */
import {
  Cause,
  Chunk,
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  Fiber,
  FiberMap,
  FiberRef,
  FiberRefs,
  HashMap,
  Metric,
  Option,
  ParseResult,
  Predicate,
  PubSub,
  Runtime,
  Stream,
  SubscriptionRef,
  Tracer
} from "effect"
import * as Control from "../schema/Control.js"
import * as Telemetry from "../Telemetry.js"
import { CLIConnectionError, ControlError, ProcessError, TimeoutException } from "../SdkError.js"
import type {
  ControlChannelConfig,
  ControlChannelShape,
  RequestError,
  RequestOptions,
  RunState,
  StreamError
} from "../services/ControlChannel.js"
import { type Frame, Transport } from "../services/Transport.js"
import * as Defaults from "./defaults.js"
import * as Drain from "./drain.js"
import { positiveDurationProblem } from "./duration.js"
import * as Guard from "./guard.js"
import * as Issues from "./issues.js"
import { CurrentTurn } from "./turns.js"

/** How long to wait for the exit status once stdout has closed. */
const EXIT_WAIT = Duration.seconds(10)

interface Pending {
  readonly subtype: string
  readonly deferred: Deferred.Deferred<unknown, RequestError>
}

/** A registered inbound handler: decodes the request, runs the handler, encodes its answer. */
interface Inbound {
  readonly run: (request: unknown, requestId: string) => Effect.Effect<unknown, unknown>
}

const errorText = (e: unknown): string => {
  if (Predicate.hasProperty(e, "message") && typeof e.message === "string" && e.message.length > 0) return e.message
  if (typeof e === "string") return e
  try {
    return JSON.stringify(e) ?? String(e)
  } catch {
    return String(e)
  }
}

// One line for the warning; the whole cause goes to the debug log.
const MAX_WARNING = 500
const oneLine = (text: string): string => {
  const first = text.split("\n", 1)[0] ?? ""
  return first.length > MAX_WARNING ? `${first.slice(0, MAX_WARNING - 1)}…` : first
}

const formatIssue = (issue: ParseResult.ParseIssue): string => Issues.describe(issue)

const isControlResponse = Guard.compile(Control.ControlResponse)
const isControlRequest = Guard.compile(Control.ControlRequest)
const isControlCancel = Guard.compile(Control.ControlCancelRequest)

// `ParseResult` memoises the parser of each Schema AST, so making these per call costs a lookup.
const decodeOptions = { onExcessProperty: "preserve" } as const

// What a pending request fails with when the connection ends: the process's death or the
// connection's end as they are; a framing failure as the end of the connection, with its cause.
const toRequestError = (error: StreamError): RequestError =>
  error._tag === "CLIJSONDecodeError"
    ? new CLIConnectionError({ reason: `The connection to the CLI failed: ${error.message}`, cause: error })
    : error

// Attributes for the inbound request's span and logs: what the request is about.
const inboundDetails = (request: { readonly [key: string]: unknown }): Record<string, string> => {
  const details: Record<string, string> = {}
  for (const key of ["callback_id", "tool_name", "server_name"]) {
    const value = request[key]
    if (typeof value === "string") details[key] = value
  }
  const message = request.message
  if (Predicate.isRecord(message) && typeof message.method === "string") details.method = message.method
  // A hook's event, so that the hook registry need not annotate its callbacks' logs itself.
  const input = request.input
  if (Predicate.isRecord(input) && typeof input.hook_event_name === "string") {
    details.hook_event_name = input.hook_event_name
  }
  return details
}

// The span of an inbound request, made here rather than with `Effect.withSpan`: the handler's
// fiber starts with the span in its context and the fiber's observer ends it, which saves the
// `withSpan` wrapper's context set-and-restore and exit handler (about a seventh of a hook round
// trip's CPU, measured). `undefined` when tracing is off or its propagation is disabled: the
// caller then falls back to `Effect.withSpan`, which knows those cases.
const inboundSpan = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  turn: Tracer.AnySpan | undefined,
  attributes: Record<string, unknown>
): Tracer.Span | undefined => {
  if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return undefined
  const parent = turn ?? fiber.currentSpan
  if (parent !== undefined && parent._tag === "Span" && Context.get(parent.context, Tracer.DisablePropagation)) {
    return undefined
  }
  const links = fiber.getFiberRef(FiberRef.currentTracerSpanLinks)
  const span = fiber.currentTracer.span(
    name,
    parent === undefined ? Option.none() : Option.some(parent),
    Context.empty(),
    Chunk.toReadonlyArray(links),
    startTime(fiber),
    "server",
    { kind: "server", attributes }
  )
  HashMap.forEach(fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations), (value, key) => span.attribute(key, value))
  for (const key in attributes) span.attribute(key, attributes[key])
  return span
}

const startTime = (fiber: Fiber.RuntimeFiber<unknown, unknown>): bigint =>
  fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
    ? Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeNanos()
    : BigInt(0)

const endSpan = (fiber: Fiber.RuntimeFiber<unknown, unknown>, span: Tracer.Span, exit: Exit.Exit<unknown, unknown>) => {
  if (span.status._tag === "Started") span.end(startTime(fiber), exit)
}

let idCounter = 0
const nextRequestId = (): string => `req_${++idCounter}_${Math.random().toString(36).slice(2, 10)}`

/** @internal */
export const make = (config: ControlChannelConfig) =>
  Effect.gen(function*() {
    const transport = yield* Transport
    // Inbound spans sit under the running turn, when the session tracks one.
    const currentTurn = yield* Effect.serviceOption(CurrentTurn)
    const defaultTimeout = config.controlTimeout !== undefined
      ? Duration.decode(config.controlTimeout)
      : Defaults.controlTimeout
    const pending = new Map<string, Pending>()
    const handlers = new Map<string, Inbound>()
    const running = yield* FiberMap.make<string>()
    // Inbound requests still running, and who waits for there to be none. A plain counter: it
    // changes twice per request, and a `SubscriptionRef` would take a semaphore and publish to
    // a hub each time. Touched only from synchronous steps (see the message queue below).
    let inFlight = 0
    let idleWaiters: Array<() => void> = []
    const inboundDone = () => {
      inFlight--
      if (inFlight === 0 && idleWaiters.length > 0) {
        const waiting = idleWaiters
        idleWaiters = []
        for (const wake of waiting) wake()
      }
    }
    const awaitNoneInFlight: Effect.Effect<void> = Effect.suspend(() =>
      inFlight === 0 ? Effect.void : Effect.async<void>((resume) => {
        const wake = () => resume(Effect.void)
        idleWaiters.push(wake)
        return Effect.sync(() => {
          idleWaiters = idleWaiters.filter((w) => w !== wake)
        })
      })
    )
    // The message queue: unbounded as a queue, bounded by bytes here, so below the cap the reader
    // never waits for the consumer and control traffic keeps flowing while messages pile up.
    // Hand-written rather than a `Mailbox`: the reader appends a chunk's messages to one array
    // and the consumer takes the whole array (no copy per offer, no `Chunk` conversion per take).
    // Mutable state shared by exactly two fibers, the reader and the consumer; each step below runs
    // synchronously, so no interleaving can see it half-updated.
    let queue: Array<unknown> = []
    // Set once: how the queue ends after what it holds (`error` undefined: a clean end).
    let queueEnd: { readonly error: StreamError | undefined } | undefined
    let takers: Array<() => void> = []
    const bufferCap = config.messageBufferBytes ?? Defaults.messageBufferBytes
    let queuedBytes = 0
    let space: Deferred.Deferred<void> | undefined
    let warnedFull = false
    const wakeTakers = () => {
      if (takers.length === 0) return
      const waiting = takers
      takers = []
      for (const wake of waiting) wake()
    }
    const enqueue = (out: Array<unknown>) => {
      if (queueEnd !== undefined) return
      if (queue.length === 0) queue = out
      else for (const frame of out) queue.push(frame)
      wakeTakers()
    }
    const endQueue = (error: StreamError | undefined) =>
      Effect.sync(() => {
        if (queueEnd !== undefined) return
        queueEnd = { error }
        wakeTakers()
      })
    const waitForTaker: Effect.Effect<void> = Effect.async<void>((resume) => {
      const wake = () => resume(Effect.void)
      takers.push(wake)
      return Effect.sync(() => {
        takers = takers.filter((t) => t !== wake)
      })
    })
    // Everything queued at once, or the end once the queue is drained.
    const takeMessages: Effect.Effect<Chunk.Chunk<unknown>, Option.Option<StreamError>> = Effect.suspend(() => {
      if (queue.length > 0) {
        const taken = queue
        queue = []
        queuedBytes = 0
        if (space !== undefined) {
          Deferred.unsafeDone(space, Exit.void)
          space = undefined
        }
        return Effect.succeed(Chunk.unsafeFromArray(taken))
      }
      if (queueEnd !== undefined) {
        return Effect.fail(queueEnd.error === undefined ? Option.none() : Option.some(queueEnd.error))
      }
      return Effect.zipRight(waitForTaker, takeMessages)
    })
    const waitForSpace = Effect.suspend(() => {
      if (queuedBytes < bufferCap) return Effect.void
      const warn = warnedFull ? Effect.void : Effect.logWarning(
        `effect-claude-agent: ${queuedBytes} bytes of messages are waiting for the consumer ` +
          `(messageBufferBytes ${bufferCap}): reading from the CLI now waits for it, and so do the ` +
          `CLI's hook, permission and tool requests. Consume messages faster or raise messageBufferBytes.`
      )
      warnedFull = true
      return Effect.flatMap(Deferred.make<void>(), (deferred) => {
        space = deferred
        return Effect.zipRight(warn, Deferred.await(deferred))
      })
    })
    const terminal = yield* Deferred.make<void, StreamError>()
    const sessionId = yield* SubscriptionRef.make<string | undefined>(undefined)
    let lastResult: { readonly [key: string]: unknown } | undefined
    const resultHub = yield* PubSub.unbounded<{ readonly [key: string]: unknown }>()
    // Counters tagged by tool name, made once per name.
    const toolCounters = new Map<string, Metric.Metric.Counter<number>>()
    // Histograms tagged by subtype, made once per subtype: this runs on every request.
    const callbackHistograms = new Map<string, typeof Telemetry.callbackDuration>()
    const callbackHistogram = (subtype: string) => {
      let histogram = callbackHistograms.get(subtype)
      if (histogram === undefined) {
        histogram = Telemetry.callbackDuration.pipe(Metric.tagged("subtype", subtype))
        callbackHistograms.set(subtype, histogram)
      }
      return histogram
    }
    const countTool = (name: string) => {
      let counter = toolCounters.get(name)
      if (counter === undefined) {
        counter = Telemetry.toolCalls.pipe(Metric.tagged("tool", name))
        toolCounters.set(name, counter)
      }
      return Metric.increment(counter)
    }
    // The run's state as the CLI reports it (`session_state_changed`), and whether the last
    // message was a `result`: together they tell a finished turn from one still running.
    const runState = yield* SubscriptionRef.make<RunState>({ state: undefined, afterResult: false, results: 0 })
    let failedWith: RequestError | undefined

    const failAllPending = (error: RequestError) =>
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

    const answerError = (requestId: string, error: string) =>
      respond({ type: "control_response", response: { subtype: "error", request_id: requestId, error } })

    const runInbound = (requestId: string, request: Control.ControlRequest["request"]) => {
      const subtype = request.subtype
      const inbound = handlers.get(subtype)
      // The CLI's own words for a subtype it does not serve.
      if (inbound === undefined) return answerError(requestId, `Unsupported control request subtype: ${subtype}`)
      const details = inboundDetails(request)
      const turn = Option.isSome(currentTurn) ? currentTurn.value.span : undefined
      // Timed as `Effect.timed` would (the fiber's clock, successes only), in fewer steps: this
      // runs for every request.
      const work = Effect.clockWith((clock) => {
        const start = clock.unsafeCurrentTimeNanos()
        return Effect.flatMap(Effect.exit(Effect.suspend(() => inbound.run(request, requestId))), (exit) => {
          if (Exit.isSuccess(exit)) {
            const elapsed = Number(clock.unsafeCurrentTimeNanos() - start) / 1_000_000
            const response = exit.value
            return Effect.zipRight(
              Metric.update(callbackHistogram(subtype), elapsed),
              respond({
                type: "control_response",
                response: response === undefined
                  ? { subtype: "success", request_id: requestId }
                  : { subtype: "success", request_id: requestId, response }
              })
            )
          }
          // An interrupted handler was cancelled: the CLI expects no answer, and answering
          // "success" could let a gated tool run.
          if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
          const failure = Cause.failureOption(exit.cause)
          const text = Option.isSome(failure)
            ? errorText(failure.value)
            : `handler defect: ${errorText(Cause.squash(exit.cause))}`
          return Effect.logWarning(`effect-claude-agent: ${subtype} failed (request ${requestId}): ${oneLine(text)}`).pipe(
            Effect.zipRight(Effect.logDebug(`effect-claude-agent: ${subtype} failure in full`, exit.cause)),
            Effect.zipRight(answerError(requestId, text))
          )
        })
      })
      // `FiberMap.run`, except that the handler's fiber starts at once, on this stack: a handler
      // that answers without waiting (most hooks) is done, answer queued, before the reader moves
      // on, with no scheduler round trip. Only a fiber still running joins the map (where
      // `control_cancel_request` and the scope's end interrupt it).
      // The log annotations are part of the new fiber's initial state, as `Effect.annotateLogs`
      // around `work` would set them: one update instead of a set-and-restore (`annotateLogs` here
      // cost about a fifth of a hook round trip's CPU, measured with and without it).
      return Effect.withFiberRuntime<void>((parent) => {
        inFlight++
        let annotations = parent.getFiberRef(FiberRef.currentLogAnnotations)
        annotations = HashMap.set(annotations, "controlSubtype", subtype)
        annotations = HashMap.set(annotations, "controlRequestId", requestId)
        for (const key in details) annotations = HashMap.set(annotations, key, details[key])
        const attributes = { "control.subtype": subtype, "control.request_id": requestId, ...details }
        const span = inboundSpan(parent, `ControlChannel.${subtype}`, turn, attributes)
        const runtime = Runtime.make({
          context: span === undefined ? parent.currentContext : Context.add(parent.currentContext, Tracer.ParentSpan, span),
          fiberRefs: FiberRefs.updateAs(parent.getFiberRefs(), {
            fiberId: parent.id(),
            fiberRef: FiberRef.currentLogAnnotations,
            value: annotations
          }),
          runtimeFlags: Runtime.defaultRuntime.runtimeFlags
        })
        const name = `ControlChannel.${subtype}`
        const fiber = Runtime.runFork(runtime)(
          span === undefined
            ? Effect.withSpan(work, name, {
              kind: "server",
              // The call site is always this line: capturing it costs a stack trace per request.
              captureStackTrace: false,
              ...(turn === undefined ? {} : { parent: turn }),
              attributes
            })
            : work,
          { immediate: true }
        )
        // Called at once if the fiber is already done.
        fiber.addObserver((exit) => {
          if (span !== undefined) endSpan(parent, span, exit)
          inboundDone()
        })
        if (fiber.unsafePoll() === null) FiberMap.unsafeSet(running, requestId, fiber, { interruptAs: parent.id() })
        return Effect.void
      })
    }

    // ---- the reader ---------------------------------------------------------------------------

    const routeResponse = (frame: { readonly [key: string]: unknown }): Effect.Effect<void> => {
      if (!isControlResponse(frame)) {
        // A reply this version cannot read still ends its request, rather than leaving it to time out.
        const response = frame.response
        const requestId = Predicate.isRecord(response) && typeof response.request_id === "string"
          ? response.request_id
          : undefined
        const entry = requestId === undefined ? undefined : pending.get(requestId)
        if (requestId === undefined || entry === undefined) {
          return Effect.logDebug("effect-claude-agent: malformed control_response ignored", frame)
        }
        pending.delete(requestId)
        return Deferred.fail(
          entry.deferred,
          new ControlError({
            subtype: entry.subtype,
            requestId,
            error: `malformed control_response: ${errorText(response)}`,
            errorCode: "invalid_response"
          })
        )
      }
      const response = frame.response
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
            error: response.error,
            ...(response.error_code !== undefined ? { errorCode: response.error_code } : {})
          })
        )
      }
      const answered = Deferred.succeed(entry.deferred, response.response)
      return entry.subtype === "initialize" ? Effect.zipRight(answered, redeliver(response)) : answered
    }

    // An `initialize` reply lists the permission prompts the CLI is still waiting for (a host that
    // attaches, or re-initializes, learns of prompts it never saw): each is run like a request
    // just received, unless it is running already. As in the official SDK, only `can_use_tool`.
    const redeliver = (response: { readonly [key: string]: unknown }): Effect.Effect<void> => {
      const listed = response.pending_permission_requests
      if (!Array.isArray(listed) || listed.length === 0) return Effect.void
      return Effect.forEach(listed, (frame: unknown) => {
        if (!isControlRequest(frame) || frame.request.subtype !== Control.CanUseTool.subtype) return Effect.void
        const { server_policy_ask_only: _ignored, ...request } = frame.request
        return FiberMap.has(running, frame.request_id).pipe(
          Effect.flatMap((inFlight) =>
            inFlight ? Effect.void : Effect.zipRight(
              Effect.logDebug(`effect-claude-agent: permission request ${frame.request_id} redelivered by initialize`),
              runInbound(frame.request_id, { ...request, subtype: frame.request.subtype })
            )
          )
        )
      }, { discard: true })
    }

    const routeControl = (frame: { readonly [key: string]: unknown }): Effect.Effect<void> => {
      switch (frame.type) {
        case "control_response":
          return routeResponse(frame)
        case "control_request":
          return isControlRequest(frame)
            ? runInbound(frame.request_id, frame.request)
            : Effect.logWarning("effect-claude-agent: malformed control_request ignored", frame)
        default:
          return isControlCancel(frame) ? FiberMap.remove(running, frame.request_id) : Effect.void
      }
    }

    // The hot path: one pass over a chunk of frames with plain bookkeeping, then at most one
    // effect per kind of change and a single `offerAll` for the messages. Control frames are acted
    // on before the chunk's messages are queued, so a slow consumer never delays a reply.
    let currentSessionId: string | undefined
    let currentRun: RunState = { state: undefined, afterResult: false, results: 0 }
    const routeChunk = (chunk: Chunk.Chunk<Frame>): Effect.Effect<void> => {
      const out: Array<unknown> = []
      let control: Array<Effect.Effect<void>> | undefined
      let newSessionId: string | undefined
      let runChanged = false
      let results: Array<{ readonly [key: string]: unknown }> | undefined
      let tools: Array<string> | undefined
      for (const { bytes, value: frame } of chunk) {
        if (!Predicate.isRecord(frame)) {
          out.push(frame)
          queuedBytes += bytes
          continue
        }
        const type = frame.type
        if (type === "control_response" || type === "control_request" || type === "control_cancel_request") {
          ;(control ??= []).push(routeControl(frame))
          continue
        }
        if (type === "result") {
          lastResult = frame
          ;(results ??= []).push(frame)
          currentRun = { ...currentRun, afterResult: true, results: currentRun.results + 1 }
          runChanged = true
        } else if (type === "assistant" || type === "stream_event") {
          if (type === "assistant") {
            const content = Predicate.isRecord(frame.message) ? frame.message.content : undefined
            if (Array.isArray(content)) {
              for (const block of content) {
                if (Predicate.isRecord(block) && block.type === "tool_use" && typeof block.name === "string") {
                  ;(tools ??= []).push(block.name)
                }
              }
            }
          }
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
        queuedBytes += bytes
      }
      const effects: Array<Effect.Effect<unknown>> = control ?? []
      if (runChanged) effects.push(SubscriptionRef.set(runState, currentRun))
      // Before the messages: whoever sees a message can already read its session id.
      if (newSessionId !== undefined) effects.push(SubscriptionRef.set(sessionId, newSessionId))
      if (results !== undefined) effects.push(PubSub.publishAll(resultHub, results))
      if (tools !== undefined) effects.push(Effect.forEach(tools, countTool, { discard: true }))
      if (out.length > 0) effects.push(Effect.sync(() => enqueue(out)))
      if (queuedBytes >= bufferCap) effects.push(waitForSpace)
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
        return Option.some<StreamError>(
          new CLIConnectionError({ reason: "The Claude Code CLI closed its stdout but did not exit" })
        )
      }
      const { exitCode, signal } = status.value
      const lastWasError = lastResult !== undefined && lastResult.is_error === true
      if (exitCode === 0 || (exitCode === 1 && lastWasError)) return Option.none<StreamError>()
      return Option.some<StreamError>(
        new ProcessError({
          ...(exitCode !== undefined ? { exitCode } : {}),
          ...(signal !== undefined ? { signal } : {}),
          stderrTail,
          ...(lastWasError ? { lastErrorResult: lastResult } : {})
        })
      )
    })

    const finish = (error: Option.Option<StreamError>) =>
      Effect.gen(function*() {
        if (Option.isSome(error)) {
          failedWith = toRequestError(error.value)
          yield* failAllPending(failedWith)
          yield* endQueue(error.value)
          yield* Deferred.fail(terminal, error.value)
        } else {
          failedWith = new CLIConnectionError({
            reason: "The Claude Code CLI exited before answering this control request"
          })
          yield* failAllPending(failedWith)
          yield* endQueue(undefined)
          yield* Deferred.succeed(terminal, undefined)
        }
      })

    // A pull loop rather than `Stream.runForEachChunk`: see ./drain.ts.
    yield* Drain.forEachChunk(transport.frames, routeChunk).pipe(
      Effect.matchEffect({
        onFailure: (e) => finish(Option.some(e)),
        onSuccess: () => Effect.flatMap(onStdoutEnd, finish)
      }),
      Effect.forkScoped
    )

    // Requests still waiting when the session's scope closes must not hang their callers, and
    // neither must a consumer still reading messages (the reader is interrupted with the scope, so
    // the end of the CLI's output may never be seen). Both are no-ops once the reader has finished.
    // The error is made only when someone receives it: a `Schema.TaggedError` validates its fields
    // and captures a stack trace, about a tenth of a millisecond, and most sessions close with
    // nothing pending and nobody reading on.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        let closed: CLIConnectionError | undefined
        const closedError = () => closed ??= new CLIConnectionError({ reason: "The session was closed" })
        const ending = Effect.sync(() => {
          if (queueEnd !== undefined) return
          queueEnd = {
            get error() {
              return closedError()
            }
          }
          wakeTakers()
        })
        return pending.size === 0 ? ending : Effect.zipRight(failAllPending(closedError()), ending)
      })
    )

    // ---- outbound requests --------------------------------------------------------------------

    const requestWith = <Req extends Control.Request.Any>(
      descriptor: Req,
      payload: Control.Request.Payload<Req> | undefined,
      options: RequestOptions | undefined,
      written: Deferred.Deferred<void, RequestError> | undefined
    ): Effect.Effect<Control.Request.Success<Req>, RequestError> =>
      Effect.gen(function*() {
        if (failedWith !== undefined) return yield* Effect.fail(failedWith)
        const subtype = descriptor.subtype
        const requestId = nextRequestId()
        const fields = ParseResult.encodeUnknownEither(descriptor.payload, decodeOptions)(payload ?? {})
        if (Either.isLeft(fields)) {
          return yield* Effect.fail(
            new ControlError({
              subtype,
              requestId,
              error: `the request was not sent: its payload is invalid: ${formatIssue(fields.left)}`,
              errorCode: "invalid_request"
            })
          )
        }
        const timeoutProblem = options?.timeout === undefined ? undefined : positiveDurationProblem(options.timeout)
        if (timeoutProblem !== undefined) {
          return yield* Effect.fail(
            new ControlError({
              subtype,
              requestId,
              error: `the request was not sent: its \`timeout\` is invalid: ${timeoutProblem}`,
              errorCode: "invalid_request"
            })
          )
        }
        const timeout = options?.timeout !== undefined ? Duration.decode(options.timeout) : defaultTimeout
        const deferred = yield* Deferred.make<unknown, RequestError>()
        pending.set(requestId, { subtype, deferred })
        const cancel = respond({ type: "control_cancel_request", request_id: requestId })
        const request = Predicate.isRecord(fields.right) ? { subtype, ...fields.right } : { subtype }
        const reply = yield* transport.send({ type: "control_request", request_id: requestId, request }).pipe(
          Effect.zipRight(written === undefined ? Effect.void : Deferred.succeed(written, undefined)),
          Effect.zipRight(Deferred.await(deferred)),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => new TimeoutException({ requestId, subtype, timeoutMillis: Duration.toMillis(timeout) })
          }),
          Effect.tapError((e) => (e instanceof TimeoutException ? cancel : Effect.void)),
          Effect.onInterrupt(() => cancel),
          Effect.ensuring(Effect.sync(() => pending.delete(requestId)))
        )
        // A reply without `response` reads as `{}` for a request that expects fields (all optional
        // then), and as nothing for one that expects none.
        const body = reply === undefined && descriptor.success.ast._tag !== "VoidKeyword" ? {} : reply
        const decoded = ParseResult.decodeUnknownEither(descriptor.success, decodeOptions)(body)
        if (Either.isLeft(decoded)) {
          return yield* Effect.fail(
            new ControlError({
              subtype,
              requestId,
              error: `unexpected ${subtype} reply: ${formatIssue(decoded.left)}`,
              errorCode: "invalid_response"
            })
          )
        }
        return decoded.right
      })

    const shape: ControlChannelShape = {
      request: (descriptor, ...[payload, options]) => requestWith(descriptor, payload, options, undefined),
      start: (descriptor, ...[payload, options]) =>
        Effect.gen(function*() {
          const written = yield* Deferred.make<void, RequestError>()
          const fiber = yield* requestWith(descriptor, payload, options, written).pipe(
            Effect.tapError((e) => Deferred.fail(written, e)),
            Effect.forkScoped
          )
          yield* Deferred.await(written)
          return Fiber.join(fiber)
        }),
      handle: (descriptor, handler) =>
        Effect.sync(() => {
          // Compiled once per handler rather than looked up for every request.
          const decodePayload = ParseResult.decodeUnknownEither(descriptor.payload, decodeOptions)
          const encodeSuccess = ParseResult.encodeUnknownEither(descriptor.success)
          handlers.set(descriptor.subtype, {
            run: (request, requestId) => {
              const payload = decodePayload(request)
              if (Either.isLeft(payload)) {
                return Effect.fail(new Error(`malformed ${descriptor.subtype} request: ${formatIssue(payload.left)}`))
              }
              return Effect.flatMap(handler(payload.right, requestId), (success) => {
                const encoded = encodeSuccess(success)
                return Either.isLeft(encoded)
                  ? Effect.fail(new Error(`invalid ${descriptor.subtype} answer: ${formatIssue(encoded.left)}`))
                  : Effect.succeed(encoded.right)
              })
            }
          })
        }),
      messages: Stream.repeatEffectChunkOption(takeMessages),
      inFlight: Effect.sync(() => inFlight),
      awaitNoneInFlight,
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
          Effect.ignore,
          Effect.zipRight(SubscriptionRef.get(sessionId)),
          Effect.flatMap((id) => (id !== undefined ? Effect.succeed(id) : Effect.fail(noId)))
        )
        return yield* Effect.raceFirst(fromChanges, atEnd)
      }),
      closed: Deferred.await(terminal),
      runState: SubscriptionRef.get(runState),
      results: Stream.fromPubSub(resultHub, { scoped: true }),
      awaitRunState: (predicate) =>
        // Already true (the usual case when a session closes): no subscription, no race.
        Effect.flatMap(SubscriptionRef.get(runState), (now) =>
          predicate(now) ? Effect.void : runState.changes.pipe(
            Stream.filter(predicate),
            Stream.take(1),
            Stream.runDrain,
            Effect.raceFirst(Deferred.await(terminal).pipe(Effect.ignore))
          ))
    }
    return shape
  })
