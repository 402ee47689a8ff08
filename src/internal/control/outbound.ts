/**
 * Outbound control requests: encode the payload, record the request in the pending table with
 * what completes it and its deadline, write it, wait for the reply (on interruption, withdraw it
 * with `control_cancel_request`), decode the reply. A started request is decoded, and its
 * `onSettled` run, where it is settled. Deadlines are kept by one timer fiber per channel that
 * sleeps until the earliest one while a request is pending, rather than a race of two fibers per
 * request.
 *
 * @internal
 */
import {
  Clock,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  FiberHandle,
  FiberId,
  Option,
  ParseResult,
  Scope
} from "effect"
import type * as Control from "../../schema/Control.js"
import { ControlError, OptionsError, TimeoutException } from "../../SdkError.js"
import type { ControlChannelShape, RequestError, RequestOptions, StartOptions } from "../../services/ControlChannel.js"
import type { TransportShape } from "../../services/Transport.js"
import { positiveDurationProblem } from "../schema/duration.js"
import * as Guard from "../schema/guard.js"
import * as Issues from "../schema/issues.js"
import * as Frames from "../protocol/controlFrames.js"
import type { Entry, Outcome, PendingTable } from "../protocol/pending.js"
import { errorText } from "./text.js"

// `ParseResult` memoises the parser of each Schema AST, and `Guard` its guard and verdicts, so
// making these per call costs lookups.
const decodeOptions = { onExcessProperty: "preserve" } as const

/**
 * What completes a pending request with its reply (undecoded) or its failure, on whichever fiber
 * settles it, and the timeout it was given (for the error).
 *
 * @internal
 */
export interface Waiter {
  readonly complete: (outcome: Exit.Exit<unknown, RequestError>, requestId: string) => Effect.Effect<void>
  readonly timeoutMillis: number
}

/**
 * The outbound half's operations.
 *
 * @internal
 */
export interface Outbound {
  readonly request: ControlChannelShape["request"]
  readonly start: ControlChannelShape["start"]
  /** Completes a pending request with its reply's outcome. */
  readonly settle: (outcome: Outcome<Waiter>) => Effect.Effect<void>
  /** Fails every pending request, and every later one, with `error`. */
  readonly failAll: (error: RequestError) => Effect.Effect<void>
  /** Fails every pending request with `error`, made only if one is pending. */
  readonly failPending: (error: () => RequestError) => Effect.Effect<void>
}

// What a reply does to its request: its response, or the CLI's error as a `ControlError`.
const replyOutcome = (outcome: Outcome<Waiter>): Exit.Exit<unknown, RequestError> => {
  const { requestId, subtype } = outcome.entry
  switch (outcome._tag) {
    case "Succeeded":
      return Exit.succeed(outcome.response)
    case "Failed":
      return Exit.fail(
        new ControlError({
          subtype,
          requestId,
          error: outcome.error,
          ...(outcome.errorCode !== undefined ? { errorCode: outcome.errorCode } : {})
        })
      )
    case "Unreadable":
      // A reply this version cannot read still ends its request, rather than leaving it to time out.
      return Exit.fail(
        new ControlError({
          subtype,
          requestId,
          error: `malformed control_response: ${errorText(outcome.response)}`,
          errorCode: "invalid_response"
        })
      )
  }
}

/**
 * The outbound half of a channel over `transport`, with its pending requests in `table` and its
 * deadline timer in `timer` (a handle in the channel's scope).
 *
 * @internal
 */
export const make = (
  transport: TransportShape,
  table: PendingTable<Waiter>,
  defaultTimeout: Duration.Duration,
  /** Writes a frame the CLI need not receive (a cancel), ignoring a failure to write. */
  sendQuietly: (frame: unknown) => Effect.Effect<void>,
  timer: FiberHandle.FiberHandle<void, never>
): Outbound => {
  let failedWith: RequestError | undefined
  // When the running timer wakes; `undefined`: no timer runs.
  let armedFor: number | undefined

  const timedOut = (entry: Entry<Waiter>) =>
    Effect.zipRight(
      entry.waiter.complete(
        Exit.fail(
          new TimeoutException({
            requestId: entry.requestId,
            subtype: entry.subtype,
            timeoutMillis: entry.waiter.timeoutMillis
          })
        ),
        entry.requestId
      ),
      sendQuietly(Frames.cancel(entry.requestId))
    )

  // Sleeps until the earliest deadline, fails what has expired by then, and goes on while any
  // request has a deadline. The clock is the channel's, so `TestClock` drives it in tests.
  const sweep: Effect.Effect<void> = Effect.suspend(() => {
    const next = table.nextDeadline()
    armedFor = next
    if (next === undefined) return Effect.void
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      now < next
        ? Effect.zipRight(Effect.sleep(next - now), sweep)
        : Effect.zipRight(Effect.forEach(table.expire(now), timedOut, { discard: true }), sweep))
  })

  // A timer already due at or before `deadline` will see it; otherwise (re)start it.
  const arm = (deadline: number) =>
    armedFor !== undefined && armedFor <= deadline
      ? Effect.void
      : Effect.asVoid(FiberHandle.run(timer, Effect.suspend(() => sweep)))

  // No timer runs while nothing is pending. It is signalled rather than awaited (as `FiberHandle`
  // replaces a fiber): the reader settles replies, and the handle lets go of the timer once it ends.
  const disarm = () => {
    if (armedFor === undefined || table.nextDeadline() !== undefined) return
    armedFor = undefined
    const running = FiberHandle.unsafeGet(timer)
    if (Option.isSome(running)) running.value.unsafeInterruptAsFork(FiberId.none)
  }

  // Decodes a reply to `descriptor`. A reply without `response` reads as `{}` for a request that
  // expects fields (all optional then), and as nothing for one that expects none.
  const decodeReply = <Req extends Control.Request.Any>(
    descriptor: Req,
    requestId: string,
    reply: unknown
  ): Exit.Exit<Control.Request.Success<Req>, RequestError> => {
    const body = reply === undefined && descriptor.success.ast._tag !== "VoidKeyword" ? {} : reply
    // A reply the compiled guard accepts (most are; `initialize`'s is 17 KB) is its own decoding
    // when the Schema transforms nothing.
    const decoded = Guard.fastPath(
      descriptor.success,
      ParseResult.decodeUnknownEither(descriptor.success, decodeOptions),
      { excessKept: true }
    )(body)
    return Either.isLeft(decoded)
      ? Exit.fail(
        new ControlError({
          subtype: descriptor.subtype,
          requestId,
          error: `unexpected ${descriptor.subtype} reply: ${Issues.describe(decoded.left)}`,
          errorCode: "invalid_response"
        })
      )
      : Exit.succeed(decoded.right)
  }

  // Withdraws a request still pending (its caller was interrupted or its scope closed).
  const withdraw = (requestId: string) =>
    Effect.suspend(() => {
      if (!table.remove(requestId)) return Effect.void
      disarm()
      return sendQuietly(Frames.cancel(requestId))
    })

  // Records and writes the request, to be completed by `complete`; returns its id.
  const send = <Req extends Control.Request.Any>(
    descriptor: Req,
    payload: Control.Request.Payload<Req> | undefined,
    options: RequestOptions | undefined,
    complete: Waiter["complete"]
  ): Effect.Effect<string, RequestError> =>
    Effect.suspend(() => {
      if (failedWith !== undefined) return Effect.fail(failedWith)
      const subtype = descriptor.subtype
      const fields = ParseResult.encodeUnknownEither(descriptor.payload, decodeOptions)(payload ?? {})
      // Refused before a request id is taken: nothing is sent.
      if (Either.isLeft(fields)) {
        return Effect.fail(new OptionsError({ field: subtype, detail: `not sent: ${Issues.describe(fields.left)}` }))
      }
      const timeoutProblem = options?.timeout === undefined ? undefined : positiveDurationProblem(options.timeout)
      if (timeoutProblem !== undefined) {
        return Effect.fail(new OptionsError({ field: `${subtype} timeout`, detail: `not sent: ${timeoutProblem}` }))
      }
      const requestId = table.nextId()
      const timeoutMillis = Duration.toMillis(
        options?.timeout !== undefined ? Duration.decode(options.timeout) : defaultTimeout
      )
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const deadline = now + timeoutMillis
        table.add(requestId, subtype, deadline, { complete, timeoutMillis })
        return transport.send(Frames.request(requestId, subtype, fields.right)).pipe(
          Effect.tapError(() => Effect.sync(() => table.remove(requestId))),
          Effect.zipRight(arm(deadline)),
          Effect.as(requestId)
        )
      })
    })

  const request: Outbound["request"] = (descriptor, ...[payload, options]) =>
    Effect.suspend(() => {
      const deferred = Deferred.unsafeMake<unknown, RequestError>(FiberId.none)
      return Effect.flatMap(
        send(descriptor, payload, options, (outcome) => Deferred.done(deferred, outcome)),
        (requestId) =>
          Deferred.await(deferred).pipe(
            Effect.onInterrupt(() => withdraw(requestId)),
            Effect.flatMap((reply) => decodeReply(descriptor, requestId, reply))
          )
      )
    })

  // The wait needs no fiber of its own: the timer keeps the deadline, the reply is decoded (and
  // `onSettled` run) where it is settled, and the caller's scope withdraws the request if it is
  // still pending when the scope closes.
  const start = <Req extends Control.Request.Any>(
    descriptor: Req,
    payload: Control.Request.Payload<Req> | undefined,
    options: StartOptions<Req> | undefined
  ) =>
    Effect.suspend(() => {
      const result = Deferred.unsafeMake<Control.Request.Success<Req>, RequestError>(FiberId.none)
      const onSettled = options?.onSettled
      const complete = (outcome: Exit.Exit<unknown, RequestError>, requestId: string) => {
        const decoded = Exit.flatMap(outcome, (reply) => decodeReply(descriptor, requestId, reply))
        const done = Deferred.done(result, decoded)
        return onSettled === undefined ? done : Effect.uninterruptible(Effect.zipRight(onSettled(decoded), done))
      }
      // The scope's own finalizer, uninterruptible as `Effect.addFinalizer`'s: no diff and patch
      // of the fiber's refs around it.
      return Effect.flatMap(
        Effect.zip(send(descriptor, payload, options, complete), Effect.scope),
        ([requestId, scope]) =>
          Effect.as(Scope.addFinalizer(scope, Effect.uninterruptible(withdraw(requestId))), Deferred.await(result))
      )
    })

  const settle = (outcome: Outcome<Waiter>): Effect.Effect<void> =>
    Effect.zipRight(outcome.entry.waiter.complete(replyOutcome(outcome), outcome.entry.requestId), Effect.sync(disarm))

  const failEntries = (error: RequestError) =>
    Effect.suspend(() => {
      const failed = Exit.fail(error)
      return Effect.forEach(table.drain(), (entry) => entry.waiter.complete(failed, entry.requestId), {
        discard: true
      })
    })

  return {
    request,
    start: (descriptor, ...[payload, options]) => start(descriptor, payload, options),
    settle,
    failAll: (error) =>
      Effect.suspend(() => {
        failedWith = error
        return failEntries(error)
      }),
    failPending: (error) => Effect.suspend(() => (table.size === 0 ? Effect.void : failEntries(error())))
  }
}
