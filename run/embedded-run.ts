// One machine, one process: the coordinator, one agent per engine (or per in-process simulated
// engine) and the scorer of the coordinator's committed results (scorer/commit-scorer.ts). What
// `run`, `demo` and `card reproduce` build. Rerunning with the same outDir resumes.
import type { KeyObject } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { oracleFromSuite, startSimEngine, type SimEngine, type SimEngineOptions } from "../sim/index.js";
import { createLogger, type Logger, type LogLevel } from "../common/log.js";
import { trackScoredEvent, type LiveEvent, Coordinator, type RunOutcome, type MethodConfig, livePageLine, startObservabilityServer, type ObservabilityServer } from "../coordinator/index.js";
import { env } from "../common/env.js";
import { UdmError, UsageError } from "../common/errors.js";
import { startAgent, type AgentHandle, readEngineLoad, AdaptiveConcurrency, EngineTimeouts, DEFAULT_RETRY_POLICY, registerAgentMetrics } from "../agent/index.js";
import { CommitScorer, type MetricsJson, type RunScorer, registerScorerMetrics, scorerCountsOf } from "../scorer/index.js";
import { createProgressBar, progressOf, type ProgressBar } from "./progress.js";
import { methodFactory } from "../agent/index.js";
import { watchEngineReadiness, type EngineReadiness } from "./engine-readiness.js";
import { createProcessRegistry, type ListenAddress } from "../common/metrics/index.js";
import type { MethodClass, RunCard } from "../card/index.js";
import { DEFAULT_AGENT_CAPACITY } from "./run-card-setup.js";
import { RunCardSession } from "./run-card-session.js";
import { ResultsSealer } from "../common/results/index.js";

/** After shutdown(), how long the embedded agents finish their units before they stop anyway. */
const SHUTDOWN_DRAIN_MS = 5_000;

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
  /** Records per track at most, whole groups, the same every time (`--limit`); all when absent. */
  limit?: number;
  force?: boolean;
  /** Units each agent holds at once (default: the engine's capacity). */
  capacity?: number;
  leaseMs?: number;
  /** Heartbeat period asked of the agents (the coordinator's default: at most a third of leaseMs). */
  heartbeatMs?: number;
  /** Per engine request, and retries after the first attempt (agent/methods/engine-call.ts defaults). */
  requestTimeoutMs?: number;
  retries?: number;
  /** Engines not ready within this are reported; none ready fails the run. @default 120000 */
  engineReadyTimeoutMs?: number;
  /** Print each track's headline as soon as the track is scored. @default true */
  printTracks?: boolean;
  /**
   * Serve /metrics (coordinator, agents with an `agent` label, scorer: one page), the live run page
   * and its API on this address; none when absent.
   */
  metrics?: ListenAddress;
  /** Bearer token the page's /api routes require. */
  token?: string;
  /** Bearer token GET /metrics requires. @default none */
  metricsToken?: string;
  /** Price of one GPU-hour in USD (0 = unknown). @default 0 */
  gpuHourUsd?: number;
  /** Per-agent gauges from heartbeats. @default true */
  perAgentMetrics?: boolean;
  /** The protocol's method class for the run card. @default "raw-llm" */
  methodClass?: MethodClass;
  /** Sign the run card with this ed25519 private key (--sign-key); unsigned when absent. */
  signKey?: KeyObject;
  /** label-read's prompts (also the fallback of systemone and decisions): token ids to /v1/completions, or messages to /v1/chat/completions. @default "completions" */
  labelReadApi?: "completions" | "chat";
  logger?: Logger;
  /** Test hook (CoordinatorOptions.beforeTrackRead): from sources only, where the coordinator runs in this thread. */
  beforeTrackRead?: (relPath: string) => Promise<void>;
  /** Aborting it is shutdown(reason), also while create() is still starting the run. */
  signal?: AbortSignal;
}

export const EMBEDDED_RUN_DEFAULTS = {
  engineReadyTimeoutMs: 120_000,
  printTracks: true,
  gpuHourUsd: 0,
  perAgentMetrics: true,
  methodClass: "raw-llm",
  labelReadApi: "completions",
} as const satisfies Partial<EmbeddedRunOptions>;

/** The options once defaults are applied. */
type EmbeddedRunSettings = EmbeddedRunOptions & Required<Pick<EmbeddedRunOptions, keyof typeof EMBEDDED_RUN_DEFAULTS>>;

/** The options with EMBEDDED_RUN_DEFAULTS for those not given. */
export function withEmbeddedRunDefaults(options: EmbeddedRunOptions): EmbeddedRunSettings {
  const d = EMBEDDED_RUN_DEFAULTS;
  return {
    ...options,
    engineReadyTimeoutMs: options.engineReadyTimeoutMs ?? d.engineReadyTimeoutMs,
    printTracks: options.printTracks ?? d.printTracks,
    gpuHourUsd: options.gpuHourUsd ?? d.gpuHourUsd,
    perAgentMetrics: options.perAgentMetrics ?? d.perAgentMetrics,
    methodClass: options.methodClass ?? d.methodClass,
    labelReadApi: options.labelReadApi ?? d.labelReadApi,
  };
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

export class EmbeddedRun {
  private readonly log: Logger;
  private readonly logLevel: LogLevel;
  private readonly bar: ProgressBar;
  private readonly registry: ReturnType<typeof createProcessRegistry> | undefined;
  private readonly cardSession: RunCardSession;
  private readonly scorer: CommitScorer;
  private readonly scorerMetrics: ReturnType<typeof registerScorerMetrics> | undefined;
  private web: ObservabilityServer | undefined;
  private readonly sims: SimEngine[] = [];
  private readonly agents: AgentHandle[] = [];
  private coordinator: Coordinator | undefined;
  /** Reads the results files as they grow: the seal at the end reads only the last moments' lines. */
  private sealer: ResultsSealer | undefined;
  private stopSealer: () => void = () => undefined;
  private progress: NodeJS.Timeout | undefined;
  private readiness: EngineReadiness | undefined;
  private noEngine: Error | undefined;
  private interrupted: string | undefined;

  /** Starts the run: page, simulated engines, coordinator, one agent per engine. */
  static async create(options: EmbeddedRunOptions): Promise<EmbeddedRun> {
    const run = new EmbeddedRun(options);
    const signal = options.signal;
    if (signal?.aborted) run.shutdown(String(signal.reason));
    else signal?.addEventListener("abort", () => run.shutdown(String(signal.reason)), { once: true });
    try {
      await run.start();
    } catch (err) {
      await run.cleanUpAfterError();
      throw err;
    }
    return run;
  }

  private readonly options: EmbeddedRunSettings;

  private constructor(given: EmbeddedRunOptions) {
    const options = withEmbeddedRunDefaults(given);
    this.options = options;
    // The progress bar and the per-track lines say what matters; UDM_LOG_LEVEL=info shows the rest.
    this.logLevel = process.env.UDM_LOG_LEVEL ? env.logLevel() : "warn";
    const log = options.logger ?? createLogger("run", this.logLevel);
    this.log = log;
    const engineCount = (options.engines?.length ?? 0) + (options.sim ?? 0);
    if (engineCount === 0) throw new UsageError("no engine: give --engine URL[,URL...] or --sim N");
    const bar = createProgressBar("run");
    this.bar = bar;
    this.registry = options.metrics ? createProcessRegistry("run") : undefined;
    this.cardSession = new RunCardSession({ suiteDir: options.suiteDir, outDir: options.outDir, log, v1Interval: () => scorer.v1Interval() });
    const scorer: CommitScorer = new CommitScorer({
      suiteDir: options.suiteDir,
      outDir: options.outDir,
      ...(options.tracks ? { tracks: options.tracks } : {}),
      ...(options.families ? { families: options.families } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      log,
      onEmitted: (_track, seconds) => this.scorerMetrics?.emitted(seconds),
      onTrackFinal: (track, m) => {
        this.cardSession.trackScored(track, m, scorer.current());
        this.web?.publish(trackScoredEvent(track, m.headline, m.pillar));
        if (options.printTracks) bar.log(`track complete: ${track} ${m.headline.metric}=${m.headline.value === null ? "n/a" : m.headline.value.toFixed(4)}`);
      },
    });
    this.scorer = scorer;
    this.scorerMetrics = this.registry
      ? registerScorerMetrics(this.registry, {
          metrics: () => scorer.current(),
          tracksInScope: () => scorer.tracksInScope,
          counts: () => scorerCountsOf(scorer.core?.counts),
          // Commits are applied as they come, in this thread: nothing waits.
          pending: () => 0,
        })
      : undefined;
  }

  /** Where metrics.json is written. */
  get metricsPath(): string {
    return this.scorer.metricsPath;
  }

  private async start(): Promise<void> {
    const { options, log, bar, registry, scorer } = this;
    // The scorer takes the suite's gold from the coordinator thread's one pass over the suite.
    const gold = scorer.goldFeed();
    const scorerLoaded = gold.loaded;
    scorerLoaded.catch(() => undefined);
    if (options.metrics && registry) {
      this.web = await startObservabilityServer({
        listen: options.metrics,
        registry,
        run: { method: options.method?.method ?? "systemone", model: options.method?.model ?? "", seeds: [...(options.method?.seeds ?? [])], gpuHourUsd: options.gpuHourUsd },
        ...(options.token !== undefined ? { token: options.token } : {}),
        ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
        log,
      });
      bar.log(livePageLine(this.web));
    }
    const web = this.web;
    // --sim-oracle takes an oracle file or a suite directory (its gold), read once for every engine.
    const oracle = options.simOptions?.oracle;
    const simOptions = typeof oracle === "string" && existsSync(oracle) && statSync(oracle).isDirectory() ? { ...options.simOptions, oracle: await oracleFromSuite(oracle) } : options.simOptions;
    for (let i = 0; i < (options.sim ?? 0); i++) this.sims.push(await startSimEngine({ seed: 0, ...simOptions }));
    const urls = [...(options.engines ?? []), ...this.sims.map((s) => s.url)];

    const coordinator = await Coordinator.create({
      suiteDir: options.suiteDir,
      outDir: options.outDir,
      ...(options.tracks ? { tracks: options.tracks } : {}),
      ...(options.families ? { families: options.families } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      ...(options.method ? { method: options.method } : {}),
      ...(options.force ? { force: true } : {}),
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
      ...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {}),
      onCommitted: (line) => scorer.committed(line),
      onGold: gold.onGold,
      ...(options.beforeTrackRead ? { beforeTrackRead: options.beforeTrackRead } : {}),
      ...(web ? { metrics: { perAgent: options.perAgentMetrics, gpuHourUsd: options.gpuHourUsd }, onLiveEvent: (e: LiveEvent) => web.publish(e) } : {}),
      logger: log.child("coordinator"),
      logLevel: this.logLevel,
    });
    this.coordinator = coordinator;
    this.sealer = new ResultsSealer(this.options.outDir);
    this.stopSealer = this.sealer.follow();
    web?.attach(coordinator.handle, coordinator.runId);
    // A shutdown while the suite was read found no coordinator to drain: drain it now.
    if (this.interrupted) void coordinator.shutdown();
    // The agents start at once: the coordinator hands out units of the tracks already read while
    // it reads the rest, and the scorer keeps what is committed before its gold is whole (issue 26).
    const makeMethod = methodFactory(options.method?.method ?? "systemone");
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_RETRY_POLICY.timeoutMs;
    const watched: Array<{ url: string; method: ReturnType<typeof makeMethod> }> = [];
    const agents = this.agents;
    for (const url of urls) {
      const timeouts = new EngineTimeouts(url, timeoutMs, log);
      const limiter = new AdaptiveConcurrency({ readWaiting: async (signal) => (await readEngineLoad(url, signal)).waiting });
      const method = makeMethod({
        baseUrl: url,
        model: options.method?.model || undefined,
        capacity: options.capacity,
        api: options.labelReadApi,
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
        reportEngineDown: false, // watchEngineReadiness below reports the run's engines
        logger: log.child(`agent${agents.length}`),
      });
      agents.push(agent);
      if (registry) registerAgentMetrics(registry, { agent: agent.agentId, method: method.name, engineUrl: url, stats: () => agent.stats(), limiter });
    }

    this.readiness = watchEngineReadiness(watched, options.engineReadyTimeoutMs, (m) => bar.log(`warning: ${m}`));
    this.readiness.anyReady.catch((err: Error) => {
      this.noEngine = err;
      void coordinator.shutdown();
    });
    this.progress = setInterval(async () => {
      // Once the coordinator has stopped there is no status to show.
      const s = await coordinator.status().catch(() => undefined);
      if (!s) return;
      bar.update(progressOf(s));
    }, 250);
    this.progress.unref();
    // A suite file that fails verification while the run serves ends it before the gold feed ends (issue 26).
    if ((await Promise.race([scorerLoaded.then(() => "loaded" as const), coordinator.handle.done.then((o) => (o.state === "complete" ? new Promise<never>(() => undefined) : ("ended" as const)))])) === "loaded") await scorer.replayCommitted();
    // After the gold: the coordinator's totals are whole once the gold feed has ended (issue 26).
    const status = await coordinator.status();
    await this.cardSession.started(coordinator, {
      method: options.method?.method ?? "systemone",
      batchSize: options.capacity ?? DEFAULT_AGENT_CAPACITY,
      methodClass: options.methodClass,
      gpuHourUsd: options.gpuHourUsd,
      ...(options.signKey ? { signKey: options.signKey } : {}),
    });
    if (status.recordsResumed > 0) log.info(`resuming run ${coordinator.runId}: ${status.recordsResumed} of ${status.recordsTotal} records already committed`);
  }

  /**
   * Waits for the run to end: final metrics (when complete) and the sealed card. Throws a UdmError
   * when the run did not complete (no engine ready, shut down, failed).
   */
  async run(): Promise<EmbeddedRunResult> {
    const coordinator = this.coordinator!;
    try {
      const outcome = await coordinator.run();
      this.web?.detach({ state: outcome.state, recordsCommitted: outcome.recordsCommitted, recordsTotal: outcome.recordsTotal });
      this.stopSealer();
      // A complete run's results files are final (its last line was durable before it completed).
      const seal = outcome.state === "complete" ? this.sealer?.seal() : undefined;
      await coordinator.close();
      await this.stopAll();
      this.bar.stop();
      const metrics = outcome.state === "complete" ? this.scorer.finish() : undefined;
      const sealed = await this.cardSession.finished(outcome, metrics, seal);
      if (outcome.state !== "complete") {
        if (this.noEngine) throw this.noEngine;
        if (this.interrupted) throw new UdmError(`interrupted by ${this.interrupted}: ${outcome.recordsCommitted} of ${outcome.recordsTotal} records committed in ${this.options.outDir}; rerun the same command to resume`);
        // A suite file that failed its check while the run was serving is bad input, as at start (exit 2).
        throw new (outcome.badInput ? UsageError : UdmError)(`run ${outcome.state}: ${outcome.error ?? ""} (${outcome.recordsCommitted} of ${outcome.recordsTotal} records committed)`);
      }
      return { outcome, metrics, metricsPath: this.metricsPath, scorer: this.scorer.core, card: sealed.card, cardPath: sealed.cardPath };
    } catch (err) {
      await this.cleanUpAfterError();
      throw err;
    }
  }

  /**
   * Drains the run: committed results are kept and a rerun resumes. Agents behind a hung engine
   * would hold the drain for request timeout x retries: after a few seconds they stop, and what
   * they held stays uncommitted for the rerun. `reason` (e.g. the signal) names it in the log.
   */
  shutdown(reason = "shutdown"): void {
    if (this.interrupted) return;
    this.interrupted = reason;
    this.log.warn(`${reason}: draining; committed results are kept, rerun the same command to resume`);
    void this.coordinator?.shutdown();
    setTimeout(() => {
      for (const a of this.agents) a.stop();
    }, SHUTDOWN_DRAIN_MS).unref();
  }

  private async stopAll(): Promise<void> {
    this.readiness?.stop();
    if (this.progress) clearInterval(this.progress);
    for (const a of this.agents) a.stop();
    await Promise.allSettled(this.agents.map((a) => a.done));
    await Promise.allSettled(this.sims.map((s) => s.close()));
    await this.web?.close();
  }

  private async cleanUpAfterError(): Promise<void> {
    this.stopSealer();
    await this.cardSession.failed();
    await this.coordinator?.close().catch(() => undefined);
    await this.stopAll();
    this.bar.stop();
  }
}
