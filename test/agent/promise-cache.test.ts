// The agent's shared lookups (token counts of a state, a label's tokens): one request for every
// caller, and a caller that gives up (its unit was cancelled) ends only its own wait.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { PromiseCache } from "../../agent/methods/promise-cache.js";

function deferred<V>(): { promise: Promise<V>; resolve: (v: V) => void; reject: (e: unknown) => void } {
  let resolve!: (v: V) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<V>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("PromiseCache", () => {
  it("a caller whose unit is cancelled does not fail the others waiting on the same lookup", async () => {
    const cache = new PromiseCache<number>(8);
    const load = deferred<number>();
    const signals: AbortSignal[] = [];
    let loads = 0;
    const loader = (signal: AbortSignal) => {
      loads++;
      signals.push(signal);
      return load.promise;
    };
    const cancelled = new AbortController();
    const first = cache.get("state", loader, cancelled.signal);
    const second = cache.get("state", loader, new AbortController().signal);
    cancelled.abort(new Error("unit a/0 cancelled by the coordinator"));
    await expect(first).rejects.toThrow("unit a/0 cancelled by the coordinator");
    // The shared request is nobody's to cancel.
    expect(signals[0]!.aborted).toBe(false);
    load.resolve(42);
    await expect(second).resolves.toBe(42);
    expect(loads).toBe(1);
    // Cached for the next caller, already aborted callers are refused at once.
    await expect(cache.get("state", loader)).resolves.toBe(42);
    const gone = new AbortController();
    gone.abort(new Error("gone"));
    await expect(cache.get("state", loader, gone.signal)).rejects.toThrow("gone");
    expect(loads).toBe(1);
  });

  it("forgets a failed lookup, so the next caller asks again; keeps at most maxEntries", async () => {
    const cache = new PromiseCache<string>(2);
    await expect(cache.get("a", () => Promise.reject(new Error("engine down")))).rejects.toThrow("engine down");
    expect(cache.has("a")).toBe(false);
    await expect(cache.get("a", async () => "A")).resolves.toBe("A");
    await cache.get("b", async () => "B");
    await cache.get("c", async () => "C");
    expect(cache.size).toBe(2);
    expect(cache.has("a")).toBe(false);
  });

  it("many waits under one caller's signal share one abort listener, gone when the last wait ends", async () => {
    const cache = new PromiseCache<number>(64);
    const loads = Array.from({ length: 30 }, () => deferred<number>());
    const unit = new AbortController();
    const waits = loads.map((d, i) => cache.get(`label ${i}`, () => d.promise, unit.signal));
    expect(getEventListeners(unit.signal, "abort")).toHaveLength(1);
    loads.forEach((d, i) => d.resolve(i));
    await expect(Promise.all(waits)).resolves.toEqual(loads.map((_, i) => i));
    expect(getEventListeners(unit.signal, "abort")).toHaveLength(0);

    // Aborting ends every wait still under the signal, and only those.
    const slow = Array.from({ length: 12 }, () => deferred<number>());
    const other = new AbortController();
    const cancelled = slow.map((d, i) => cache.get(`slow ${i}`, () => d.promise, unit.signal));
    const kept = cache.get("slow 0", () => slow[0]!.promise, other.signal);
    unit.abort(new Error("unit t/3 cancelled"));
    for (const w of cancelled) await expect(w).rejects.toThrow("unit t/3 cancelled");
    slow[0]!.resolve(7);
    await expect(kept).resolves.toBe(7);
    expect(getEventListeners(other.signal, "abort")).toHaveLength(0);
  });
});
