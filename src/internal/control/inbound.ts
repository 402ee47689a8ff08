/**
 * Inbound control requests (hooks, permission prompts, MCP tool calls, elicitations): the
 * handler registry, one fiber per request with its span, log annotations and metric, the answer
 * written from that fiber, cancellation through a `FiberMap`, and the count of requests running.
 *
 * @internal
 */
import {
  Cause,
  type Clock,
  Context,
  Effect,
  Either,
  type Exit,
  type Fiber,
  FiberMap,
  FiberRef,
  FiberRefs,
  HashMap,
  Option,
  ParseResult,
  Predicate,
  Runtime,
  Schema,
  type SchemaAST,
  Tracer
} from "effect"
import * as Control from "../../schema/Control.js"
import type { ControlChannelShape, InboundHandler } from "../../services/ControlChannel.js"
import * as Telemetry from "../../Telemetry.js"
import * as Guard from "../schema/guard.js"
import * as Issues from "../schema/issues.js"
import * as Captured from "../effect/captured.js"
import * as Frames from "../protocol/controlFrames.js"
import { type Tagged, tagged } from "../telemetry/metrics.js"
import { route, type RequestBody } from "../protocol/router.js"
import type { CurrentTurn } from "../session/turns.js"
import { errorText, oneLine } from "./text.js"

const decodeOptions = { onExcessProperty: "preserve" } as const

/**
 * A request's answer, before it runs: `effect` decodes nothing more and runs the handler,
 * `encode` checks its answer (in the step that writes it); `services`, when the handler captured
 * services of its own (`providing`), are what the answer's fiber starts with.
 */
interface Handled {
  readonly effect: Effect.Effect<unknown, unknown, unknown>
  readonly encode: Encode
  readonly services: Context.Context<never> | undefined
  /** A call with a span of its own (`spanning`), run in place of `effect`: the request's one span. */
  readonly spanned: Captured.Spanned | undefined
}

/** A registered handler: decodes the request and calls the handler (on the caller's stack). */
type Run = (request: unknown, requestId: string) => Handled

/**
 * The inbound half's operations.
 *
 * @internal
 */
export interface Inbound {
  readonly handle: ControlChannelShape["handle"]
  /** Starts the handler of one request on the caller's stack, or answers that none is registered. */
  readonly run: (requestId: string, request: RequestBody) => Effect.Effect<void>
  /** Interrupts the handler of a request the CLI withdrew; it writes nothing. */
  readonly cancel: (requestId: string) => Effect.Effect<void>
  /** Runs the permission prompts an `initialize` reply lists, unless already running. */
  readonly redeliver: (envelope: { readonly [key: string]: unknown }) => Effect.Effect<void>
  readonly inFlight: Effect.Effect<number>
  readonly awaitNoneInFlight: Effect.Effect<void>
}

const DETAIL_KEYS = ["callback_id", "tool_name", "server_name"] as const

// Attributes for the inbound request's span and logs: what the request is about.
const inboundDetails = (request: { readonly [key: string]: unknown }): Record<string, string> => {
  const details: Record<string, string> = {}
  for (const key of DETAIL_KEYS) {
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

// The property names of a struct with no index signature and flat properties: a plain object
// with no other property is its own encoding when valid. `undefined` for any other Schema.
const namedOnly = (ast: SchemaAST.AST): ReadonlySet<PropertyKey> | undefined =>
  ast._tag === "TypeLiteral" && ast.indexSignatures.length === 0 &&
    ast.propertySignatures.every((p) => Guard.flat(p.type))
    ? new Set(ast.propertySignatures.map((p) => p.name))
    : undefined

const hasOnly = (u: unknown, names: ReadonlySet<PropertyKey>): boolean => {
  if (!Predicate.isRecord(u)) return false
  const proto: unknown = Object.getPrototypeOf(u)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key in u) if (!names.has(key)) return false
  return Object.getOwnPropertySymbols(u).length === 0
}

// Encodes a descriptor's answer, dropping the properties a struct does not name; `Left` is the
// failure's text. Built once per descriptor (`Schema.encodedSchema` walks the AST every time):
// every session registers the same.
type Encode = (success: unknown) => Either.Either<unknown, string>
const encoders = new WeakMap<Control.Request.Any, Encode>()
const encoderOf = (descriptor: Control.Request.Any): Encode => {
  const known = encoders.get(descriptor)
  if (known !== undefined) return known
  const encoded = Schema.encodedSchema(descriptor.success)
  const parse = ParseResult.encodeUnknownEither(descriptor.success)
  const dropping = Guard.fastPath(encoded, parse, { excessKept: false })
  const names = namedOnly(encoded.ast)
  // A struct that names all its properties (`mcp_message`'s `{ mcp_response }`) drops the others,
  // so `fastPath` cannot return a valid answer as it is; one that has no other property can be.
  const keeping = names === undefined ? undefined : Guard.fastPath(encoded, parse, { excessKept: true })
  const encodeSuccess = keeping === undefined || names === undefined
    ? dropping
    : (success: unknown) => hasOnly(success, names) ? keeping(success) : dropping(success)
  const encode: Encode = (success) =>
    Either.mapLeft(encodeSuccess(success), (issue) => `invalid ${descriptor.subtype} answer: ${Issues.describe(issue)}`)
  encoders.set(descriptor, encode)
  return encode
}

// What the answer of a request that failed before its handler ran checks: nothing.
const unchecked: Encode = Either.right

const compile = <Req extends Control.Request.Any>(
  descriptor: Req,
  handler: InboundHandler<Req>
): Run => {
  // Compiled once per handler rather than looked up for every request.
  const decodePayload = Guard.fastPath(
    descriptor.payload,
    ParseResult.decodeUnknownEither(descriptor.payload, decodeOptions),
    { excessKept: true }
  )
  const encode = encoderOf(descriptor)
  return (request, requestId) => {
    const payload = decodePayload(request)
    if (Either.isLeft(payload)) {
      return {
        effect: Effect.fail(`malformed ${descriptor.subtype} request: ${Issues.describe(payload.left)}`),
        encode: unchecked,
        services: undefined,
        spanned: undefined
      }
    }
    const handled = handler(payload.right, requestId)
    const inner = Captured.unprovided(handled)
    // One shape for every request's record (`spanned` always set), so that the reads of it see one.
    if (inner === undefined) return { effect: handled, encode, services: undefined, spanned: undefined }
    return inner._tag === "Unprovided"
      ? { effect: inner.effect, encode, services: inner.services, spanned: undefined }
      : { effect: handled, encode, services: inner.services, spanned: inner }
  }
}

// `Context.add(context, Tracer.ParentSpan, span)`, as a context that provides whatever the
// handler requires: the services it captured for that are in `context`, and its type no longer
// names them.
const withSpan = (context: Context.Context<never>, span: Tracer.Span): Context.Context<unknown> =>
  Context.unsafeMake(new Map(context.unsafeMap).set(Tracer.ParentSpan.key, span))

const died = (defect: unknown): Handled => ({
  effect: Effect.die(defect),
  encode: unchecked,
  services: undefined,
  spanned: undefined
})

// Distinct request details whose log annotations a channel keeps: far more than a session's
// callbacks and tools; a CLI that names more only costs the annotations' rebuilding.
const MAX_ANNOTATION_BASES = 256

// A node of the trie of log annotation bases (and span attributes): the base for the details on
// the path to it, and one level down per further detail, by its name and then its value.
interface Bases {
  base: HashMap.HashMap<string, unknown> | undefined
  /** The request span's attributes but its request id, set on each span once made. */
  attributes: Record<string, unknown> | undefined
  /** Those attributes and a call's own (`Captured.Spanned`), by the call's span: one per tool. */
  spanned: WeakMap<Captured.Spanned["span"], Record<string, unknown>> | undefined
  readonly next: Map<string, Map<string, Bases>>
}
const newBases = (): Bases => ({ base: undefined, attributes: undefined, spanned: undefined, next: new Map() })
const childOf = (node: Bases, name: string, value: string): Bases => {
  let byValue = node.next.get(name)
  if (byValue === undefined) {
    byValue = new Map()
    node.next.set(name, byValue)
  }
  let child = byValue.get(value)
  if (child === undefined) {
    child = newBases()
    byValue.set(value, child)
  }
  return child
}

// The attributes of a call's own span (an MCP tool's), made in place of the request's: the
// request's and the call's, merged once per node and call.
const spannedAttributes = (node: Bases, span: Captured.Spanned["span"]): Record<string, unknown> => {
  node.spanned ??= new WeakMap()
  let attributes = node.spanned.get(span)
  if (attributes === undefined) {
    attributes = { ...node.attributes, ...span.attributes }
    node.spanned.set(span, attributes)
  }
  return attributes
}

// One per channel: the log annotations of an answer's fiber but its request id (the reader's, the subtype and
// the request's details). Kept per details while the reader's annotations stay the same (a
// session sees a handful: its callback ids, tool and server names), so that each request adds
// one entry where it would add five; the span's attributes likewise. Found through a trie
// (subtype, then each detail's name and value) rather than a key made of them all: no string
// is built per request.
const annotationBases = () => {
  let basesOf: HashMap.HashMap<string, unknown> | undefined
  let roots = new Map<string, Bases>()
  let kept = 0
  const nodeFor = (
    current: HashMap.HashMap<string, unknown>,
    subtype: string,
    details: Record<string, string>
  ): Bases => {
    if (current !== basesOf || kept >= MAX_ANNOTATION_BASES) {
      roots = new Map()
      kept = 0
      basesOf = current
    }
    let node = roots.get(subtype)
    if (node === undefined) {
      node = newBases()
      roots.set(subtype, node)
    }
    for (const name in details) {
      node = childOf(node, name, details[name] ?? "")
    }
    if (node.attributes === undefined) {
      node.attributes = { "control.subtype": subtype, ...details }
      let base = HashMap.set(current, "controlSubtype", subtype)
      for (const name in details) base = HashMap.set(base, name, details[name])
      node.base = base
      kept++
    }
    return node
  }
  return nodeFor
}

// The callback histogram per subtype, its tag fixed once (`tagged`): `Metric.tagged` joins its tag
// and the fiber's labels into a new array on every update, and a metric finds its hook by that
// array's identity, so each request would make, hash and look up a metric key in the registry.
const histograms = new Map<string, Tagged<number>>()
const histogram = (subtype: string): Tagged<number> => {
  let found = histograms.get(subtype)
  if (found === undefined) {
    found = tagged(Telemetry.callbackDuration, [["subtype", subtype]])
    histograms.set(subtype, found)
  }
  return found
}

// A failed request's answer: a warning, the cause in full at debug level, the error.
const answerFailure = (
  send: (frame: unknown) => Effect.Effect<void>,
  requestId: string,
  subtype: string,
  text: string,
  cause: Cause.Cause<unknown>
): Effect.Effect<void> =>
  Effect.logWarning(`effect-claude-agent: ${subtype} failed (request ${requestId}): ${oneLine(text)}`).pipe(
    Effect.zipRight(Effect.logDebug(`effect-claude-agent: ${subtype} failure in full`, cause)),
    Effect.zipRight(send(Frames.error(requestId, text)))
  )

// Timed as `Effect.timed` would (the channel's clock, successes only), in fewer steps: one
// `matchCauseEffect` around the handler, whose success branch checks the answer and writes it.
const answer = (
  send: (frame: unknown) => Effect.Effect<void>,
  clock: Clock.Clock,
  effect: Effect.Effect<unknown, unknown, unknown>,
  encode: Encode,
  requestId: string,
  subtype: string
): Effect.Effect<void, never, unknown> => {
  const start = clock.unsafeCurrentTimeNanos()
  return Effect.matchCauseEffect(effect, {
    onSuccess: (response) => {
      const encoded = encode(response)
      if (Either.isLeft(encoded)) return answerFailure(send, requestId, subtype, encoded.left, Cause.fail(encoded.left))
      // `Metric.update` in the step that writes the answer: the fiber's metric labels, as it reads them.
      return Effect.withFiberRuntime((fiber) => {
        const elapsed = Number(clock.unsafeCurrentTimeNanos() - start) / 1_000_000
        histogram(subtype).update(elapsed, fiber.getFiberRef(FiberRef.currentMetricLabels))
        return send(Frames.success(requestId, encoded.right))
      })
    },
    onFailure: (cause) => {
      // An interrupted handler was cancelled: the CLI expects no answer, and answering
      // "success" could let a gated tool run.
      if (Cause.isInterruptedOnly(cause)) return Effect.void
      const failure = Cause.failureOption(cause)
      const text = Option.isSome(failure)
        ? errorText(failure.value)
        : `handler defect: ${errorText(Cause.squash(cause))}`
      return answerFailure(send, requestId, subtype, text, cause)
    }
  })
}

/**
 * The inbound half of a channel: answers go out through `send` (which ignores write failures);
 * spans sit under the tool call they are about while its span is open, else under the running turn
 * when `currentTurn` tracks one, else under the reader's span.
 *
 * @internal
 */
export const make = (
  send: (frame: unknown) => Effect.Effect<void>,
  currentTurn: Option.Option<Context.Tag.Service<CurrentTurn>>
) =>
  Effect.gen(function*() {
    const handlers = new Map<string, Run>()
    const running = yield* FiberMap.make<string>()
    // The span's end time is read as `Effect.withSpan` reads it: the channel's clock, when timing is on.
    const clock = yield* Effect.clock
    const timing = yield* FiberRef.get(FiberRef.currentTracerTimingEnabled)
    // Requests still running: a plain counter (it changes twice per request), touched only from
    // synchronous steps, and a latch closed only while someone waits for the count to reach zero
    // (`awaitNoneInFlight`), opened when it does: requests that run while nobody waits touch the
    // counter alone.
    let inFlight = 0
    const idle = yield* Effect.makeLatch(true)
    let awaited = false
    const done = () => {
      if (--inFlight === 0 && awaited) {
        awaited = false
        idle.unsafeOpen()
      }
    }
    const awaitNoneInFlight = Effect.suspend(() => {
      if (inFlight === 0) return Effect.void
      if (!awaited) {
        awaited = true
        idle.unsafeClose()
      }
      return idle.await
    })
    const end = (span: Tracer.Span, exit: Exit.Exit<unknown, unknown>) => {
      if (span.status._tag === "Started") span.end(timing ? clock.unsafeCurrentTimeNanos() : BigInt(0), exit)
    }
    // The context of an answer's fiber: the reader's, with the handler's own services (merged
    // once per handler's services while the reader's context stays the same) and the request's span.
    const merged = new WeakMap<
      Context.Context<never>,
      { readonly from: Context.Context<never>; readonly to: Context.Context<never> }
    >()
    const contextFor = (
      current: Context.Context<never>,
      services: Context.Context<never> | undefined,
      span: Tracer.Span
    ): Context.Context<unknown> => {
      if (services === undefined) return withSpan(current, span)
      let found = merged.get(services)
      if (found === undefined || found.from !== current) {
        found = { from: current, to: Context.merge(current, services) }
        merged.set(services, found)
      }
      return withSpan(found.to, span)
    }

    const nodeFor = annotationBases()

    // Starts the answer's fiber at once, on this stack: a handler that answers without waiting
    // (most hooks) is done, answer queued, before the reader moves on, with no scheduler round
    // trip. Only a fiber still running joins the map (where `control_cancel_request` and the
    // scope's end interrupt it). `span` is the new fiber's parent span from its first step; the
    // fiber's observer ends it, unless the call ended it already. The log annotations are part of
    // the new fiber's initial state, as `Effect.annotateLogs` around the work would set them, in
    // one update.
    const start = (
      parent: Fiber.RuntimeFiber<unknown, unknown>,
      effect: Effect.Effect<unknown, unknown, unknown>,
      handled: Handled,
      requestId: string,
      subtype: string,
      span: Tracer.Span,
      annotations: HashMap.HashMap<string, unknown>
    ): Effect.Effect<void> => {
      inFlight++
      const runtime = Runtime.make({
        context: contextFor(parent.currentContext, handled.services, span),
        fiberRefs: FiberRefs.updateAs(parent.getFiberRefs(), {
          fiberId: parent.id(),
          fiberRef: FiberRef.currentLogAnnotations,
          value: annotations
        }),
        runtimeFlags: Runtime.defaultRuntime.runtimeFlags
      })
      const fiber = Runtime.runFork(runtime, answer(send, clock, effect, handled.encode, requestId, subtype), {
        immediate: true
      })
      // Called at once if the fiber is already done.
      fiber.addObserver((exit) => {
        end(span, exit)
        done()
      })
      if (fiber.unsafePoll() === null) FiberMap.unsafeSet(running, requestId, fiber, { interruptAs: parent.id() })
      return Effect.void
    }

    // `FiberMap.run` with the handler's fiber started at once (`start`), under the request's span
    // made here with `Effect.makeSpan`. The handler is called first, on this stack, so that one
    // that throws instead of failing is answered as a defect, so that the services it captured are
    // known before its fiber starts, and so that a call with a span of its own (an MCP tool's,
    // `Captured.spanning`) gets that one span in place of `ControlChannel.<subtype>`: one span
    // per request, with the request's attributes and the call's, ended by the call with its exit.
    const run = (requestId: string, request: RequestBody): Effect.Effect<void> => {
      const subtype = request.subtype
      const handler = handlers.get(subtype)
      // The CLI's own words for a subtype it does not serve.
      if (handler === undefined) return send(Frames.error(requestId, `Unsupported control request subtype: ${subtype}`))
      const details = inboundDetails(request)
      const turn = Option.isSome(currentTurn)
        ? currentTurn.value.agentSpans?.parentFor(request) ?? currentTurn.value.span
        : undefined
      return Effect.withFiberRuntime((parent) => {
        let handled: Handled
        try {
          handled = handler(request, requestId)
        } catch (defect) {
          handled = died(defect)
        }
        const current = parent.getFiberRef(FiberRef.currentLogAnnotations)
        const node = nodeFor(current, subtype, details)
        const spanned = handled.spanned
        return Effect.flatMap(
          Effect.makeSpan(spanned === undefined ? `ControlChannel.${subtype}` : spanned.span.name, {
            kind: "server",
            // The call site is always this line: capturing it costs a stack trace per request.
            captureStackTrace: false,
            parent: turn,
            attributes: spanned === undefined ? node.attributes : spannedAttributes(node, spanned.span)
          }),
          (span) => {
            span.attribute("control.request_id", requestId)
            const annotations = HashMap.set(node.base ?? current, "controlRequestId", requestId)
            const effect = spanned === undefined ? handled.effect : spanned.run((exit) => end(span, exit))
            return start(parent, effect, handled, requestId, subtype, span, annotations)
          }
        )
      })
    }

    // An `initialize` reply lists the permission prompts the CLI is still waiting for (a host that
    // attaches, or re-initializes, learns of prompts it never saw): each is run like a request
    // just received, unless it is running already. As in the official SDK, only `can_use_tool`.
    const redeliver = (envelope: { readonly [key: string]: unknown }): Effect.Effect<void> => {
      const listed = envelope.pending_permission_requests
      if (!Array.isArray(listed) || listed.length === 0) return Effect.void
      return Effect.forEach(listed, (frame: unknown) => {
        const routed = route(frame)
        if (routed._tag !== "Request" || routed.request.subtype !== Control.CanUseTool.subtype) return Effect.void
        const { server_policy_ask_only: _ignored, ...request } = routed.request
        return FiberMap.has(running, routed.requestId).pipe(
          Effect.flatMap((running) =>
            running ? Effect.void : Effect.zipRight(
              Effect.logDebug(`effect-claude-agent: permission request ${routed.requestId} redelivered by initialize`),
              run(routed.requestId, { ...request, subtype: routed.request.subtype })
            )
          )
        )
      }, { discard: true })
    }

    const inbound: Inbound = {
      handle: (descriptor, handler) =>
        Effect.sync(() => void handlers.set(descriptor.subtype, compile(descriptor, handler))),
      run,
      cancel: (requestId) => FiberMap.remove(running, requestId),
      redeliver,
      inFlight: Effect.sync(() => inFlight),
      awaitNoneInFlight
    }
    return inbound
  })
