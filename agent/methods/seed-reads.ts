// Several reads of one record's questions, one per label-permutation seed, averaged per question.
// A question answered under every seed gets the mean distribution; otherwise it is skipped (any
// seed found it too long), handed to label-read (the engine cannot read it), or an error.
import type { Distribution } from "../../common/results/index.js";
import type { RecordAnswer, RecordPayload } from "../engine-method.js";

export interface SeedRead {
  probs: Record<string, Distribution>;
  errors: Record<string, string>;
  skipped: ReadonlySet<string> | readonly string[];
  /** Questions the engine answered it cannot read (501, unsupported type). */
  unsupported: ReadonlySet<string> | readonly string[];
}

const has = (c: ReadonlySet<string> | readonly string[], key: string): boolean =>
  c instanceof Set ? c.has(key) : (c as readonly string[]).includes(key);

/** The mean of distributions over the same keys. */
export function averageDistributions(dists: readonly Distribution[]): Distribution {
  const out: Distribution = {};
  for (const d of dists) for (const [k, p] of Object.entries(d)) out[k] = (out[k] ?? 0) + p / dists.length;
  return out;
}

/** Folds the seeds' reads of `keys` into `out`; questions for label-read are appended to `toLabelRead`. */
export function combineSeedReads(keys: readonly string[], reads: readonly SeedRead[], method: string, out: RecordAnswer, toLabelRead: string[]): void {
  for (const key of keys) {
    const dists = reads.map((r) => r.probs[key]);
    if (dists.every((d) => d !== undefined)) {
      out.probs[key] = averageDistributions(dists as Distribution[]);
      out.answeredBy[key] = method;
    } else if (reads.some((r) => has(r.skipped, key))) out.skipped.push(key);
    else if (reads.some((r) => has(r.unsupported, key))) toLabelRead.push(key);
    else out.errors[key] = reads.map((r) => r.errors[key]).find((e) => e !== undefined) ?? "no answer";
  }
}

/** `keys` in the record's question order (label-read reads them as one prompt sequence). */
export function inQuestionOrder(record: RecordPayload, keys: readonly string[]): string[] {
  const order = Object.keys(record.questions);
  return [...keys].sort((a, b) => order.indexOf(a) - order.indexOf(b));
}
