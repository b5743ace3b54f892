// udm-orch sweep --config sweep.yaml: runs a declared matrix (models x methods x temperatures x
// seed-sets) one run after another behind one coordinator address; agents attached with
// `--method any --vllm-cmd "... {model} ..."` follow it, restarting their engine when the model
// changes. Runs whose card is complete with the same fingerprint are skipped, so rerunning the
// command resumes an interrupted sweep. --dry-run prints the matrix with estimates.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Command } from "commander";
import { EXIT, UdmError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { startBoundedCoordinator, livePageLine, startObservabilityServer, type ObservabilityServer, trackScoredEvent } from "../coordinator/index.js";
import { previousCard, expandSweep, readSweepConfig, type SweepConfig, type SweepRun, datasetSha256, expectedFingerprint, estimateRun, measureCharsPerToken, measureSuiteText, type TokenRatio, entryFromCard, SWEEP_RECORD_FORMAT, writeSweepRecord, type SweepRunEntry, rankingMean } from "../card/index.js";
import { numberArg, opt } from "./options.js";
import { methodTemplate, RunCardSession } from "../run/index.js";
import { boolArg } from "./metrics-flags.js";
import { onShutdownSignals } from "./signals.js";
import { flagOptions } from "./flag-group.js";
import { tokenFlags } from "./flags/access-flags.js";
import { parseMetricsListen, createProcessRegistry } from "../common/metrics/index.js";
import type { TrackMetrics } from "../scorer/index.js";

interface SweepFlags {
  config: string;
  dryRun?: boolean;
  listen?: string;
  token?: string;
  engine?: string;
  charsPerToken: string;
  tokensPerGpuS: string;
  metrics: string;
  perAgentMetrics?: string;
}

/** Sweep runs are served by the coordinator: each agent picks its batch size (the card records null). */
const SWEEP_BATCH_SIZE = null;

/**
 * How long the last run's coordinator stays up for the sweep's agents that have not come back yet,
 * to drain them: longer than an agent's largest reconnect delay (30 s, agent/reconnect-backoff.ts),
 * so an agent still waiting to redial when a short last run ends is told to stop instead of
 * dialling a closed address for ever.
 */
const LATE_AGENT_WAIT_MS = 40_000;

export function register(program: Command): void {
  const command = program
    .command("sweep")
    .description("run a matrix of models x methods x temperatures x seed-sets on one coordinator address; rerun to resume")
    .addOption(opt("--config <file>", "sweep.yaml").makeOptionMandatory())
    .addOption(opt("--dry-run", "print the matrix with tokens, GPU-hours and cost per run, run nothing"))
    .addOption(opt("--listen <host:port>", "coordinator address (default: the config's listen)"));
  for (const o of flagOptions(tokenFlags("bearer token agents must send"))) command.addOption(o);
  command
    .addOption(opt("--engine <url>", "--dry-run: an engine whose /tokenize counts the suite's tokens"))
    .addOption(opt("--chars-per-token <n>", "--dry-run: characters per token when no engine answers /tokenize", "4"))
    .addOption(opt("--tokens-per-gpu-s <n>", "--dry-run: tokens (prompt + completion) one GPU processes per second", "5000"))
    .addOption(opt("--metrics <host:port>", "serve /metrics and the live page of the run in progress on this address, e.g. 127.0.0.1:9470 (off: none)", "off"))
    .addOption(opt("--per-agent-metrics <bool>", "export per-agent gauges from heartbeats (false for very large clusters)", "true"))
    .action(async (flags: SweepFlags) => {
      const config = readSweepConfig(flags.config);
      const runs = expandSweep(config);
      const dataset = await datasetSha256(config.suiteDir);
      const entries: SweepRunEntry[] = runs.map((run) => planEntry(config, run, dataset));
      if (flags.dryRun) return dryRun(config, runs, entries, flags);
      const metricsListen = parseMetricsListen(flags.metrics);
      const perAgent = boolArg("per-agent-metrics", flags.perAgentMetrics);
      // One page for the whole sweep: it shows the run in progress, and starts afresh with the next.
      const web = metricsListen
        ? await startObservabilityServer({
            listen: metricsListen,
            registry: createProcessRegistry("coordinator"),
            run: { method: runs[0]?.method ?? "", model: runs[0]?.model ?? "", seeds: runs[0]?.seeds ?? [], gpuHourUsd: config.gpu_hour_usd },
            ...(flags.token ? { token: flags.token } : {}),
          })
        : undefined;
      if (web) process.stdout.write(`${livePageLine(web)}\n`);
      try {
        await runSweep(config, runs, entries, dataset, flags, web && { server: web, perAgent });
      } finally {
        await web?.close();
      }
    });
}

function planEntry(config: SweepConfig, run: SweepRun, dataset: string): SweepRunEntry {
  const out = join(config.outDir, run.name);
  const fp = expectedFingerprint(run, dataset, methodTemplate(run.method), SWEEP_BATCH_SIZE);
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
  if (card) return { ...entryFromCard(entry, card), fingerprint: fp, status: "pending", note: `card ${card.status}${card.fingerprint !== fp ? ", other fingerprint" : ""}: run (resumes its results)` };
  return entry;
}

async function dryRun(config: SweepConfig, runs: SweepRun[], entries: SweepRunEntry[], flags: SweepFlags): Promise<void> {
  const text = await measureSuiteText(config.suiteDir, { ...(config.tracks ? { tracks: config.tracks } : {}), ...(config.families ? { families: config.families } : {}) });
  const stated = numberArg("chars-per-token", flags.charsPerToken, 0.1)!;
  const tokensPerGpuSecond = numberArg("tokens-per-gpu-s", flags.tokensPerGpuS, 1)!;
  let ratio: TokenRatio | undefined = flags.engine ? await measureCharsPerToken(flags.engine, text.sample) : undefined;
  const engineNote = flags.engine && !ratio ? ` (${flags.engine}/tokenize did not answer)` : "";
  ratio ??= { charsPerToken: stated, source: `stated ratio of ${stated} characters per token (--chars-per-token)${engineNote}` };
  const a = { ratio, tokensPerGpuSecond, gpuHourUsd: config.gpu_hour_usd };
  const lines: string[] = [];
  lines.push(`sweep ${config.path}: ${runs.length} runs over ${text.records} records (${text.questions} questions) of ${config.suiteDir}`);
  lines.push(`tokens: ${ratio.source} = ${ratio.charsPerToken.toFixed(3)} characters per token`);
  lines.push(`GPU time: ${tokensPerGpuSecond} tokens per GPU-second (--tokens-per-gpu-s); cost: ${config.gpu_hour_usd > 0 ? `$${config.gpu_hour_usd} per GPU-hour` : "unknown (gpu_hour_usd 0)"}`);
  lines.push("");
  lines.push("| run | status | prompt tokens | completion tokens | GPU-hours | cost USD |");
  lines.push("|---|---|---:|---:|---:|---:|");
  let prompt = 0;
  let completion = 0;
  let hours = 0;
  let cost = 0;
  runs.forEach((run, i) => {
    const e = estimateRun(run, text, a);
    const todo = entries[i]!.status !== "skipped";
    if (todo) {
      prompt += e.promptTokens;
      completion += e.completionTokens;
      hours += e.gpuHours;
      cost += e.costUsd ?? 0;
    }
    lines.push(`| ${run.name} | ${todo ? "to run" : "skip (complete)"} | ${e.promptTokens} | ${e.completionTokens} | ${e.gpuHours.toFixed(4)} | ${e.costUsd === null ? "n/a" : e.costUsd.toFixed(4)} |`);
  });
  lines.push(`| total to run | | ${prompt} | ${completion} | ${hours.toFixed(4)} | ${config.gpu_hour_usd > 0 ? cost.toFixed(4) : "n/a"} |`);
  process.stdout.write(lines.join("\n") + "\n");
}

async function runSweep(
  config: SweepConfig,
  runs: SweepRun[],
  entries: SweepRunEntry[],
  dataset: string,
  flags: SweepFlags,
  web: { server: ObservabilityServer; perAgent: boolean } | undefined,
): Promise<void> {
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

  let listen = flags.listen ?? config.listen;
  let current: { drain(): void } | undefined;
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = signal;
    process.stderr.write(`sweep: ${signal}: draining the current run; rerun the same command to resume\n`);
    current?.drain();
  };
  const uninstall = onShutdownSignals(onSignal);
  try {
    for (const [k, i] of todo.entries()) {
      if (interrupted) break;
      const run = runs[i]!;
      const entry = entries[i]!;
      const outDir = join(config.outDir, run.name);
      const session = new RunCardSession({
        suiteDir: config.suiteDir,
        outDir,
        ownScorer: true,
          ...(config.tracks ? { tracks: config.tracks } : {}),
        ...(config.families ? { families: config.families } : {}),
        log: logger.child("scorer"),
        ...(web ? { onTrackMetrics: (track: string, m: TrackMetrics) => web.server.publish(trackScoredEvent(track, m.headline)) } : {}),
      });
      entries[i] = { ...entry, status: "running" };
      save();
      const last = k === todo.length - 1;
      // The agents this run told to drain (the last run drains them all).
      const drained = new Set<string>();
      process.stdout.write(`sweep: run ${k + 1}/${todo.length} ${run.name} (model ${run.model}, ${run.method}, temperature ${run.temperature}, seeds [${run.seeds.join(",")}])\n`);
      const coordinator = await startBoundedCoordinator({
        suiteDir: config.suiteDir,
        outDir,
        listen,
        ...(flags.token ? { token: flags.token } : {}),
        ...(config.tracks ? { tracks: config.tracks } : {}),
        ...(config.families ? { families: config.families } : {}),
        method: { method: run.method, seeds: run.seeds, temperature: run.temperature, model: run.model },
        ...(config.lease_ms ? { leaseMs: config.lease_ms } : {}),
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
      current = coordinator;
      web?.server.attach(coordinator, coordinator.runId, { method: run.method, model: run.model, seeds: run.seeds, gpuHourUsd: config.gpu_hour_usd });
      if (k === 0) process.stdout.write(`sweep coordinator listening on ${coordinator.address}\n`);
      listen = coordinator.address; // later runs on the same address, which the agents dial
      try {
        await session.started(coordinator, { method: run.method, batchSize: SWEEP_BATCH_SIZE, methodClass: config.method_class, gpuHourUsd: config.gpu_hour_usd });
        if (interrupted) coordinator.drain();
        const outcome = await coordinator.done.finally(() => web?.server.detach());
        web?.server.detach({ state: outcome.state, recordsCommitted: outcome.recordsCommitted, recordsTotal: outcome.recordsTotal });
        const sealed = await session.finished(outcome);
        entries[i] = { ...entryFromCard(entries[i]!, sealed.card), status: outcome.state, card: relative(config.outDir, sealed.cardPath) };
        save();
        process.stdout.write(
          `sweep: ${run.name} ${outcome.state}: v1 mean ${rankingMean(sealed.card.scores.summary)?.toFixed(4) ?? "n/a"}, ` +
            `${sealed.card.elapsed_seconds.toFixed(1)} s, card ${sealed.cardPath}\n`,
        );
        if (outcome.state === "failed") throw new UdmError(`sweep run ${run.name} failed: ${outcome.error ?? "unknown error"}`);
        if (last && outcome.state === "complete" && !interrupted) await drainLateAgents(coordinator, sweepAgents, drained, () => interrupted !== undefined);
        await coordinator.close();
      } catch (err) {
        await Promise.resolve(coordinator.close()).catch(() => undefined);
        await session.failed();
        if (entries[i]!.status === "running") entries[i] = { ...entries[i]!, status: "failed" };
        save();
        throw err;
      }
      current = undefined;
    }
  } finally {
    uninstall();
  }
  const record = save();
  process.stdout.write(
    `sweep: ${record.totals.complete} runs done, ${record.totals.skipped} skipped, ${record.totals.failed} not complete of ${record.totals.runs}; ` +
      `cost ${record.totals.cost_usd === null ? "unknown" : `$${record.totals.cost_usd.toFixed(4)}`}; wrote ${recordPath}\n`,
  );
  if (interrupted || record.runs.some((r) => r.status !== "complete" && r.status !== "skipped")) {
    throw new UdmError(`sweep incomplete${interrupted ? ` (interrupted by ${interrupted})` : ""}: rerun the same command to resume`);
  }
  process.exitCode = EXIT.ok;
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
