// Puts a coordinator's run on the bus (docs/design.md "bus"): every committed result line, run events
// and the run's status. The results files stay the source of truth: a result whose publish failed
// (NATS down or slow) marks a gap in its track file, and once the bus is connected again the
// publisher reads the file from the gap on and republishes (same message ids, so lines that did
// reach the stream are dropped as duplicates). At start every line already on disk is treated as
// a gap, so a coordinator that was stopped or crashed while NATS was down still fills the stream.
import { existsSync, openSync, readSync, closeSync } from "node:fs";
import type { Bus, BusEvent, RunStatusInput } from "../common/bus/index.js";
import { readJsonLines } from "../common/jsonl-reader.js";
import type { Logger } from "../common/log.js";
import { type CommittedLine, type ResultLine, trackResultsPath } from "../common/results/index.js";

/** Publishes in flight at once while catching up (the live path is bounded by the store's batches). */
const CATCH_UP_WINDOW = 256;
const DEFAULT_STATUS_EVERY_MS = 2_000;

interface TrackFile {
  track: string;
  family: string;
  path: string;
  /** Lines committed to the file so far (those there at start included); the next line's index. */
  lines: number;
  /** Index of the first line that may be missing from the stream. */
  gapFrom: number | undefined;
}

export interface BusPublisherOptions {
  bus: Bus;
  runId: string;
  outDir: string;
  tracks: ReadonlyArray<{ track: string; family: string }>;
  /** The run's status as it is now, written to the KV bucket every statusEveryMs and at the end. */
  status: () => RunStatusInput;
  statusEveryMs?: number;
  log: Logger;
}

export interface BusPublisherCounters {
  published: number;
  duplicates: number;
  failed: number;
  caughtUp: number;
  catchUps: number;
}

export class BusPublisher {
  private readonly files = new Map<string, TrackFile>();
  private readonly inflight = new Set<Promise<unknown>>();
  private catchingUp: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  readonly counters: BusPublisherCounters = { published: 0, duplicates: 0, failed: 0, caughtUp: 0, catchUps: 0 };

  /** Call after the results store is open (torn lines repaired) and before anything is committed. */
  constructor(private readonly options: BusPublisherOptions) {
    for (const { track, family } of options.tracks) {
      const path = trackResultsPath(options.outDir, family, track);
      const lines = countLines(path);
      this.files.set(track, { track, family, path, lines, gapFrom: lines > 0 ? 0 : undefined });
    }
  }

  start(): void {
    const { bus, log } = this.options;
    this.unsubscribe = bus.onStateChange((s) => {
      if (s === "connected") {
        log.info("bus connected: publishing the status and catching the stream up from the results files");
        this.kick();
      }
    });
    this.timer = setInterval(() => this.kick(), this.options.statusEveryMs ?? DEFAULT_STATUS_EVERY_MS);
    this.timer.unref();
    this.kick();
  }

  /** One committed line (in file order per track, as the results store commits them). */
  committed(line: CommittedLine): void {
    const track = line.track;
    const f = this.files.get(track);
    if (!f) return;
    const index = f.lines++;
    if (this.closed) return;
    // Behind on this track (or disconnected): the catch-up will read it from the file.
    if (f.gapFrom !== undefined || this.options.bus.state !== "connected") {
      this.markGap(f, index);
      return;
    }
    this.track(
      this.options.bus.publishResult(this.options.runId, track, line).then((o) => {
        if (o.ok) {
          if (o.duplicate) this.counters.duplicates++;
          else this.counters.published++;
        } else {
          this.counters.failed++;
          this.markGap(f, index);
        }
      }),
    );
  }

  /** Best effort: an event lost in an outage is not replayed (the status and results are). */
  event(event: BusEvent): void {
    if (this.closed || this.options.bus.state !== "connected") return;
    this.track(
      this.options.bus.publishEvent(this.options.runId, event).then((o) => {
        if (!o.ok) this.options.log.debug("event not published", { type: event.type, error: o.error.message });
      }),
    );
  }

  /** Results lines not yet known to be on the stream. */
  get behind(): number {
    let n = 0;
    for (const f of this.files.values()) if (f.gapFrom !== undefined) n += f.lines - f.gapFrom;
    return n;
  }

  /**
   * Waits for publishes in flight, catches up once more when connected (at most `timeoutMs`), and
   * writes the final status. Whatever is still behind stays in the files (the next start replays it).
   */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    const work = (async () => {
      await Promise.all([...this.inflight]);
      // Results still behind and the bus not (yet) connected, e.g. a finished run restarted just to
      // publish what an outage kept off the stream: give the connection a moment.
      if (this.behind > 0 && this.options.bus.state !== "connected") await this.connectedWithin(Math.min(timeoutMs / 2, 5_000));
      await this.catchingUp;
      if (this.options.bus.state === "connected") {
        await this.catchUp();
        await this.putStatus();
      }
      await Promise.all([...this.inflight]);
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.closed = true;
    this.unsubscribe?.();
    const behind = this.behind;
    if (behind > 0) this.options.log.warn("stopping with results not on the bus; the next start with the same --out publishes them", { behind });
  }

  private connectedWithin(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const off = this.options.bus.onStateChange((st) => st === "connected" && done());
      function done() {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.options.log.warn("bus publish failed", { error: (err as Error).message }));
    this.inflight.add(q);
    void q.finally(() => this.inflight.delete(q));
  }

  private markGap(f: TrackFile, index: number): void {
    if (f.gapFrom === undefined || index < f.gapFrom) f.gapFrom = index;
  }

  /** Status write and, if anything is behind, a catch-up; one at a time. */
  private kick(): void {
    if (this.closed || this.options.bus.state !== "connected") return;
    if (this.catchingUp) {
      this.again = true;
      return;
    }
    this.catchingUp = (async () => {
      do {
        this.again = false;
        await this.putStatus();
        await this.catchUp();
      } while (this.again && !this.closed && this.options.bus.state === "connected");
    })()
      .catch((err: unknown) => this.options.log.warn("bus catch-up failed; retrying later", { error: (err as Error).message }))
      .finally(() => (this.catchingUp = undefined));
  }

  private async putStatus(): Promise<void> {
    try {
      await this.options.bus.putStatus(this.options.runId, this.options.status());
    } catch (err) {
      this.options.log.debug("status not written to the bus", { error: (err as Error).message });
    }
  }

  private async catchUp(): Promise<void> {
    for (const f of this.files.values()) {
      if (f.gapFrom === undefined || this.options.bus.state !== "connected") continue;
      const from = f.gapFrom;
      const upTo = f.lines;
      f.gapFrom = undefined;
      const failedAt = await this.replay(f, from, upTo);
      if (failedAt !== undefined) {
        this.markGap(f, failedAt);
        return; // the bus went away again; the next connect retries
      }
      if (upTo > from) {
        this.counters.catchUps++;
        this.options.log.info("caught the results stream up from disk", { track: f.track, lines: upTo - from });
      }
    }
  }

  /** Republishes lines [from, upTo) of a track file; returns the first index that failed, if any. */
  private async replay(f: TrackFile, from: number, upTo: number): Promise<number | undefined> {
    if (upTo <= from || !existsSync(f.path)) return undefined;
    let failedAt: number | undefined;
    const window = new Set<Promise<void>>();
    let index = 0;
    // The store may be writing the next batch: stop at upTo, before any line still being written.
    for await (const { value } of readJsonLines(f.path, { onTornLastLine: () => undefined })) {
      const i = index++;
      if (i < from) continue;
      if (i >= upTo || failedAt !== undefined) break;
      const p = this.options.bus.publishResult(this.options.runId, f.track, value as ResultLine).then((o) => {
        if (o.ok) {
          this.counters.caughtUp++;
          if (o.duplicate) this.counters.duplicates++;
        } else if (failedAt === undefined || i < failedAt) failedAt = i;
      });
      window.add(p);
      void p.finally(() => window.delete(p));
      if (window.size >= CATCH_UP_WINDOW) await Promise.race(window);
    }
    await Promise.all(window);
    return failedAt;
  }
}

/** Newline count of a file (every committed line ends with one); 0 when it does not exist. */
function countLines(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) return n;
      for (let i = buf.indexOf(0x0a, 0); i !== -1 && i < got; i = buf.indexOf(0x0a, i + 1)) n++;
    }
  } finally {
    closeSync(fd);
  }
}
