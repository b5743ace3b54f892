// Engine requests that go ENGINE_STALL_MS without an answer (engine-http's stall observers): the
// first on an endpoint is logged at once as "engine not answering <endpoint> (still waiting)",
// later ones on it at most once a minute with a count. The request keeps its own timeout.
import type { Logger } from "../common/log.js";

const REPEAT_MS = 60_000;

export class EngineStallLog {
  private readonly endpoints = new Map<string, { count: number; loggedAt: number; loggedCount: number }>();

  constructor(
    private readonly engineUrl: string,
    private readonly logger: Logger,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** A request to `url` (under the engine's base URL) has had no answer for a while. */
  stalled(url: string): void {
    const endpoint = url.startsWith(this.engineUrl) ? url.slice(this.engineUrl.length) || "/" : url;
    const seen = this.endpoints.get(endpoint) ?? { count: 0, loggedAt: -Infinity, loggedCount: 0 };
    this.endpoints.set(endpoint, seen);
    seen.count++;
    const t = this.now();
    if (t - seen.loggedAt < REPEAT_MS) return;
    const more = seen.loggedCount > 0 ? `; ${seen.count - seen.loggedCount} more such request(s) since the last report` : "";
    this.logger.warn(`engine not answering ${endpoint} (still waiting)${more}`, { engine: this.engineUrl, endpoint });
    seen.loggedAt = t;
    seen.loggedCount = seen.count;
  }
}
