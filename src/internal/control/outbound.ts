/**
 * Outbound control requests: encode the payload, record the request in the pending table with a
 * `Deferred` to wait on and its deadline, write it, wait for the reply (on interruption, withdraw
 * it with `control_cancel_request`), decode the reply. Deadlines are kept by one timer fiber per
 * channel that sleeps until the earliest one, rather than a race of two fibers per request.
 *
 * @internal
 */
import { Clock, Deferred, Duration, Effect, Either, FiberHandle, FiberId, ParseResult } from "effect"
import type * as Control from "../../schema/Control.js"
import { ControlError, OptionsError, TimeoutException } from "../../SdkError.js"
import type { ControlChannelShape, RequestError, RequestOptions } from "../../services/ControlChannel.js"
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
 * What the shell waits on for a pending request, and the timeout it was given (for the error).
 *
 * @internal
 */
export interface Waiter {
  readonly deferred: Deferred.Deferred<unknown, RequestError>
  readonly timeoutMillis: number
}

interface Sent<A> {
  readonly requestId: string
  readonly wait: Effect.Effect<A, RequestError>
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

  const invalid = (subtype: string, requestId: string, error: string, errorCode: string) =>
    Effect.fail(new ControlError({ subtype, requestId, error, errorCode }))

  const timedOut = (entry: Entry<Waiter>) =>
    Effect.zipRight(
      Deferred.fail(
        entry.waiter.deferred,
        new TimeoutException({
          requestId: entry.requestId,
          subtype: entry.subtype,
          timeoutMillis: entry.waiter.timeoutMillis
        })
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

  // Decodes a reply to `descriptor`. A reply without `response` reads as `{}` for a request that
  // expects fields (all optional then), and as nothing for one that expects none.
  const decodeReply = <Req extends Control.Request.Any>(descriptor: Req, requestId: string, reply: unknown) => {
    const body = reply === undefined && descriptor.success.ast._tag !== "VoidKeyword" ? {} : reply
    // A reply the compiled guard accepts (most are; `initialize`'s is 17 KB) is its own decoding
    // when the Schema transforms nothing.
    const decoded = Guard.fastPath(
      descriptor.success,
      ParseResult.decodeUnknownEither(descriptor.success, decodeOptions),
      { excessKept: true }
    )(body)
    return Either.isLeft(decoded)
      ? invalid(
        descriptor.subtype,
        requestId,
        `unexpected ${descriptor.subtype} reply: ${Issues.describe(decoded.left)}`,
        "invalid_response"
      )
      : Effect.succeed(decoded.right)
  }

  // Withdraws a request still pending (its caller was interrupted or its scope closed).
  const withdraw = (requestId: string) =>
    Effect.suspend(() => (table.remove(requestId) ? sendQuietly(Frames.cancel(requestId)) : Effect.void))

  // Records and writes the request; returns its id and the wait for its decoded reply.
  const send = <Req extends Control.Request.Any>(
    descriptor: Req,
    payload: Control.Request.Payload<Req> | undefined,
    options: RequestOptions | undefined
  ): Effect.Effect<Sent<Control.Request.Success<Req>>, RequestError> =>
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
      const deferred = Deferred.unsafeMake<unknown, RequestError>(FiberId.none)
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const deadline = now + timeoutMillis
        table.add(requestId, subtype, deadline, { deferred, timeoutMillis })
        const wait = Deferred.await(deferred).pipe(
          Effect.onInterrupt(() => withdraw(requestId)),
          Effect.flatMap((reply) => decodeReply(descriptor, requestId, reply))
        )
        return transport.send(Frames.request(requestId, subtype, fields.right)).pipe(
          Effect.tapError(() => Effect.sync(() => table.remove(requestId))),
          Effect.zipRight(arm(deadline)),
          Effect.as({ requestId, wait })
        )
      })
    })

  const settle = (outcome: Outcome<Waiter>): Effect.Effect<void> => {
    const { requestId, subtype, waiter } = outcome.entry
    switch (outcome._tag) {
      case "Succeeded":
        return Deferred.succeed(waiter.deferred, outcome.response)
      case "Failed":
        return Deferred.fail(
          waiter.deferred,
          new ControlError({
            subtype,
            requestId,
            error: outcome.error,
            ...(outcome.errorCode !== undefined ? { errorCode: outcome.errorCode } : {})
          })
        )
      case "Unreadable":
        // A reply this version cannot read still ends its request, rather than leaving it to time out.
        return Deferred.fail(
          waiter.deferred,
          new ControlError({
            subtype,
            requestId,
            error: `malformed control_response: ${errorText(outcome.response)}`,
            errorCode: "invalid_response"
          })
        )
    }
  }

  const failEntries = (error: RequestError) =>
    Effect.forEach(table.drain(), (entry) => Deferred.fail(entry.waiter.deferred, error), { discard: true })

  return {
    request: (descriptor, ...[payload, options]) =>
      Effect.flatMap(send(descriptor, payload, options), (sent) => sent.wait),
    // The wait needs no fiber of its own: the timer keeps the deadline, and the caller's scope
    // withdraws the request if it is still pending when the scope closes.
    start: (descriptor, ...[payload, options]) =>
      Effect.flatMap(
        send(descriptor, payload, options),
        (sent) => Effect.as(Effect.addFinalizer(() => withdraw(sent.requestId)), sent.wait)
      ),
    settle,
    failAll: (error) =>
      Effect.suspend(() => {
        failedWith = error
        return failEntries(error)
      }),
    failPending: (error) => Effect.suspend(() => (table.size === 0 ? Effect.void : failEntries(error())))
  }
}
