// A sweep (`udm-orch sweep`): a declared matrix of runs (models x methods x temperatures x
// seed-sets) one after another behind one coordinator address, each with its run card and the scorer
// of its committed results, and one live page for the whole sweep. Agents attached with
// `--method any` follow it. planSweep() skips the runs whose card is complete with the same
// fingerprint; create() starts the page; run() runs the rest and writes sweep.json; shutdown()
// drains the run in progress (a rerun resumes).
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { UdmError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { createProcessRegistry, type ListenAddress } from "../common/metrics/index.js";
import { Coordinator, livePageLine, startObservabilityServer, type ObservabilityServer, trackScoredEvent } from "../coordinator/index.js";
import {
  previousCard,
  expandSweep,
  readSweepConfig,
  type SweepConfig,
  type SweepRun,
  datasetSha256,
  expectedFingerprint,
  entryFromCard,
  SWEEP_RECORD_FORMAT,
  writeSweepRecord,
  type SweepRunEntry,
  rankingMean,
  scopeOf,
  scopeOfCard,
  type FingerprintScope,
  type RunCard,
} from "../card/index.js";
import type { TrackMetrics } from "../scorer/index.js";
import { methodTemplate } from "./run-card-setup.js";
import { RunCardSession } from "./run-card-session.js";

/** Sweep runs are served by the coordinator: each agent picks its batch size (the card records null). */
const SWEEP_BATCH_SIZE = null;

/**
 * How long the last run's coordinator stays up for the sweep's agents that have not come back yet,
 * to drain them: longer than an agent's largest reconnect delay (30 s, agent/reconnect-backoff.ts),
 * so an agent still waiting to redial when a short last run ends is told to stop instead of
 * dialling a closed address for ever.
 */
const LATE_AGENT_WAIT_MS = 40_000;

/** The sweep's runs, each with its entry in sweep.json: pending, or skipped when its card is complete with the same fingerprint. */
export interface SweepPlan {
  config: SweepConfig;
  runs: SweepRun[];
  entries: SweepRunEntry[];
  /** sha256 of the suite's files (the runs' dataset). */
  dataset: string;
  /** The tracks and families every run covers (part of its fingerprint). */
  scope: FingerprintScope;
}

/** `overrides.limit` (the command's --limit) replaces the config's `limit`. */
export async function planSweep(configPath: string, overrides: { limit?: number } = {}): Promise<SweepPlan> {
  const read = readSweepConfig(configPath);
  const config = overrides.limit !== undefined ? { ...read, limit: overrides.limit } : read;
  const runs = expandSweep(config);
  const dataset = await datasetSha256(config.suiteDir);
  const scope = scopeOf(config.suiteDir, { ...(config.tracks ? { tracks: config.tracks } : {}), ...(config.families ? { families: config.families } : {}) }, config.limit ?? null);
  return { config, runs, dataset, scope, entries: runs.map((run) => planEntry(config, run, dataset, scope)) };
}

export interface SweepOptions {
  plan: SweepPlan;
  /** Coordinator address (default: the config's listen). */
  listen?: string;
  /** Bearer token agents (and the page's /api routes) must send. */
  token?: string;
  /** Serve /metrics and the live page of the run in progress on this address; none when absent. */
  metrics?: ListenAddress;
  /** Per-agent gauges from heartbeats (with `metrics`). */
  perAgentMetrics?: boolean;
  /** Sign each run's card with this ed25519 private key (--sign-key); unsigned when absent. */
  signKey?: KeyObject;
}

export class Sweep {
  private current: Coordinator | undefined;
  private interrupted: string | undefined;

  private constructor(
    private readonly options: SweepOptions,
    private readonly web: { server: ObservabilityServer; perAgent: boolean } | undefined,
  ) {}

  /** Starts the sweep's page: one for the whole sweep, it shows the run in progress and starts afresh with the next. */
  static async create(options: SweepOptions): Promise<Sweep> {
    const { config, runs } = options.plan;
    const web = options.metrics
      ? await startObservabilityServer({
          listen: options.metrics,
          registry: createProcessRegistry("coordinator"),
          run: { method: runs[0]?.method ?? "", model: runs[0]?.model ?? "", seeds: runs[0]?.seeds ?? [], gpuHourUsd: config.gpu_hour_usd },
          ...(options.token ? { token: options.token, metricsToken: options.token } : {}),
        })
      : undefined;
    if (web) process.stdout.write(`${livePageLine(web)}\n`);
    return new Sweep(options, web && { server: web, perAgent: options.perAgentMetrics !== false });
  }

  /** Drains the run in progress and starts no other; run() then throws (a rerun resumes). */
  shutdown(reason = "shutdown"): void {
    if (this.interrupted) return;
    this.interrupted = reason;
    process.stderr.write(`sweep: ${reason}: draining the current run; rerun the same command to resume\n`);
    void this.current?.shutdown();
  }

  /** Runs every run not skipped and writes sweep.json; throws a UdmError when one is not complete or the sweep was shut down. */
  async run(): Promise<void> {
    try {
      await this.runAll();
    } finally {
      await this.web?.server.close();
    }
  }

  private async runAll(): Promise<void> {
    const { config, runs, entries, dataset, scope } = this.options.plan;
    const web = this.web;
    const logger = createLogger("sweep", process.env.UDM_LOG_LEVEL ? undefined : "warn");
    const recordPath = join(config.outDir, "sweep.json");
    const startedAt = new Date().toISOString();
    /**
     * The agents of the sweep (by agent id, stable while an agent process lives; engine URLs are not
     * unique, every agent beside its vLLM says http://127.0.0.1:8000): those that attached to any run
     * of this sweep, also before it was resumed (sweep.json keeps them), or that its cards list. The
     * last run drains each of them, so none dials a closed address for ever.
     */
    const sweepAgents = new Set<string>(previousSweepAgents(recordPath));
    for (const run of runs) for (const a of previousCard(join(config.outDir, run.name))?.cluster.agents ?? []) sweepAgents.add(a.agent_id);
    const save = () =>
      writeSweepRecord(recordPath, {
        format: SWEEP_RECORD_FORMAT,
        config: config.path,
        suite: config.suiteDir,
        dataset_sha256: dataset,
        started_at: startedAt,
        runs: entries,
        agents: [...sweepAgents].sort(),
      });
    save();
    const todo = entries.map((e, i) => (e.status === "skipped" ? -1 : i)).filter((i) => i >= 0);
    for (const e of entries) if (e.status === "skipped") process.stdout.write(`sweep: skip ${e.name}: ${e.note}\n`);

    let listen = this.options.listen ?? config.listen;
    for (const [k, i] of todo.entries()) {
      if (this.interrupted) break;
      const run = runs[i]!;
      const entry = entries[i]!;
      const outDir = join(config.outDir, run.name);
      const session = new RunCardSession({
        suiteDir: config.suiteDir,
        outDir,
        ownScorer: true,
          ...(config.tracks ? { tracks: config.tracks } : {}),
        ...(config.families ? { families: config.families } : {}),
        ...(config.limit !== undefined ? { limit: config.limit } : {}),
        log: logger.child("scorer"),
        ...(web ? { onTrackMetrics: (track: string, m: TrackMetrics) => web.server.publish(trackScoredEvent(track, m.headline, m.pillar)) } : {}),
      });
      entries[i] = { ...entry, status: "running" };
      save();
      const last = k === todo.length - 1;
      // The agents this run told to drain (the last run drains them all).
      const drained = new Set<string>();
      process.stdout.write(`sweep: run ${k + 1}/${todo.length} ${run.name} (model ${run.model}, ${run.method}, temperature ${run.temperature}, seeds [${run.seeds.join(",")}])\n`);
      let coordinator: Coordinator;
      web?.server.nextRun();
      try {
        coordinator = await Coordinator.create({
          suiteDir: config.suiteDir,
          outDir,
          listen,
          ...(this.options.token ? { token: this.options.token } : {}),
          ...(config.tracks ? { tracks: config.tracks } : {}),
          ...(config.families ? { families: config.families } : {}),
          ...(config.limit !== undefined ? { limit: config.limit } : {}),
          method: { method: run.method, seeds: run.seeds, temperature: run.temperature, model: run.model },
          ...(config.lease_ms ? { leaseMs: config.lease_ms } : {}),
          // A widened scope resumes the run's results over the new tracks (run.json is rescoped).
          ...(rescoped(previousCard(outDir), dataset, scope) ? { force: true } : {}),
          // Agents stay for the next run; the last run to do drains them.
          releaseAgentsAtEnd: !last,
          ...session.scorerFeed,
          ...(web ? { metrics: { perAgent: web.perAgent, gpuHourUsd: config.gpu_hour_usd } } : {}),
          onLiveEvent: (e) => {
            web?.server.publish(e);
            if (e.type === "agent_joined" && !sweepAgents.has(e.agentId)) {
              sweepAgents.add(e.agentId);
              save();
            }
            if (e.type === "agent_left" && e.reason === "drained") drained.add(e.agentId);
          },
          logger: logger.child("coordinator"),
          logLevel: process.env.UDM_LOG_LEVEL ? (process.env.UDM_LOG_LEVEL as "info") : "warn",
        });
      } catch (err) {
        // Nothing listens (a bad address, an unwritable directory): close the scorer, or the process never exits.
        await session.failed();
        entries[i] = { ...entries[i]!, status: "failed" };
        save();
        throw err;
      }
      this.current = coordinator;
      web?.server.attach(coordinator.handle, coordinator.runId, {
        method: run.method,
        model: run.model,
        seeds: run.seeds,
        gpuHourUsd: config.gpu_hour_usd,
        sweep: { cell: run.name, index: i + 1, of: runs.length },
      });
      if (k === 0) process.stdout.write(`sweep coordinator listening on ${coordinator.address}\n`);
      listen = coordinator.address; // later runs on the same address, which the agents dial
      try {
        await session.started(coordinator, { method: run.method, batchSize: SWEEP_BATCH_SIZE, methodClass: config.method_class, gpuHourUsd: config.gpu_hour_usd, ...(this.options.signKey ? { signKey: this.options.signKey } : {}) });
        if (this.interrupted) void coordinator.shutdown();
        const outcome = await coordinator.run().finally(() => web?.server.detach());
        web?.server.detach({ state: outcome.state, recordsCommitted: outcome.recordsCommitted, recordsTotal: outcome.recordsTotal });
        const sealed = await session.finished(outcome);
        const state = sealed.card.status === "complete_with_errors" ? sealed.card.status : outcome.state;
        entries[i] = { ...entryFromCard(entries[i]!, sealed.card), status: state, card: relative(config.outDir, sealed.cardPath) };
        save();
        const errored = state === "complete_with_errors" ? ` (${sealed.card.scores.errors} of ${sealed.card.dataset.entry_count} records errored; a rerun redoes them)` : "";
        process.stdout.write(
          `sweep: ${run.name} ${state}${errored}: v1 mean ${rankingMean(sealed.card.scores.summary)?.toFixed(4) ?? "n/a"}, ` +
            `${sealed.card.elapsed_seconds.toFixed(1)} s, card ${sealed.cardPath}\n`,
        );
        if (outcome.state === "failed") throw new UdmError(`sweep run ${run.name} failed: ${outcome.error ?? "unknown error"}`);
        if (last && outcome.state === "complete" && !this.interrupted) await drainLateAgents(coordinator, sweepAgents, drained, () => this.interrupted !== undefined);
        await coordinator.close();
      } catch (err) {
        await Promise.resolve(coordinator.close()).catch(() => undefined);
        await session.failed();
        if (entries[i]!.status === "running") entries[i] = { ...entries[i]!, status: "failed" };
        save();
        throw err;
      }
      this.current = undefined;
    }
    const record = save();
    process.stdout.write(
      `sweep: ${record.totals.complete} runs done, ${record.totals.skipped} skipped, ${record.totals.with_errors} with errored records, ${record.totals.failed} not complete of ${record.totals.runs}; ` +
        `cost ${record.totals.cost_usd === null ? "unknown" : `$${record.totals.cost_usd.toFixed(4)}`}; wrote ${recordPath}\n`,
    );
    if (this.interrupted || record.runs.some((r) => r.status !== "complete" && r.status !== "skipped")) {
      const errored = record.totals.with_errors > 0 ? ` (${record.totals.with_errors} run(s) with errored records)` : "";
      throw new UdmError(`sweep incomplete${this.interrupted ? ` (interrupted by ${this.interrupted})` : errored}: rerun the same command to resume`);
    }
  }
}

function planEntry(config: SweepConfig, run: SweepRun, dataset: string, scope: FingerprintScope): SweepRunEntry {
  const out = join(config.outDir, run.name);
  const template = methodTemplate(run.method);
  const fp = expectedFingerprint(run, dataset, template, scope);
  const entry: SweepRunEntry = {
    ...run,
    out: run.name,
    status: "pending",
    card: null,
    fingerprint: fp,
    run_card_hash: null,
    v1_mean: null,
    total_cost_usd: null,
    elapsed_seconds: null,
  };
  const card = previousCard(out);
  if (card?.status === "complete" && card.fingerprint === fp) {
    return { ...entryFromCard(entry, card), status: "skipped", note: "complete card with the same fingerprint", card: `${run.name}/run-card.json` };
  }
  // A complete card over a wider scope (every requested track, more besides) answers a narrower rerun:
  // its fingerprint is this setup's over its own scope, by the rule of its own format.
  if (card?.status === "complete" && covers(scopeOfCard(card), scope) && card.fingerprint === expectedFingerprint(run, dataset, template, scopeOfCard(card), card.card_format)) {
    return { ...entryFromCard(entry, card), status: "skipped", note: "complete card over a scope that covers this one", card: `${run.name}/run-card.json` };
  }
  if (card) {
    const why = card.status === "complete_with_errors" ? `${card.status} (${card.scores.errors} records errored)` : card.status;
    return { ...entryFromCard(entry, card), fingerprint: fp, status: "pending", note: `card ${why}${card.fingerprint !== fp ? ", other fingerprint" : ""}: run (resumes its results)` };
  }
  return entry;
}

/** Every track and family of `wanted` is in `have`. */
function covers(have: FingerprintScope, wanted: FingerprintScope): boolean {
  const tracks = new Set(have.tracks);
  const families = new Set(have.families);
  // A limited card (--limit) covers only the same limit: another limit is other records.
  return have.limit === wanted.limit && wanted.tracks.every((t) => tracks.has(t)) && wanted.families.every((f) => have.families.length === 0 || families.has(f));
}

/**
 * The run's previous session covered fewer tracks of the same suite: the coordinator adopts the
 * wider scope (run.json) and resumes the results it has. A narrower scope over a card that is not
 * complete is left to the coordinator to refuse (its other tracks' results would stay unsealed).
 */
function rescoped(card: RunCard | undefined, dataset: string, scope: FingerprintScope): boolean {
  if (!card || card.dataset.sha256 !== dataset) return false;
  // Another --limit: the records already answered are kept, the run covers the new limit's.
  if ((card.dataset.limit ?? null) !== scope.limit) return true;
  const wanted = new Set(scope.tracks);
  return card.dataset.tracks.every((t) => wanted.has(t)) && wanted.size > new Set(card.dataset.tracks).size;
}

/**
 * After the last run: waits (at most LATE_AGENT_WAIT_MS) until every agent the sweep has seen was
 * told to drain and left, and none is attached (the coordinator drains an agent that attaches after
 * its run is complete), so every agent of the sweep exits when the sweep is done, also one that was
 * still waiting to redial during the whole of a short run, or that reattached as the run ended.
 */
async function drainLateAgents(
  coordinator: { status(): Promise<{ agents: ReadonlyArray<unknown> }> },
  expected: ReadonlySet<string>,
  drained: ReadonlySet<string>,
  interrupted: () => boolean,
): Promise<void> {
  const missing = () => [...expected].filter((a) => !drained.has(a));
  const attached = async () => (await coordinator.status().catch(() => ({ agents: [] }))).agents.length;
  if (missing().length === 0 && (await attached()) === 0) return;
  if (missing().length > 0) process.stdout.write(`sweep: waiting up to ${LATE_AGENT_WAIT_MS / 1000} s for ${missing().length} agent(s) to come back and be drained\n`);
  const until = Date.now() + LATE_AGENT_WAIT_MS;
  while (Date.now() < until && !interrupted()) {
    if (missing().length === 0 && (await attached()) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const left = missing();
  if (left.length > 0) process.stderr.write(`sweep: agent(s) ${left.join(", ")} did not come back to be drained; stop them by hand\n`);
}

/** The agents a previous invocation of this sweep recorded in sweep.json (none when it is absent or unreadable). */
function previousSweepAgents(path: string): string[] {
  try {
    const agents = (JSON.parse(readFileSync(path, "utf8")) as { agents?: unknown }).agents;
    return Array.isArray(agents) ? agents.filter((a): a is string => typeof a === "string") : [];
  } catch {
    return [];
  }
}
