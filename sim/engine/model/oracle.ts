// Oracle mode: gold answers from a side file, so end-to-end tests know the metrics to expect.
// vLLM's request has no run_id, so every line carries one key per question, computed from what an
// agent actually sends (state, question key, option keys) and never from gold; the sim computes the
// same key from the request it receives.
import { createWriteStream, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import { z } from "zod";
import { FormatError } from "../../../common/errors.js";
import { parseOrThrow } from "../../../common/parse.js";
import { openSuite, readTrackRecords } from "../../../common/suite/suite.js";
import { canonicalJson, sha256Hex } from "./deterministic.js";

/** The key of one question of one record, as the sim sees it in a /v1/systemone request. */
export function oracleKey(state: unknown, questionKey: string, criteria: unknown): string {
  const options = criteria !== null && typeof criteria === "object" && !Array.isArray(criteria) ? Object.keys(criteria) : criteria ?? [];
  return sha256Hex(`${canonicalJson(state)}\u0000${questionKey}\u0000${canonicalJson(options)}`);
}

const OracleLineSchema = z.looseObject({
  run_id: z.string(),
  expected: z.record(z.string(), z.union([z.string(), z.boolean()])),
  /** question key -> oracleKey(state, question key, criteria). */
  keys: z.record(z.string(), z.string()),
});
export type OracleLine = z.infer<typeof OracleLineSchema>;

export interface OracleEntry {
  runId: string;
  questionKey: string;
  gold: string | boolean;
}

export class Oracle {
  private readonly byKey = new Map<string, OracleEntry>();
  /** Keys seen on more than one record with different gold (identical payloads): the first wins. */
  conflicts = 0;

  add(line: OracleLine): void {
    for (const [questionKey, key] of Object.entries(line.keys)) {
      const gold = line.expected[questionKey];
      if (gold === undefined) continue;
      const seen = this.byKey.get(key);
      if (seen) {
        if (seen.gold !== gold) this.conflicts++;
        continue;
      }
      this.byKey.set(key, { runId: line.run_id, questionKey, gold });
    }
  }

  lookup(state: unknown, questionKey: string, criteria: unknown): OracleEntry | undefined {
    return this.byKey.get(oracleKey(state, questionKey, criteria));
  }

  get size(): number {
    return this.byKey.size;
  }

  static fromFile(path: string): Oracle {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw new FormatError(path, undefined, undefined, `cannot read oracle file: ${(err as Error).message}`, { cause: err });
    }
    const oracle = new Oracle();
    text.split("\n").forEach((raw, i) => {
      if (!raw.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        throw new FormatError(path, i + 1, undefined, `bad JSON: ${(err as Error).message}`, { cause: err });
      }
      oracle.add(parseOrThrow(OracleLineSchema, value, { file: path, line: i + 1 }));
    });
    return oracle;
  }
}

/** One oracle line per record of every track of a suite. */
export async function* oracleLines(suiteDir: string): AsyncGenerator<OracleLine> {
  const suite = openSuite(suiteDir);
  for (const file of suite.files) {
    for await (const rec of readTrackRecords(file)) {
      const keys = Object.fromEntries(Object.entries(rec.questions).map(([qk, q]) => [qk, oracleKey(rec.state, qk, q.criteria)]));
      yield { run_id: rec._evaluation.run_id, expected: rec.expected, keys };
    }
  }
}

/** The oracle of a suite, built in memory. */
export async function oracleFromSuite(suiteDir: string): Promise<Oracle> {
  const oracle = new Oracle();
  for await (const line of oracleLines(suiteDir)) oracle.add(line);
  return oracle;
}

/** Reads every track of a suite and writes its gold as oracle JSONL. Returns the number of records. */
export async function writeOracleFile(suiteDir: string, outFile: string): Promise<number> {
  const lines = oracleLines(suiteDir);
  const first = await lines.next(); // a missing or unreadable suite fails before the file exists
  const out = createWriteStream(outFile);
  let records = 0;
  try {
    for (let r = first; !r.done; r = await lines.next()) {
      if (!out.write(JSON.stringify(r.value) + "\n")) await once(out, "drain");
      records++;
    }
  } catch (err) {
    out.destroy();
    rmSync(outFile, { force: true }); // no half oracle that would silently miss records
    throw err;
  }
  out.end();
  await once(out, "close");
  return records;
}
