// Which files are a run's results: every *.jsonl and *.jsonl.gz below the results directory, in
// path order (a later line for the same run_id wins, so the order is part of the result). What
// `score` reads and what a run card seals (seal.ts).
import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { UsageError } from "../errors.js";

/** Every `*.jsonl` and `*.jsonl.gz` below dir, sorted by path. */
export function resultFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && (entry.name.endsWith(".jsonl") || entry.name.endsWith(".jsonl.gz"))) out.push(p);
    }
  };
  try {
    walk(dir);
  } catch (err) {
    throw new UsageError(`cannot read results directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const key = (p: string): string => relativeKey(dir, p);
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** A results file's path relative to the run directory, with `/` (the run card's key). */
export function relativeKey(dir: string, path: string): string {
  return relative(dir, path).split(sep).join("/");
}
