// Records in flight adapt to the engine's queue (DESIGN.md "Engine methods"): while vLLM reports
// requests waiting, more in flight only lengthens its queue (and risks leases), so the limit
// shrinks; while nothing waits and the limit is in full use, it grows back, one at a time.

export interface GovernorBounds {
  /** Never below this (enough for every held unit to make progress). */
  min: number;
  /** Never above this (the configured concurrency). */
  max: number;
}

/** Multiplicative decrease on a queue, additive increase when saturated without one (AIMD). */
export function nextConcurrency(current: number, bounds: GovernorBounds, load: { waiting: number }, saturated: boolean): number {
  if (load.waiting > 0) return Math.max(bounds.min, Math.floor(current * 0.75));
  if (saturated) return Math.min(bounds.max, current + 1);
  return current;
}
