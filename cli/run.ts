// udm-orch run: coordinator, agents and scorer in one process. Rerunning the same command resumes.
import type { Command } from "commander";
import { UdmError, UsageError } from "../common/errors.js";
import { formatReport } from "./score.js";
import { runEmbedded } from "./embedded-run.js";
import { engineUrl, methodFactory, parseSeeds } from "./engine-methods.js";
import { DEFAULT_RETRY_POLICY } from "../agent/index.js";
import { csv, intArg, numberArg, opt } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { boolArg, metricsFlags, type MetricsFlagValues } from "./metrics-flags.js";
import { cardOptions, parseMethodClass } from "./flags/card-flags.js";
import { DEFAULT_COORDINATOR_METRICS, parseMetricsListen } from "../common/metrics/index.js";

interface RunFlags extends MetricsFlagValues {
  methodClass?: string;
  token?: string;
  suite: string;
  out: string;
  engine?: string;
  sim?: string;
  model?: string;
  method: string;
  seeds?: string;
  tracks?: string;
  families?: string;
  force?: boolean;
  capacity?: string;
  leaseMs?: string;
  simTokensPerS?: string;
  simFaults?: string;
  simOracle?: string;
  simAccuracy?: string;
  requestTimeoutMs?: string;
  retries?: string;
  engineReadyTimeoutMs?: string;
}

export function register(program: Command): void {
  const command = program
    .command("run")
    .description("run a suite end to end on one machine: coordinator, one agent per engine, live scorer (rerun to resume)")
    .addOption(opt("--suite <dir>", "suite directory (<suite> or <suite>/test)").makeOptionMandatory())
    .addOption(opt("--out <dir>", "results directory: <out>/<family>/<track>.jsonl, <out>/run.json, <out>/metrics.json, <out>/run-card.json (rerun with the same --out to resume)").makeOptionMandatory())
    .addOption(opt("--engine <urls>", "comma-separated engine base URLs (vLLM), one agent each"))
    .addOption(opt("--sim <n>", "start N simulated engines in this process instead of --engine"))
    .addOption(opt("--model <name>", "model to ask the engines for (default: the one each serves)"))
    .addOption(opt("--method <name>", "engine method: systemone, decisions or label-read", "systemone"))
    .addOption(opt("--seeds <list>", "label-permutation seeds averaged per question, e.g. 0,1,2"))
    .addOption(opt("--tracks <list>", "comma-separated tracks to run (default: all)"))
    .addOption(opt("--families <list>", "comma-separated families to run (default: all)"))
    .addOption(opt("--force", "resume even when run.json pins another suite, scope or method"))
    .addOption(opt("--capacity <n>", "units each agent holds at once (default: the engine's capacity)"))
    .addOption(opt("--lease-ms <ms>", "lease of a work unit, renewed by heartbeats (default 30000)"))
    .addOption(opt("--request-timeout-ms <ms>", `time one engine request may take before it is retried (default ${DEFAULT_RETRY_POLICY.timeoutMs})`))
    .addOption(opt("--retries <n>", `retries of a failed engine request before the question is recorded as an error (default ${DEFAULT_RETRY_POLICY.retries})`))
    .addOption(opt("--engine-ready-timeout-ms <ms>", "engines not ready after this long are reported; when none is, the run fails (default 120000)"))
    .addOption(opt("--sim-tokens-per-s <n>", "simulated engines: GPU throughput in tokens/s (default 0 = no latency)"))
    .addOption(opt("--sim-faults <spec>", 'simulated engines: faults, e.g. "5xx=0.05,hang=0.01"'))
    .addOption(opt("--sim-oracle <file>", "simulated engines: oracle side file (or suite dir) with gold"))
    .addOption(opt("--sim-accuracy <q>", "simulated engines: oracle accuracy in [0,1]"))
    .addOption(opt("--token <token>", "bearer token the live page's /api routes require"));
  for (const o of metricsFlags(DEFAULT_COORDINATOR_METRICS, "serve /metrics (coordinator, agents, scorer), the live run page (/) and its API")) command.addOption(o);
  for (const o of cardOptions()) command.addOption(o);
  command.action(async (flags: RunFlags) => {
      const engines = csv(flags.engine)?.map(engineUrl);
      const requestTimeoutMs = intArg("request-timeout-ms", flags.requestTimeoutMs, 1);
      const retries = intArg("retries", flags.retries, 0);
      const engineReadyTimeoutMs = intArg("engine-ready-timeout-ms", flags.engineReadyTimeoutMs, 1);
      const sim = intArg("sim", flags.sim, 1);
      if (!engines?.length && !sim) throw new UsageError("give --engine URL[,URL...] or --sim N");
      methodFactory(flags.method);
      const seeds = parseSeeds(flags.seeds);
      const tracks = csv(flags.tracks);
      const families = csv(flags.families);
      const tokensPerS = numberArg("sim-tokens-per-s", flags.simTokensPerS, 0);
      const accuracy = numberArg("sim-accuracy", flags.simAccuracy, 0);
      if (accuracy !== undefined && accuracy > 1) throw new UsageError("--sim-accuracy must be in [0, 1]");
      const capacity = intArg("capacity", flags.capacity, 1);
      const leaseMs = intArg("lease-ms", flags.leaseMs, 100);
      ensureWritableDir("out", flags.out);
      const metrics = parseMetricsListen(flags.metrics);
      const gpuHourUsd = numberArg("gpu-hour-usd", flags.gpuHourUsd, 0) ?? 0;
      const perAgentMetrics = boolArg("per-agent-metrics", flags.perAgentMetrics);
      const result = await runEmbedded({
        suiteDir: flags.suite,
        outDir: flags.out,
        ...(engines ? { engines } : {}),
        ...(sim ? { sim } : {}),
        simOptions: {
          ...(tokensPerS !== undefined ? { tokensPerS } : {}),
          ...(flags.simFaults ? { faults: flags.simFaults } : {}),
          ...(flags.simOracle ? { oracle: flags.simOracle } : {}),
          ...(accuracy !== undefined ? { accuracy } : {}),
        },
        method: { method: flags.method, seeds, ...(flags.model ? { model: flags.model } : {}) },
        ...(tracks ? { tracks } : {}),
        ...(families ? { families } : {}),
        ...(flags.force ? { force: true } : {}),
        ...(capacity ? { capacity } : {}),
        ...(leaseMs ? { leaseMs } : {}),
        ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
        ...(retries !== undefined ? { retries } : {}),
        ...(engineReadyTimeoutMs !== undefined ? { engineReadyTimeoutMs } : {}),
        ...(metrics ? { metrics } : {}),
        ...(flags.token ? { token: flags.token } : {}),
        gpuHourUsd,
        methodClass: parseMethodClass(flags.methodClass),
        perAgentMetrics,
      });
      const o = result.outcome;
      process.stdout.write(
        (result.metrics ? formatReport(result.metrics) : "") +
          `run ${o.runId} ${o.state}: ${o.recordsTotal} records (${o.recordsResumed} resumed, ${o.recordsErrored} with errors) in ${o.elapsedSeconds.toFixed(1)} s; ` +
          `${o.counters.rejected} results rejected, ${o.counters.leasesExpired} leases expired, ${o.counters.backupUnits} backup units\n` +
          `wrote ${result.metricsPath}\n` +
          `run card ${result.cardPath} (fingerprint ${result.card.fingerprint.slice(0, 12)}, hash ${result.card.run_card_hash.slice(0, 12)})\n`,
      );
      if (o.recordsErrored > 0) throw new UdmError(`${o.recordsErrored} of ${o.recordsTotal} records ended with errors (see "errors" in their result lines); rerun the same command to retry them`);
    });
}
