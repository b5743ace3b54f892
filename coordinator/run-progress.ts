// A run's progress: commits counted per track and in all, track and run completion, throughput,
// and the run totals (tokens, GPU-seconds, per-record latency, ETA) every reader takes from here.
import type { CommitNotice } from "./results-store.js";
import { AttachedTime } from "./attached-time.js";
import { LatencyStats } from "./latency-stats.js";
import { ThroughputMeter } from "./throughput-meter.js";
import type { RunTotals, TrackProgress } from "../common/run-status/index.js";

export interface RunProgressOptions {
  /** Every track in scope with its records and how many of them were committed before this start. */
  tracks: ReadonlyArray<{ track: string; family: string; records: number; committed: number }>;
  /** Called once per line counted (in scope, first commit of its run_id). */
  onCommitted: (line: CommitNotice) => void;
  /** Called once per track whose every record is committed; atStart for those complete before this start. */
  onTrackComplete: (p: Readonly<TrackProgress>, atStart: boolean) => void;
  /** Called once, when every record in scope is committed. */
  onRunComplete: () => void;
  /**
   * Tracks still being read (addTrack brings each), with the records manifest.json says they hold
   * (0 when it does not say): counted in the total at once, so the run's size is known from the
   * start; the run cannot complete before allTracksAdded().
   */
  tracksToCome?: ReadonlyArray<{ track: string; family: string; records: number }>;
}

export class RunProgress {
  private total: number;
  private resumed: number;
  private tracksToCome: boolean;
  private announced = false;
  private committedCount: number;
  private readonly tracks = new Map<string, TrackProgress>();
  private readonly meter = new ThroughputMeter();
  private readonly latency = new LatencyStats();
  private readonly attached = new AttachedTime();
  private promptTokens = 0;
  private completionTokens = 0;
  private cachedTokens = 0;
  private cachedReported = false;
  private runCompleted = false;
  private lastCommitMs: number | undefined;

  constructor(private readonly options: RunProgressOptions) {
    let total = 0;
    let resumed = 0;
    for (const t of options.tracks) {
      this.tracks.set(t.track, { track: t.track, family: t.family, records: t.records, committed: t.committed, complete: t.committed >= t.records });
      total += t.records;
      resumed += t.committed;
    }
    this.total = total;
    this.resumed = resumed;
    this.committedCount = resumed;
    for (const t of options.tracksToCome ?? []) {
      this.tracks.set(t.track, { track: t.track, family: t.family, records: t.records, committed: 0, complete: false });
      this.pending.add(t.track);
      this.total += t.records;
    }
    this.tracksToCome = options.tracksToCome !== undefined;
  }

  /** Tracks announced by tracksToCome and not added yet. */
  private readonly pending = new Set<string>();

  get recordsTotal(): number {
    return this.total;
  }

  get recordsResumed(): number {
    return this.resumed;
  }

  /** A track read and verified after the start, with how many of its records were committed before. */
  addTrack(t: { track: string; family: string; records: number; committed: number }, nowMs: number): void {
    const p: TrackProgress = { track: t.track, family: t.family, records: t.records, committed: t.committed, complete: t.committed >= t.records };
    if (this.pending.delete(t.track)) this.total -= this.tracks.get(t.track)?.records ?? 0;
    this.tracks.set(t.track, p);
    this.total += t.records;
    this.resumed += t.committed;
    this.committedCount += t.committed;
    if (this.announced && p.complete) this.options.onTrackComplete(p, true);
    this.checkRunComplete(nowMs);
  }

  /** Every track is in: the run completes once every record is committed. */
  allTracksAdded(nowMs: number): void {
    this.tracksToCome = false;
    this.checkRunComplete(nowMs);
  }

  get recordsCommitted(): number {
    return this.committedCount;
  }

  get complete(): boolean {
    return !this.tracksToCome && this.committedCount >= this.total;
  }

  /** Announces what was already complete at start: those tracks, and the run when nothing is left. */
  announceResumed(nowMs: number): void {
    this.announced = true;
    for (const p of this.tracks.values()) if (p.complete && !this.pending.has(p.track)) this.options.onTrackComplete(p, true);
    this.checkRunComplete(nowMs);
  }

  /** A line made durable by the results store. Lines of tracks out of scope are not counted. */
  committed(line: CommitNotice, nowMs: number): void {
    const p = this.tracks.get(line.track);
    if (!p) return;
    p.committed++;
    this.committedCount++;
    this.lastCommitMs = nowMs;
    this.meter.add(1, nowMs);
    // A given-up line has no latency or usage: it took no engine time of its own.
    const usage = line.usage;
    if (usage) {
      this.latency.add(usage.latencyMs);
      this.promptTokens += usage.promptTokens;
      this.completionTokens += usage.completionTokens;
      if (usage.cachedTokens !== null) {
        this.cachedTokens += usage.cachedTokens;
        this.cachedReported = true;
      }
    }
    this.options.onCommitted(line);
    if (!p.complete && p.committed >= p.records) {
      p.complete = true;
      this.options.onTrackComplete(p, false);
    }
    this.checkRunComplete(nowMs);
  }

  /** The run is serving agents from now: attached time starts counting. */
  started(nowMs: number): void {
    this.attached.start(nowMs);
    if (this.complete) this.attached.end(nowMs);
  }

  /** The run stops being active (drain, failure); completion ends it by itself. */
  stopped(nowMs: number): void {
    this.attached.end(nowMs);
  }

  agentAttached(key: string, nowMs: number): void {
    this.attached.attached(key, nowMs);
  }

  agentDetached(key: string, nowMs: number): void {
    this.attached.detached(key, nowMs);
  }

  /** When the last line was counted (this start); undefined before the first. */
  get lastCommitAtMs(): number | undefined {
    return this.lastCommitMs;
  }

  recordsPerSecond(nowMs: number): number {
    return this.meter.rate(nowMs);
  }

  trackList(): TrackProgress[] {
    return [...this.tracks.values()].map((p) => ({ ...p }));
  }

  /**
   * The run's totals at nowMs. With `elapsedSeconds` (the run's time over every session, run-clock.ts),
   * the ETA of a resumed run that has no recent pace yet (just restarted) is taken from its average
   * pace so far, so it goes on instead of vanishing until the first commits of this session.
   */
  totals(nowMs: number, elapsedSeconds?: number): RunTotals {
    const rate = this.meter.rate(nowMs);
    const remaining = this.recordsTotal - this.committedCount;
    const average = elapsedSeconds !== undefined && elapsedSeconds > 0 && this.recordsResumed > 0 ? this.committedCount / elapsedSeconds : 0;
    const pace = rate > 0 ? rate : average;
    return {
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      cachedTokens: this.cachedReported ? this.cachedTokens : undefined,
      gpuSeconds: this.attached.seconds(nowMs),
      latency: this.latency.summary(),
      recordsPerSecond: rate,
      etaSeconds: remaining <= 0 ? 0 : pace > 0 ? remaining / pace : undefined,
    };
  }

  private checkRunComplete(nowMs: number): void {
    if (this.runCompleted || !this.complete) return;
    this.runCompleted = true;
    this.attached.end(nowMs);
    this.options.onRunComplete();
  }
}
