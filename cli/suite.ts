// udm-orch suite make | verify
import type { Command } from "commander";
import { CheckFailedError, UsageError } from "../common/errors.js";
import { verifySuite } from "../common/suite/index.js";
import { makeSuite, type SuiteScale } from "../sim/index.js";
import { csv, intArg, opt, localOpt } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { flagOptions, optionsFromFlags } from "./flag-group.js";
import { SUITE_FLAGS } from "./flags/scope-flags.js";

export function register(program: Command): void {
  const suite = program.command("suite").description("make or verify a suite");

  suite
    .command("make")
    .description("write a synthetic suite in the udm-eval-v1 format (full = the card's 44 files and 58,366 records)")
    .addOption(localOpt("--out <dir>", "directory to write <dir>/test/<family>/<track>.jsonl.gz, manifest.json, stats.json").makeOptionMandatory())
    .addOption(opt("--scale <scale>", "small (a few groups per track) or full (the card's counts)", "small"))
    .addOption(localOpt("--seed <n>", "random seed; the same seed writes byte-identical files", "0"))
    .addOption(localOpt("--tracks <a,b>", "only these tracks (default: all 44)"))
    .addOption(opt("--gzip-level <n>", "gzip level 1..9", "6"))
    .addOption(localOpt("--force", "replace a suite already in --out"))
    .action(async (o: { out: string; scale: string; seed: string; tracks?: string; gzipLevel: string; force?: boolean }) => {
      if (o.scale !== "small" && o.scale !== "full") throw new UsageError(`--scale must be small or full, got ${JSON.stringify(o.scale)}`);
      const gzipLevel = intArg("gzip-level", o.gzipLevel, 1) ?? 6;
      if (gzipLevel > 9) throw new UsageError(`--gzip-level must be 1..9, got ${gzipLevel}`);
      ensureWritableDir("out", o.out);
      const started = performance.now();
      const made = await makeSuite({
        out: o.out,
        scale: o.scale as SuiteScale,
        seed: intArg("seed", o.seed, 0) ?? 0,
        tracks: csv(o.tracks),
        force: o.force ?? false,
        gzipLevel,
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(
        `wrote ${made.files} files, ${made.records} records, ${(made.bytes / 1e6).toFixed(1)} MB decompressed to ${o.out} in ${seconds} s; identity ${made.identity}\n`,
      );
    });

  const verify = suite
    .command("verify")
    .description("check every line, the counts and the hashes of a suite against its manifest; exit 1 on any problem");
  for (const o of flagOptions(SUITE_FLAGS)) verify.addOption(o);
  verify.action(async (flags: Record<string, unknown>) => {
    const result = await verifySuite(optionsFromFlags(SUITE_FLAGS, flags).suiteDir!);
    if (result.problems.length > 0) throw new CheckFailedError(result.problems);
    const manifest = result.manifest ? "counts and sha256 match manifest.json" : "no manifest.json: counts and hashes not checked";
    process.stdout.write(`ok: ${result.files} files, ${result.records} records, ${manifest}; identity ${result.identity}\n`);
  });
}
