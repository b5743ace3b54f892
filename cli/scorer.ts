// udm-orch scorer --suite DIR --nats URL [--run ID] --out DIR: the scorer of a distributed run as
// its own process. Consumes the run's results from NATS JetStream (durable consumer, so a restart
// with the same --out resumes), publishes each track's final metrics the moment its last record is
// in, running metrics for tracks in progress, and the summary; keeps <out>/metrics.json current.
// Exit 0 once every track of the run is scored, 1 when stopped before, 2 on bad usage or input.
import type { Command } from "commander";
import { checkToken } from "../common/bus/index.js";
import { EXIT, UdmError, UsageError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { natsCliOptions, type NatsFlagValues } from "./nats-options.js";
import { openBus } from "./open-bus.js";
import { chooseRun, StreamingScorer, registerScorerMetrics } from "../scorer/index.js";
import { intArg, opt } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { formatReport } from "./score.js";
import { createProcessRegistry, DEFAULT_SCORER_METRICS, parseMetricsListen, startMetricsServer, type MetricsServer } from "../common/metrics/index.js";

interface ScorerFlags extends NatsFlagValues {
  suite: string;
  out: string;
  run?: string;
  progressMs?: string;
  ackWaitMs?: string;
  metrics: string;
}

export function register(program: Command): void {
  const command = program
    .command("scorer")
    .description("score a distributed run from NATS JetStream as its results arrive; publish per-track metrics and write <out>/metrics.json")
    .addOption(opt("--suite <dir>", "suite directory (<suite> or <suite>/test) the run uses").makeOptionMandatory())
    .addOption(opt("--out <dir>", "where metrics.json, the scorer's journal and state go (a restart with the same --out resumes)").makeOptionMandatory())
    .addOption(opt("--run <id>", "run id (default: the only, or most recently updated, run in NATS KV udm_runs)"))
    .addOption(opt("--progress-ms <ms>", "running metrics of tracks in progress, this often (default 3000)"))
    .addOption(opt("--ack-wait-ms <ms>", "redelivery delay of results a dead scorer did not ack (default 30000; fixed when --out is new)"))
    .addOption(opt("--metrics <host:port>", "serve Prometheus metrics on /metrics (off: none)", DEFAULT_SCORER_METRICS));
  for (const o of natsCliOptions()) command.addOption(o);
  command.action(async (flags: ScorerFlags) => {
    if (flags.nats === undefined || flags.nats.trim() === "") throw new UsageError("--nats <url> is required: the scorer reads the run's results from NATS JetStream");
    const progressEveryMs = intArg("progress-ms", flags.progressMs, 100);
    const ackWaitMs = intArg("ack-wait-ms", flags.ackWaitMs, 100);
    ensureWritableDir("out", flags.out);
    const metricsListen = parseMetricsListen(flags.metrics);
    const log = createLogger("scorer");
    let scorer: StreamingScorer | undefined;
    const registry = createProcessRegistry("scorer");
    const scorerMetrics = registerScorerMetrics(registry, {
      metrics: () => scorer?.snapshot().metrics,
      tracksInScope: () => scorer?.snapshot().tracks ?? 0,
      counts: () => scorer?.snapshot().counts ?? { applied: 0, duplicates: 0, invalid: 0 },
      pending: () => scorer?.snapshot().pending,
    });
    const metricsServer: MetricsServer | undefined = metricsListen
      ? await startMetricsServer({ listen: metricsListen, metrics: () => registry.metrics(), log })
      : undefined;
    if (metricsServer) process.stdout.write(`scorer: metrics on ${metricsServer.url}/metrics\n`);
    let bus: Awaited<ReturnType<typeof openBus>>;
    try {
      bus = await openBusWhenUp(flags, log);
    } catch (err) {
      await metricsServer?.close();
      throw err;
    }
    const onSignal = (signal: NodeJS.Signals) => {
      log.info(`${signal}: stopping (applied results are acked; the rest stays with the durable consumer)`);
      void (scorer?.stop() ?? Promise.resolve()).finally(() => void bus.close().finally(() => process.exit(EXIT.failed)));
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    try {
      const runId = flags.run !== undefined ? checkToken("--run", flags.run) : chooseRun(await bus.listStatuses(), log).runId;
      scorer = new StreamingScorer({
        bus,
        runId,
        suiteDir: flags.suite,
        outDir: flags.out,
        ...(progressEveryMs !== undefined ? { progressEveryMs } : {}),
        ...(ackWaitMs !== undefined ? { ackWaitMs } : {}),
        log,
        onEmitted: (_track, seconds) => scorerMetrics.emitted(seconds),
        onTrackFinal: (track, m) => process.stdout.write(`track ${track} scored: ${m.headline.metric}=${m.headline.value === null ? "n/a" : m.headline.value.toFixed(4)} (${m.records} records)\n`),
      });
      process.stdout.write(`scorer: run ${runId}: scoring into ${scorer.metricsPath}\n`);
      await scorer.start();
      const metrics = await scorer.done;
      const r = scorer.result();
      await scorer.stop();
      process.stdout.write(formatReport(metrics));
      process.stdout.write(
        `run ${runId}: all ${Object.keys(metrics.tracks).length} tracks scored, summary published ` +
          `(${r.applied} results applied, ${r.replayed} from the journal, ${r.duplicates} duplicates skipped); wrote ${scorer.metricsPath}\n`,
      );
      process.exitCode = EXIT.ok;
    } catch (err) {
      await scorer?.stop().catch(() => undefined);
      if (err instanceof UdmError) throw err;
      throw new UdmError(`scorer failed: ${(err as Error).message}`, { cause: err });
    } finally {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      await bus.close().catch(() => undefined);
      await metricsServer?.close();
    }
  });
}

/**
 * A scorer started while NATS is down (restarting, not yet up) waits for it, as a running scorer
 * does through an outage; refused credentials, a bad URL or a server without JetStream still fail
 * at once.
 */
async function openBusWhenUp(flags: ScorerFlags, log: ReturnType<typeof createLogger>): Promise<Awaited<ReturnType<typeof openBus>>> {
  let delayMs = 250;
  let said = false;
  for (;;) {
    try {
      const bus = await openBus(flags, { logger: createLogger("bus") });
      if (said) log.info("NATS reachable: connected");
      return bus;
    } catch (err) {
      if (!/connection refused|ECONNREFUSED|CONNECTION_REFUSED|timeout/i.test((err as Error).message)) throw err;
      if (!said) log.warn("NATS unreachable; waiting for it (SIGTERM stops)", { error: (err as Error).message });
      said = true;
      await new Promise((r) => setTimeout(r, delayMs));
      delayMs = Math.min(delayMs * 2, 5_000);
    }
  }
}
