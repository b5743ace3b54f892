// udm-orch score --suite DIR --results DIR [--out FILE] [--tracks a,b] [--families f,g]
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { METRICS_FILE, writeMetricsJson, type MetricsJson, scoreResults } from "../scorer/index.js";
import { opt, localOpt } from "./options.js";
import { flagOptions, optionsFromFlags } from "./flag-group.js";
import { LIMIT_FLAGS, SCOPE_FLAGS } from "./flags/scope-flags.js";
import { ensureWritableFile } from "./out-path.js";

interface ScoreFlags {
  results: string;
  out?: string;
}

export function register(program: Command): void {
  const command = program.command("score").description("score result files against a suite and write metrics.json");
  for (const o of flagOptions(SCOPE_FLAGS)) command.addOption(o);
  for (const o of flagOptions(LIMIT_FLAGS)) command.addOption(o);
  command
    .addOption(opt("--results <dir>", "results directory; every *.jsonl and *.jsonl.gz below it is read").makeOptionMandatory())
    .addOption(localOpt("--out <file>", "where to write metrics.json (default: <results>/metrics.json)"))
    .action(async (flags: ScoreFlags & Record<string, unknown>) => {
      const { suiteDir, tracks, families } = optionsFromFlags(SCOPE_FLAGS, flags);
      const { limit } = optionsFromFlags(LIMIT_FLAGS, flags);
      const out = flags.out ?? join(flags.results, METRICS_FILE);
      // The default lies in --results: a missing results directory is scoreResults' error to name.
      if (flags.out || existsSync(flags.results)) ensureWritableFile(flags.out ? "out" : "results", out);
      const metrics = await scoreResults({
        suiteDir: suiteDir!,
        resultsDir: flags.results,
        ...(tracks ? { tracks } : {}),
        ...(families ? { families } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      writeMetricsJson(out, metrics);
      process.stdout.write(formatReport(metrics) + `wrote ${out}\n`);
    });
}

function fmt(v: number | null | undefined): string {
  return v === null || v === undefined ? "n/a" : v.toFixed(4);
}

/** One line per track (pillar, family, track, lang, headline), then the summary. */
export function formatReport(m: MetricsJson): string {
  const lines: string[] = [];
  const rows = Object.entries(m.tracks).sort(([a, ta], [b, tb]) => ta.pillar.localeCompare(tb.pillar) || ta.family.localeCompare(tb.family) || a.localeCompare(b));
  const w = Math.max(5, ...rows.map(([n]) => n.length));
  for (const [name, t] of rows) {
    const ci = t.headline.ci_low !== null ? ` [${fmt(t.headline.ci_low)}, ${fmt(t.headline.ci_high)}]` : "";
    lines.push(`${t.pillar.padEnd(22)} ${t.family.padEnd(18)} ${name.padEnd(w)} ${t.lang.padEnd(5)} ${t.headline.metric}=${fmt(t.headline.value)}${ci}${t.missing ? ` missing=${t.missing}` : ""}`);
  }
  const s = m.summary;
  lines.push(
    s.v1_mean !== null
      ? `v1 mean (${s.v1_tracks} tracks): ${fmt(s.v1_mean)}`
      : `v1 mean: n/a (partial mean over ${s.v1_tracks} of 43 scored tracks: ${fmt(s.v1_mean_partial)})`,
  );
  lines.push(`family macro mean: ${fmt(s.family_macro_mean)}`);
  for (const [pillar, p] of Object.entries(m.pillars)) {
    const langs = Object.entries(p.by_lang).map(([l, v]) => `${pillar}/${l}=${fmt(v)}`).join(" ");
    lines.push(`pillar ${pillar}: ${fmt(p.mean)} [${fmt(p.ci_low)}, ${fmt(p.ci_high)}] (${p.tracks} tracks) ${langs}`);
  }
  return lines.join("\n") + "\n";
}
