// udm-orch coordinator: serves a suite to agents over gRPC and checkpoints their results.
// Prints the listen address; SIGTERM/SIGINT drain (agents finish what they hold, results are
// flushed) then exit. While the run is not complete the agents are told to reattach to the next
// coordinator on the same port (a restart), not to stop; --drain-agents or a second signal stops
// them. Once complete it keeps serving its page, /api/status and final /metrics until
// SIGTERM/SIGINT (--after-complete exit: exits at once). Exit 0 when every record in scope is committed, 1 when the run stopped before (drained,
// failed), 2 on bad usage or input.
import type { Command } from "commander";
import { EXIT, UsageError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { natsBusOptionsFrom, natsCliOptions, type NatsFlagValues } from "./nats-options.js";
import { opt, portArg } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { metricsFlagGroup, metricsOptionsFrom } from "./metrics-flags.js";
import { DEFAULT_COORDINATOR_METRICS } from "../common/metrics/index.js";
import { cardOptions, parseMethodClass, signKeyFrom } from "./flags/card-flags.js";
import { flagOptions, optionsFromFlags } from "./flag-group.js";
import { LIMIT_FLAGS, SCOPE_FLAGS } from "./flags/scope-flags.js";
import { ACCESS_FLAGS, METRICS_TOKEN_FLAGS, metricsTokenFrom, serverTlsFrom } from "./flags/access-flags.js";
import { CLUSTER_METHOD_FLAGS } from "./flags/method-flags.js";
import { COORDINATOR_FLAGS } from "./flags/coordinator-flags.js";
import { COORDINATOR_DEFAULTS, heartbeatFor } from "../coordinator/index.js";
import { checkRunName } from "../common/bus/index.js";
import { Run } from "../run/index.js";
import { onShutdownSignals } from "./signals.js";
import { afterCompleteOption, parseAfterComplete, untilStopped } from "./after-complete.js";

interface CoordinatorFlags extends NatsFlagValues {
  out: string;
  listen: string;
  force?: boolean;
  runName?: string;
  methodClass?: string;
  drainAgents?: boolean;
  afterComplete?: string;
}

const METRICS_FLAGS = metricsFlagGroup(DEFAULT_COORDINATOR_METRICS, "serve /metrics, the live run page (/) and its API (/api/status, /api/events), /healthz, /readyz");

export function register(program: Command): void {
  const command = program
    .command("coordinator")
    .description("serve a suite's work units to agents over gRPC and write <out>/<family>/<track>.jsonl");
  for (const o of flagOptions(SCOPE_FLAGS)) command.addOption(o);
  for (const o of flagOptions(LIMIT_FLAGS)) command.addOption(o);
  command
    .addOption(opt("--out <dir>", "results directory: <out>/<family>/<track>.jsonl, <out>/run.json, <out>/metrics.json, <out>/run-card.json (resumed when it holds results of the same run)").makeOptionMandatory())
    .addOption(opt("--listen <host:port>", "address to listen on", "127.0.0.1:50051"));
  for (const o of flagOptions(ACCESS_FLAGS)) command.addOption(o);
  for (const o of flagOptions(CLUSTER_METHOD_FLAGS)) command.addOption(o);
  for (const o of flagOptions(COORDINATOR_FLAGS)) command.addOption(o);
  command.addOption(opt("--force", "resume even when run.json names another suite, tracks or method"));
  command.addOption(opt("--run-name <name>", "name the run (kept in run.json, published on the bus) so a scorer given the same --run-name scores it and no other (default: the name run.json records, if any)"));
  command.addOption(opt("--drain-agents", "on SIGTERM/SIGINT tell the agents to stop (default: while the run is not complete they reattach to the next coordinator; a second signal stops them)"));
  command.addOption(afterCompleteOption("the live page, /api/status and the final /metrics (needs --metrics)"));
  // --nats: committed results, run events and status also go to NATS JetStream (NATS may be down: results still go to disk).
  for (const o of natsCliOptions()) command.addOption(o);
  for (const o of flagOptions(METRICS_FLAGS)) command.addOption(o);
  for (const o of flagOptions(METRICS_TOKEN_FLAGS)) command.addOption(o);
  // The run card: run-card.json beside the metrics.json this command's scorer writes as tracks complete.
  for (const o of cardOptions()) command.addOption(o);
  command.action(async (flags: CoordinatorFlags & Record<string, unknown>) => {
    const method = { ...COORDINATOR_DEFAULTS.method, ...optionsFromFlags(CLUSTER_METHOD_FLAGS, flags) };
    if (!/^(\[[0-9a-fA-F:]+\]|[^:\s/]+):\d{1,5}$/.test(flags.listen)) throw new UsageError(`--listen must be HOST:PORT, got ${JSON.stringify(flags.listen)}`);
    portArg("listen port", flags.listen.slice(flags.listen.lastIndexOf(":") + 1));
    const access = optionsFromFlags(ACCESS_FLAGS, flags);
    const tls = serverTlsFrom(access);
    const metricsToken = metricsTokenFrom({ ...access, ...optionsFromFlags(METRICS_TOKEN_FLAGS, flags) });
    ensureWritableDir("out", flags.out);
    const scope = optionsFromFlags(SCOPE_FLAGS, flags);
    const { limit } = optionsFromFlags(LIMIT_FLAGS, flags);
    const timing = optionsFromFlags(COORDINATOR_FLAGS, flags);
    // A lease shorter than two heartbeats is refused before anything starts.
    heartbeatFor(timing.leaseMs ?? COORDINATOR_DEFAULTS.leaseMs, timing.heartbeatMs);
    const logger = createLogger("coordinator");
    const natsFlags = natsBusOptionsFrom(flags);
    // With --token the results it publishes are signed (a scorer with the same token checks them).
    const nats = natsFlags && access.token ? { ...natsFlags, resultsToken: access.token } : natsFlags;
    if (natsFlags && !access.token) logger.warn("--nats without --token: results on the bus are not signed (a scorer cannot tell them from forged ones)");
    const { metrics: metricsListen, gpuHourUsd, perAgentMetrics } = metricsOptionsFrom(METRICS_FLAGS, flags);
    const methodClass = parseMethodClass(flags.methodClass);
    const signKey = signKeyFrom(flags as { signKey?: string });
    const runName = flags.runName !== undefined ? checkRunName(flags.runName) : undefined;
    if (runName !== undefined && !natsFlags) logger.warn("--run-name without --nats: the name is kept in run.json, but no scorer can follow it");
    const afterComplete = parseAfterComplete(flags.afterComplete ?? "serve");
    // Nothing is committed while the suite is read: a signal then just stops (the next start
    // takes over the lock and removes the payload spill left behind).
    let run: Run | undefined;
    let signals = 0;
    const uninstall = onShutdownSignals((signal) => {
      // The first signal stops for a restart (agents reattach to the next coordinator on this
      // port) unless --drain-agents; a second one tells the agents to stop.
      if (run) return run.shutdown(signal, ++signals === 1 && !flags.drainAgents);
      logger.warn(`${signal} while starting: stopping; nothing was committed`);
      process.exit(EXIT.failed);
    });
    try {
      run = await Run.create({
        suiteDir: scope.suiteDir!,
        outDir: flags.out,
        listen: flags.listen,
        ...(access.token ? { token: access.token } : {}),
        ...(tls ? { tls } : {}),
        ...(scope.tracks ? { tracks: scope.tracks } : {}),
        ...(scope.families ? { families: scope.families } : {}),
        ...(limit !== undefined ? { limit } : {}),
        method: { ...method, seeds: [...method.seeds] },
        ...timing,
        force: Boolean(flags.force),
        ...(runName !== undefined ? { runName } : {}),
        ...(nats ? { nats } : {}),
        ...(metricsListen ? { metrics: metricsListen } : {}),
        ...(metricsToken ? { metricsToken } : {}),
        perAgentMetrics,
        gpuHourUsd,
        methodClass,
        ...(signKey ? { signKey } : {}),
        logger,
      });
      let failure: unknown;
      try {
        await run.run({ keepPage: afterComplete === "serve" });
      } catch (err) {
        if (!run.pageKept) throw err;
        failure = err;
      }
      if (run.pageKept) {
        uninstall();
        // Prometheus' last sample is then the run's end, not "running" followed by a dead target.
        logger.info("run complete; serving its page and final metrics until stopped (--after-complete exit to exit)");
        await untilStopped();
        await run.close();
      }
      if (failure !== undefined) throw failure;
      process.exitCode = EXIT.ok;
    } finally {
      uninstall();
    }
  });
}
