// How fast each agent's engine works, from the tokens its results report (prompt - cached +
// completion, the engine's own work measure), over the time the agent held work; and how many
// tokens a unit of planner cost turns out to be. The scheduler turns both into seconds: how long an
// agent needs for what it holds, and for a unit it might be given.

/** Seconds over which an agent's pace is averaged (exponentially). */
const PACE_TAU_S = 5;
/** Busy time before a pace is trusted: the first unit's prefix fill is no pace. */
const MIN_BUSY_S = 1.5;

export class AgentPace {
  private tokensSince = 0;
  private busySince = 0;
  private busyTotal = 0;
  private lastAt: number | undefined;
  private rate: number | undefined;

  /** A result of this agent (accepted or a duplicate: the engine did the work either way). */
  addTokens(tokens: number): void {
    if (tokens > 0) this.tokensSince += tokens;
  }

  /**
   * Folds the time since the last tick into the pace; `busy`: the agent held work all along (time
   * idle or not ready says nothing about its engine).
   */
  tick(nowMs: number, busy: boolean): void {
    const last = this.lastAt;
    this.lastAt = nowMs;
    if (last === undefined) return;
    const dt = (nowMs - last) / 1000;
    if (dt <= 0) return;
    if (!busy) {
      // Tokens of results that trickled in while idle belong to the time already counted.
      this.tokensSince = 0;
      this.busySince = 0;
      return;
    }
    this.busySince += dt;
    this.busyTotal += dt;
    // Folded in per half second at least: results come in bursts as records finish together.
    if (this.busySince < 0.5) return;
    const inst = this.tokensSince / this.busySince;
    if (this.busyTotal >= MIN_BUSY_S && inst > 0) {
      const w = 1 - Math.exp(-this.busySince / PACE_TAU_S);
      this.rate = this.rate === undefined ? inst : this.rate + w * (inst - this.rate);
    }
    this.tokensSince = 0;
    this.busySince = 0;
  }

  /** Engine tokens per second; undefined until measured. */
  get tokensPerS(): number | undefined {
    return this.rate;
  }
}

/** Tokens per unit of planner cost (planner.ts recordCost), over every accepted result. */
export class TokensPerCost {
  private tokens = 0;
  private cost = 0;

  add(tokens: number, cost: number): void {
    if (tokens <= 0 || cost <= 0) return;
    this.tokens += tokens;
    this.cost += cost;
  }

  get value(): number | undefined {
    return this.cost > 0 && this.tokens > 0 ? this.tokens / this.cost : undefined;
  }
}

/** Engine tokens a result reports: what /metrics counts as the engine's work (an unknown cached count as none). */
export function resultTokens(r: { promptTokens: number; cachedTokens: number | null; completionTokens: number }): number {
  return Math.max(0, r.promptTokens - (r.cachedTokens ?? 0)) + r.completionTokens;
}
