// udm-orch demo: a small synthetic suite, two simulated engines, the whole pipeline, in under a minute.
import { mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { makeSuite } from "../sim/index.js";
import { formatReport } from "./score.js";
import { runEmbedded } from "./embedded-run.js";
import { intArg, numberArg, opt, localOpt } from "./options.js";
import { verifyCard } from "../card/index.js";
import { parseMetricsListen } from "../common/metrics/index.js";

interface DemoFlags {
  out?: string;
  sim: string;
  seed: string;
  metrics: string;
  gpuHourUsd?: string;
  simTokensPerS?: string;
}

export function register(program: Command): void {
  program
    .command("demo")
    .description("small synthetic suite + simulated engines, end to end: per-track table and v1 mean")
    .addOption(localOpt("--out <dir>", "where to put the suite and the run (default: a new temporary directory)"))
    .addOption(opt("--sim <n>", "simulated engines", "2"))
    .addOption(localOpt("--seed <n>", "seed of the synthetic suite", "0"))
    .addOption(opt("--metrics <host:port>", "serve /metrics and the live run page on this address, e.g. 127.0.0.1:9470 (default off)", "off"))
    .addOption(opt("--gpu-hour-usd <usd>", "price of one GPU-hour, for the cost on the page and in the run card (default 0 = unknown)"))
    .addOption(opt("--sim-tokens-per-s <n>", "simulated engines' throughput in tokens/s, e.g. 20000 to watch the page fill (default 0 = no latency)"))
    .action(async (flags: DemoFlags) => {
      const out = resolve(flags.out ?? mkdtempSync(join(tmpdir(), "udm-demo-")));
      const sim = intArg("sim", flags.sim, 1)!;
      const metrics = parseMetricsListen(flags.metrics);
      const seed = intArg("seed", flags.seed, 0)!;
      const gpuHourUsd = numberArg("gpu-hour-usd", flags.gpuHourUsd, 0) ?? 0;
      const tokensPerS = numberArg("sim-tokens-per-s", flags.simTokensPerS, 0);
      const suiteDir = join(out, "suite");
      const runDir = join(out, "run");
      const started = Date.now();
      if (!existsSync(join(suiteDir, "manifest.json"))) {
        const made = await makeSuite({ out: suiteDir, scale: "small", seed });
        process.stdout.write(`demo: synthetic suite of ${made.records} records in ${made.files} track files at ${suiteDir}\n`);
      }
      process.stdout.write(`demo: ${sim} simulated engines (sim/pseudo: a stand-in for vLLM, not a model), results in ${runDir}\n`);
      const result = await runEmbedded({
        suiteDir,
        outDir: runDir,
        sim,
        printTracks: false,
        ...(metrics ? { metrics } : {}),
        ...(tokensPerS !== undefined ? { simOptions: { tokensPerS } } : {}),
        gpuHourUsd,
      });
      const o = result.outcome;
      process.stdout.write(
        (result.metrics ? formatReport(result.metrics) : "") +
          `demo: ${o.recordsTotal} records, run ${o.state} in ${((Date.now() - started) / 1000).toFixed(1)} s; metrics in ${result.metricsPath}\n`,
      );
      const verdict = await verifyCard(result.cardPath);
      process.stdout.write(
        `demo: run card ${result.cardPath}\n` +
          (verdict.problems.length === 0
            ? `demo: the run card verifies (fingerprint ${result.card.fingerprint.slice(0, 12)}, ${verdict.filesChecked} results files rehashed): udm-orch card verify ${result.cardPath}\n`
            : `demo: the run card does NOT verify:\n${verdict.problems.map((p) => `  - ${p}`).join("\n")}\n`),
      );
      if (verdict.problems.length > 0) process.exitCode = 1;
    });
}
