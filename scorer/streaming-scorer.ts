// The bus as a source of the scorer core (`udm-orch scorer`, the scorer of a cluster as its own
// process): consumes a run's results with a durable consumer, applies each line to the RunScorer,
// journals it (fsync) and only then acks it. The moment a track's last record is in it publishes
// the track's final metrics (`udm.<run>.metrics.<track>`) and rewrites metrics.json; tracks in
// progress get running metrics every few seconds; the summary goes out once every track is in.
//
// Redelivery never counts a result twice: a run_id already applied is acked and skipped (the
// coordinator commits one line per run_id), and a restarted scorer replays its journal first. The
// one exception is the one `score` makes: a record whose line has errors is redone on the
// coordinator's next start, and its new line supersedes the old (the later line of a run_id wins).
// While such lines are in, the scorer does not call the run scored before the run's status says it
// ended and the stream has been quiet a moment, so a redo in flight is not missed.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeJsonAtomic } from "../common/atomic-file.js";
import { ResultRejectedError, SUMMARY_METRICS, type Bus, type ResultConsumer, type RunStatusRecord } from "../common/bus/index.js";
import { UsageError } from "../common/errors.js";
import { readJsonFileOrThrow } from "../common/parse.js";
import { createLogger, type Logger } from "../common/log.js";
import { type AppendLog, lineHasErrors, type ResultInput, type ResultLine } from "../common/results/index.js";
import { openCheckedSuite } from "../common/suite/index.js";
import { openAppliedJournal } from "./applied-journal.js";
import { METRICS_FILE, type MetricsJson } from "./metrics-json.js";
import { RunScorer } from "./run-scorer.js";
import type { TrackMetrics } from "./track-metrics.js";
import { scorerCountsOf, type ScorerCounts } from "./scorer-metrics.js";

export const JOURNAL_FILE = "scorer-journal.jsonl";
export const STATE_FILE = "scorer-state.json";

/** Lines applied before the journal is flushed and they are acked, at most. */
const FLUSH_LINES = 256;
/** Longest wait before applied lines are flushed and acked. */
const FLUSH_MS = 5;
const DEFAULT_PROGRESS_MS = 3_000;
const STATUS_POLL_MS = 500;
/** With lines with errors in: how long the stream must be quiet before an ended run counts as scored. */
const SETTLE_MS = 1_000;
const ENDED_STATES: ReadonlySet<string> = new Set(["complete", "failed", "cancelled"]);

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
  /** Lines refused for a missing or wrong MAC (with the run's token). */
  rejected: number;
}

export class StreamingScorer {
  private readonly log: Logger;
  private scorer: RunScorer | undefined;
  private journal: AppendLog | undefined;
  private consumer: ResultConsumer | undefined;
  private acks: Array<() => void> = [];
  private flushTimer: NodeJS.Timeout | undefined;
  /** Deliveries the consumer could not read as results. */
  private consumerErrors = 0;
  /** Deliveries refused for a missing or wrong MAC (a bus with the run's token); logged once. */
  private rejected = 0;
  private flushing: Promise<void> = Promise.resolve();
  private progressTimer: NodeJS.Timeout | undefined;
  private resolveDone!: (m: MetricsJson) => void;
  private rejectDone!: (e: Error) => void;
  private finished = false;
  private stopped = false;
  /** Applied lines with errors, by run_id (their content): a different later line supersedes one. */
  private readonly errored = new Map<string, string>();
  private lastReceivedAt = 0;
  private consumingSince = 0;
  private settleTimer: NodeJS.Timeout | undefined;
  /** The summary is being published: finish() runs once. */
  private finishing = false;
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
    const scorer = this.scorer!;
    const state = this.openState(scorer.suiteIdentity);
    this.journal = await openAppliedJournal(join(this.options.outDir, JOURNAL_FILE), (line) => this.apply(line, true), this.log);
    if (scorer.counts.replayed > 0) this.log.info("journal replayed", { lines: scorer.counts.replayed });
    scorer.queueComplete();
    await this.finishCompleted();
    if (this.finished) return;
    this.consumingSince = Date.now();
    this.consumer = await bus.consumeResults(runId, {
      durable: state.durable,
      ...(this.options.ackWaitMs !== undefined ? { ackWaitMs: this.options.ackWaitMs } : {}),
      onResult: (line, ack) => this.received(line, ack),
      onError: (err, d) => {
        if (err instanceof ResultRejectedError) return this.reject(err, d.track);
        this.consumerErrors++;
        this.log.warn("result not applied", { seq: d.seq, track: d.track, error: err.message });
      },
    });
    this.progressTimer = setInterval(() => void this.publishProgress(), this.options.progressEveryMs ?? DEFAULT_PROGRESS_MS);
    this.progressTimer.unref();
    const pending = scorer.progress().filter((t) => t.headline === null).length;
    this.log.info("consuming results", { run: runId, durable: state.durable, tracks: scorer.trackNames.length, pending });
  }

  /** Stops consuming; applied lines are flushed and acked first. The durable keeps the rest. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    if (this.settleTimer) clearInterval(this.settleTimer);
    await this.consumer?.stop();
    await this.flush();
    await this.journal?.close();
    if (!this.finished) this.rejectDone(new UsageError("scorer stopped before every track was in"));
  }

  result(): StreamingScorerResult {
    const counts = this.scorer?.counts ?? { applied: 0, duplicates: 0, replayed: 0 };
    return { metrics: this.scorer!.partial(), applied: counts.applied, duplicates: counts.duplicates, replayed: counts.replayed, rejected: this.rejected };
  }

  /** The scorer core (after start()): per-track progress, counts, partial metrics. */
  get core(): RunScorer | undefined {
    return this.scorer;
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
    const scorer = await RunScorer.load({ suite, scope: suite.files.filter((f) => !inScope || inScope.has(f.track)), duplicates: "skip", log: this.log });
    for (const t of scope ?? []) {
      const records = scorer.recordCount(t.track);
      if (t.records !== records) throw new UsageError(`track ${t.track}: the run has ${t.records} records, the suite ${suite.root} has ${records}: is it the run's suite?`);
    }
    this.scorer = scorer;
    const runIdentity = (status as { suiteIdentity?: unknown }).suiteIdentity;
    if (typeof runIdentity === "string" && runIdentity !== "" && runIdentity !== scorer.suiteIdentity) {
      this.log.warn("the run's suite identity differs from this suite's (record counts match; scoring anyway)", { run: runIdentity, suite: scorer.suiteIdentity });
    }
  }

  /** The out dir belongs to one run; its durable consumer name is made once and kept, so a restart resumes it. */
  private openState(suiteIdentity: string): z.infer<typeof StateSchema> {
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
    const state = { runId: this.options.runId, durable: `scorer-${randomUUID().slice(0, 8)}`, suiteIdentity };
    writeJsonAtomic(path, state);
    return state;
  }

  // ---- the stream ---------------------------------------------------------------------------

  /** A forged or unsigned line: counted; said once, since a forger could otherwise flood the log. */
  private reject(err: ResultRejectedError, track: string): void {
    if (this.rejected++ === 0) {
      this.log.warn("rejected a result not signed with the run's token (forged, or the coordinator runs without this --token); further ones are only counted (udm_scorer_results_total{outcome=\"rejected\"})", { track, reason: err.reason, error: err.message });
    }
  }

  private received(line: ResultLine, ack: () => void): void {
    if (this.stopped) return; // not acked: redelivered to the next scorer
    this.lastReceivedAt = Date.now();
    const outcome = this.apply({ run_id: line.run_id, probs: line.probs, skipped: line.skipped, ...(line.errors ? { errors: line.errors } : {}) }, false);
    this.acks.push(ack);
    // A duplicate, or a line that cannot ever apply (another suite, a track outside the run), is
    // acked unjournaled so it does not come back forever.
    if (outcome === "applied") {
      this.journal!.append(JSON.stringify(line));
      if (this.journal!.pending >= FLUSH_LINES) return void this.flush();
    }
    this.scheduleFlush();
  }

  /** Applies one result to its track; a line outside the run's tracks is dropped (a journal with one is refused). */
  private apply(line: ResultInput, replay: boolean): "applied" | "duplicate" | "dropped" {
    const content = JSON.stringify([line.probs, line.skipped, line.errors ?? null]);
    const earlier = this.errored.get(line.run_id);
    const outcome = this.scorer!.apply(line, replay, earlier !== undefined && earlier !== content ? "replace" : "skip");
    if (outcome === "applied" || outcome === "replaced") {
      if (lineHasErrors(line)) this.errored.set(line.run_id, content);
      else this.errored.delete(line.run_id);
      return "applied";
    }
    if (outcome === "duplicate") return "duplicate";
    if (replay) throw new UsageError(`journal ${JOURNAL_FILE}: run_id ${JSON.stringify(line.run_id)} matches no record of the run's tracks`);
    this.log.warn("result for a record outside the run's tracks dropped", { run_id: line.run_id });
    return "dropped";
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
    const scorer = this.scorer!;
    const done = scorer.finishCompleted();
    if (done.length === 0) return;
    for (const { track, metrics, secondsSinceComplete } of done) {
      const records = scorer.recordCount(track);
      const outcome = await this.options.bus.publishMetrics(this.options.runId, track, { track, final: true, records, metrics });
      if (!outcome.ok) this.log.warn("final metrics not published (they are in metrics.json)", { track, error: outcome.error.message });
      this.log.info("track scored", { track, records, [metrics.headline.metric]: metrics.headline.value });
      this.options.onTrackFinal?.(track, metrics);
      if (secondsSinceComplete !== undefined) this.options.onEmitted?.(track, secondsSinceComplete);
    }
    const json = scorer.writeMetrics(this.metricsPath);
    if (scorer.allFinal) {
      if (this.errored.size === 0) await this.finish(json);
      else this.awaitRunEnd();
    }
  }

  /**
   * Every track is in, but some lines have errors, which the coordinator's next start redoes: the
   * run counts as scored once its status says it ended and the stream has been quiet SETTLE_MS.
   */
  private awaitRunEnd(): void {
    if (this.settleTimer || this.finished) return;
    this.log.info("every track is in; lines with errors may be redone: waiting for the run to end", { errored: this.errored.size });
    this.settleTimer = setInterval(() => {
      void (async () => {
        const scorer = this.scorer!;
        if (this.stopped || this.finishing || !this.consumer) return;
        if (!scorer.allFinal || this.errored.size === 0) return; // a redo came in: finishCompleted() takes it from there
        const quiet = Date.now() - Math.max(this.lastReceivedAt, this.consumingSince) >= SETTLE_MS;
        if (!quiet || this.acks.length > 0) return;
        const status = await this.options.bus.getStatus(this.options.runId).catch(() => undefined);
        if (!status || !ENDED_STATES.has(status.state) || this.finishing || !scorer.allFinal || this.errored.size === 0) return;
        this.log.info("the run ended with lines with errors; scoring them as they are", { errored: this.errored.size, state: status.state });
        await this.finish(scorer.lastWritten ?? scorer.writeMetrics(this.metricsPath));
      })();
    }, STATUS_POLL_MS);
    this.settleTimer.unref();
  }

  private async finish(json: MetricsJson): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    const scorer = this.scorer!;
    const records = scorer.trackNames.reduce((n, t) => n + scorer.recordCount(t), 0);
    const outcome = await this.options.bus.publishMetrics(this.options.runId, SUMMARY_METRICS, {
      track: SUMMARY_METRICS,
      final: true,
      records,
      metrics: { suite: json.suite, families: json.families, pillars: json.pillars, summary: json.summary },
    });
    if (!outcome.ok) this.log.warn("summary not published (it is in metrics.json)", { error: outcome.error.message });
    this.finished = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    if (this.settleTimer) clearInterval(this.settleTimer);
    this.resolveDone(json);
  }

  /** For metrics: the tracks scored so far, result counts and lines not yet acked. */
  snapshot(): { metrics: MetricsJson | undefined; tracks: number; counts: ScorerCounts; pending: number } {
    const c = this.scorer?.counts;
    return {
      metrics: this.scorer?.lastWritten,
      tracks: this.scorer?.trackNames.length ?? 0,
      counts: scorerCountsOf(c, this.consumerErrors, this.rejected),
      pending: this.acks.length,
    };
  }

  /** Running metrics of tracks with new results since the last message (missing records count as missing). */
  private async publishProgress(): Promise<void> {
    if (this.stopped || this.finished || this.options.bus.state !== "connected") return;
    for (const { track, results, metrics } of this.scorer!.takeRunning()) {
      const outcome = await this.options.bus.publishMetrics(this.options.runId, track, { track, final: false, records: results, metrics });
      if (!outcome.ok) this.log.debug("running metrics not published", { track, error: outcome.error.message });
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
  if (sorted.length > 1) log?.info("several runs on the bus; scoring the most recently updated (give --run-name or --run to choose)", { run: sorted[0]!.runId, others: sorted.length - 1 });
  // Maybe an older run, not the one about to start: said, so a wrong pick is not silent.
  if (ENDED_STATES.has(sorted[0]!.state)) log?.warn("the run chosen has already ended; if a new run is starting, give its coordinator and this scorer the same --run-name", { run: sorted[0]!.runId, state: sorted[0]!.state, updated: sorted[0]!.updatedAt });
  return sorted[0]!;
}
