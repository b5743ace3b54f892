// Bounds the records in flight to the engine across every unit the agent holds. Waiters are
// served first come, first served, and each unit queues at most one waiter at a time, so units
// take turns instead of one large unit taking every slot.

export class RecordSlots {
  private used = 0;
  private readonly waiters: Array<{ grant: () => void; reject: (err: unknown) => void; signal: AbortSignal; onAbort: () => void }> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`RecordSlots size must be an integer >= 1, got ${size}`);
  }

  /** Records in flight now. */
  get inUse(): number {
    return this.used;
  }

  /** Resolves with a release function once a slot is free; rejects with the signal's reason on abort. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.used < this.size && this.waiters.length === 0) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          this.used++;
          resolve(this.releaser());
        },
        reject,
        signal,
        onAbort: () => {},
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      waiter.onAbort = onAbort;
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      const next = this.waiters.shift();
      if (next) next.grant();
    };
  }
}
