// The results files a run card seals: every results file below the run's directory (files.ts, what
// `score` reads, in the same order), each with its sha256, plus the count of records whose last
// result line has an errored question (docs/run-card.md scores.errors) and how many questions each
// engine method answered in those last lines (`answered_by`, docs/run-card.md method.answered_by).
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { sha256Hex } from "../sha256.js";
import { relativeKey, resultFiles } from "./files.js";

export interface ResultsSeal {
  /** Path relative to the run directory (with `/`) -> sha256 of the file's bytes. */
  files: Record<string, string>;
  errorRecords: number;
  /** Engine method -> questions it answered, over each record's last line (its `answered_by`). */
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
      // Stryker disable next-line ConditionalExpression,MethodExpression: a blank line fails to parse and is skipped all the same
      if (!line.trim()) continue;
      // Only a line with its newline is whole: a torn last line is parsed (and fails).
      // Stryker disable next-line ConditionalExpression: "false" only turns the fast path off (every line parsed: the same count); "true" is the other operators' torn-line case, killed
      const clean = i < lines.length - 1 ? runIdOfLineWithoutErrors(line) : undefined;
      // Stryker disable next-line ConditionalExpression,BlockStatement: without the fast path the line is parsed, with the same outcome
      if (clean !== undefined) {
        const by = answeredByOfLine(line);
        if (by !== "unread") {
          errored.set(clean, false);
          answered.set(clean, by);
          continue;
        }
      }
      let row: { run_id?: unknown; errors?: unknown; answered_by?: unknown };
      try {
        row = JSON.parse(line) as typeof row;
      } catch {
        continue; // a torn last line: `score` warns about it; it holds no committed result
      }
      if (typeof row.run_id !== "string") continue;
      const errors = row.errors;
      errored.set(row.run_id, errors !== null && typeof errors === "object" && Object.keys(errors).length > 0);
      answered.set(row.run_id, isStringRecord(row.answered_by) ? row.answered_by : undefined);
    }
  }
  let errorRecords = 0;
  for (const e of errored.values()) if (e) errorRecords++;
  const answeredBy: Record<string, number> = {};
  for (const by of answered.values()) for (const method of Object.values(by ?? {})) answeredBy[method] = (answeredBy[method] ?? 0) + 1;
  return { files, errorRecords, answeredBy: Object.fromEntries(Object.entries(answeredBy).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
}

const ANSWERED_BY = ',"answered_by":{';

/**
 * The answered_by of a line the coordinator wrote (line-writer.ts puts it after the probs, so its
 * last occurrence is the field), read without parsing the line; undefined when the line has none,
 * "unread" when it cannot be read this way (the line is then parsed).
 */
function answeredByOfLine(line: string): Record<string, string> | undefined | "unread" {
  const at = line.lastIndexOf(ANSWERED_BY);
  if (at < 0) return undefined;
  const from = at + ANSWERED_BY.length - 1;
  const end = line.indexOf("}", from);
  if (end < 0) return "unread";
  try {
    const by = JSON.parse(line.slice(from, end + 1)) as unknown;
    return isStringRecord(by) ? by : "unread";
  } catch {
    return "unread";
  }
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
