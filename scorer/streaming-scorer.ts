// The scorer as its own process in a cluster (`udm-orch scorer`): consumes a run's results from the
// bus with a durable consumer, applies each line to its track's accumulator, journals it (fsync)
// and only then acks it. The moment a track's last record is in it publishes the track's final
// metrics (`udm.<run>.metrics.<track>`) and rewrites metrics.json; tracks in progress get running
// metrics every few seconds; the summary goes out once every track is in. metrics.json at the end
// is what `udm-orch score` computes from the same results (same accumulators, same aggregate).
//
// Redelivery never counts a result twice: a run_id already applied is acked and skipped (the
// coordinator commits one line per run_id), and a restarted scorer rebuilds that set from its journal.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeJsonAtomic } from "../common/atomic-file.js";
import { SUMMARY_METRICS, type Bus, type ResultConsumer, type RunStatusRecord } from "../common/bus/bus.js";
import { UsageError } from "../common/errors.js";
import { readJsonFileOrThrow } from "../common/parse.js";
import { createLogger, type Logger } from "../common/log.js";
import type { ResultLine } from "../common/results/format.js";
import { decompressedSha256, suiteIdentity, type TrackFile } from "../common/suite/suite.js";
import { openCheckedSuite } from "../common/suite/suite-check.js";
import { aggregate } from "./aggregate.js";
import { openAppliedJournal } from "./applied-journal.js";
import type { AppendLog } from "../common/results/append-log.js";
import { METRICS_FORMAT, type MetricsJson } from "./score-results.js";
import { TrackAccumulator } from "./track-accumulator.js";
import type { ResultInput } from "../common/results/format.js";
import { loadTrackGold } from "./track-gold.js";
import type { TrackMetrics } from "./track-metrics.js";

export const JOURNAL_FILE = "scorer-journal.jsonl";
export const STATE_FILE = "scorer-state.json";
export const METRICS_FILE = "metrics.json";

/** Lines applied before the journal is flushed and they are acked, at most. */
const FLUSH_LINES = 256;
/** Longest wait before applied lines are flushed and acked. */
const FLUSH_MS = 5;
const DEFAULT_PROGRESS_MS = 3_000;
const STATUS_POLL_MS = 500;

const StateSchema = z.object({ runId: z.string(), durable: z.string(), suiteIdentity: z.string() });

export interface StreamingScorerOptions {
  bus: Bus;
  runId: string;
  suiteDir: string;
  /** Holds metrics.json, the journal and the scorer's state (its durable consumer name). */
  outDir: string;
  /** Running metrics of tracks in progress, this often (default 3000 ms). */
  progressEveryMs?: number;
  /** Redelivery delay of a line not acked (a scorer that died); default 30 s. */
  ackWaitMs?: number;
  /** How long to wait for the run's status to appear on the bus (default: forever). */
  statusTimeoutMs?: number;
  log?: Logger;
  /** Called when a track's final metrics are out (tests, the CLI's output). */
  onTrackFinal?: (track: string, metrics: TrackMetrics) => void;
  /** Called when a track's final metrics are out, `seconds` after its last result was applied. */
  onEmitted?: (track: string, seconds: number) => void;
}

export interface StreamingScorerResult {
  metrics: MetricsJson;
  /** Lines applied by this process (journal replay excluded). */
  applied: number;
  /** Redelivered or re-published lines skipped because their run_id was already applied. */
  duplicates: number;
  replayed: number;
}

interface TrackState {
  file: TrackFile;
  acc: TrackAccumulator;
  final: { metrics: TrackMetrics; resamples: Float64Array } | undefined;
  /** Results applied since the last running-metrics message. */
  changed: boolean;
}

export class StreamingScorer {
  private readonly log: Logger;
  private readonly tracks = new Map<string, TrackState>();
  /** Suite order of the tracks in scope (metrics.json lists them so, as `score` does). */
  private order: string[] = [];
  private readonly applied = new Set<string>();
  private journal: AppendLog | undefined;
  private consumer: ResultConsumer | undefined;
  private acks: Array<() => void> = [];
  private completed: string[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private progressTimer: NodeJS.Timeout | undefined;
  private identity = "";
  private suiteTracks = 0;
  private counts = { applied: 0, duplicates: 0, replayed: 0, invalid: 0 };
  /** When each completed track's last result was applied (performance.now()). */
  private readonly completedAt = new Map<string, number>();
  /** metrics.json as last written. */
  private latest: MetricsJson | undefined;
  private resolveDone!: (m: MetricsJson) => void;
  private rejectDone!: (e: Error) => void;
  private finished = false;
  private stopped = false;
  /** Resolves with the final metrics once every track in scope is in. */
  readonly done: Promise<MetricsJson>;

  constructor(private readonly options: StreamingScorerOptions) {
    this.log = options.log ?? createLogger("scorer");
    this.done = new Promise((res, rej) => {
      this.resolveDone = res;
      this.rejectDone = rej;
    });
    this.done.catch(() => undefined);
  }

  get metricsPath(): string {
    return join(this.options.outDir, METRICS_FILE);
  }

  /** Reads the run's scope and the suite's gold, replays the journal, then starts consuming. */
  async start(): Promise<void> {
    const { bus, runId } = this.options;
    const status = await this.waitForStatus();
    await this.loadSuite(status);
    const state = this.openState();
    this.journal = await openAppliedJournal(join(this.options.outDir, JOURNAL_FILE), (line) => this.apply(line, true), this.log);
    if (this.counts.replayed > 0) this.log.info("journal replayed", { lines: this.counts.replayed });
    for (const name of this.order) if (this.tracks.get(name)!.acc.isComplete()) this.completed.push(name);
    await this.finishCompleted();
    if (this.finished) return;
    this.consumer = await bus.consumeResults(runId, {
      durable: state.durable,
      ...(this.options.ackWaitMs !== undefined ? { ackWaitMs: this.options.ackWaitMs } : {}),
      onResult: (line, ack) => this.received(line, ack),
      onError: (err, d) => {
        this.counts.invalid++;
        this.log.warn("result not applied", { seq: d.seq, track: d.track, error: err.message });
      },
    });
    this.progressTimer = setInterval(() => void this.publishProgress(), this.options.progressEveryMs ?? DEFAULT_PROGRESS_MS);
    this.progressTimer.unref();
    this.log.info("consuming results", { run: runId, durable: state.durable, tracks: this.order.length, pending: this.order.filter((t) => !this.tracks.get(t)!.final).length });
  }

  /** Stops consuming; applied lines are flushed and acked first. The durable keeps the rest. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    await this.consumer?.stop();
    await this.flush();
    await this.journal?.close();
    if (!this.finished) this.rejectDone(new UsageError("scorer stopped before every track was in"));
  }

  result(): StreamingScorerResult {
    return { metrics: this.partial(), applied: this.counts.applied, duplicates: this.counts.duplicates, replayed: this.counts.replayed };
  }

  // ---- setup ----------------------------------------------------------------------------------

  private async waitForStatus(): Promise<RunStatusRecord> {
    const { bus, runId } = this.options;
    const deadline = this.options.statusTimeoutMs === undefined ? Infinity : Date.now() + this.options.statusTimeoutMs;
    let said = false;
    for (;;) {
      const status = await bus.getStatus(runId);
      if (status) return status;
      if (Date.now() >= deadline) throw new UsageError(`run ${runId} has no status on the bus (KV udm_runs): is its coordinator running with --nats?`);
      if (!said) {
        said = true;
        this.log.info("waiting for the run's status on the bus (the coordinator writes it when it starts)", { run: runId });
      }
      await new Promise((r) => setTimeout(r, STATUS_POLL_MS));
    }
  }

  /** The run's tracks (from its status; all of the suite's when the status does not list them), with their gold. */
  private async loadSuite(status: RunStatusRecord): Promise<void> {
    const suite = openCheckedSuite(this.options.suiteDir);
    const byName = new Map(suite.files.map((f) => [f.track, f]));
    const scope = runTracks(status);
    if (scope) {
      for (const t of scope) {
        if (!byName.has(t.track)) throw new UsageError(`run ${this.options.runId} has track ${JSON.stringify(t.track)}, which is not in the suite ${suite.root}: is it the run's suite?`);
      }
    }
    const inScope = scope ? new Set(scope.map((t) => t.track)) : undefined;
    const selected = suite.files.filter((f) => !inScope || inScope.has(f.track));
    const hashes: Record<string, string> = {};
    for (const file of selected) {
      const { accumulator: acc, sha256 } = await loadTrackGold(suite, file);
      hashes[file.relPath] = sha256;
      const expected = scope?.find((t) => t.track === file.track)?.records;
      if (expected !== undefined && expected !== acc.recordCount) {
        throw new UsageError(`track ${file.track}: the run has ${expected} records, the suite ${suite.root} has ${acc.recordCount}: is it the run's suite?`);
      }
      this.tracks.set(file.track, { file, acc, final: undefined, changed: false });
    }
    for (const file of suite.files) {
      hashes[file.relPath] ??= suite.manifest?.files[file.relPath]?.sha256.toLowerCase() ?? (await decompressedSha256(file.path));
    }
    this.order = selected.map((f) => f.track);
    this.identity = suiteIdentity(hashes);
    this.suiteTracks = suite.files.length;
    const runIdentity = (status as { suiteIdentity?: unknown }).suiteIdentity;
    if (typeof runIdentity === "string" && runIdentity !== "" && runIdentity !== this.identity) {
      this.log.warn("the run's suite identity differs from this suite's (record counts match; scoring anyway)", { run: runIdentity, suite: this.identity });
    }
  }

  /** The out dir belongs to one run; its durable consumer name is made once and kept, so a restart resumes it. */
  private openState(): z.infer<typeof StateSchema> {
    mkdirSync(this.options.outDir, { recursive: true });
    const path = join(this.options.outDir, STATE_FILE);
    if (existsSync(path)) {
      const state = readJsonFileOrThrow(path, StateSchema);
      if (state.runId !== this.options.runId) {
        throw new UsageError(`${this.options.outDir} holds the scorer of run ${state.runId}, not ${this.options.runId}: use another --out`);
      }
      return state;
    }
    // A fresh out dir gets a fresh durable, which starts at the beginning of the run's results.
    const state = { runId: this.options.runId, durable: `scorer-${randomUUID().slice(0, 8)}`, suiteIdentity: this.identity };
    writeJsonAtomic(path, state);
    return state;
  }

  // ---- the stream ---------------------------------------------------------------------------

  private received(line: ResultLine, ack: () => void): void {
    if (this.stopped) return; // not acked: redelivered to the next scorer
    if (this.applied.has(line.run_id)) {
      this.counts.duplicates++;
      this.acks.push(ack);
      this.scheduleFlush();
      return;
    }
    if (!this.apply({ run_id: line.run_id, probs: line.probs, skipped: line.skipped, ...(line.errors ? { errors: line.errors } : {}) }, false)) {
      // Cannot ever apply (another suite, a track outside the run): acked so it does not come back forever.
      this.counts.invalid++;
      this.acks.push(ack);
      this.scheduleFlush();
      return;
    }
    this.journal!.append(JSON.stringify(line));
    this.acks.push(ack);
    if (this.journal!.pending >= FLUSH_LINES) void this.flush();
    else this.scheduleFlush();
  }

  /** Applies one result to its track; false when it matches no record in scope. */
  private apply(line: ResultInput, replay: boolean): boolean {
    const colon = line.run_id.indexOf(":");
    const track = colon > 0 ? line.run_id.slice(0, colon) : "";
    const t = this.tracks.get(track);
    if (!t || !t.acc.hasRecord(line.run_id)) {
      if (replay) throw new UsageError(`journal ${JOURNAL_FILE}: run_id ${JSON.stringify(line.run_id)} matches no record of the run's tracks`);
      this.log.warn("result for a record outside the run's tracks dropped", { run_id: line.run_id });
      return false;
    }
    const wasComplete = t.acc.isComplete();
    t.acc.addResult(line);
    this.applied.add(line.run_id);
    t.changed = true;
    if (replay) this.counts.replayed++;
    else {
      this.counts.applied++;
      if (!wasComplete && t.acc.isComplete()) {
        this.completed.push(track);
        this.completedAt.set(track, performance.now());
      }
    }
    return true;
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, FLUSH_MS);
  }

  /** Makes applied lines durable, acks them, then publishes what completed. */
  private flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    this.flushing = this.flushing
      .then(async () => {
        const acks = this.acks;
        this.acks = [];
        await this.journal?.flush();
        for (const a of acks) a();
        await this.finishCompleted();
      })
      .catch((err: unknown) => {
        this.log.error("cannot write the journal; stopping", { error: (err as Error).message });
        this.rejectDone(err as Error);
        void this.stop();
      });
    return this.flushing;
  }

  private async finishCompleted(): Promise<void> {
    if (this.completed.length === 0) return;
    const names = this.completed;
    this.completed = [];
    for (const name of names) {
      const t = this.tracks.get(name)!;
      const metrics = t.acc.finish();
      t.final = { metrics, resamples: t.acc.headlineResamples() };
      t.changed = false;
      const outcome = await this.options.bus.publishMetrics(this.options.runId, name, { track: name, final: true, records: t.acc.recordCount, metrics });
      if (!outcome.ok) this.log.warn("final metrics not published (they are in metrics.json)", { track: name, error: outcome.error.message });
      this.log.info("track scored", { track: name, records: t.acc.recordCount, [metrics.headline.metric]: metrics.headline.value });
      this.options.onTrackFinal?.(name, metrics);
      const at = this.completedAt.get(name);
      if (at !== undefined) this.options.onEmitted?.(name, (performance.now() - at) / 1000);
    }
    const json = this.partial();
    this.latest = json;
    writeJsonAtomic(this.metricsPath, json);
    if (this.order.every((n) => this.tracks.get(n)!.final)) {
      const records = this.order.reduce((n, t) => n + this.tracks.get(t)!.acc.recordCount, 0);
      const outcome = await this.options.bus.publishMetrics(this.options.runId, SUMMARY_METRICS, {
        track: SUMMARY_METRICS,
        final: true,
        records,
        metrics: { suite: json.suite, families: json.families, pillars: json.pillars, summary: json.summary },
      });
      if (!outcome.ok) this.log.warn("summary not published (it is in metrics.json)", { error: outcome.error.message });
      this.finished = true;
      if (this.progressTimer) clearInterval(this.progressTimer);
      this.resolveDone(json);
    }
  }

  /** For metrics: the tracks scored so far, result counts and lines not yet acked. */
  snapshot(): { metrics: MetricsJson | undefined; tracks: number; counts: { applied: number; duplicates: number; invalid: number }; pending: number } {
    return {
      metrics: this.latest,
      tracks: this.order.length,
      counts: { applied: this.counts.applied, duplicates: this.counts.duplicates, invalid: this.counts.invalid },
      pending: this.acks.length,
    };
  }

  /** metrics.json of the tracks whose last record is in, in suite order (all of them at the end). */
  private partial(): MetricsJson {
    const tracks: Record<string, TrackMetrics> = {};
    for (const name of this.order) {
      const f = this.tracks.get(name)!.final;
      if (f) tracks[name] = f.metrics;
    }
    const { families, pillars, summary } = aggregate(tracks, (t) => this.tracks.get(t)!.final!.resamples);
    return { format: METRICS_FORMAT, suite: { identity: this.identity, tracks: this.suiteTracks }, tracks, families, pillars, summary };
  }

  /** Running metrics of tracks with new results since the last message (missing records count as missing). */
  private async publishProgress(): Promise<void> {
    if (this.stopped || this.finished || this.options.bus.state !== "connected") return;
    for (const name of this.order) {
      const t = this.tracks.get(name)!;
      if (t.final || !t.changed) continue;
      t.changed = false;
      const outcome = await this.options.bus.publishMetrics(this.options.runId, name, { track: name, final: false, records: t.acc.resultCount, metrics: t.acc.finish() });
      if (!outcome.ok) this.log.debug("running metrics not published", { track: name, error: outcome.error.message });
    }
  }
}

/** The tracks a run's status lists (the coordinator's bus status carries them), if it does. */
function runTracks(status: RunStatusRecord): Array<{ track: string; records: number }> | undefined {
  const parsed = z.array(z.looseObject({ track: z.string(), records: z.number().int().nonnegative() })).safeParse((status as { tracks?: unknown }).tracks);
  return parsed.success && parsed.data.length > 0 ? parsed.data : undefined;
}

/**
 * The run a scorer without --run scores: the only run on the bus, or the most recently updated
 * one (logged, with how many others there are). None is a usage error.
 */
export function chooseRun(statuses: readonly RunStatusRecord[], log?: Logger): RunStatusRecord {
  if (statuses.length === 0) throw new UsageError("no run on the bus (NATS KV udm_runs is empty): start a coordinator with --nats, or give --run");
  const sorted = [...statuses].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  if (sorted.length > 1) log?.info("several runs on the bus; scoring the most recently updated (give --run to choose)", { run: sorted[0]!.runId, others: sorted.length - 1 });
  return sorted[0]!;
}
