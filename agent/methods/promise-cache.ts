// A bounded cache of pending or settled lookups (token ids of a state, of a label): concurrent
// callers share one request, a failed lookup is forgotten so the next caller retries, and the
// least recently used entry goes when the cache is full.
import { setMaxListeners } from "node:events";

// The shared request belongs to no caller: it runs with a signal that never aborts (its own
// timeout still bounds it), and each caller waits for it under its own signal. Were it started
// with the first caller's signal, cancelling that caller's unit would fail every other record
// waiting on the same lookup, with the cancelled unit's reason as their error. Every shared request
// in flight listens to that signal (and stops when it settles), many at once by design: Node's
// 10-listener leak warning does not apply.
const NEVER_ABORTED = new AbortController().signal;
setMaxListeners(0, NEVER_ABORTED);

export class PromiseCache<V> {
  private readonly entries = new Map<string, Promise<V>>();

  constructor(private readonly maxEntries: number) {}

  /** The cached value of `key`, loading it once; `signal` ends this caller's wait, not the load. */
  get(key: string, load: (signal: AbortSignal) => Promise<V>, signal?: AbortSignal): Promise<V> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return signal ? waitUnder(hit, signal) : hit;
    }
    const p = load(NEVER_ABORTED);
    this.entries.set(key, p);
    p.catch(() => {
      if (this.entries.get(key) === p) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    return signal ? waitUnder(p, signal) : p;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** `p`, or its caller's abort reason as soon as `signal` aborts. */
function waitUnder<V>(p: Promise<V>, signal: AbortSignal): Promise<V> {
  return new Promise<V>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
