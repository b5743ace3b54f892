// One machine, one process: the coordinator, one agent per engine (or per in-process simulated
// engine) and the scorer of the coordinator's committed results (scorer/commit-scorer.ts). What
// `run` and `demo` share. Rerunning with the same --out resumes.
import { existsSync, statSync } from "node:fs";
import { oracleFromSuite, startSimEngine, type SimEngine, type SimEngineOptions } from "../sim/index.js";
import { createLogger, type Logger } from "../common/log.js";
import { trackScoredEvent, type LiveEvent, type CoordinatorHandle, type RunOutcome, startBoundedCoordinator, type MethodConfig, livePageLine, startObservabilityServer, type ObservabilityServer } from "../coordinator/index.js";
import { env } from "../common/env.js";
import { UdmError, UsageError } from "../common/errors.js";
import { startAgent, type AgentHandle, readEngineLoad, AdaptiveConcurrency, EngineTimeouts, DEFAULT_RETRY_POLICY, registerAgentMetrics } from "../agent/index.js";
import { CommitScorer, type MetricsJson, type RunScorer, registerScorerMetrics, scorerCountsOf } from "../scorer/index.js";
import { createProgressBar, progressOf } from "./progress.js";
import { methodFactory } from "./engine-methods.js";
import { watchEngineReadiness, type EngineReadiness } from "./engine-readiness.js";
import { createProcessRegistry, type ListenAddress } from "../common/metrics/index.js";
import type { MethodClass, RunCard } from "../card/index.js";
import { DEFAULT_AGENT_CAPACITY } from "./run-card-setup.js";
import { RunCardSession } from "./run-card-session.js";

/** After SIGTERM/SIGINT, how long the embedded agents finish their units before they stop anyway. */
const SIGNAL_DRAIN_MS = 5_000;

export interface EmbeddedRunOptions {
  suiteDir: string;
  outDir: string;
  /** Engine base URLs, one agent each. */
  engines?: readonly string[];
  /** Start this many simulated engines in-process (one agent each). */
  sim?: number;
  simOptions?: SimEngineOptions;
  method?: Partial<MethodConfig>;
  tracks?: readonly string[];
  families?: readonly string[];
  force?: boolean;
  /** Units each agent holds at once (default: the engine's capacity). */
  capacity?: number;
  leaseMs?: number;
  /** Per engine request, and retries after the first attempt (agent/methods/engine-call.ts defaults). */
  requestTimeoutMs?: number;
  retries?: number;
  /** Engines not ready within this are reported; none ready fails the run (default 120000). */
  engineReadyTimeoutMs?: number;
  /** Print each track's headline as soon as the track is scored. */
  printTracks?: boolean;
  /**
   * Serve /metrics (coordinator, agents with an `agent` label, scorer: one page), the live run page
   * and its API on this address; none when absent.
   */
  metrics?: ListenAddress;
  /** Bearer token the page's /api routes require. */
  token?: string;
  /** Price of one GPU-hour in USD (0 = unknown). */
  gpuHourUsd?: number;
  /** Per-agent gauges from heartbeats (default true). */
  perAgentMetrics?: boolean;
  /** The protocol's method class for the run card (default raw-llm). */
  methodClass?: MethodClass;
  logger?: Logger;
}

export interface EmbeddedRunResult {
  outcome: RunOutcome;
  metrics: MetricsJson | undefined;
  metricsPath: string;
  /** The scorer core of the run: per-track progress and headlines, counts of applied, duplicate and unmatched results. */
  scorer: RunScorer | undefined;
  /** run-card.json beside metrics.json, final. */
  card: RunCard;
  cardPath: string;
}

export async function runEmbedded(options: EmbeddedRunOptions): Promise<EmbeddedRunResult> {
  // The progress bar and the per-track lines say what matters; UDM_LOG_LEVEL=info shows the rest.
  const logLevel = process.env.UDM_LOG_LEVEL ? env.logLevel() : "warn";
  const log = options.logger ?? createLogger("run", logLevel);
  const engineCount = (options.engines?.length ?? 0) + (options.sim ?? 0);
  if (engineCount === 0) throw new UsageError("no engine: give --engine URL[,URL...] or --sim N");
  const bar = createProgressBar("run");
  const registry = options.metrics ? createProcessRegistry("run") : undefined;
  let web: ObservabilityServer | undefined;
  const cardSession = new RunCardSession({ suiteDir: options.suiteDir, outDir: options.outDir, log, v1Interval: () => scorer.v1Interval() });
  const scorer: CommitScorer = new CommitScorer({
    suiteDir: options.suiteDir,
    outDir: options.outDir,
    ...(options.tracks ? { tracks: options.tracks } : {}),
    ...(options.families ? { families: options.families } : {}),
    log,
    onEmitted: (_track, seconds) => scorerMetrics?.emitted(seconds),
    onTrackFinal: (track, m) => {
      cardSession.trackScored(track, m, scorer.current());
      web?.publish(trackScoredEvent(track, m.headline));
      if (options.printTracks !== false) bar.log(`track complete: ${track} ${m.headline.metric}=${m.headline.value === null ? "n/a" : m.headline.value.toFixed(4)}`);
    },
  });
  const metricsPath = scorer.metricsPath;

  const scorerMetrics = registry
    ? registerScorerMetrics(registry, {
        metrics: () => scorer.current(),
        tracksInScope: () => scorer.tracksInScope,
        counts: () => scorerCountsOf(scorer.core?.counts),
        // Commits are applied as they come, in this thread: nothing waits.
        pending: () => 0,
      })
    : undefined;
  const sims: SimEngine[] = [];
  const agents: AgentHandle[] = [];
  let coordinator: CoordinatorHandle | undefined;
  let progress: NodeJS.Timeout | undefined;
  let readiness: EngineReadiness | undefined;
  let noEngine: Error | undefined;
  const stopAll = async () => {
    readiness?.stop();
    if (progress) clearInterval(progress);
    for (const a of agents) a.stop();
    await Promise.allSettled(agents.map((a) => a.done));
    await Promise.allSettled(sims.map((s) => s.close()));
    await web?.close();
  };

  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = signal;
    log.warn(`${signal}: draining; committed results are kept, rerun the same command to resume`);
    void coordinator?.drain();
    // Agents behind a hung engine would hold the drain for request timeout x retries: after a few
    // seconds they stop, and what they held stays uncommitted for the rerun.
    setTimeout(() => {
      for (const a of agents) a.stop();
    }, SIGNAL_DRAIN_MS).unref();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    // The scorer takes the suite's gold from the coordinator thread's one pass over the suite.
    const gold = scorer.goldFeed();
    const scorerLoaded = gold.loaded;
    scorerLoaded.catch(() => undefined);
    if (options.metrics && registry) {
      web = await startObservabilityServer({
        listen: options.metrics,
        registry,
        run: { method: options.method?.method ?? "systemone", model: options.method?.model ?? "", seeds: [...(options.method?.seeds ?? [])], gpuHourUsd: options.gpuHourUsd ?? 0 },
        ...(options.token !== undefined ? { token: options.token } : {}),
        log,
      });
      bar.log(livePageLine(web));
    }
    // --sim-oracle takes an oracle file or a suite directory (its gold), read once for every engine.
    const oracle = options.simOptions?.oracle;
    const simOptions = typeof oracle === "string" && existsSync(oracle) && statSync(oracle).isDirectory() ? { ...options.simOptions, oracle: await oracleFromSuite(oracle) } : options.simOptions;
    for (let i = 0; i < (options.sim ?? 0); i++) sims.push(await startSimEngine({ seed: 0, ...simOptions }));
    const urls = [...(options.engines ?? []), ...sims.map((s) => s.url)];

    coordinator = await startBoundedCoordinator({
      suiteDir: options.suiteDir,
      outDir: options.outDir,
      ...(options.tracks ? { tracks: options.tracks } : {}),
      ...(options.families ? { families: options.families } : {}),
      ...(options.method ? { method: options.method } : {}),
      ...(options.force ? { force: true } : {}),
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
      onCommitted: (line) => scorer.committed(line),
      onGold: gold.onGold,
      ...(web ? { metrics: { perAgent: options.perAgentMetrics !== false, gpuHourUsd: options.gpuHourUsd ?? 0 }, onLiveEvent: (e: LiveEvent) => web!.publish(e) } : {}),
      logger: log.child("coordinator"),
      logLevel,
    });
    web?.attach(coordinator, coordinator.runId);
    // A signal while the suite was read found no coordinator to drain: drain it now.
    if (interrupted) void coordinator.drain();
    const status = await coordinator.status();
    await scorerLoaded;
    await scorer.replayCommitted();
    await cardSession.started(coordinator, {
      method: options.method?.method ?? "systemone",
      batchSize: options.capacity ?? DEFAULT_AGENT_CAPACITY,
      methodClass: options.methodClass ?? "raw-llm",
      gpuHourUsd: options.gpuHourUsd ?? 0,
    });
    if (status.recordsResumed > 0) log.info(`resuming run ${coordinator.runId}: ${status.recordsResumed} of ${status.recordsTotal} records already committed`);

    const makeMethod = methodFactory(options.method?.method ?? "systemone");
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_RETRY_POLICY.timeoutMs;
    const watched: Array<{ url: string; method: ReturnType<typeof makeMethod> }> = [];
    for (const url of urls) {
      const timeouts = new EngineTimeouts(url, timeoutMs, log);
      const limiter = new AdaptiveConcurrency({ readWaiting: async (signal) => (await readEngineLoad(url, signal)).waiting });
      const method = makeMethod({
        baseUrl: url,
        model: options.method?.model || undefined,
        capacity: options.capacity,
        api: "completions",
        limiter,
        seeds: [...(options.method?.seeds ?? [])],
        retry: { timeoutMs, ...(options.retries !== undefined ? { retries: options.retries } : {}), onTimeout: () => timeouts.record() },
        logger: log.child(`agent${agents.length}`),
      });
      watched.push({ url, method });
      const agent = startAgent({
          coordinator: coordinator.address,
          method,
          engineUrl: url,
          engineHealthUrl: `${url}/health`,
          engineLoad: (signal) => readEngineLoad(url, signal),
          ...(options.capacity ? { capacity: options.capacity } : {}),
          logger: log.child(`agent${agents.length}`),
        });
      agents.push(agent);
      if (registry) registerAgentMetrics(registry, { agent: agent.agentId, method: method.name, engineUrl: url, stats: () => agent.stats(), limiter });
    }

    const c = coordinator;
    const readyTimeoutMs = options.engineReadyTimeoutMs ?? 120_000;
    readiness = watchEngineReadiness(watched, readyTimeoutMs, (m) => bar.log(`warning: ${m}`));
    readiness.anyReady.catch((err: Error) => {
      noEngine = err;
      void c.drain();
    });
    progress = setInterval(async () => {
      // Once the coordinator has stopped there is no status to show.
      const s = await c.status().catch(() => undefined);
      if (!s) return;
      bar.update(progressOf(s));
    }, 250);
    progress.unref();

    const outcome = await coordinator.done;
    web?.detach({ state: outcome.state, recordsCommitted: outcome.recordsCommitted, recordsTotal: outcome.recordsTotal });
    await coordinator.close();
    await stopAll();
    bar.stop();
    const metrics = outcome.state === "complete" ? scorer.finish() : undefined;
    const sealed = await cardSession.finished(outcome, metrics);
    if (outcome.state !== "complete") {
      if (noEngine) throw noEngine;
      if (interrupted) throw new UdmError(`interrupted by ${interrupted}: ${outcome.recordsCommitted} of ${outcome.recordsTotal} records committed in ${options.outDir}; rerun the same command to resume`);
      throw new UdmError(`run ${outcome.state}: ${outcome.error ?? ""} (${outcome.recordsCommitted} of ${outcome.recordsTotal} records committed)`);
    }
    return { outcome, metrics, metricsPath, scorer: scorer.core, card: sealed.card, cardPath: sealed.cardPath };
  } catch (err) {
    await cardSession.failed();
    await coordinator?.close().catch(() => undefined);
    await stopAll();
    bar.stop();
    throw err;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
