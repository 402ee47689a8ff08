/**
 * Who a session's turns are charged to: what `Budget.withAccount` and the pool set in the fiber,
 * the key a session is resumed or started with, and the tenant the budget's `tenant` finds.
 *
 * @internal
 */
import { Effect, FiberRef } from "effect"
import type { Account, BudgetShape } from "../../Budget.js"
import type * as Options from "../../schema/Options.js"

/**
 * The account of the sessions the fiber opens.
 *
 * @internal
 */
export const current: FiberRef.FiberRef<Account> = FiberRef.unsafeMake<Account>({})

/**
 * `account` without its `undefined` fields, to merge over another.
 *
 * @internal
 */
export const defined = (account: Account): Account => ({
  ...(account.key === undefined ? {} : { key: account.key }),
  ...(account.pool === undefined ? {} : { pool: account.pool }),
  ...(account.tenant === undefined ? {} : { tenant: account.tenant })
})

/**
 * The account of a session opened now with `options`.
 *
 * @internal
 */
export const resolve = (budget: BudgetShape, options: Options.Options<unknown>): Effect.Effect<Account> =>
  Effect.map(FiberRef.get(current), (set) => {
    const key = set.key ?? options.resume ?? options.sessionId
    const tenant = set.tenant ?? budget.config.tenant?.({ key, pool: set.pool, options })
    return defined({ key, pool: set.pool, tenant })
  })
