// udm-orch run: coordinator, agents and scorer in one process. Rerunning the same command resumes.
import type { Command } from "commander";
import { UdmError, UsageError } from "../common/errors.js";
import { formatReport } from "./score.js";
import { runEmbedded } from "./embedded-run.js";
import { EMBEDDED_RUN_DEFAULTS } from "../run/index.js";
import { engineUrl } from "./engine-methods.js";
import { DEFAULT_RETRY_POLICY } from "../agent/index.js";
import { csv, intArg, numberArg, opt } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { metricsFlagGroup, metricsOptionsFrom } from "./metrics-flags.js";
import { cardOptions, parseMethodClass, signKeyFrom } from "./flags/card-flags.js";
import { DEFAULT_COORDINATOR_METRICS } from "../common/metrics/index.js";
import { flagOptions, optionsFromFlags } from "./flag-group.js";
import { FAMILIES_FLAG, LIMIT_FLAG, SUITE_FLAG, TRACKS_FLAG, type ScopeOptions } from "./flags/scope-flags.js";
import { flagGroup } from "./flag-group.js";
import { readRunConfig, type RunConfig } from "../card/index.js";
import { AGENT_METHOD_FLAGS } from "./flags/method-flags.js";
import { LEASE_FLAGS } from "./flags/coordinator-flags.js";
import { METRICS_TOKEN_FLAGS, metricsTokenFrom, tokenFlags } from "./flags/access-flags.js";
import { COORDINATOR_DEFAULTS, heartbeatFor } from "../coordinator/index.js";
import { isTokenizerName, isVllmProfile, TOKENIZER_NAMES, VLLM_PROFILES, type TokenizerName, type VllmProfile } from "../sim/index.js";

interface RunFlags {
  methodClass?: string;
  out?: string;
  config?: string;
  gpuHourUsd?: string;
  engine?: string;
  sim?: string;
  force?: boolean;
  capacity?: string;
  simTokensPerS?: string;
  simFaults?: string;
  simVllm?: string;
  simTokenizer?: string;
  simOracle?: string;
  simAccuracy?: string;
  requestTimeoutMs?: string;
  retries?: string;
  engineReadyTimeoutMs?: string;
}

/** --suite and --out may come from --config instead. */
const RUN_SCOPE_FLAGS = flagGroup<ScopeOptions>({}, [{ ...SUITE_FLAG, mandatory: false, defaultText: "the config's suite" }, TRACKS_FLAG, FAMILIES_FLAG, LIMIT_FLAG]);

const TOKEN_FLAGS = tokenFlags("bearer token the live page's /api routes require");

const METRICS_FLAGS = metricsFlagGroup(DEFAULT_COORDINATOR_METRICS, "serve /metrics (coordinator, agents, scorer), the live run page (/) and its API");

export function register(program: Command): void {
  const command = program
    .command("run")
    .description("run a suite end to end on one machine: coordinator, one agent per engine, live scorer (rerun to resume)");
  command.addOption(opt("--config <file>", "run.yaml: the keys of a sweep's single cell (suite, out, models: [one], methods, temperatures, seed_sets, tracks or families, limit, method_class, gpu_hour_usd, lease_ms); a flag given beside it wins"));
  for (const o of flagOptions(RUN_SCOPE_FLAGS)) command.addOption(o);
  command
    .addOption(opt("--out <dir>", "results directory: <out>/<family>/<track>.jsonl, <out>/run.json, <out>/metrics.json, <out>/run-card.json (rerun with the same --out to resume; default: the config's out)"))
    .addOption(opt("--engine <urls>", "comma-separated engine base URLs (vLLM), one agent each"))
    .addOption(opt("--sim <n>", "start N simulated engines in this process instead of --engine"));
  for (const o of flagOptions(AGENT_METHOD_FLAGS)) command.addOption(o);
  command
    .addOption(opt("--force", "resume even when run.json pins another suite, scope or method"))
    .addOption(opt("--capacity <n>", "units each agent holds at once (default: the engine's capacity)"));
  for (const o of flagOptions(LEASE_FLAGS)) command.addOption(o);
  command
    .addOption(opt("--request-timeout-ms <ms>", `time one engine request may take before it is retried (default ${DEFAULT_RETRY_POLICY.timeoutMs})`))
    .addOption(opt("--retries <n>", `retries of a failed engine request before the question is recorded as an error (default ${DEFAULT_RETRY_POLICY.retries})`))
    .addOption(opt("--engine-ready-timeout-ms <ms>", `engines not ready after this long are reported; when none is, the run fails (default ${EMBEDDED_RUN_DEFAULTS.engineReadyTimeoutMs})`))
    .addOption(opt("--sim-tokens-per-s <n>", "simulated engines: GPU throughput in tokens/s (default 0 = no latency)"))
    .addOption(opt("--sim-faults <spec>", 'simulated engines: faults, e.g. "5xx=0.05,hang=0.01"'))
    .addOption(opt("--sim-vllm <profile>", `simulated engines: which vLLM to behave as (${VLLM_PROFILES.join(", ")}; default structured-seed), as sim-engine --vllm`))
    .addOption(opt("--sim-tokenizer <name>", `simulated engines: the tokenizer and chat template (${TOKENIZER_NAMES.join(", ")}; default builtin), as sim-engine --tokenizer`))
    .addOption(opt("--sim-oracle <file>", "simulated engines: oracle side file (or suite dir) with gold"))
    .addOption(opt("--sim-accuracy <q>", "simulated engines: oracle accuracy in [0,1]"));
  for (const o of flagOptions(TOKEN_FLAGS)) command.addOption(o);
  for (const o of flagOptions(METRICS_FLAGS)) command.addOption(o);
  for (const o of flagOptions(METRICS_TOKEN_FLAGS)) command.addOption(o);
  for (const o of cardOptions()) command.addOption(o);
  command.action(async (flags: RunFlags & Record<string, unknown>) => {
      const engines = csv(flags.engine)?.map(engineUrl);
      const requestTimeoutMs = intArg("request-timeout-ms", flags.requestTimeoutMs, 1);
      const retries = intArg("retries", flags.retries, 0);
      const engineReadyTimeoutMs = intArg("engine-ready-timeout-ms", flags.engineReadyTimeoutMs, 1);
      const sim = intArg("sim", flags.sim, 1);
      if (!engines?.length && !sim) throw new UsageError("give --engine URL[,URL...] or --sim N");
      const file: RunConfig | undefined = flags.config !== undefined ? readRunConfig(flags.config) : undefined;
      const cell = file ? configDefaults(file) : undefined;
      const method = { ...cell?.method, ...optionsFromFlags(AGENT_METHOD_FLAGS, flags) };
      const scope = { ...cell?.scope, ...optionsFromFlags(RUN_SCOPE_FLAGS, flags) };
      if (scope.suiteDir === undefined) throw new UsageError("give --suite DIR (or --config run.yaml with a suite)");
      const outDir = flags.out ?? file?.config.outDir;
      if (outDir === undefined) throw new UsageError("give --out DIR (or --config run.yaml with an out)");
      const tokensPerS = numberArg("sim-tokens-per-s", flags.simTokensPerS, 0);
      const accuracy = numberArg("sim-accuracy", flags.simAccuracy, 0);
      if (accuracy !== undefined && accuracy > 1) throw new UsageError("--sim-accuracy must be in [0, 1]");
      const capacity = intArg("capacity", flags.capacity, 1);
      const { leaseMs = file?.config.lease_ms, heartbeatMs } = optionsFromFlags(LEASE_FLAGS, flags);
      // A lease shorter than two heartbeats is refused before anything starts.
      heartbeatFor(leaseMs ?? COORDINATOR_DEFAULTS.leaseMs, heartbeatMs);
      ensureWritableDir("out", outDir);
      const given = metricsOptionsFrom(METRICS_FLAGS, flags);
      const { metrics, perAgentMetrics } = given;
      const gpuHourUsd = flags.gpuHourUsd === undefined && file ? file.config.gpu_hour_usd : given.gpuHourUsd;
      const { token } = optionsFromFlags(TOKEN_FLAGS, flags);
      const metricsToken = metricsTokenFrom({ ...(token ? { token } : {}), ...optionsFromFlags(METRICS_TOKEN_FLAGS, flags) });
      const signKey = signKeyFrom(flags as { signKey?: string });
      const result = await runEmbedded({
        suiteDir: scope.suiteDir!,
        outDir,
        ...(engines ? { engines } : {}),
        ...(sim ? { sim } : {}),
        simOptions: {
          ...(tokensPerS !== undefined ? { tokensPerS } : {}),
          ...(flags.simFaults ? { faults: flags.simFaults } : {}),
          ...(flags.simVllm ? { vllm: simVllm(flags.simVllm) } : {}),
          ...(flags.simTokenizer ? { tokenizer: simTokenizer(flags.simTokenizer) } : {}),
          ...(flags.simOracle ? { oracle: flags.simOracle } : {}),
          ...(accuracy !== undefined ? { accuracy } : {}),
        },
        method: { method: method.method ?? COORDINATOR_DEFAULTS.method.method, seeds: method.seeds ?? [], ...(method.model ? { model: method.model } : {}), ...(cell ? { temperature: cell.temperature } : {}) },
        ...(scope.tracks ? { tracks: scope.tracks } : {}),
        ...(scope.families ? { families: scope.families } : {}),
        ...(scope.limit !== undefined ? { limit: scope.limit } : {}),
        ...(flags.force ? { force: true } : {}),
        ...(capacity ? { capacity } : {}),
        ...(leaseMs ? { leaseMs } : {}),
        ...(heartbeatMs ? { heartbeatMs } : {}),
        ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
        ...(retries !== undefined ? { retries } : {}),
        ...(engineReadyTimeoutMs !== undefined ? { engineReadyTimeoutMs } : {}),
        ...(metrics ? { metrics } : {}),
        ...(token ? { token } : {}),
        ...(metricsToken ? { metricsToken } : {}),
        gpuHourUsd,
        methodClass: flags.methodClass === undefined && file ? file.config.method_class : parseMethodClass(flags.methodClass),
        ...(signKey ? { signKey } : {}),
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

/** What a run.yaml sets; the flags given beside it replace these. */
function configDefaults({ config, run }: RunConfig): { method: { method: string; seeds: number[]; model: string }; scope: ScopeOptions; temperature: number } {
  return {
    method: { method: run.method, seeds: run.seeds, model: run.model },
    scope: {
      suiteDir: config.suiteDir,
      ...(config.tracks ? { tracks: config.tracks } : {}),
      ...(config.families ? { families: config.families } : {}),
      ...(config.limit !== undefined ? { limit: config.limit } : {}),
    },
    temperature: run.temperature,
  };
}

function simVllm(value: string): VllmProfile {
  if (!isVllmProfile(value)) throw new UsageError(`--sim-vllm must be one of ${VLLM_PROFILES.join(", ")}, got ${value}`);
  return value;
}

function simTokenizer(value: string): TokenizerName {
  if (!isTokenizerName(value)) throw new UsageError(`--sim-tokenizer must be one of ${TOKENIZER_NAMES.join(", ")}, got ${value}`);
  return value;
}
