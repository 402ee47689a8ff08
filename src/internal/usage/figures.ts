/**
 * Token and cost figures as plain data, with the arithmetic the usage fold needs: sums,
 * differences, an integer split that keeps its total, and the price weights of token kinds.
 *
 * @internal
 */

/**
 * Tokens of one kind each, and what they cost.
 *
 * @internal
 */
export interface Figures {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
  readonly costUsd: number
}

/** @internal */
export const zero: Figures = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0
}

/**
 * `{ ...figures, ...rest }` (the five figures first, then `rest`'s fields), built without a spread:
 * a spread into a literal with more fields is V8's slow path for object literals, and the usage
 * fold builds several summaries per turn.
 *
 * @internal
 */
export const withFigures = <T extends object>(figures: Figures, rest: T): Figures & T =>
  Object.assign({
    inputTokens: figures.inputTokens,
    outputTokens: figures.outputTokens,
    cacheReadInputTokens: figures.cacheReadInputTokens,
    cacheCreationInputTokens: figures.cacheCreationInputTokens,
    costUsd: figures.costUsd
  }, rest)

/** @internal */
export const add = (a: Figures, b: Figures): Figures => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  costUsd: a.costUsd + b.costUsd
})

/** `a - b`, each token kind at least 0. @internal */
export const remainder = (a: Figures, b: Figures): Figures => ({
  inputTokens: Math.max(0, a.inputTokens - b.inputTokens),
  outputTokens: Math.max(0, a.outputTokens - b.outputTokens),
  cacheReadInputTokens: Math.max(0, a.cacheReadInputTokens - b.cacheReadInputTokens),
  cacheCreationInputTokens: Math.max(0, a.cacheCreationInputTokens - b.cacheCreationInputTokens),
  costUsd: Math.max(0, a.costUsd - b.costUsd)
})

/** @internal */
export const isZero = (f: Figures): boolean =>
  f.inputTokens === 0 && f.outputTokens === 0 && f.cacheReadInputTokens === 0 && f.cacheCreationInputTokens === 0 &&
  f.costUsd === 0

/** @internal */
export const sum = (all: Iterable<Figures>): Figures => {
  let out = zero
  for (const f of all) out = add(out, f)
  return out
}

// The API's list prices relative to an input token: output 5×, cache reads 0.1×, cache writes
// 1.25× (five-minute entries). Only the split of one model's cost among its parts depends on
// them; the parts add up to the model's cost whatever they are.
const OUTPUT = 5
const CACHE_READ = 0.1
const CACHE_CREATION = 1.25

/**
 * The figures' tokens in input-token equivalents, the unit a model's cost is split in.
 *
 * @internal
 */
export const weight = (f: Figures): number =>
  f.inputTokens + OUTPUT * f.outputTokens + CACHE_READ * f.cacheReadInputTokens +
  CACHE_CREATION * f.cacheCreationInputTokens

/**
 * Splits a whole number `total` in proportion to `weights` (largest remainders): the parts are
 * whole numbers that add up to `total`. Zero weights throughout split it evenly.
 *
 * @internal
 */
export const apportion = (total: number, weights: ReadonlyArray<number>): Array<number> => {
  const n = weights.length
  if (n === 0) return []
  let sumWeights = 0
  for (const w of weights) sumWeights += Math.max(0, w)
  const shares = weights.map((w) => sumWeights > 0 ? (total * Math.max(0, w)) / sumWeights : total / n)
  const parts = shares.map(Math.floor)
  let left = total - parts.reduce((a, b) => a + b, 0)
  const order = shares.map((s, i) => [s - Math.floor(s), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1])
  for (let k = 0; left > 0 && n > 0; k = (k + 1) % n, left--) {
    const entry = order[k]
    if (entry !== undefined) parts[entry[1]] = (parts[entry[1]] ?? 0) + 1
  }
  return parts
}
