// udm-orch sweep --config sweep.yaml: runs a declared matrix (models x methods x temperatures x
// seed-sets) one run after another behind one coordinator address; agents attached with
// `--method any --vllm-cmd "... {model} ..."` follow it, restarting their engine when the model
// changes. Runs whose card is complete with the same fingerprint are skipped, so rerunning the
// command resumes an interrupted sweep. --dry-run prints the matrix with estimates. The sweep itself
// is run/sweep.ts.
import { signKeyFrom, signKeyOption } from "./flags/card-flags.js";
import type { Command } from "commander";
import { EXIT, UsageError } from "../common/errors.js";
import { estimateRun, isListenAddress, measureCharsPerToken, measureSuiteText, type TokenRatio } from "../card/index.js";
import { intArg, numberArg, opt } from "./options.js";
import { engineUrl } from "./engine-methods.js";
import { planSweep, Sweep, type SweepPlan } from "../run/index.js";
import { boolArg } from "./metrics-flags.js";
import { onShutdownSignals } from "./signals.js";
import { flagOptions } from "./flag-group.js";
import { tokenFlags } from "./flags/access-flags.js";
import { parseMetricsListen } from "../common/metrics/index.js";
import { redactUrl } from "../common/redact-url.js";

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
  limit?: string;
}

export function register(program: Command): void {
  const command = program
    .command("sweep")
    .description("run a matrix of models x methods x temperatures x seed-sets on one coordinator address; rerun to resume")
    .addOption(opt("--config <file>", "sweep.yaml").makeOptionMandatory())
    .addOption(opt("--dry-run", "print the matrix with tokens, GPU-hours and cost per run, run nothing"))
    .addOption(opt("--listen <host:port>", "coordinator address (default: the config's listen)"))
    .addOption(opt("--limit <n>", "records per track at most, whole groups, in every run (default: the config's limit, else all)"));
  for (const o of flagOptions(tokenFlags("bearer token agents must send"))) command.addOption(o);
  command
    .addOption(opt("--engine <url>", "--dry-run: an engine whose /tokenize counts the suite's tokens"))
    .addOption(opt("--chars-per-token <n>", "--dry-run: characters per token when no engine answers /tokenize", "4"))
    .addOption(opt("--tokens-per-gpu-s <n>", "--dry-run: tokens (prompt + completion) one GPU processes per second", "5000"))
    .addOption(opt("--metrics <host:port>", "serve /metrics and the live page of the run in progress on this address, e.g. 127.0.0.1:9470 (off: none)", "off"))
    .addOption(opt("--per-agent-metrics <bool>", "export per-agent gauges from heartbeats (false for very large clusters)", "true"))
    .addOption(signKeyOption())
    .action(async (flags: SweepFlags & { signKey?: string }) => {
      if (flags.listen !== undefined && !isListenAddress(flags.listen)) throw new UsageError(`--listen must be HOST:PORT (port 0..65535), got ${JSON.stringify(flags.listen)}`);
      if (flags.engine !== undefined) flags.engine = engineUrl(flags.engine);
      const signKey = signKeyFrom(flags);
      const limit = intArg("limit", flags.limit, 1);
      const plan = await planSweep(flags.config, limit !== undefined ? { limit } : {});
      if (flags.dryRun) return dryRun(plan, flags);
      const metricsListen = parseMetricsListen(flags.metrics);
      const perAgent = boolArg("per-agent-metrics", flags.perAgentMetrics);
      const sweep = await Sweep.create({
        plan,
        ...(flags.listen ? { listen: flags.listen } : {}),
        ...(flags.token ? { token: flags.token } : {}),
        ...(metricsListen ? { metrics: metricsListen } : {}),
        perAgentMetrics: perAgent,
        ...(signKey ? { signKey } : {}),
      });
      const uninstall = onShutdownSignals((signal) => sweep.shutdown(signal));
      try {
        await sweep.run();
        process.exitCode = EXIT.ok;
      } finally {
        uninstall();
      }
    });
}

async function dryRun({ config, runs, entries }: SweepPlan, flags: SweepFlags): Promise<void> {
  const text = await measureSuiteText(config.suiteDir, { ...(config.tracks ? { tracks: config.tracks } : {}), ...(config.families ? { families: config.families } : {}), ...(config.limit !== undefined ? { limit: config.limit } : {}) });
  const stated = numberArg("chars-per-token", flags.charsPerToken, 0.1)!;
  const tokensPerGpuSecond = numberArg("tokens-per-gpu-s", flags.tokensPerGpuS, 1)!;
  let ratio: TokenRatio | undefined = flags.engine ? await measureCharsPerToken(flags.engine, text.sample) : undefined;
  const engineNote = flags.engine && !ratio ? ` (${redactUrl(flags.engine)}/tokenize did not answer)` : "";
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
