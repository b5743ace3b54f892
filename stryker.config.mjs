// Mutation testing of the core modules (issue 24): `npm run mutation` runs Stryker over the files of
// mutation/modules.mjs with the unit tests of mutation/vitest.config.mjs, then
// mutation/check-scores.mjs fails when a module kills fewer than MIN_SCORE percent of its mutants.
// Incremental: mutation/stryker-incremental.json (committed) keeps each mutant's result, so a rerun
// tests only the mutants of changed code or changed tests.
import { MODULES } from "./mutation/modules.mjs";

// MUTATION_MODULE=<part of a module's name>[,<another>...] tests those modules alone, with their
// own report and incremental file (MUTATION_SLUG names them; by default the names given), while
// working on them; mutation/merge-reports.mjs folds the results into the committed incremental file.
const only = process.env.MUTATION_MODULE;
const parts = only ? only.split(",").map((p) => p.trim()).filter(Boolean) : [];
const modules = only ? MODULES.filter((m) => parts.some((p) => m.name.includes(p))) : MODULES;
if (modules.length === 0) throw new Error(`MUTATION_MODULE=${only}: no such module in mutation/modules.mjs`);
const slug = only ? "-" + (process.env.MUTATION_SLUG ?? only).replace(/[^a-z0-9]+/gi, "-") : "";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  vitest: { configFile: "mutation/vitest.config.mjs" },
  coverageAnalysis: "perTest",
  mutate: modules.flatMap((m) => m.files),
  // The typescript checker (MUTATION_TSC=1) drops the mutants that do not compile, but it more than
  // doubled the time of a run here (bootstrap.ts: 8.6 min against 3.3) and changed no module's
  // verdict: a mutant that does not compile is a wrong program the tests also kill.
  checkers: process.env.MUTATION_TSC === "1" ? ["typescript"] : [],
  tsconfigFile: "tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // The machine is shared: one test runner unless --concurrency says otherwise.
  concurrency: 1,
  reporters: ["clear-text", "progress", "json", "html"],
  jsonReporter: { fileName: `reports/mutation/mutation${slug}.json` },
  htmlReporter: { fileName: `reports/mutation/mutation${slug}.html` },
  incremental: true,
  incrementalFile: only ? `reports/mutation/incremental${slug}.json` : "mutation/stryker-incremental.json",
  // Per-module thresholds are mutation/check-scores.mjs's; Stryker's own break is global.
  thresholds: { high: 90, low: 85, break: null },
  timeoutMS: 3_000,
  ignorePatterns: ["dist", "bench/out", ".tmp", "reports", "deploy", "helm", "docs"],
  // Its own sandbox folder per MUTATION_MODULE run: a run that ends removes its temp folder, and
  // would remove the sandbox of another run beside it.
  tempDirName: `.stryker-tmp${slug}`,
  cleanTempDir: "always",
};
