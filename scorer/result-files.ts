// Result files as a source of the scorer core: feeding the lines of the run's results files
// (common/results resultFiles, in path order: a later line for the same run_id wins) to a RunScorer.
import { FormatError } from "../common/errors.js";
import { readJsonLines } from "../common/jsonl-reader.js";
import type { Logger } from "../common/log.js";
import { parseResultLine } from "../common/results/index.js";
import type { RunScorer } from "./run-scorer.js";

export interface ApplyFilesOptions {
  /** Warn about a torn last line (a run may still be writing it); it is ignored either way. */
  warnTornLines: boolean;
  /** Results already on disk when a live source starts (they complete no track one by one). */
  replay?: boolean;
  log: Logger;
}

/**
 * Applies every line of `files`, in order. A line for a suite track outside the scorer's scope is
 * skipped; one that matches no record of the suite is a FormatError naming file and line.
 */
export async function applyResultFiles(scorer: RunScorer, files: readonly string[], options: ApplyFilesOptions): Promise<void> {
  for (const file of files) {
    const reader = readJsonLines(file, {
      onTornLastLine: (line) => {
        if (options.warnTornLines) options.log.warn(`${file}:${line}: torn last line (no newline, not valid JSON) ignored; the run may still be writing`);
      },
    });
    for await (const { line, value } of reader) {
      const result = parseResultLine(file, line, value);
      if (scorer.apply(result, options.replay) === "unknown") {
        throw new FormatError(file, line, "run_id", `run_id ${JSON.stringify(result.run_id)} matches no record of the suite ${scorer.suiteRoot}`);
      }
    }
  }
}
