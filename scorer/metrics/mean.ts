// Plain mean with the convention of metrics.json: null where there is nothing to average.

export function meanOrNull(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** sum / count, null when count is 0. */
export function ratioOrNull(sum: number, count: number): number | null {
  return count === 0 ? null : sum / count;
}
