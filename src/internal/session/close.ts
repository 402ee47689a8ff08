/**
 * What closing a session does before the process is ended.
 *
 * @internal
 */
import { Clock, type Duration, Effect } from "effect"
import * as Control from "../../schema/Control.js"
import type { ControlChannelShape, RunState } from "../../services/ControlChannel.js"
import type { TransportShape } from "../../services/Transport.js"
import { runDetached } from "../effect/detached.js"
import type { InitState } from "./initialize.js"

/**
 * Whether a run state is idle: the CLI reported `idle`, or never reported a state.
 *
 * @internal
 */
export const isIdle = (run: RunState): boolean => run.state === undefined || run.state === "idle"

// The deadlines run on the live clock: a test under `TestClock` whose fake CLI never reports
// `idle` must still be able to close its session.
const liveClock = Clock.make()

/**
 * The close sequence, in three cases (every wait bounded by the grace period):
 * - the turn finished (its `result` came): the CLI may still call back (a hook, a background
 *   task) until it reports `idle`, and answers need stdin; wait for idle and for running
 *   callbacks, then close stdin;
 * - the turn is still running (the consumer was interrupted): the CLI would finish the turn
 *   after EOF, so ask it to stop with the protocol's `interrupt` first; it then goes idle
 *   within milliseconds and exits on EOF, with no signal needed;
 * - `initialize` is still unanswered (or failed): the CLI has done nothing anyone waits for,
 *   and before it has initialised it takes seconds to notice the end of its input; stop it.
 *
 * @internal
 */
export const close = (
  control: ControlChannelShape,
  transport: TransportShape,
  init: InitState,
  grace: Duration.Duration
): Effect.Effect<void> =>
  Effect.flatMap(control.runState, (run) => {
    if (!init.answered()) return stopUninitialized(transport, grace)
    const interrupt = (run.state === "running" || run.state === "requires_action") && !run.afterResult
    // Nothing to wait for (the usual case: the CLI said `idle` after the result): close stdin now,
    // on this fiber, with no waits to fork, race and time.
    if (!interrupt && isIdle(run)) {
      return Effect.flatMap(control.inFlight, (n) =>
        n === 0 ? transport.endInput : settle(control, transport, false, grace))
    }
    return settle(control, transport, interrupt, grace)
  })

// SIGTERM, waiting for the exit at most `grace`: the transport's own stop sequence escalates.
const stopUninitialized = (transport: TransportShape, grace: Duration.Duration) =>
  transport.terminate.pipe(
    Effect.interruptible,
    Effect.timeout(grace),
    Effect.ignore,
    Effect.withClock(liveClock),
    runDetached,
    Effect.zipRight(transport.endInput)
  )

// The slow path: interrupt a turn still running, then wait (bounded) for idle and for running
// callbacks. The waits are made interruptible so that their deadline can stop them: they run in
// the deadline's race, on a fiber of their own, where the closing fiber's pending interruption does
// not reach them. The `interrupt` request runs on the closing fiber, so it is detached
// (`runDetached`) for that interruption not to stop it at once. Idle first, then no callback
// running: a callback the last messages started is counted before the CLI reports `idle`.
const settle = (
  control: ControlChannelShape,
  transport: TransportShape,
  interrupt: boolean,
  grace: Duration.Duration
) => {
  const wait = Effect.gen(function*() {
    if (isIdle(yield* control.runState) && (yield* control.inFlight) === 0) return yield* transport.endInput
    yield* Effect.zipRight(control.awaitRunState(isIdle), control.awaitNoneInFlight).pipe(
      Effect.interruptible,
      Effect.timeout(grace),
      Effect.ignore
    )
    yield* transport.endInput
  })
  if (!interrupt) return Effect.withClock(wait, liveClock)
  return control.request(Control.Interrupt, {}, { timeout: grace }).pipe(
    Effect.interruptible,
    Effect.ignore,
    Effect.zipRight(wait),
    Effect.withClock(liveClock),
    runDetached
  )
}
