// Merges Stryker JSON reports (mutation-testing-report-schema) into one: each source file's mutants
// and each test file from the last report that has them. Used to fold the reports of single-module
// runs (MUTATION_MODULE=...) into the incremental file of the whole set, so that `npm run mutation`
// retests only the mutants whose code or tests changed since.
// With --base (the incremental file two branches started from), a three-way union: each file from
// the report that changed it since the base (where several did, the one whose source is the file on
// disk now, else the last), so two branches that each folded in their own modules keep both.
// Usage: node mutation/merge-reports.mjs [--base base.json] out.json in1.json in2.json ...
import { readFileSync, writeFileSync } from "node:fs";

const args = process.argv.slice(2);
let basePath;
const b = args.indexOf("--base");
if (b >= 0) [basePath] = args.splice(b, 2).slice(1);
const [out, ...inputs] = args;
if (!out || inputs.length === 0 || (b >= 0 && !basePath)) {
  console.error("usage: node mutation/merge-reports.mjs [--base base.json] out.json in.json...");
  process.exit(2);
}
const read = (path) => JSON.parse(readFileSync(path, "utf8"));
const base = basePath ? read(basePath) : undefined;
const reports = inputs.map(read);

function onDisk(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Each entry of `key` ("files" or "testFiles"): the last report's, or with a base the changed one's. */
function mergeEntries(key) {
  const merged = {};
  const names = new Set(reports.flatMap((r) => Object.keys(r[key] ?? {})));
  for (const name of names) {
    const candidates = reports.map((r) => r[key]?.[name]).filter((e) => e !== undefined);
    let pick = candidates.at(-1);
    if (base) {
      const was = JSON.stringify(base[key]?.[name]);
      const changed = candidates.filter((e) => JSON.stringify(e) !== was);
      const disk = onDisk(name);
      if (changed.length > 0) pick = changed.findLast((e) => e.source === disk) ?? changed.at(-1);
    }
    merged[name] = pick;
  }
  return merged;
}

const merged = { ...reports[0], files: mergeEntries("files"), testFiles: mergeEntries("testFiles") };
writeFileSync(out, JSON.stringify(merged));
console.log(`${out}: ${Object.keys(merged.files).length} source files, ${Object.keys(merged.testFiles).length} test files from ${inputs.length} reports${base ? " (three-way, with a base)" : ""}`);
