// The results files a run card seals: every results file below the run's directory (files.ts, what
// `score` reads, in the same order), each with its sha256, plus the count of records whose last
// result line has an errored question (docs/run-card.md scores.errors) and how many questions each
// engine method answered in those last lines (`answered_by`, docs/run-card.md method.answered_by).
// A line that is not JSON before the end of a file is a FormatError naming file and line.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { FormatError } from "../errors.js";
import { sha256Hex } from "../sha256.js";
import { relativeKey, resultFiles } from "./files.js";

export interface ResultsSeal {
  /** Path relative to the run directory (with `/`) -> sha256 of the file's bytes. */
  files: Record<string, string>;
  errorRecords: number;
  /** Engine method -> questions it answered, over each record's last line (its `answered_by`); by method name. */
  answeredBy: Record<string, number>;
}

/** Hashes and reads the results files below `dir`; `only` limits it to these relative paths. */
export function sealResults(dir: string, only?: ReadonlySet<string>): ResultsSeal {
  const files: Record<string, string> = {};
  const errored = new Map<string, boolean>();
  const answered = new Map<string, Record<string, string> | undefined>();
  for (const path of resultFiles(dir)) {
    const key = relativeKey(dir, path);
    if (only && !only.has(key)) continue;
    const bytes = readFileSync(path);
    files[key] = sha256Hex(bytes);
    const text = (path.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (!line.trim()) continue; // blank lines are no records (`score` skips them too)
      // Every line is parsed: a line corrupted mid-file (a torn write with more lines after it) can
      // start with its run_id and end in "}", and no cheaper reading tells it from a whole one.
      let row: { run_id?: unknown; errors?: unknown; answered_by?: unknown } | null;
      try {
        row = JSON.parse(line) as typeof row;
      } catch {
        // Only the last line, without its newline, may be torn by a crash: it holds no committed
        // result (`score` warns about it). Anything else is a corrupted file, which `score` refuses too.
        if (i === lines.length - 1) continue;
        throw new FormatError(path, i + 1, undefined, "not valid JSON (a corrupted line before the end of the file)");
      }
      // No record: null, or no run_id (a number, string or array has none either).
      if (typeof row?.run_id !== "string") continue;
      const errors = row.errors;
      errored.set(row.run_id, errors !== null && typeof errors === "object" && Object.keys(errors).length > 0);
      answered.set(row.run_id, isStringRecord(row.answered_by) ? row.answered_by : undefined);
    }
  }
  let errorRecords = 0;
  for (const e of errored.values()) if (e) errorRecords++;
  const answeredBy: Record<string, number> = {};
  for (const by of answered.values()) for (const method of Object.values(by ?? {})) answeredBy[method] = (answeredBy[method] ?? 0) + 1;
  // Strings sort by UTF-16 code units, what `<` compares: no comparator needed.
  return { files, errorRecords, answeredBy: Object.fromEntries(Object.keys(answeredBy).sort().map((m) => [m, answeredBy[m]!])) };
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
}
