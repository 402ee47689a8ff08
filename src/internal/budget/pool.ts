/**
 * An `AgentPool` request under a `Budget`: its account (the pool's name, the conversation key,
 * the tenant) is checked before the request waits for a slot, and again once it has one, before
 * a process starts; the session it opens is charged to that account. A budget needs the guard of
 * a session opened for the request, so such requests do not claim spares.
 *
 * @internal
 */
import { Effect, FiberRef, Option } from "effect"
import { Budget } from "../../Budget.js"
import type * as Options from "../../schema/Options.js"
import type { BudgetExceededError } from "../../SdkError.js"
import * as Accounts from "./account.js"
import * as Guard from "./guard.js"

/**
 * Runs `open` for a request of pool `pool` (for conversation `key`, if keyed): directly when no
 * `Budget` is in context; otherwise after the account's check, with `recheck` to run once a slot
 * is held and the account set for the session `open` opens.
 *
 * @internal
 */
export const request = <A, E, R>(
  pool: string,
  key: string | undefined,
  options: Options.Options<unknown> | undefined,
  open: (recheck: Effect.Effect<void, BudgetExceededError> | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | BudgetExceededError, R> =>
  Effect.gen(function*() {
    const budget = yield* Effect.serviceOption(Budget)
    if (Option.isNone(budget)) return yield* open(undefined)
    const set = yield* FiberRef.get(Accounts.current)
    const account = yield* Effect.locally(
      Accounts.resolve(budget.value, options ?? {}),
      Accounts.current,
      { ...set, pool, ...(key === undefined ? {} : { key }) }
    )
    const check = Guard.check(budget.value, account, "queued")
    yield* check
    return yield* Effect.locally(open(check), Accounts.current, account)
  })
