// udm-orch scorer --suite DIR --nats URL [--run ID] --out DIR: the scorer of a distributed run as
// its own process. Consumes the run's results from NATS JetStream (durable consumer, so a restart
// with the same --out resumes), publishes each track's final metrics the moment its last record is
// in, running metrics for tracks in progress, and the summary; keeps <out>/metrics.json current.
// Once every track is scored it keeps serving its final /metrics until SIGTERM/SIGINT
// (--after-complete exit: exits at once). Exit 0 once every track of the run is scored, 1 when stopped before, 2 on bad usage or input.
import type { Command } from "commander";
import { EXIT, UsageError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { natsCliOptions, type NatsFlagValues } from "./nats-options.js";
import { openBus } from "./open-bus.js";
import { Scorer } from "../scorer/index.js";
import { checkRunName } from "../common/bus/index.js";
import { intArg, opt } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { formatReport } from "./score.js";
import { DEFAULT_SCORER_METRICS, parseMetricsListen } from "../common/metrics/index.js";
import { onShutdownSignals } from "./signals.js";
import { afterCompleteOption, parseAfterComplete, untilStopped } from "./after-complete.js";
import { flagOptions, optionsFromFlags } from "./flag-group.js";
import { SUITE_FLAGS } from "./flags/scope-flags.js";
import { tokenFlags } from "./flags/access-flags.js";

/** The run's token: only results signed with it (by a coordinator with the same --token) are scored. */
const TOKEN_FLAGS = tokenFlags("the run's token (the coordinator's --token): score only results signed with it (without it results on the bus are not authenticated); /metrics then needs it too");

interface ScorerFlags extends NatsFlagValues {
  out: string;
  run?: string;
  runName?: string;
  waitRunMs?: string;
  progressMs?: string;
  ackWaitMs?: string;
  metrics: string;
  afterComplete?: string;
}

export function register(program: Command): void {
  const command = program
    .command("scorer")
    .description("score a distributed run from NATS JetStream as its results arrive; publish per-track metrics and write <out>/metrics.json");
  for (const o of flagOptions(SUITE_FLAGS)) command.addOption(o);
  command
    .addOption(opt("--out <dir>", "where metrics.json, the scorer's journal and state go (a restart with the same --out resumes)").makeOptionMandatory())
    .addOption(opt("--run <id>", "run id (default: the run named --run-name, else the only, or most recently updated, run in NATS KV udm_runs)"))
    .addOption(opt("--run-name <name>", "score the run whose coordinator was given this --run-name, waiting for it to appear on the bus; runs of other names are never scored"))
    .addOption(opt("--wait-run-ms <ms>", "give up (exit 2) when the run (--run or --run-name) is not on the bus after this long (default: wait until stopped)"))
    .addOption(opt("--progress-ms <ms>", "running metrics of tracks in progress, this often (default 3000)"))
    .addOption(opt("--ack-wait-ms <ms>", "redelivery delay of results a dead scorer did not ack (default 30000; fixed when --out is new)"))
    .addOption(opt("--metrics <host:port>", "serve Prometheus metrics on /metrics (off: none)", DEFAULT_SCORER_METRICS))
    .addOption(afterCompleteOption("the final /metrics (needs --metrics)"));
  for (const o of flagOptions(TOKEN_FLAGS)) command.addOption(o);
  for (const o of natsCliOptions()) command.addOption(o);
  command.action(async (flags: ScorerFlags & Record<string, unknown>) => {
    if (flags.nats === undefined || flags.nats.trim() === "") throw new UsageError("--nats <url> is required: the scorer reads the run's results from NATS JetStream");
    const progressEveryMs = intArg("progress-ms", flags.progressMs, 100);
    const ackWaitMs = intArg("ack-wait-ms", flags.ackWaitMs, 100);
    const waitRunMs = intArg("wait-run-ms", flags.waitRunMs, 0);
    if (flags.run !== undefined && flags.runName !== undefined) throw new UsageError("give --run or --run-name, not both");
    const runName = flags.runName !== undefined ? checkRunName(flags.runName) : undefined;
    ensureWritableDir("out", flags.out);
    const metricsListen = parseMetricsListen(flags.metrics);
    const afterComplete = parseAfterComplete(flags.afterComplete ?? "serve");
    const { suiteDir } = optionsFromFlags(SUITE_FLAGS, flags);
    const { token } = optionsFromFlags(TOKEN_FLAGS, flags);
    const log = createLogger("scorer");
    if (flags.run === undefined && runName === undefined) log.warn("no --run-name (or --run): scoring whichever run is on the bus; give the coordinator and the scorer the same --run-name");
    if (!token) log.warn("no --token: results on the bus are not authenticated (anyone who can publish on NATS can change the scores)");
    // Installed before the bus is open: a signal while NATS is awaited stops with the documented
    // exit code and one line, not by the signal's default action.
    let scorer: Scorer | undefined;
    const uninstall = onShutdownSignals((signal) => {
      if (scorer) return void scorer.shutdown(signal).finally(() => process.exit(EXIT.failed));
      log.warn(`${signal} while starting: stopping; nothing was scored`);
      process.exit(EXIT.failed);
    });
    try {
      scorer = await Scorer.create({
        suiteDir: suiteDir!,
        outDir: flags.out,
        ...(flags.run !== undefined ? { runId: flags.run } : {}),
        ...(runName !== undefined ? { runName } : {}),
        ...(waitRunMs !== undefined ? { waitRunMs } : {}),
        ...(progressEveryMs !== undefined ? { progressEveryMs } : {}),
        ...(ackWaitMs !== undefined ? { ackWaitMs } : {}),
        ...(metricsListen ? { metrics: metricsListen } : {}),
        // Its /metrics carries every track's scores: behind the run's token, as the coordinator's.
        ...(token ? { metricsToken: token } : {}),
        openBus: () => openBus(flags, { logger: createLogger("bus"), ...(token ? { resultsToken: token } : {}) }),
        log,
      });
      const r = await scorer.run({ keepMetrics: afterComplete === "serve" });
      process.stdout.write(formatReport(r.metrics));
      process.stdout.write(
        `run ${r.runId}: all ${Object.keys(r.metrics.tracks).length} tracks scored, summary published ` +
          `(${r.applied} results applied, ${r.replayed} from the journal, ${r.duplicates} duplicates skipped${r.rejected > 0 ? `, ${r.rejected} rejected (not signed with the run's token)` : ""}); wrote ${r.metricsPath}\n`,
      );
      process.exitCode = EXIT.ok;
      if (scorer.metricsKept) {
        uninstall();
        // Prometheus' last sample is then every track scored, not a scorer that vanished.
        log.info("run scored; serving its final metrics until stopped (--after-complete exit to exit)");
        await untilStopped();
        await scorer.close();
      }
    } finally {
      uninstall();
    }
  });
}
