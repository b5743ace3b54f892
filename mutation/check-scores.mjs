// Holds each core module (mutation/modules.mjs) to MIN_SCORE percent of killed mutants, from
// Stryker's JSON report: prints a table and exits 1 when a module is below (Stryker's own
// thresholds.break is one figure for all files together). `--survivors` also lists each surviving
// or uncovered mutant. Usage: node mutation/check-scores.mjs [report.json] [--survivors]
import { readFileSync } from "node:fs";
import { MIN_SCORE, MODULES } from "./modules.mjs";

const args = process.argv.slice(2);
const listSurvivors = args.includes("--survivors");
const reportPath = args.find((a) => !a.startsWith("--")) ?? "reports/mutation/mutation.json";
let report;
try {
  report = JSON.parse(readFileSync(reportPath, "utf8"));
} catch (err) {
  console.error(`mutation: cannot read ${reportPath} (${err.code ?? err.message}); run \`npm run mutation\` first`);
  process.exit(2);
}

/** `dir/*.ts` or a path, with an optional `:from-to` line range, as a test of (file, line). */
function matcher(spec) {
  const m = /^(.*?)(?::(\d+)-(\d+))?$/.exec(spec);
  const [, glob, from, to] = m;
  const re = new RegExp("^" + glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*") + "$");
  return (file, line) => re.test(file) && (from === undefined || (line >= Number(from) && line <= Number(to)));
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);
const rows = [];
let failed = false;
for (const mod of MODULES) {
  const tests = mod.files.map(matcher);
  const counts = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Ignored: 0, errors: 0 };
  const survivors = [];
  let files = 0;
  for (const [file, result] of Object.entries(report.files ?? {})) {
    const path = file.replace(/\\/g, "/");
    if (!mod.files.some((spec) => matcher(spec.replace(/:\d+-\d+$/, ""))(path, 0))) continue;
    files++;
    for (const mutant of result.mutants) {
      const line = mutant.location.start.line;
      if (!tests.some((t) => t(path, line))) continue;
      if (mutant.status in counts) counts[mutant.status]++;
      else counts.errors++;
      if (UNDETECTED.has(mutant.status)) survivors.push(`${path}:${line}:${mutant.location.start.column} ${mutant.status} ${mutant.mutatorName}: ${JSON.stringify(mutant.replacement ?? "")}`);
    }
  }
  if (files === 0) {
    rows.push({ name: mod.name, missing: true });
    continue;
  }
  const detected = counts.Killed + counts.Timeout;
  const valid = detected + counts.Survived + counts.NoCoverage;
  const score = valid === 0 ? 100 : (100 * detected) / valid;
  const ok = score >= MIN_SCORE;
  if (!ok) failed = true;
  rows.push({ name: mod.name, score, ok, ...counts, survivors });
}

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`${pad("module", 30)} ${lpad("score", 7)} ${lpad("killed", 7)} ${lpad("timeout", 7)} ${lpad("survived", 8)} ${lpad("no cov", 6)} ${lpad("ignored", 7)}  verdict`);
for (const r of rows) {
  if (r.missing) {
    console.log(`${pad(r.name, 30)} ${lpad("-", 7)}  not in this report`);
    continue;
  }
  console.log(
    `${pad(r.name, 30)} ${lpad(r.score.toFixed(2), 7)} ${lpad(r.Killed, 7)} ${lpad(r.Timeout, 7)} ${lpad(r.Survived, 8)} ${lpad(r.NoCoverage, 6)} ${lpad(r.Ignored, 7)}  ${r.ok ? "ok" : `BELOW ${MIN_SCORE}%`}`,
  );
  if (listSurvivors) for (const s of r.survivors) console.log(`    ${s}`);
}
const whole = !rows.some((r) => r.missing);
if (failed) console.error(`mutation: a module kills fewer than ${MIN_SCORE}% of its mutants (table above)`);
else if (!whole) console.error("mutation: this report holds only some of the modules (MUTATION_MODULE run?)");
process.exit(failed || !whole ? 1 : 0);
