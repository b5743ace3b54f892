// The scorer of a distributed run as its own process (`udm-orch scorer`): its /metrics, the bus
// (waited for while NATS is down) and the StreamingScorer of one run. create() starts /metrics and
// opens the bus; run() scores until every track of the run is (a durable consumer, so a restart with
// the same outDir resumes); shutdown() stops (applied results are acked, the rest stays with the
// durable consumer).
import { type Bus, checkRunName, checkToken } from "../common/bus/index.js";
import { UdmError } from "../common/errors.js";
import { createLogger, type Logger } from "../common/log.js";
import { createProcessRegistry, startMetricsServer, type ListenAddress, type MetricsServer } from "../common/metrics/index.js";
import { registerScorerMetrics } from "./scorer-metrics.js";
import { chooseRun, STATE_FILE, StreamingScorer, type StreamingScorerResult } from "./streaming-scorer.js";
import { stateRunIdOf, waitForNamedRun } from "./named-run.js";

export interface ScorerOptions {
  suiteDir: string;
  /** Where metrics.json, the scorer's journal and state go. */
  outDir: string;
  /** The run to score (default: the run named runName, else the only, or most recently updated, run on the bus). */
  runId?: string;
  /** Score the run whose coordinator was given this name (`--run-name`), waiting for it to appear on the bus. */
  runName?: string;
  /** How long to wait for the run (runId's status, or runName's run) to appear on the bus. @default forever */
  waitRunMs?: number;
  progressEveryMs?: number;
  ackWaitMs?: number;
  /** Serve Prometheus metrics on /metrics at this address; none when absent. */
  metrics?: ListenAddress;
  /** When set, /metrics needs `Authorization: Bearer <metricsToken>` (it carries every track's scores). @default none */
  metricsToken?: string;
  /** Opens the run's bus; a refused connection or a timeout is retried (NATS not up yet). */
  openBus: () => Promise<Bus>;
  log?: Logger;
  /** Where the /metrics address, each scored track and the metrics path are printed (default stdout). */
  print?: (text: string) => void;
}

/** What a scorer that scored every track of its run reports. */
export interface ScorerReport extends StreamingScorerResult {
  runId: string;
  metricsPath: string;
}

export class Scorer {
  private scorer: StreamingScorer | undefined;
  private bus!: Bus;
  private metricsServer: MetricsServer | undefined;
  private readonly registry = createProcessRegistry("scorer");
  private readonly scorerMetrics: ReturnType<typeof registerScorerMetrics>;
  private readonly log: Logger;
  private readonly print: (text: string) => void;

  /** Serves /metrics (when asked) and opens the bus, waiting for NATS while it is down. */
  static async create(options: ScorerOptions): Promise<Scorer> {
    const scorer = new Scorer(options);
    await scorer.open();
    return scorer;
  }

  private constructor(private readonly options: ScorerOptions) {
    this.log = options.log ?? createLogger("scorer");
    this.print = options.print ?? ((t: string) => void process.stdout.write(t));
    // /metrics answers before the run is chosen; its gauges read the scorer once there is one.
    this.scorerMetrics = registerScorerMetrics(this.registry, {
      metrics: () => this.scorer?.snapshot().metrics,
      tracksInScope: () => this.scorer?.snapshot().tracks ?? 0,
      counts: () => this.scorer?.snapshot().counts ?? { applied: 0, duplicates: 0, invalid: 0, rejected: 0 },
      pending: () => this.scorer?.snapshot().pending,
    });
  }

  private async open(): Promise<void> {
    const { options, log, registry } = this;
    this.metricsServer = options.metrics ? await startMetricsServer({ listen: options.metrics, metrics: () => registry.metrics(), ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}), log }) : undefined;
    if (this.metricsServer) this.print(`scorer: metrics on ${this.metricsServer.url}/metrics\n`);
    try {
      this.bus = await openBusWhenUp(options.openBus, log);
    } catch (err) {
      await this.metricsServer?.close();
      throw err;
    }
  }

  /**
   * Scores the run until every track is; throws a UdmError when it stops before or fails. With
   * `keepMetrics` the /metrics of a run scored to the end stay up (its final scores) until close().
   */
  async run(opts: { keepMetrics?: boolean } = {}): Promise<ScorerReport> {
    const { options, bus, log, print } = this;
    let keep = false;
    try {
      const runId =
        options.runId !== undefined
          ? checkToken("--run", options.runId)
          : options.runName !== undefined
            ? await waitForNamedRun({ bus, name: checkRunName(options.runName), stateRunId: stateRunIdOf(options.outDir, STATE_FILE), ...(options.waitRunMs !== undefined ? { timeoutMs: options.waitRunMs } : {}), log, signal: this.stopping.signal })
            : chooseRun(await bus.listStatuses(), log).runId;
      const scorer = new StreamingScorer({
        bus,
        runId,
        suiteDir: options.suiteDir,
        outDir: options.outDir,
        ...(options.progressEveryMs !== undefined ? { progressEveryMs: options.progressEveryMs } : {}),
        ...(options.ackWaitMs !== undefined ? { ackWaitMs: options.ackWaitMs } : {}),
        ...(options.waitRunMs !== undefined ? { statusTimeoutMs: options.waitRunMs } : {}),
        log,
        onEmitted: (_track, seconds) => this.scorerMetrics.emitted(seconds),
        onTrackFinal: (track, m) => print(`track ${track} scored: ${m.headline.metric}=${m.headline.value === null ? "n/a" : m.headline.value.toFixed(4)} (${m.records} records)\n`),
      });
      this.scorer = scorer;
      print(`scorer: run ${runId}${options.runId === undefined && options.runName !== undefined ? ` (named ${options.runName})` : ""}: scoring into ${scorer.metricsPath}\n`);
      await scorer.start();
      const metrics = await scorer.done;
      const r = scorer.result();
      await scorer.stop();
      keep = Boolean(opts.keepMetrics && this.metricsServer);
      return { ...r, metrics, runId, metricsPath: scorer.metricsPath };
    } catch (err) {
      await this.scorer?.stop().catch(() => undefined);
      if (err instanceof UdmError) throw err;
      throw new UdmError(`scorer failed: ${(err as Error).message}`, { cause: err });
    } finally {
      await bus.close().catch(() => undefined);
      this.kept = keep;
      if (!keep) await this.metricsServer?.close();
    }
  }

  private kept = false;
  /** Aborted by shutdown(): a wait for the named run ends. */
  private readonly stopping = new AbortController();

  /** /metrics stays up after run() (keepMetrics and every track scored) until close(). */
  get metricsKept(): boolean {
    return this.kept;
  }

  /** Closes the /metrics run() kept up. */
  async close(): Promise<void> {
    this.kept = false;
    await this.metricsServer?.close();
  }

  /** Stops scoring and closes the bus: applied results are acked, the rest stays with the durable consumer. */
  async shutdown(reason = "shutdown"): Promise<void> {
    this.stopping.abort();
    this.log.info(`${reason}: stopping (applied results are acked; the rest stays with the durable consumer)`);
    await (this.scorer?.stop() ?? Promise.resolve()).finally(() => this.bus.close());
  }
}

/**
 * A scorer started while NATS is down (restarting, not yet up) waits for it, as a running scorer
 * does through an outage, and one whose credentials may not create the streams waits for the
 * coordinator to create them; refused credentials, a bad URL or a server without JetStream still
 * fail at once.
 */
async function openBusWhenUp(open: () => Promise<Bus>, log: Logger): Promise<Bus> {
  let delayMs = 250;
  let said = false;
  for (;;) {
    try {
      const bus = await open();
      if (said) log.info("NATS reachable: connected");
      return bus;
    } catch (err) {
      if (!/connection refused|ECONNREFUSED|CONNECTION_REFUSED|timeout|not created yet/i.test((err as Error).message)) throw err;
      if (!said) log.warn(/not created yet/.test((err as Error).message) ? "NATS streams not created yet; waiting for the coordinator (SIGTERM stops)" : "NATS unreachable; waiting for it (SIGTERM stops)", { error: (err as Error).message });
      said = true;
      await new Promise((r) => setTimeout(r, delayMs));
      delayMs = Math.min(delayMs * 2, 5_000);
    }
  }
}
