// The scorer's final track metrics, read back from the bus as live events: the live page's
// headline column in a cluster, where the scorer is another process. Subscribes once the bus is
// first connected, and again after it reconnects if the first try failed.
import { SUMMARY_METRICS, type Bus, type Subscription } from "../../common/bus/index.js";
import type { Logger } from "../../common/log.js";
import { trackScoredEvent, type LiveEvent } from "./live-event.js";

export interface ScoreFollower {
  stop(): Promise<void>;
}

export function followScores(bus: Bus, runId: string, emit: (e: LiveEvent) => void, log: Logger): ScoreFollower {
  let sub: Subscription | undefined;
  let stopped = false;
  let subscribing = false;
  const subscribe = () => {
    if (subscribing || stopped || bus.state !== "connected") return;
    subscribing = true;
    bus
      .subscribeMetrics(runId, (m) => {
        if (!m.final || m.track === SUMMARY_METRICS) return;
        const t = m.metrics as { pillar?: unknown; headline?: { metric?: unknown; value?: unknown; ci_low?: unknown; ci_high?: unknown } };
        const h = t.headline;
        if (!h || typeof h.metric !== "string") return;
        emit(trackScoredEvent(m.track, { metric: h.metric, value: h.value, ci_low: h.ci_low, ci_high: h.ci_high }, t.pillar));
      })
      .then((s) => {
        if (stopped) void s.stop();
        else sub = s;
      })
      .catch((err: unknown) => {
        subscribing = false;
        log.debug("scores not followed yet", { error: (err as Error).message });
      });
  };
  const unsubscribe = bus.onStateChange(() => subscribe());
  subscribe();
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      await sub?.stop().catch(() => undefined);
    },
  };
}
