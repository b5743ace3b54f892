// Merges Stryker JSON reports (mutation-testing-report-schema) into one: each source file's mutants
// and each test file from the last report that has them. Used to fold the reports of single-module
// runs (MUTATION_MODULE=...) into the incremental file of the whole set, so that `npm run mutation`
// retests only the mutants whose code or tests changed since.
// Usage: node mutation/merge-reports.mjs out.json in1.json in2.json ...
import { readFileSync, writeFileSync } from "node:fs";

const [out, ...inputs] = process.argv.slice(2);
if (!out || inputs.length === 0) {
  console.error("usage: node mutation/merge-reports.mjs out.json in.json...");
  process.exit(2);
}
let merged;
for (const path of inputs) {
  const report = JSON.parse(readFileSync(path, "utf8"));
  if (!merged) {
    merged = { ...report, files: { ...report.files }, testFiles: { ...(report.testFiles ?? {}) } };
    continue;
  }
  Object.assign(merged.files, report.files);
  Object.assign(merged.testFiles, report.testFiles ?? {});
}
writeFileSync(out, JSON.stringify(merged));
console.log(`${out}: ${Object.keys(merged.files).length} source files, ${Object.keys(merged.testFiles).length} test files from ${inputs.length} reports`);
