/**
 * The caps that apply to a turn, the totals they are checked against, and the test of a cap:
 * which rows of the ledger a charge adds to (each scope of the turn's account, each window a cap
 * of that scope counts over) and what each cap stands at afterwards. Plain functions.
 *
 * @internal
 */
import type { Account, Cap, Scope, Standing } from "../../Budget.js"
import type { Row } from "./ledger.js"
import type { Amount } from "./price.js"

const DAY_MILLIS = 86_400_000

/**
 * The ledger window a cap counts over at `nowMillis`: the whole time, or the current UTC day.
 *
 * @internal
 */
export const windowOf = (cap: Cap, nowMillis: number): string =>
  cap.window === "day" ? `day:${Math.floor(nowMillis / DAY_MILLIS)}` : "total"

const scopes: ReadonlyArray<Scope> = ["key", "pool", "tenant"]

/**
 * The rows a charge to `account` adds to, and for each of them the caps read from it.
 *
 * @internal
 */
export const plan = (
  caps: ReadonlyArray<Cap>,
  account: Account,
  nowMillis: number
): { readonly rows: ReadonlyArray<Row>; readonly caps: ReadonlyArray<{ readonly cap: Cap; readonly row: number }> } => {
  const rows: Array<Row> = []
  const index = new Map<string, number>()
  const matched: Array<{ cap: Cap; row: number }> = []
  for (const scope of scopes) {
    const id = account[scope]
    if (id === undefined) continue
    for (const cap of caps) {
      if (cap.scope !== scope || (cap.id !== undefined && cap.id !== id)) continue
      const window = windowOf(cap, nowMillis)
      const key = `${scope}\u0000${window}`
      let row = index.get(key)
      if (row === undefined) {
        row = rows.length
        rows.push({ scope, id, window })
        index.set(key, row)
      }
      matched.push({ cap, row })
    }
  }
  return { rows, caps: matched }
}

/**
 * Each cap's standing given its row's total: one per limit (dollars, tokens) the cap sets.
 *
 * @internal
 */
export const standings = (
  planned: ReturnType<typeof plan>,
  totals: ReadonlyArray<Amount>
): ReadonlyArray<Standing> => {
  const out: Array<Standing> = []
  for (const { cap, row } of planned.caps) {
    const total = totals[row]
    const where = planned.rows[row]
    if (total === undefined || where === undefined) continue
    const window = cap.window ?? "total"
    if (cap.usd !== undefined) {
      out.push({ scope: cap.scope, id: where.id, window, unit: "usd", spent: total.usd, limit: cap.usd })
    }
    if (cap.tokens !== undefined) {
      out.push({ scope: cap.scope, id: where.id, window, unit: "tokens", spent: total.tokens, limit: cap.tokens })
    }
  }
  return out
}

/**
 * The first standing at or over its limit.
 *
 * @internal
 */
export const spentCap = (all: ReadonlyArray<Standing>): Standing | undefined => all.find((s) => s.spent >= s.limit)

/**
 * After reserving `reserved` for a turn: the first cap that was already spent, or that the
 * reservation would take over its limit.
 *
 * @internal
 */
export const refused = (all: ReadonlyArray<Standing>, reserved: Amount): Standing | undefined =>
  all.find((s) => {
    const added = s.unit === "usd" ? reserved.usd : reserved.tokens
    return s.spent - added >= s.limit || (added > 0 && s.spent > s.limit)
  })
