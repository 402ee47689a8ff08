/**
 * The control channel's implementation, as wiring of its parts: the protocol core's pending
 * table and session bookkeeping, the outbound and inbound halves, the message queue and the
 * reader. See `services/ControlChannel.ts` for the contract.
 *
 * @internal
 */
import { Context, Deferred, Duration, Effect, FiberHandle, Option, Scope } from "effect"
import { SessionClosedError } from "../../SdkError.js"
import type { ControlChannelConfig, ControlChannelShape, StreamError } from "../../services/ControlChannel.js"
import { Transport } from "../../services/Transport.js"
import * as Defaults from "../defaults.js"
import { PendingTable } from "../protocol/pending.js"
import * as Defer from "../approvals/defer.js"
import * as Control from "../../schema/Control.js"
import * as BudgetGuard from "../budget/guard.js"
import * as Mirror from "../session/mirror.js"
import { CurrentTurn } from "../session/turns.js"
import * as Inbound from "./inbound.js"
import * as MessageQueue from "./messageQueue.js"
import * as Outbound from "./outbound.js"
import * as Reader from "./reader.js"
import * as SessionState from "./sessionState.js"

// A write that failed: the CLI is gone or going, and the reader reports that.
const couldNotAnswer = (e: { readonly message: string }) =>
  Effect.logDebug(`effect-claude-agent: could not answer a control request: ${e.message}`)

/**
 * A control channel over the `Transport` in context, its reader in the current scope.
 *
 * @internal
 */
export const make = (
  config: ControlChannelConfig
): Effect.Effect<ControlChannelShape, never, Transport | Scope.Scope> =>
  Effect.contextWithEffect((context: Context.Context<Transport | Scope.Scope>) =>
    makeIn(context, Context.get(context, Scope.Scope), config)
  )

/**
 * A control channel over the services of `context` (its `Transport`, and the optional settings
 * the reader follows), its reader in `scope`, which must also be the fiber's: a session's
 * services are built over a context of their own, and providing it around the channel's making
 * would set and restore the fiber's context for a handful of lookups.
 *
 * @internal
 */
export const makeIn = (
  context: Context.Context<Transport>,
  scope: Scope.Scope,
  config: ControlChannelConfig
): Effect.Effect<ControlChannelShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const transport = Context.get(context, Transport)
    // Inbound spans sit under the running turn (or the tool call they are about), when the
    // session tracks one.
    const currentTurn = Context.getOption(context, CurrentTurn)
    const defaultTimeout = config.controlTimeout !== undefined
      ? Duration.decode(config.controlTimeout)
      : Defaults.controlTimeout
    const sendQuietly = (frame: unknown) => Effect.catchAll(transport.send(frame), couldNotAnswer)
    const table = new PendingTable<Outbound.Waiter>()
    const terminal = yield* Deferred.make<void, StreamError>()
    const outbound = Outbound.make(
      transport,
      table,
      defaultTimeout,
      sendQuietly,
      yield* FiberHandle.make<void, never>()
    )
    const inbound = yield* Inbound.make(sendQuietly, currentTurn)
    const queue = yield* MessageQueue.make(config.messageBufferBytes ?? Defaults.messageBufferBytes)
    const state = yield* SessionState.make(terminal)
    // A session with a store: the reader hands its `transcript_mirror` frames to the mirror.
    const mirrorSettings = Context.getOption(context, Mirror.MirrorSettings)
    const mirror = Option.isSome(mirrorSettings)
      ? Mirror.make(mirrorSettings.value, (messages) => queue.offer(messages, 0))
      : undefined
    // A session with an approval store: the reader records the calls its turns stop at.
    const deferSettings = Context.getOption(context, Defer.DeferSettings)
    const deferred = Option.isSome(deferSettings)
      ? Defer.make(deferSettings.value, (messages) => queue.offer(messages, 0))
      : undefined
    // A session a `Budget` caps: the reader hands each message to its watch, which may stop the turn.
    const guard = Context.getOption(context, BudgetGuard.BudgetGuard)
    const budget = Option.isSome(guard)
      ? guard.value.watch({
        fail: (error) => queue.offer([new BudgetGuard.BudgetFailure(error)], 0),
        // Written before the reader takes the next frame; the reader reads the answer, so it
        // must not wait for it.
        interrupt: Effect.ignore(Scope.extend(outbound.start(Control.Interrupt, {}), scope))
      })
      : undefined
    const turn = Option.getOrUndefined(currentTurn)
    if (turn !== undefined) turn.fed = true
    yield* Reader.start({ transport, table, outbound, inbound, queue, state, terminal, mirror, deferred, budget, turn })

    // Requests still waiting when the session's scope closes must not hang their callers, and
    // neither must a consumer still reading messages (the reader is interrupted with the scope, so
    // the end of the CLI's output may never be seen). Both are no-ops once the reader has finished.
    // The error is made only when someone receives it: a `Schema.TaggedError` validates its fields
    // and captures a stack trace, and most sessions close with nothing pending and nobody reading on.
    // The scope's own finalizer (no diff and patch of the fiber's refs around it).
    yield* Scope.addFinalizer(
      scope,
      Effect.uninterruptible(Effect.suspend(() => {
        let closed: SessionClosedError | undefined
        const closedError = () => closed ??= new SessionClosedError({ reason: "ScopeClosed" })
        return Effect.zipRight(outbound.failPending(closedError), Effect.sync(() => queue.endLazily(closedError)))
      }))
    )

    const shape: ControlChannelShape = {
      request: outbound.request,
      start: outbound.start,
      handle: inbound.handle,
      messages: queue.stream,
      inFlight: inbound.inFlight,
      awaitNoneInFlight: inbound.awaitNoneInFlight,
      lastSessionId: state.lastSessionId,
      awaitSessionId: state.awaitSessionId,
      closed: Deferred.await(terminal),
      runState: state.runState,
      awaitRunState: state.awaitRunState,
      results: state.results
    }
    return shape
  })
