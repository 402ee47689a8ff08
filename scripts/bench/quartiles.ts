// Medians with their quartiles, for the scripts that print one cell per build.

/** The `q` quantile of `values` (nearest rank). */
export const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.round((sorted.length - 1) * q)] ?? Number.NaN
}

/** "median (first quartile–third quartile)", one decimal. */
export const cell = (values: ReadonlyArray<number>): string =>
  `${quantile(values, 0.5).toFixed(1)} (${quantile(values, 0.25).toFixed(1)}–${quantile(values, 0.75).toFixed(1)})`
