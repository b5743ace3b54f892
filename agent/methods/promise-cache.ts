// A bounded cache of pending or settled lookups (token ids of a state, of a label): concurrent
// callers share one request, a failed lookup is forgotten so the next caller retries, and the
// least recently used entry goes when the cache is full.
// The shared request belongs to no caller: it runs with a signal that never aborts (its own
// timeout still bounds it), and each caller waits for it under its own signal. Were it started
// with the first caller's signal, cancelling that caller's unit would fail every other record
// waiting on the same lookup, with the cancelled unit's reason as their error.
const NEVER_ABORTED = new AbortController().signal;

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

/** The waits under each caller's signal, with the one abort listener they share. */
const waitsBySignal = new WeakMap<AbortSignal, { waits: Set<(reason: unknown) => void>; onAbort: () => void }>();

/**
 * `p`, or its caller's abort reason as soon as `signal` aborts. A record's questions wait on many
 * lookups under the same signal at once: they share one abort listener on it (removed when the last
 * wait ends), not one each, which a caller's plain AbortController would warn about past ten.
 */
function waitUnder<V>(p: Promise<V>, signal: AbortSignal): Promise<V> {
  return new Promise<V>((resolve, reject) => {
    let entry = waitsBySignal.get(signal);
    if (!entry) {
      const waits = new Set<(reason: unknown) => void>();
      const onAbort = () => {
        waitsBySignal.delete(signal);
        for (const fail of waits) fail(signal.reason);
      };
      waitsBySignal.set(signal, (entry = { waits, onAbort }));
      signal.addEventListener("abort", onAbort, { once: true });
    }
    const { waits, onAbort } = entry;
    waits.add(reject);
    const end = () => {
      waits.delete(reject);
      if (waits.size === 0 && waitsBySignal.get(signal) === entry) {
        waitsBySignal.delete(signal);
        signal.removeEventListener("abort", onAbort);
      }
    };
    p.then(
      (v) => {
        end();
        resolve(v);
      },
      (err: unknown) => {
        end();
        reject(err);
      },
    );
  });
}
