// The run's elapsed time over every coordinator session of one --out directory: `<out>/run-clock.json`
// holds the seconds of the sessions before this one, and this session's so far, rewritten every
// SAVE_MS and at the end. A restarted coordinator starts from there, so the page's elapsed time and
// ETA go on instead of starting again at 0. A coordinator killed outright loses at most SAVE_MS of
// its time; the time between sessions (no coordinator) is not counted.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../common/atomic-file.js";

export const RUN_CLOCK_FILE = "run-clock.json";
const SAVE_MS = 5_000;

interface RunClockJson {
  format: 1;
  run_id: string;
  /** Seconds over every session, this one's so far included. */
  elapsed_seconds: number;
  sessions: number;
  updated_at: string;
}

export class RunClock {
  /** Seconds of earlier sessions of this run. */
  readonly beforeSeconds: number;
  private readonly sessions: number;
  private startedMs: number | undefined;
  private stoppedMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly outDir: string,
    private readonly runId: string,
    private readonly onError: (err: Error) => void,
  ) {
    const prev = readClock(join(outDir, RUN_CLOCK_FILE));
    // Another run's clock (a --force'd directory keeps its run_id; a copied one may not) counts nothing.
    const same = prev?.run_id === runId;
    this.beforeSeconds = same ? prev.elapsed_seconds : 0;
    this.sessions = (same ? prev.sessions : 0) + 1;
  }

  /** This session begins serving: its time counts from now and is saved every SAVE_MS. */
  start(nowMs: number): void {
    this.startedMs = nowMs;
    this.save(nowMs);
    this.timer = setInterval(() => this.save(Date.now()), SAVE_MS);
    this.timer.unref();
  }

  /** Seconds over every session at nowMs (this session's stop when stopped). */
  elapsedSeconds(nowMs: number): number {
    if (this.startedMs === undefined) return this.beforeSeconds;
    return this.beforeSeconds + Math.max(0, (this.stoppedMs ?? nowMs) - this.startedMs) / 1000;
  }

  /** This session stops counting and saves its last figure. */
  stop(nowMs: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.startedMs === undefined || this.stoppedMs !== undefined) return;
    this.stoppedMs = nowMs;
    this.save(nowMs);
  }

  private save(nowMs: number): void {
    const json: RunClockJson = { format: 1, run_id: this.runId, elapsed_seconds: this.elapsedSeconds(nowMs), sessions: this.sessions, updated_at: new Date(nowMs).toISOString() };
    try {
      writeJsonAtomic(join(this.outDir, RUN_CLOCK_FILE), json);
    } catch (err) {
      // The clock is a view for people: a failed write must not stop the run.
      this.onError(err as Error);
    }
  }
}

function readClock(path: string): RunClockJson | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const j = JSON.parse(readFileSync(path, "utf8")) as Partial<RunClockJson>;
    if (typeof j.elapsed_seconds !== "number" || !Number.isFinite(j.elapsed_seconds) || j.elapsed_seconds < 0 || typeof j.run_id !== "string") return undefined;
    return { format: 1, run_id: j.run_id, elapsed_seconds: j.elapsed_seconds, sessions: typeof j.sessions === "number" ? j.sessions : 1, updated_at: String(j.updated_at ?? "") };
  } catch {
    return undefined;
  }
}
