// udm-orch diff RUN_A RUN_B: the two runs' headlines per track, their paired difference with an
// interval and a p-value, and the records that flipped (view/run-diff.ts). Refuses runs of other
// suites or scopes (exit 2).
import type { Command } from "commander";
import { writeFileSync } from "node:fs";
import { UsageError } from "../common/errors.js";
import { diffRuns, openRunDir, renderDiffHtml, renderDiffJson, renderDiffMarkdown } from "../view/index.js";
import { PERMUTATIONS } from "../scorer/index.js";
import { intArg, localOpt, opt } from "./options.js";
import { flagGroup, flagOptions, optionsFromFlags } from "./flag-group.js";
import { SUITE_FLAG, type ScopeOptions } from "./flags/scope-flags.js";
import { VIEW_DEFAULT_URL } from "./view.js";

const DIFF_SUITE_FLAGS = flagGroup<ScopeOptions>({}, [{ ...SUITE_FLAG, description: "the runs' suite", defaultText: "suite_root of RUN_A's run.json", mandatory: false }]);

const FORMATS = ["markdown", "json", "html"] as const;

interface DiffFlags {
  format: string;
  out?: string;
  permutations: string;
  viewA: string;
  viewB: string;
}

export function register(program: Command): void {
  const command = program
    .command("diff")
    .description("compare two runs of the same suite and scope: per track both headlines, the paired difference with a 95% interval and a p-value, the records that flipped")
    .argument("<run-a>", "run directory (udm-orch run/coordinator --out)")
    .argument("<run-b>", "run directory of the same suite and scope");
  for (const o of flagOptions(DIFF_SUITE_FLAGS)) command.addOption(o);
  command
    .addOption(localOpt("--format <format>", `output: ${FORMATS.join(", ")}`, "markdown"))
    .addOption(localOpt("--out <file>", "write the output to this file instead of standard output"))
    .addOption(opt("--permutations <n>", "permutations of the paired test", String(PERMUTATIONS)))
    .addOption(opt("--view-a <url>", "where `udm-orch view RUN_A` serves (the flipped records link to it)", VIEW_DEFAULT_URL))
    .addOption(opt("--view-b <url>", "where `udm-orch view RUN_B` serves", VIEW_DEFAULT_URL.replace(/\d+$/, (p) => String(Number(p) + 1))))
    .action(async (dirA: string, dirB: string, flags: DiffFlags & Record<string, unknown>) => {
      if (!(FORMATS as readonly string[]).includes(flags.format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(flags.format)}`);
      const permutations = intArg("permutations", flags.permutations, 1, 1_000_000)!;
      const { suiteDir } = optionsFromFlags(DIFF_SUITE_FLAGS, flags);
      const a = openRunDir(dirA, suiteDir);
      const b = openRunDir(dirB, suiteDir ?? a.suite.root);
      const diff = await diffRuns(a, b, { permutations });
      const links = { a: flags.viewA, b: flags.viewB };
      const text = flags.format === "json" ? renderDiffJson(diff, links) : flags.format === "html" ? renderDiffHtml(diff, links) : renderDiffMarkdown(diff, links);
      if (flags.out) {
        writeFileSync(flags.out, text);
        process.stdout.write(`wrote ${flags.out}\n`);
      } else process.stdout.write(text);
    });
}
