/**
 * Outbound control requests: encode the payload, record the request in the pending table with a
 * `Deferred` to wait on, write it, wait for the reply within the deadline (on the deadline or on
 * interruption, withdraw it with `control_cancel_request`), decode the reply.
 *
 * @internal
 */
import { Clock, Deferred, Duration, Effect, Either, Fiber, ParseResult } from "effect"
import type * as Control from "../../schema/Control.js"
import { ControlError, TimeoutException } from "../../SdkError.js"
import type { ControlChannelShape, RequestError, RequestOptions } from "../../services/ControlChannel.js"
import type { TransportShape } from "../../services/Transport.js"
import { positiveDurationProblem } from "../schema/duration.js"
import * as Issues from "../schema/issues.js"
import * as Frames from "../protocol/controlFrames.js"
import type { Outcome, PendingTable } from "../protocol/pending.js"
import { errorText } from "./text.js"

// `ParseResult` memoises the parser of each Schema AST, so making these per call costs a lookup.
const decodeOptions = { onExcessProperty: "preserve" } as const

/**
 * What the shell waits on for a pending request.
 *
 * @internal
 */
export type Waiter = Deferred.Deferred<unknown, RequestError>

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
 * The outbound half of a channel over `transport`, with its pending requests in `table`.
 *
 * @internal
 */
export const make = (
  transport: TransportShape,
  table: PendingTable<Waiter>,
  defaultTimeout: Duration.Duration,
  /** Writes a frame the CLI need not receive (a cancel), ignoring a failure to write. */
  sendQuietly: (frame: unknown) => Effect.Effect<void>
): Outbound => {
  let failedWith: RequestError | undefined

  const invalid = (subtype: string, requestId: string, error: string, errorCode: string) =>
    Effect.fail(new ControlError({ subtype, requestId, error, errorCode }))

  const requestWith = <Req extends Control.Request.Any>(
    descriptor: Req,
    payload: Control.Request.Payload<Req> | undefined,
    options: RequestOptions | undefined,
    written: Deferred.Deferred<void, RequestError> | undefined
  ): Effect.Effect<Control.Request.Success<Req>, RequestError> =>
    Effect.gen(function*() {
      if (failedWith !== undefined) return yield* Effect.fail(failedWith)
      const subtype = descriptor.subtype
      const requestId = table.nextId()
      const fields = ParseResult.encodeUnknownEither(descriptor.payload, decodeOptions)(payload ?? {})
      if (Either.isLeft(fields)) {
        const problem = Issues.describe(fields.left)
        return yield* invalid(subtype, requestId, `the request was not sent: its payload is invalid: ${problem}`, "invalid_request")
      }
      const timeoutProblem = options?.timeout === undefined ? undefined : positiveDurationProblem(options.timeout)
      if (timeoutProblem !== undefined) {
        const problem = `the request was not sent: its \`timeout\` is invalid: ${timeoutProblem}`
        return yield* invalid(subtype, requestId, problem, "invalid_request")
      }
      const timeout = options?.timeout !== undefined ? Duration.decode(options.timeout) : defaultTimeout
      const deferred = yield* Deferred.make<unknown, RequestError>()
      const now = yield* Clock.currentTimeMillis
      table.add(requestId, subtype, now + Duration.toMillis(timeout), deferred)
      const cancel = sendQuietly(Frames.cancel(requestId))
      const reply = yield* transport.send(Frames.request(requestId, subtype, fields.right)).pipe(
        Effect.zipRight(written === undefined ? Effect.void : Deferred.succeed(written, undefined)),
        Effect.zipRight(Deferred.await(deferred)),
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new TimeoutException({ requestId, subtype, timeoutMillis: Duration.toMillis(timeout) })
        }),
        Effect.tapError((e) => (e instanceof TimeoutException ? cancel : Effect.void)),
        Effect.onInterrupt(() => cancel),
        Effect.ensuring(Effect.sync(() => table.remove(requestId)))
      )
      // A reply without `response` reads as `{}` for a request that expects fields (all optional
      // then), and as nothing for one that expects none.
      const body = reply === undefined && descriptor.success.ast._tag !== "VoidKeyword" ? {} : reply
      const decoded = ParseResult.decodeUnknownEither(descriptor.success, decodeOptions)(body)
      if (Either.isLeft(decoded)) {
        return yield* invalid(subtype, requestId, `unexpected ${subtype} reply: ${Issues.describe(decoded.left)}`, "invalid_response")
      }
      return decoded.right
    })

  const settle = (outcome: Outcome<Waiter>): Effect.Effect<void> => {
    const { requestId, subtype, waiter } = outcome.entry
    switch (outcome._tag) {
      case "Succeeded":
        return Deferred.succeed(waiter, outcome.response)
      case "Failed":
        return Deferred.fail(
          waiter,
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
          waiter,
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
    Effect.forEach(table.drain(), (entry) => Deferred.fail(entry.waiter, error), { discard: true })

  return {
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
    settle,
    failAll: (error) =>
      Effect.suspend(() => {
        failedWith = error
        return failEntries(error)
      }),
    failPending: (error) => Effect.suspend(() => (table.size === 0 ? Effect.void : failEntries(error())))
  }
}
