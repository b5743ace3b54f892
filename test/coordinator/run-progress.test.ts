// Run progress and totals: commit counting, track and run completion, tokens with cached unknown,
// per-record latency percentiles, GPU-seconds of attached agents, ETA. The clock is passed in.
import { describe, expect, it } from "vitest";
import { RunProgress } from "../../coordinator/run-progress.js";
import fc from "fast-check";
import { LatencyStats, quantile } from "../../coordinator/latency-stats.js";
import type { CommittedLine } from "../../common/results/committed-line.js";

interface LineFields {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  latency_ms?: number;
  errors?: Record<string, string>;
}

/** A committed line with the results line's fields: usage only when it has a latency (a given-up line has none). */
function line(track: string, n: number, extra: LineFields = {}): CommittedLine {
  const runId = `${track}:${n}`;
  return {
    recordKey: runId,
    track,
    family: "f",
    text: JSON.stringify({ run_id: runId, id: String(n), track, family: "f", probs: {}, skipped: [], ...extra }),
    errored: extra.errors !== undefined,
    ...(extra.latency_ms !== undefined
      ? { usage: { latencyMs: extra.latency_ms, promptTokens: extra.prompt_tokens ?? 0, completionTokens: extra.completion_tokens ?? 0, cachedTokens: extra.cached_tokens ?? null } }
      : {}),
  };
}

function progress(tracks: Array<{ track: string; records: number; committed: number }>) {
  const events: string[] = [];
  const p = new RunProgress({
    tracks: tracks.map((t) => ({ ...t, family: "f" })),
    onCommitted: (l) => events.push(`line ${l.recordKey}`),
    onTrackComplete: (t, atStart) => events.push(`track ${t.track}${atStart ? " at start" : ""}`),
    onRunComplete: () => events.push("run"),
  });
  return { p, events };
}

describe("LatencyStats", () => {
  it.each([
    // values, mean, p50, p95 (linear interpolation between ranks, as numpy's default)
    [[], 0, 0, 0],
    [[7], 7, 7, 7],
    [[10, 20, 30], 20, 20, 29],
    [[4, 1, 3, 2], 2.5, 2.5, 3.85],
    [[0, 0, 100], 100 / 3, 0, 90],
  ])("%j: mean %d, p50 %d, p95 %d", (values, mean, p50, p95) => {
    const s = new LatencyStats();
    for (const v of values) s.add(v);
    const got = s.summary();
    expect(got.count).toBe(values.length);
    expect(got.meanMs).toBeCloseTo(mean, 9);
    expect(got.p50Ms).toBeCloseTo(p50, 9);
    expect(got.p95Ms).toBeCloseTo(p95, 9);
  });

  it("grows past its first block and sorts again after an add", () => {
    const s = new LatencyStats();
    for (let i = 2000; i >= 1; i--) s.add(i);
    expect(s.summary()).toMatchObject({ count: 2000, p50Ms: 1000.5 });
    s.add(1e9);
    expect(s.summary().count).toBe(2001);
    expect(s.summary().p50Ms).toBe(1001);
    expect(quantile(Float64Array.of(1, 2), 1)).toBe(2);
  });

  it("asked between adds, gives what one sort of every value gives (only the new values are sorted and merged in)", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.double({ min: 0, max: 1e6, noNaN: true })), { maxLength: 40 }), { minLength: 1, maxLength: 12 }), (batches) => {
        const s = new LatencyStats();
        const all: number[] = [];
        for (const batch of batches) {
          for (const v of batch) {
            s.add(v);
            all.push(v);
          }
          const sorted = Float64Array.from(all).sort();
          const got = s.summary();
          expect(got.count).toBe(all.length);
          if (all.length === 0) continue;
          expect(got.p50Ms).toBe(quantile(sorted, 0.5));
          expect(got.p95Ms).toBe(quantile(sorted, 0.95));
        }
      }),
    );
  });
});

describe("RunProgress", () => {
  it("counts commits per track, announces tracks complete at start, completes the run once", () => {
    const { p, events } = progress([
      { track: "a", records: 2, committed: 2 },
      { track: "b", records: 2, committed: 0 },
    ]);
    expect(p).toMatchObject({ recordsTotal: 4, recordsResumed: 2, recordsCommitted: 2, complete: false });
    p.announceResumed(0);
    expect(events).toEqual(["track a at start"]);
    p.committed(line("b", 1), 1_000);
    p.committed(line("elsewhere", 1), 1_000);
    p.committed(line("b", 2), 1_000);
    expect(events).toEqual(["track a at start", "line b:1", "line b:2", "track b", "run"]);
    expect(p.trackList()).toEqual([
      { track: "a", family: "f", records: 2, committed: 2, complete: true },
      { track: "b", family: "f", records: 2, committed: 2, complete: true },
    ]);
    expect(p.totals(1_000).etaSeconds).toBe(0);
  });

  it("a run complete at start says so at once", () => {
    const { p, events } = progress([{ track: "a", records: 1, committed: 1 }]);
    p.announceResumed(0);
    expect(events).toEqual(["track a at start", "run"]);
  });

  it("sums tokens; cached is unknown until a result reports it (0 included); given-up lines add no latency", () => {
    const { p } = progress([{ track: "a", records: 10, committed: 0 }]);
    expect(p.totals(0)).toMatchObject({ promptTokens: 0, completionTokens: 0, cachedTokens: undefined, latency: { count: 0 }, etaSeconds: undefined });
    // No cached_tokens on the line: the engine did not report it (vLLM's systemone usage).
    p.committed(line("a", 1, { prompt_tokens: 100, completion_tokens: 2, latency_ms: 30 }), 10_000);
    expect(p.totals(10_000)).toMatchObject({ promptTokens: 100, completionTokens: 2, cachedTokens: undefined });
    p.committed(line("a", 4, { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, latency_ms: 20 }), 10_000);
    expect(p.totals(10_000).cachedTokens).toBe(0); // reported as 0: known, no cache hits
    p.committed(line("a", 2, { prompt_tokens: 50, completion_tokens: 1, cached_tokens: 40, latency_ms: 10 }), 10_000);
    p.committed(line("a", 3, { errors: { q: "rejected by the coordinator: x" } }), 10_000);
    const t = p.totals(10_000);
    expect(t).toMatchObject({ promptTokens: 150, completionTokens: 3, cachedTokens: 40 });
    expect(t.latency).toEqual({ count: 3, meanMs: 20, p50Ms: 20, p95Ms: 29 });
    // 4 committed within the first second: 4 records/s, 6 left.
    expect(t.recordsPerSecond).toBe(4);
    expect(t.etaSeconds).toBeCloseTo(6 / 4, 9);
  });

  it("GPU-seconds: each agent's attached seconds while the run is active, not before start or after the end", () => {
    const { p } = progress([{ track: "a", records: 1, committed: 0 }]);
    p.agentAttached("x#1", 1_000); // attached before the run serves: counts from start
    p.started(3_000);
    p.agentAttached("y#2", 4_000);
    expect(p.totals(5_000).gpuSeconds).toBe(2 + 1);
    p.agentDetached("y#2", 6_000);
    p.agentDetached("never-attached", 6_000);
    expect(p.totals(7_000).gpuSeconds).toBe(4 + 2);
    p.committed(line("a", 1), 8_000); // completes the run: the clock stops
    expect(p.totals(9_000).gpuSeconds).toBe(5 + 2);
    p.agentDetached("x#1", 20_000);
    expect(p.totals(30_000).gpuSeconds).toBe(5 + 2);
  });

  it("a resumed run without a pace of its own yet takes its ETA from the run's average pace (its time over every session)", () => {
    // 40 of 100 records were committed in the 200 s of earlier sessions; nothing yet in this one.
    const { p } = progress([{ track: "a", records: 100, committed: 40 }]);
    p.started(0);
    expect(p.totals(1_000).etaSeconds).toBeUndefined(); // no run time given: unknown, as before
    expect(p.totals(1_000, 201).etaSeconds).toBeCloseTo(60 / (40 / 201), 6);
    // A first run has no average to go on.
    const fresh = progress([{ track: "a", records: 100, committed: 0 }]).p;
    fresh.started(0);
    expect(fresh.totals(1_000, 1).etaSeconds).toBeUndefined();
  });

  it("a drain stops the GPU clock", () => {
    const { p } = progress([{ track: "a", records: 5, committed: 0 }]);
    p.started(0);
    p.agentAttached("x#1", 0);
    p.stopped(2_000);
    expect(p.totals(10_000).gpuSeconds).toBe(2);
  });
});
