/**
 * A session's budget guard: the check when a turn starts, and the charges as it runs. The reader
 * hands it each message frame after its bookkeeping (the usage fold) has taken it; the guard
 * charges what the running turn has spent since the last charge and, at the first message after
 * which a cap stands spent, asks the CLI to interrupt the turn and queues a `BudgetFailure` that
 * ends the turn's message stream. The turn's `result` replaces the running estimate with its
 * exact spend.
 *
 * @internal
 */
import { Context, Effect } from "effect"
import type { Account, BudgetShape, Standing } from "../../Budget.js"
import { BudgetExceededError } from "../../SdkError.js"
import type { RawObject } from "../protocol/router.js"
import type { Tally } from "../usage/tally.js"
import { settledFor } from "../usage/tally.js"
import * as Caps from "./caps.js"
import * as Price from "./price.js"

/**
 * Queued in place of a message when a running turn crossed a cap: the session's message pull
 * fails the turn's stream with `error` where it meets it, and drops the rest of the turn.
 *
 * @internal
 */
export class BudgetFailure {
  constructor(readonly error: BudgetExceededError) {}
}

/**
 * What the reader calls for each message frame.
 *
 * @internal
 */
export interface Watch {
  /**
   * After the bookkeeping has taken `frame`: the charge to run after the frames before it, or
   * `undefined` when the frame changes nothing.
   */
  readonly frame: (frame: RawObject, tally: Tally) => Effect.Effect<void> | undefined
}

/**
 * What the control channel gives the guard to stop a turn.
 *
 * @internal
 */
export interface Stop {
  /** Queues the failure after the messages already queued. */
  readonly fail: (error: BudgetExceededError) => Effect.Effect<void>
  /** Asks the CLI to end the turn, without waiting for the answer (the reader reads it). */
  readonly interrupt: Effect.Effect<void>
}

/**
 * One session's guard.
 *
 * @internal
 */
export interface Guard {
  readonly account: Account
  /** Before a prompt is written: fails when a cap of the account is spent (or the reservation would overrun it). */
  readonly admit: Effect.Effect<void, BudgetExceededError>
  readonly watch: (stop: Stop) => Watch
}

/**
 * The guard of the session being opened, when a `Budget` is in context: read by the control
 * channel (the reader's watch) and by the session (`send`).
 *
 * @internal
 */
export class BudgetGuard extends Context.Tag("effect-claude-agent/internal/BudgetGuard")<BudgetGuard, Guard>() {}

const errorOf = (s: Standing, stage: "start" | "running" | "queued") =>
  new BudgetExceededError({
    scope: s.scope,
    id: s.id,
    unit: s.unit,
    window: s.window,
    spent: s.spent,
    limit: s.limit,
    stage
  })

/**
 * Fails with the first cap of `account` that stands spent (a pool request before it waits).
 *
 * @internal
 */
export const check = (
  budget: BudgetShape,
  account: Account,
  stage: "start" | "queued"
): Effect.Effect<void, BudgetExceededError> =>
  Effect.flatMap(budget.standings(account), (all) => {
    const over = Caps.spentCap(all)
    return over === undefined ? Effect.void : Effect.fail(errorOf(over, stage))
  })

const isOutputDelta = (frame: RawObject): boolean => {
  const event = frame.event
  return typeof event === "object" && event !== null && "type" in event && event.type === "message_delta"
}

/**
 * A guard charging `account` in `budget`.
 *
 * @internal
 */
export const make = (budget: BudgetShape, account: Account): Guard => {
  const reserve: Price.Amount = { usd: budget.config.reserve?.usd ?? 0, tokens: budget.config.reserve?.tokens ?? 0 }
  // What the open turn has added to the ledger, what it reserved, and whether it was stopped.
  let charged = Price.zero
  let reserved = Price.zero
  let stopped = false

  const admit = Effect.gen(function*() {
    const standings = yield* budget.charge(account, reserve)
    const over = Caps.refused(standings, reserve)
    if (over !== undefined) {
      if (!Price.isZero(reserve)) yield* budget.charge(account, Price.minus(Price.zero, reserve))
      return yield* Effect.fail(errorOf(over, "start"))
    }
    reserved = Price.plus(reserved, reserve)
    charged = Price.plus(charged, reserve)
  })

  const watch = (stop: Stop): Watch => {
    const runningTotal = new Price.RunningTotal()
    const running = (amount: Price.Amount) =>
      Effect.flatMap(budget.charge(account, amount), (standings) => {
        if (stopped) return Effect.void
        const over = Caps.spentCap(standings)
        if (over === undefined) return Effect.void
        stopped = true
        return Effect.zipRight(stop.fail(errorOf(over, "running")), stop.interrupt)
      })
    return {
      frame: (frame, tally) => {
        const type = frame.type
        if (type === "result") {
          const settled = settledFor(frame)
          const delta = settled === undefined
            ? Price.zero
            : Price.minus({ usd: settled.turn.costUsd, tokens: Price.tokensOf(settled.turn) }, charged)
          charged = Price.zero
          reserved = Price.zero
          stopped = false
          return Price.isZero(delta) ? undefined : Effect.asVoid(budget.charge(account, delta))
        }
        if (stopped || !(type === "assistant" || (type === "stream_event" && isOutputDelta(frame)))) return undefined
        const target = Price.max(Price.max(runningTotal.of(tally.current), reserved), charged)
        const delta = Price.minus(target, charged)
        charged = target
        // Every assistant message checks, even one that adds nothing: another turn may have
        // crossed the cap since.
        return type === "assistant" || !Price.isZero(delta) ? running(delta) : undefined
      }
    }
  }

  return { account, admit, watch }
}
