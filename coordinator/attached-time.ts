// GPU-seconds of a run: the sum over agents of the seconds each was attached while the run was
// active (running and not yet complete). One agent stands for one engine, so this is what the
// run cost in GPU time whether or not the GPU was busy.

export class AttachedTime {
  private closedMs = 0;
  private readonly openSince = new Map<string, number>();
  private activeFrom: number | undefined;
  private activeUntil: number | undefined;

  /** The run becomes active (agents attached earlier start counting now). */
  start(nowMs: number): void {
    this.activeFrom ??= nowMs;
  }

  /** The run is no longer active: complete or stopping. */
  end(nowMs: number): void {
    if (this.activeFrom === undefined || this.activeUntil !== undefined) return;
    this.activeUntil = nowMs;
  }

  attached(key: string, nowMs: number): void {
    this.openSince.set(key, nowMs);
  }

  detached(key: string, nowMs: number): void {
    const since = this.openSince.get(key);
    if (since === undefined) return;
    this.openSince.delete(key);
    this.closedMs += this.overlap(since, nowMs);
  }

  seconds(nowMs: number): number {
    let ms = this.closedMs;
    for (const since of this.openSince.values()) ms += this.overlap(since, nowMs);
    return ms / 1000;
  }

  private overlap(from: number, to: number): number {
    if (this.activeFrom === undefined) return 0;
    const a = Math.max(from, this.activeFrom);
    const b = Math.min(to, this.activeUntil ?? to);
    return Math.max(0, b - a);
  }
}
