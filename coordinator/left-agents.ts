// Agents that left the run (stream ended, killed or connection lost, lease expired, drained), kept
// in the status for LEFT_KEEP_MS after they leave so that `status`, the page and the run card show
// who is gone and why, instead of a row that silently disappears. Bounded in time and in number: a
// fleet that churns (autoscaled agents, a crash loop) must not grow every status message; the log
// and the event history (<out>/run-events.log) keep every departure for good.
export const LEFT_KEEP_MS = 10 * 60_000;
export const LEFT_KEEP_MAX = 64;

export interface LeftAgent {
  agentId: string;
  model: string;
  engineUrl: string;
  results: number;
  rejected: number;
  reason: string;
  atMs: number;
}

export class LeftAgents {
  /** By agent id, oldest departure first. */
  private readonly byId = new Map<string, LeftAgent>();

  constructor(
    private readonly keepMs = LEFT_KEEP_MS,
    private readonly max = LEFT_KEEP_MAX,
  ) {}

  /** An agent left; a later departure of the same id replaces the earlier one. */
  left(a: LeftAgent): void {
    this.byId.delete(a.agentId);
    this.byId.set(a.agentId, a);
    while (this.byId.size > this.max) this.byId.delete(this.byId.keys().next().value!);
  }

  /** The agent attached again: it is listed as attached, not as left. */
  back(agentId: string): void {
    this.byId.delete(agentId);
  }

  /** The agents that left within keepMs of nowMs, oldest first. */
  list(nowMs: number): LeftAgent[] {
    for (const [id, a] of this.byId) if (nowMs - a.atMs > this.keepMs) this.byId.delete(id);
    return [...this.byId.values()];
  }
}
