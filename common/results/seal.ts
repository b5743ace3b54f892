// The results files a run card seals: every results file below the run's directory (files.ts, what
// `score` reads, in the same order), each with its sha256, plus the count of records whose last
// result line has an errored question (docs/run-card.md scores.errors).
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { sha256Hex } from "../sha256.js";
import { relativeKey, resultFiles } from "./files.js";

export interface ResultsSeal {
  /** Path relative to the run directory (with `/`) -> sha256 of the file's bytes. */
  files: Record<string, string>;
  errorRecords: number;
}

/** Hashes and reads the results files below `dir`; `only` limits it to these relative paths. */
export function sealResults(dir: string, only?: ReadonlySet<string>): ResultsSeal {
  const files: Record<string, string> = {};
  const errored = new Map<string, boolean>();
  for (const path of resultFiles(dir)) {
    const key = relativeKey(dir, path);
    if (only && !only.has(key)) continue;
    const bytes = readFileSync(path);
    files[key] = sha256Hex(bytes);
    const text = (path.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      // Stryker disable next-line ConditionalExpression,MethodExpression: a blank line fails to parse and is skipped all the same
      if (!line.trim()) continue;
      // Only a line with its newline is whole: a torn last line is parsed (and fails).
      // Stryker disable next-line ConditionalExpression: "false" only turns the fast path off (every line parsed: the same count); "true" is the other operators' torn-line case, killed
      const clean = i < lines.length - 1 ? runIdOfLineWithoutErrors(line) : undefined;
      // Stryker disable next-line ConditionalExpression,BlockStatement: without the fast path the line is parsed, with the same outcome
      if (clean !== undefined) {
        errored.set(clean, false);
        continue;
      }
      let row: { run_id?: unknown; errors?: unknown };
      try {
        row = JSON.parse(line) as typeof row;
      } catch {
        continue; // a torn last line: `score` warns about it; it holds no committed result
      }
      if (typeof row.run_id !== "string") continue;
      const errors = row.errors;
      errored.set(row.run_id, errors !== null && typeof errors === "object" && Object.keys(errors).length > 0);
    }
  }
  let errorRecords = 0;
  for (const e of errored.values()) if (e) errorRecords++;
  return { files, errorRecords };
}

const RUN_ID_FIRST = '{"run_id":"';

/**
 * The run_id of a line that cannot have an errors field, read without parsing the line: it starts
 * with its run_id (as the coordinator writes lines) and has no "errors" anywhere, nor any \u escape
 * that could spell one. Undefined for any other line, which is then parsed.
 * Only whole lines reach it (the last line, which a crash may have cut, is always parsed): a line
 * corrupted in the middle of a file, which the coordinator never writes, may be read as whole here.
 */
// Stryker disable next-line BlockStatement: a fast path that answers nothing leaves every line to the parse, the same count
function runIdOfLineWithoutErrors(line: string): string | undefined {
  // Stryker disable next-line ConditionalExpression,StringLiteral: refusing more lines (true, includes("")) only sends them to the parse
  if (!line.startsWith(RUN_ID_FIRST) || line.includes('"errors"') || line.includes("\\u")) return undefined;
  const end = line.indexOf('"', RUN_ID_FIRST.length);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: "true" and "<= 0" only refuse more lines (end is never 0); "false" and ">=" take a corrupt line, which the corrupt-line example kills
  if (end < 0) return undefined;
  const runId = line.slice(RUN_ID_FIRST.length, end);
  // Stryker disable next-line ConditionalExpression,StringLiteral,MethodExpression: each mutant refuses more lines (sent to the parse) or trims a side JSON.parse ignores
  return runId.includes("\\") || !line.trimEnd().endsWith("}") ? undefined : runId;
}
