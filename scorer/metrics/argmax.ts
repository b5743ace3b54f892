// The prediction rule of choice questions (docs/scoring.md): argmax, ties to the first option in criteria order.

/** Index into `keys` of the highest probability; the first such key on ties. */
export function argmaxIndex(dist: Readonly<Record<string, number>>, keys: readonly string[]): number {
  let best = -1;
  let bestP = -Infinity;
  for (let i = 0; i < keys.length; i++) {
    const p = dist[keys[i]!]!;
    if (p > bestP) {
      best = i;
      bestP = p;
    }
  }
  return best;
}
