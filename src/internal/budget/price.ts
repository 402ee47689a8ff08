/**
 * What a running turn has spent so far, before its `result` says: the responses the usage fold
 * has seen, their tokens as the messages report them and their dollars at a per-model price.
 *
 * The price of a model is the one the session's own results showed (the model's `costUSD` over
 * its tokens at list-price ratios, as the usage fold splits it); for a model no result has priced
 * yet, the API's list price for input tokens by model family, and for an unknown model the
 * dearest of them, so that a cap errs towards stopping early. A response's output tokens are its
 * final count when the stream's `message_delta` gave it (partial messages on), otherwise an
 * estimate from its content's size (four characters a token). The `result` replaces all of this
 * with the turn's exact figures.
 *
 * @internal
 */
import * as F from "../usage/figures.js"
import type * as Fold from "../usage/fold.js"

/**
 * Dollars and tokens (input, output, cache reads and writes together).
 *
 * @internal
 */
export interface Amount {
  readonly usd: number
  readonly tokens: number
}

/** @internal */
export const zero: Amount = { usd: 0, tokens: 0 }

/** @internal */
export const plus = (a: Amount, b: Amount): Amount => ({ usd: a.usd + b.usd, tokens: a.tokens + b.tokens })

/** @internal */
export const minus = (a: Amount, b: Amount): Amount => ({ usd: a.usd - b.usd, tokens: a.tokens - b.tokens })

/** @internal */
export const max = (a: Amount, b: Amount): Amount => ({
  usd: Math.max(a.usd, b.usd),
  tokens: Math.max(a.tokens, b.tokens)
})

/** @internal */
export const isZero = (a: Amount): boolean => a.usd === 0 && a.tokens === 0

/**
 * Every token kind of `f`, summed.
 *
 * @internal
 */
export const tokensOf = (f: F.Figures): number =>
  f.inputTokens + f.outputTokens + f.cacheReadInputTokens + f.cacheCreationInputTokens

// Dollars per input token by model family, most specific first: the API's list prices, as the
// CLI 2.1.330 prices its models (output 5×, cache reads 0.1×, cache writes 1.25× of these).
const LIST_PRICES: ReadonlyArray<readonly [RegExp, number]> = [
  [/opus-5/, 4e-6],
  [/opus-4-[5-9]|opus-4\.[5-9]/, 5e-6],
  [/opus/, 15e-6],
  [/sonnet/, 3e-6],
  [/haiku-4|haiku-[5-9]/, 1e-6],
  [/haiku/, 0.8e-6]
]
const DEAREST = 15e-6

/**
 * Dollars per input-token equivalent of `model`: learned from the session's results, else its
 * list price.
 *
 * @internal
 */
export const rate = (state: Fold.State, model: string): number => {
  const seen = state.cumulative?.models[model]
  if (seen !== undefined) {
    const weight = F.weight(seen)
    if (weight > 0 && seen.costUsd > 0) return seen.costUsd / weight
  }
  for (const [pattern, price] of LIST_PRICES) if (pattern.test(model)) return price
  return DEAREST
}

const amountOf = (state: Fold.State, r: Fold.Response): Amount => {
  const figures: F.Figures = {
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens ?? Math.ceil(r.size / 4),
    cacheReadInputTokens: r.cacheReadInputTokens,
    cacheCreationInputTokens: r.cacheCreationInputTokens,
    costUsd: 0
  }
  return { usd: F.weight(figures) * rate(state, r.model), tokens: tokensOf(figures) }
}

/**
 * The running turn's spend as the fold has it now, summed over its responses.
 *
 * @internal
 */
export const running = (state: Fold.State): Amount => {
  let total = zero
  for (const r of state.responses) total = plus(total, amountOf(state, r))
  return total
}

/**
 * `running`, kept up to date one response at a time: each call re-prices only the response the
 * fold touched last, so a turn of many messages costs one pricing per message, not one per
 * response seen so far. Call it after every frame that may change a response.
 *
 * @internal
 */
export class RunningTotal {
  private responses: ReadonlyArray<Fold.Response> | undefined
  private amounts: Array<Amount> = []
  private total: Amount = zero

  of(state: Fold.State): Amount {
    // A settled turn leaves a new list: start again.
    if (state.responses !== this.responses) {
      this.responses = state.responses
      this.amounts = []
      this.total = zero
    }
    const at = state.touched.index
    const response = at >= 0 ? state.responses[at] : undefined
    if (response !== undefined) {
      const next = amountOf(state, response)
      this.total = plus(minus(this.total, this.amounts[at] ?? zero), next)
      this.amounts[at] = next
    }
    return this.total
  }
}
