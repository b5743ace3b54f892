// Records committed per second over a sliding window (default 30 s), so the status shows the
// current pace rather than an average diluted by the time before agents attached.

export class ThroughputMeter {
  private readonly buckets: number[];
  private readonly seconds: number[];
  private first: number | undefined;

  constructor(private readonly windowSeconds = 30) {
    this.buckets = new Array<number>(windowSeconds).fill(0);
    this.seconds = new Array<number>(windowSeconds).fill(-1);
  }

  add(n: number, nowMs: number): void {
    const s = Math.floor(nowMs / 1000);
    const i = s % this.windowSeconds;
    if (this.seconds[i] !== s) {
      this.seconds[i] = s;
      this.buckets[i] = 0;
    }
    this.buckets[i]! += n;
    this.first ??= nowMs;
  }

  /** Per second over the window, or since the first record when that is shorter. */
  rate(nowMs: number): number {
    if (this.first === undefined) return 0;
    const s = Math.floor(nowMs / 1000);
    let total = 0;
    for (let i = 0; i < this.windowSeconds; i++) {
      const age = s - this.seconds[i]!;
      if (this.seconds[i]! >= 0 && age >= 0 && age < this.windowSeconds) total += this.buckets[i]!;
    }
    const span = Math.min(this.windowSeconds, Math.max(1, (nowMs - this.first) / 1000));
    return total / span;
  }
}
