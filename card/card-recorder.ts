// Keeps a run's run-card.json current: written at start (`running`), rewritten as tracks complete
// and every few seconds while running, final at the end. Across resumes it carries the previous
// sessions' elapsed time and totals over (same run_id), so the card describes the whole run.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { readJsonFileOrThrow } from "../common/parse.js";
import { sealResults, trackResultsPath, type ResultsSeal } from "../common/results/index.js";
import type { MetricsJson } from "../scorer/index.js";
import { buildRunCard, type CardSetup, type RunManifestView } from "./build-card.js";
import { cardPath, previousCard, writeCard } from "./card-file.js";
import type { KeyObject } from "node:crypto";
import { signCard } from "./card-signature.js";
import { fileSha256 } from "../common/sha256.js";
import type { RunCard, RunCardStatus } from "./run-card.js";
import { snapshotOf, type CardStatus, type CardTotals, type ClusterView, type RunSnapshot } from "./run-snapshot.js";

const RunJsonView = z.looseObject({
  run_id: z.string(),
  suite_identity: z.string(),
  tracks: z.array(z.string()),
  limit: z.number().int().positive().nullable().optional(),
  method: z.looseObject({ method: z.string(), seeds: z.array(z.number()), temperature: z.number(), model: z.string() }),
  created_at: z.string(),
  sessions: z.number(),
  resumes: z.number(),
});

export function readRunJson(outDir: string): RunManifestView {
  return readJsonFileOrThrow(join(outDir, "run.json"), RunJsonView);
}

export interface CardRecorderOptions {
  outDir: string;
  setup: CardSetup;
  /** The coordinator's status now. */
  status: () => Promise<CardStatus>;
  /** Rewrite period while running (default 5000 ms; 0 = only on track completion and at the end). */
  intervalMs?: number;
  /** How often the coordinator's status is read for the agents seen (default 1000 ms; 0 = only when writing). */
  pollMs?: number;
  /** Clock, for tests. */
  now?: () => number;
  /** The scorer's interval of the v1 mean over the tracks scored so far (the card's scores.v1_ci). */
  v1Interval?: () => { ci_low: number; ci_high: number } | null;
  /** Sign every card written with this ed25519 private key (--sign-key); unsigned when absent. */
  signKey?: KeyObject;
}

export class CardRecorder {
  private readonly now: () => number;
  private readonly sessionStart: number;
  private readonly base: { elapsed: number; totals: CardTotals | undefined; agents: ClusterView["agents"]; models: readonly string[] };
  /** Models that answered records in this session (the coordinator's tally only grows). */
  private readonly answeredModels = new Set<string>();
  private readonly agents = new Map<string, ClusterView["agents"][number]>();
  private readonly sealed = new Map<string, string>();
  private errorRecords = 0;
  private answeredBy: Record<string, number> = {};
  private metrics: MetricsJson | undefined;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private finished = false;
  private last: RunCard | undefined;
  private final: RunSnapshot | undefined;
  private lastSnap: RunSnapshot | undefined;
  private readonly setup: CardSetup;

  constructor(private readonly options: CardRecorderOptions) {
    this.now = options.now ?? Date.now;
    this.sessionStart = this.now();
    const run = readRunJson(options.outDir);
    const prev = previousCard(options.outDir);
    const same = prev !== undefined && prev.run_id === run.run_id;
    this.base = {
      elapsed: same ? prev.elapsed_seconds : 0,
      totals: same ? totalsOfCard(prev) : undefined,
      agents: same ? prev.cluster.agents : [],
      // The models that answered earlier sessions (the card's model id as served).
      models: same && prev.method.model_id ? prev.method.model_id.split(",") : [],
    };
    for (const a of this.base.agents) this.agents.set(a.agent_id, { ...a, results: a.results ?? 0 });
    // 0 is "not given": a resumed run keeps the price its card already states unless a new one is given.
    const prevPrice = same ? prev.totals?.gpu_hour_usd : undefined;
    this.setup = options.setup.gpuHourUsd === 0 && typeof prevPrice === "number" && prevPrice > 0 ? { ...options.setup, gpuHourUsd: prevPrice } : options.setup;
  }

  /** Writes the `running` card and starts the periodic rewrite. */
  async start(): Promise<RunCard> {
    const card = await this.write("running");
    const ms = this.options.intervalMs ?? 5_000;
    if (ms > 0) {
      this.timer = setInterval(() => void this.update(), ms);
      this.timer.unref();
    }
    // A short run can end between two writes: the agents that answered are seen by this poll.
    const poll = this.options.pollMs ?? 1_000;
    if (poll > 0) {
      this.poller = setInterval(() => void this.poll(), poll);
      this.poller.unref();
    }
    return card;
  }

  /** A track's every record is committed: its results file is final, seal it; take the partial metrics. */
  trackComplete(family: string, track: string, metrics?: MetricsJson): void {
    if (this.finished) return;
    if (metrics) this.metrics = metrics;
    const key = `${family}/${track}.jsonl`;
    // Ask the coordinator now, while the agents that answered this track are attached: in a short
    // run the last tracks complete as the agents leave, before the card is rewritten.
    void this.poll();
    // Only the hash, streamed: this runs in the thread that serves the live page and /metrics,
    // and a track's file runs to tens of MB (parsing it whole here stalled them for seconds).
    // Errored records are counted once, by finish().
    this.chain = this.chain.then(async () => {
      // The run ended meanwhile: finish() seals every file and writes the final card (issue 26: a
      // last track's hash and `running` card would only delay the exit).
      if (this.finished) return;
      const path = trackResultsPath(this.options.outDir, family, track);
      if (existsSync(path)) this.sealed.set(key, await fileSha256(path));
      return this.write("running");
    }).catch(() => undefined);
  }

  /** Partial metrics.json as tracks are scored. */
  setMetrics(metrics: MetricsJson): void {
    this.metrics = metrics;
  }

  update(): Promise<unknown> {
    if (this.finished) return this.chain;
    this.chain = this.chain.then(() => this.write("running")).catch(() => undefined);
    return this.chain;
  }

  private async poll(): Promise<void> {
    if (this.final || this.finished) return;
    try {
      this.observe(snapshotOf(await withTimeout(this.options.status(), SNAPSHOT_TIMEOUT_MS)));
    } catch {
      // the coordinator is stopping
    }
  }

  private observe(snap: RunSnapshot): void {
    this.lastSnap = snap;
    for (const m of snap.cluster.answeredModels ?? []) this.answeredModels.add(m);
    for (const a of snap.cluster.agents) {
      // Results an agent sent in an earlier connection of this session stay counted.
      const before = this.agents.get(a.agent_id);
      if (!a.model && before?.model) continue; // reattaching while its engine restarts: keep what it served
      this.agents.set(a.agent_id, { ...a, results: Math.max(a.results, before?.model === a.model ? before.results : 0) });
    }
  }

  /**
   * The coordinator has stopped: from now on the card uses its final snapshot (`last`: its final
   * status, when it gave one; else the last one seen) instead of asking it.
   */
  coordinatorStopped(counters: Omit<ClusterView, "agents" | "answeredModels">, last?: CardStatus): void {
    if (last) this.observe(snapshotOf(last));
    this.final = {
      cluster: { agents: this.lastSnap?.cluster.agents ?? [], ...counters },
      totals: this.lastSnap?.totals,
    };
  }

  /** The final card: every results file sealed, the final metrics. */
  /** `seal`: the results files sealed already (final: taken once the run completed), else sealed here. */
  async finish(status: Exclude<RunCardStatus, "running">, metrics?: MetricsJson, sealedBefore?: ResultsSeal): Promise<RunCard> {
    this.finished = true;
    if (this.timer) clearInterval(this.timer);
    if (this.poller) clearInterval(this.poller);
    await this.chain;
    if (metrics) this.metrics = metrics;
    const seal = sealedBefore ?? sealResults(this.options.outDir);
    this.sealed.clear();
    for (const [k, v] of Object.entries(seal.files)) this.sealed.set(k, v);
    this.errorRecords = seal.errorRecords;
    this.answeredBy = seal.answeredBy;
    return this.write(status);
  }

  stop(): void {
    this.finished = true;
    if (this.timer) clearInterval(this.timer);
    if (this.poller) clearInterval(this.poller);
  }

  get isFinished(): boolean {
    return this.finished;
  }

  get path(): string {
    return cardPath(this.options.outDir);
  }

  get lastCard(): RunCard | undefined {
    return this.last;
  }

  private async write(status: RunCardStatus): Promise<RunCard> {
    const run = readRunJson(this.options.outDir);
    let snap: RunSnapshot | undefined = this.final;
    if (!snap) {
      try {
        snap = snapshotOf(await withTimeout(this.options.status(), SNAPSHOT_TIMEOUT_MS));
        this.observe(snap);
      } catch {
        snap = undefined; // the coordinator is stopping: keep what was seen
      }
    }
    const cluster: ClusterView = {
      agents: [...this.agents.values()],
      answeredModels: [...new Set([...this.base.models, ...this.answeredModels])],
      leasesExpired: snap?.cluster.leasesExpired ?? this.last?.cluster.leases_expired ?? 0,
      backupUnits: snap?.cluster.backupUnits ?? this.last?.cluster.backup_units ?? 0,
      resultsRejected: snap?.cluster.resultsRejected ?? this.last?.cluster.results_rejected ?? 0,
    };
    const totals = addTotals(this.base.totals, snap?.totals ?? (this.last ? totalsOfCard(this.last) : undefined), this.base.totals !== undefined && snap === undefined);
    const elapsed = this.base.elapsed + (this.now() - this.sessionStart) / 1000;
    const card = buildRunCard({
      run,
      metrics: this.metrics,
      totals,
      results: { files: Object.fromEntries(this.sealed), errorRecords: this.errorRecords, answeredBy: this.answeredBy },
      cluster,
      setup: this.setup,
      status,
      finished: status === "running" ? null : new Date(this.now()).toISOString(),
      elapsedSeconds: elapsed,
      v1Interval: this.metrics ? (this.options.v1Interval?.() ?? null) : null,
    });
    const written = this.options.signKey ? signCard(card, this.options.signKey) : card;
    writeCard(this.path, written);
    this.last = written;
    return written;
  }
}

/** A stopped coordinator may never answer; the card then keeps what it saw last. */
const SNAPSHOT_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The totals a card recorded, as CardTotals (to carry over into the next session). */
export function totalsOfCard(card: RunCard): CardTotals | undefined {
  const t = card.totals;
  if (t.prompt_tokens === null && t.gpu_seconds === null && card.timing.avg_latency_seconds === null) return undefined;
  return {
    promptTokens: t.prompt_tokens,
    completionTokens: t.completion_tokens,
    cachedTokens: t.cached_tokens,
    gpuSeconds: t.gpu_seconds,
    latency:
      card.timing.avg_latency_seconds === null
        ? null
        : { count: card.timing.timed_records ?? 0, mean: card.timing.avg_latency_seconds, p50: card.timing.median_latency_seconds ?? 0, p95: card.timing.p95_latency_seconds ?? 0 },
  };
}

/**
 * Previous sessions' totals plus this session's. Counts add; latency means are weighted by count;
 * p50/p95 cannot be merged from summaries, so the session that timed more records gives them.
 * `sessionIsCarried`: `session` is already the summed figure (no fresh snapshot), do not add twice.
 */
export function addTotals(base: CardTotals | undefined, session: CardTotals | undefined, sessionIsCarried = false): CardTotals | undefined {
  if (!base || sessionIsCarried) return session ?? base;
  if (!session) return base;
  const add = (a: number | null, b: number | null) => (a === null || b === null ? (a ?? b) : a + b);
  let latency = session.latency ?? base.latency;
  if (base.latency && session.latency) {
    const n = base.latency.count + session.latency.count;
    const bigger = session.latency.count >= base.latency.count ? session.latency : base.latency;
    latency = { count: n, mean: (base.latency.mean * base.latency.count + session.latency.mean * session.latency.count) / n, p50: bigger.p50, p95: bigger.p95 };
  }
  return {
    promptTokens: add(base.promptTokens, session.promptTokens),
    completionTokens: add(base.completionTokens, session.completionTokens),
    // Unknown in either session means unknown for the run.
    cachedTokens: base.cachedTokens === null || session.cachedTokens === null ? null : base.cachedTokens + session.cachedTokens,
    gpuSeconds: add(base.gpuSeconds, session.gpuSeconds),
    latency,
  };
}
