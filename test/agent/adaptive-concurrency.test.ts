// AdaptiveConcurrency: additive increase, multiplicative decrease, bounds, queueing; clock mocked.
import { describe, expect, it } from "vitest";
import { AdaptiveConcurrency, latencyBudgetOf } from "../../agent/adaptive-concurrency.js";

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe("AdaptiveConcurrency", () => {
  it("grows by about one per round of healthy requests, up to max", async () => {
    const c = clock();
    const limiter = new AdaptiveConcurrency({ initial: 2, max: 5, now: c.now });
    for (let i = 0; i < 100; i++) {
      const release = await limiter.acquire();
      c.advance(10);
      release({ latencyMs: 10, overloaded: false });
    }
    expect(limiter.limit).toBe(5);
  });

  it("halves on overload (429/503/timeout), once per round trip, never below min", async () => {
    const c = clock();
    const limiter = new AdaptiveConcurrency({ initial: 16, min: 2, now: c.now });
    const warm = await limiter.acquire();
    warm({ latencyMs: 10, overloaded: false });
    const a = await limiter.acquire();
    const b = await limiter.acquire();
    c.advance(20);
    a({ latencyMs: 20, overloaded: true });
    b({ latencyMs: 20, overloaded: true }); // same round trip: no second halving
    expect(limiter.limit).toBe(8);
    expect(limiter.decreases).toBe(1);
    for (let i = 0; i < 5; i++) {
      c.advance(100);
      const r = await limiter.acquire();
      r({ latencyMs: 5, overloaded: true });
    }
    expect(limiter.limit).toBe(2);
  });

  it("halves when the engine's queue is long or latency balloons", async () => {
    const c = clock();
    const limiter = new AdaptiveConcurrency({ initial: 16, waitingThreshold: 4, latencyFactor: 3, now: c.now });
    limiter.observeWaiting(10);
    expect(limiter.limit).toBe(8);
    c.advance(1000);
    const r1 = await limiter.acquire();
    r1({ latencyMs: 10, overloaded: false });
    c.advance(1000);
    const r2 = await limiter.acquire();
    r2({ latencyMs: 100, overloaded: false });
    expect(limiter.limit).toBe(4);
  });

  it("keeps requests within their timeout on an engine that runs them all at once and slows with each (vLLM below --max-num-seqs)", async () => {
    // Each round sends `limit` requests; the engine shares its GPU among them, so each takes
    // limit x 100 ms and its queue stays empty. The smoothed minimum creeps up with them, so only
    // the latency budget of a 4 s timeout holds the limit (without it: 256 requests, 25.6 s each).
    const c = clock();
    const timeoutMs = 4000;
    const limiter = new AdaptiveConcurrency({ latencyBudgetMs: latencyBudgetOf(timeoutMs), now: c.now });
    let worst = 0;
    for (let round = 0; round < 2000; round++) {
      const n = limiter.limit;
      const releases = await Promise.all(Array.from({ length: n }, () => limiter.acquire()));
      const latencyMs = n * 100;
      c.advance(latencyMs);
      worst = Math.max(worst, latencyMs);
      for (const r of releases) r({ latencyMs, overloaded: false });
    }
    expect(worst).toBeLessThanOrEqual(latencyBudgetOf(timeoutMs) + 100);
    expect(worst).toBeLessThan(timeoutMs);
    // It is not starved either: it sits between half the budget and the budget.
    expect(limiter.limit * 100).toBeGreaterThanOrEqual(latencyBudgetOf(timeoutMs) / 4);
  });

  it("queues acquirers beyond the limit and admits them as slots free; an abort leaves the queue", async () => {
    const limiter = new AdaptiveConcurrency({ initial: 1, max: 1 });
    const first = await limiter.acquire();
    let second = false;
    const p = limiter.acquire().then((r) => {
      second = true;
      return r;
    });
    const ctl = new AbortController();
    const aborted = limiter.acquire(ctl.signal);
    ctl.abort(new Error("gone"));
    await expect(aborted).rejects.toThrow("gone");
    await Promise.resolve();
    expect(second).toBe(false);
    expect(limiter.active).toBe(1);
    first({ latencyMs: 1, overloaded: false });
    const r = await p;
    expect(second).toBe(true);
    expect(limiter.active).toBe(1);
    r({ latencyMs: 1, overloaded: false });
    expect(limiter.active).toBe(0);
  });

  it("polls the engine's queue length while requests run", async () => {
    let polls = 0;
    const limiter = new AdaptiveConcurrency({ initial: 8, waitingThreshold: 2, readWaiting: async () => (polls++, 50), pollMs: 0 });
    const r = await limiter.acquire();
    await new Promise((res) => setImmediate(res));
    expect(polls).toBe(1);
    expect(limiter.limit).toBe(4);
    r({ latencyMs: 1, overloaded: false });
  });
});
