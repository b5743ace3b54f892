// Requests to one engine that ran past their timeout: the first is logged at once (a hung engine
// is otherwise silent for minutes), later ones are counted and logged at most once a minute.
import type { Logger } from "../common/log.js";
import { redactUrl } from "../common/redact-url.js";

const REPEAT_MS = 60_000;

export class EngineTimeouts {
  private count = 0;
  private lastLoggedAt = -Infinity;
  private loggedCount = 0;
  /** As logged: without credentials. */
  private readonly engineUrl: string;

  constructor(
    engineUrl: string,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.engineUrl = redactUrl(engineUrl);
  }

  get total(): number {
    return this.count;
  }

  /** One request past its timeout. */
  record(): void {
    this.count++;
    const t = this.now();
    if (this.loggedCount === 0) {
      this.logger.warn(`engine ${this.engineUrl}: a request got no answer within ${this.timeoutMs} ms (--request-timeout-ms); it is retried (--retries); further timeouts are counted`, { engine: this.engineUrl, timeouts: this.count });
    } else if (t - this.lastLoggedAt >= REPEAT_MS) {
      this.logger.warn(`engine ${this.engineUrl}: ${this.count} requests timed out so far (${this.count - this.loggedCount} in the last ${Math.round((t - this.lastLoggedAt) / 1000)} s)`, { engine: this.engineUrl, timeouts: this.count });
    } else {
      return;
    }
    this.lastLoggedAt = t;
    this.loggedCount = this.count;
  }
}
