// A run served to a cluster (`udm-orch coordinator`): the coordinator in its heap-capped thread, its
// live page and /metrics, the scorer of its committed results (metrics.json) and the run card.
// create() starts it and prints the listen address; run() waits for the outcome, prints it and seals
// the card; shutdown() drains (agents finish what they hold, results are flushed).
import type { KeyObject } from "node:crypto";
import { UdmError, UsageError } from "../common/errors.js";
import { createLogger, type Logger } from "../common/log.js";
import { createProcessRegistry, type ListenAddress } from "../common/metrics/index.js";
import { Coordinator, type RunOutcome, type WorkerCoordinatorOptions, livePageLine, startObservabilityServer, type ObservabilityServer, trackScoredEvent } from "../coordinator/index.js";
import { type TrackMetrics, DEFAULT_SCORER_HEAP_MB } from "../scorer/index.js";
import type { MethodClass } from "../card/index.js";
import { RunCardSession } from "./run-card-session.js";
import { ResultsSealer } from "../common/results/index.js";

export interface RunOptions extends Omit<WorkerCoordinatorOptions, "metrics" | "onLiveEvent" | "scorerFeed" | "onCommitted" | "onGold"> {
  /** V8 old-generation cap of the coordinator thread (default DEFAULT_COORDINATOR_HEAP_MB). */
  maxHeapMb?: number;
  /** V8 old-generation cap of the scorer thread that writes metrics.json (default DEFAULT_SCORER_HEAP_MB). */
  scorerMaxHeapMb?: number;
  /** Serve /metrics, the live run page (/) and its API, /healthz, /readyz on this address; none when absent. */
  metrics?: ListenAddress;
  /** Bearer token GET /metrics needs (with `metrics`). @default none */
  metricsToken?: string;
  /** Per-agent gauges from heartbeats (with `metrics`). */
  perAgentMetrics?: boolean;
  /** Price of one GPU-hour in USD (0 = unknown). */
  gpuHourUsd?: number;
  /** The protocol's method class for the run card. */
  methodClass: MethodClass;
  /** Sign the run card with this ed25519 private key (--sign-key); unsigned when absent. */
  signKey?: KeyObject;
  logger?: Logger;
  /** Where the address, the outcome and the card's path are printed (default stdout). */
  print?: (text: string) => void;
}

export class Run {
  private constructor(
    private readonly coordinator: Coordinator,
    private readonly web: ObservabilityServer | undefined,
    private readonly cardSession: RunCardSession,
    private readonly logger: Logger,
    private readonly print: (text: string) => void,
    /** Reads the results files as they grow: the seal at the end reads only the last moments' lines. */
    private readonly sealer: ResultsSealer,
    private readonly stopSealer: () => void,
  ) {}

  /** Starts the page (it and /healthz answer while the suite is read), the coordinator and the `running` card. */
  static async create(options: RunOptions): Promise<Run> {
    const { maxHeapMb, scorerMaxHeapMb, metrics, metricsToken, perAgentMetrics, gpuHourUsd = 0, methodClass, signKey, logger = createLogger("coordinator"), print = (t: string) => void process.stdout.write(t), ...coordinatorOptions } = options;
    const method = options.method ?? {};
    const web = metrics
      ? await startObservabilityServer({
          listen: metrics,
          registry: createProcessRegistry("coordinator"),
          run: { method: method.method ?? "", model: method.model ?? "", seeds: [...(method.seeds ?? [])], gpuHourUsd },
          ...(options.token ? { token: options.token } : {}),
          ...(metricsToken ? { metricsToken } : {}),
          log: logger,
        })
      : undefined;
    const worker: WorkerCoordinatorOptions = { ...coordinatorOptions };
    if (web) {
      worker.metrics = { perAgent: perAgentMetrics !== false, gpuHourUsd };
      worker.onLiveEvent = (e) => web.publish(e);
      print(`${livePageLine(web)}\n`);
    }
    const cardSession = new RunCardSession({
      suiteDir: options.suiteDir,
      outDir: options.outDir,
      ...(options.tracks ? { tracks: options.tracks } : {}),
      ...(options.families ? { families: options.families } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      log: logger.child("scorer"),
      // The page's headline column: this process scores its committed results (a bus scorer's
      // later announcement of the same headline is shown once).
      ...(web ? { onTrackMetrics: (track: string, m: TrackMetrics) => web.publish(trackScoredEvent(track, m.headline, m.pillar)) } : {}),
      ownScorer: true,
      scorerMaxHeapMb: scorerMaxHeapMb ?? DEFAULT_SCORER_HEAP_MB,
    });
    Object.assign(worker, cardSession.scorerFeed);
    let coordinator: Coordinator;
    try {
      coordinator = await Coordinator.create({ ...worker, logger, ...(maxHeapMb !== undefined ? { maxHeapMb } : {}) });
      web?.attach(coordinator.handle, coordinator.runId);
      await cardSession.started(coordinator.handle, { method: method.method ?? "", batchSize: null, methodClass, gpuHourUsd, ...(signKey ? { signKey } : {}) });
    } catch (err) {
      // Whatever was started stops with it: the scorer's thread (and its port to the coordinator's)
      // and the page's server would otherwise keep the process alive after its fatal error.
      await cardSession.failed().catch(() => undefined);
      await web?.close();
      throw err;
    }
    const st = await coordinator.status();
    print(`coordinator listening on ${coordinator.address} run ${coordinator.runId}: ${st.recordsTotal} records, ${st.recordsResumed} already committed\n`);
    const sealer = new ResultsSealer(options.outDir);
    return new Run(coordinator, web, cardSession, logger, print, sealer, sealer.follow());
  }

  get address(): string {
    return this.coordinator.address;
  }

  get runId(): string {
    return this.coordinator.runId;
  }

  /**
   * Waits for the coordinator to stop, prints the outcome and seals the card. Resolves when every
   * record in scope is committed without errors; otherwise throws a UdmError saying how to resume.
   * With `keepPage` the page of a run that reached "complete" stays up (its final status and
   * metrics), and its coordinator answers Status, until close(); `pageKept` then says so.
   */
  async run(options: { keepPage?: boolean } = {}): Promise<RunOutcome> {
    const { coordinator, web } = this;
    let keep = false;
    try {
      const outcome = await coordinator.run().finally(() => web?.detach());
      // The page keeps the run's whole final status (run id, tracks, counters), not just its totals.
      const final = web ? await coordinator.status().catch(() => undefined) : undefined;
      web?.detach({ ...final, state: outcome.state, recordsCommitted: outcome.recordsCommitted, recordsTotal: outcome.recordsTotal });
      // A kept page keeps its coordinator too: gRPC Status and health (the chart's probes) still answer.
      keep = Boolean(options.keepPage && web && outcome.state === "complete");
      const closing = keep ? undefined : coordinator.close();
      // A complete run's results files are final (its last line was durable before it completed):
      // they are sealed here while the coordinator's thread stops, not after it, and the sealer has
      // read all but the last moments' lines already (issue 26: the exit follows the last commit).
      this.stopSealer();
      const seal = outcome.state === "complete" ? this.sealer.seal() : undefined;
      const [, sealed] = await Promise.all([closing, this.cardSession.finished(outcome, undefined, seal)]);
      const c = outcome.counters;
      this.print(
        `run ${outcome.runId} ${outcome.state}: ${outcome.recordsCommitted}/${outcome.recordsTotal} records committed ` +
          `(${outcome.recordsResumed} resumed, ${outcome.recordsErrored} with errors), ${c.rejected} results rejected, ${c.duplicates} duplicates dropped, ` +
          `${c.leasesExpired} leases expired, ${c.backupUnits} backup units, ${outcome.elapsedSeconds.toFixed(1)} s\n` +
          `run card ${sealed.cardPath} (${sealed.card.status}, fingerprint ${sealed.card.fingerprint.slice(0, 12)})\n`,
      );
      if (outcome.state === "failed") throw new (outcome.badInput ? UsageError : UdmError)(`run failed: ${outcome.error ?? "unknown error"}`);
      if (outcome.state !== "complete") throw new UdmError(`run stopped before every record was committed; start again with the same --out to resume`);
      if (outcome.recordsErrored > 0) throw new UdmError(`${outcome.recordsErrored} of ${outcome.recordsTotal} records ended with errors; start again with the same --out to retry them`);
      return outcome;
    } catch (err) {
      await this.cardSession.failed();
      throw err;
    } finally {
      this.stopSealer();
      this.kept = keep;
      if (!keep) await web?.close();
    }
  }

  private kept = false;

  /** The page stays up after run() (keepPage and the run complete) until close(). */
  get pageKept(): boolean {
    return this.kept;
  }

  /** Closes the page and coordinator run() kept up. */
  async close(): Promise<void> {
    this.kept = false;
    await this.coordinator.close();
    await this.web?.close();
  }

  /**
   * Drains: agents finish what they hold, results are flushed; run() then resolves or throws.
   * `reason` (e.g. the signal) names it in the log. With `restart` the agents of a run that is not
   * complete reattach to the next coordinator on the same port instead of stopping.
   */
  shutdown(reason = "shutdown", restart = false): void {
    this.logger.info(`${reason}: draining (agents finish what they hold${restart ? " and reattach to the next coordinator" : ""}, results are flushed)`);
    void this.coordinator.shutdown(restart);
  }
}
