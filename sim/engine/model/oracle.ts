// Oracle mode: gold answers from a side file, so end-to-end tests know the metrics to expect.
// vLLM's requests have no run_id, so every line carries keys computed from what an agent actually
// sends, never from gold, and the sim computes the same keys from the request it receives:
// - `keys`: a structured question (/v1/systemone, /v1/decisions) by state, question key and its
//   option names in any order (a seed may reorder them; a yes/no question has none);
// - `reads`: a question written into a prompt (/v1/completions, /v1/chat/completions) the way
//   vLLM's structured decisions lay one out (strategies.py NextTokenStrategy, question_types.py
//   QuestionType.prompt): the state's JSON text on a line, a blank line, "Question:
//   <instructions>", then one "<label>: <option> - <description>" line per option. Whitespace is
//   ignored, so the oracle finds the question whatever labels, order or line breaks the prompt uses.
import { createWriteStream, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import { z } from "zod";
import { FormatError } from "../../../common/errors.js";
import { parseOrThrow } from "../../../common/parse.js";
import { type Question, openSuite, readTrackRecords } from "../../../common/suite/index.js";
import { canonicalJson } from "../../../common/canonical-json.js";
import { sha256Hex } from "../../../common/sha256.js";
import { hashUnit } from "./deterministic.js";

/** The key of one question of one record in a structured request; `options` null for yes/no. */
export function oracleKey(state: unknown, questionKey: string, options: readonly string[] | null): string {
  const names = options === null ? "noul" : canonicalJson([...options].sort());
  return sha256Hex(`${canonicalJson(state)}\u0000${questionKey}\u0000${names}`);
}

/** Hash of a prompt fragment with its whitespace removed. */
function textKey(text: string): string {
  return sha256Hex(text.replace(/\s+/g, "")).slice(0, 16);
}

/** A choice option as a prompt lists it (question_types.py QuestionType.reply_line). */
function optionText(key: string, description: string | undefined): string {
  return description ? `${key} - ${description}` : key;
}

const ReadKeySchema = z.object({
  state: z.string(),
  instructions: z.string(),
  /** Choice: option text key -> option key, in the suite's option order. Absent for noul. */
  options: z.record(z.string(), z.string()).optional(),
});
type ReadKey = z.infer<typeof ReadKeySchema>;

const OracleLineSchema = z.looseObject({
  run_id: z.string(),
  expected: z.record(z.string(), z.union([z.string(), z.boolean()])),
  /** question key -> oracleKey(state, question key, option names). */
  keys: z.record(z.string(), z.string()),
  /** question key -> how the question reads in a prompt. */
  reads: z.record(z.string(), ReadKeySchema).optional(),
});
export type OracleLine = z.infer<typeof OracleLineSchema>;

export interface OracleEntry {
  runId: string;
  questionKey: string;
  gold: string | boolean;
}

interface ReadCandidate extends OracleEntry {
  instructions: string;
  /** Choice: option text key -> option key in suite order; null for noul. */
  options: Map<string, string> | null;
}

/** A question found in a prompt: its listed labels and the oracle's distribution over them. */
export interface PromptTarget {
  entry: OracleEntry;
  /** Labels in the order the prompt lists them. */
  labels: string[];
  /** Probability of each listed label's option (oracleDistribution); sums to 1. */
  probs: number[];
}

/** The name gold has among a question's options: a choice's key, "yes"/"no" for a predicate's (noul) sides. */
export function goldName(gold: string | boolean, noul: boolean): string {
  if (!noul) return String(gold);
  return gold === true || gold === "true" ? "yes" : "no";
}

/**
 * The oracle's answer to a question: a distribution over its options, a property of the question
 * alone (seed, run_id, question key and the options' names), never of the order or labels a
 * request gives them, so every engine method and every label permutation reads the same one. The
 * option on top is gold with probability `accuracy` (decided per question), else another option
 * chosen by the same hash; the others' logits are hashed, and the top one leads by a hashed margin.
 */
export function oracleDistribution(seed: number, accuracy: number, entry: OracleEntry, names: readonly string[], noul: boolean): number[] {
  const byName = distributionByName(seed, accuracy, entry, names, noul);
  return names.map((n) => byName.get(n)!);
}

/** Distributions already drawn (every seed and every trie read of a question asks again). */
const drawn = new Map<string, ReadonlyMap<string, number>>();

function distributionByName(seed: number, accuracy: number, entry: OracleEntry, names: readonly string[], noul: boolean): ReadonlyMap<string, number> {
  const sorted = [...new Set(names)].sort();
  const key = [seed, accuracy, entry.runId, entry.questionKey, String(entry.gold), noul, ...sorted].join("\u0000");
  const known = drawn.get(key);
  if (known) return known;
  const gold = goldName(entry.gold, noul);
  let top = gold;
  if (!(hashUnit(seed, "oracle", entry.runId, entry.questionKey) < accuracy) || !sorted.includes(gold)) {
    const others = sorted.filter((n) => n !== gold);
    top = others[Math.floor(hashUnit(seed, "miss", entry.runId, entry.questionKey) * others.length)] ?? gold;
  }
  const logit = new Map(sorted.map((n) => [n, 6 * (hashUnit(seed, "oracle-logit", entry.runId, entry.questionKey, n) - 0.5)]));
  let best = -Infinity;
  for (const [n, l] of logit) if (n !== top) best = Math.max(best, l);
  logit.set(top, (best === -Infinity ? 0 : best) + 0.5 + 2.5 * hashUnit(seed, "margin", entry.runId, entry.questionKey));
  const m = Math.max(...logit.values());
  let z = 0;
  for (const l of logit.values()) z += Math.exp(l - m);
  const out = new Map([...logit].map(([n, l]) => [n, Math.exp(l - m) / z]));
  if (drawn.size >= 100_000) drawn.clear();
  drawn.set(key, out);
  return out;
}

const OPTION_LINE = /^([A-Z]{1,3}|[0-9]|yes|no):\s?(.*)$/;

export class Oracle {
  private readonly byKey = new Map<string, OracleEntry>();
  private readonly byState = new Map<string, ReadCandidate[]>();
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
    for (const [questionKey, read] of Object.entries(line.reads ?? {})) {
      const gold = line.expected[questionKey];
      if (gold === undefined) continue;
      let list = this.byState.get(read.state);
      if (!list) this.byState.set(read.state, (list = []));
      list.push({ runId: line.run_id, questionKey, gold, instructions: read.instructions, options: read.options ? new Map(Object.entries(read.options)) : null });
    }
  }

  /** The question of a structured request; `options` null for a yes/no question. */
  lookup(state: unknown, questionKey: string, options: readonly string[] | null): OracleEntry | undefined {
    return this.byKey.get(oracleKey(state, questionKey, options));
  }

  /** The question a prompt asks, with the option on top; undefined for a prompt the oracle does not know. */
  promptTarget(text: string, seed: number, accuracy: number): PromptTarget | undefined {
    if (this.byState.size === 0) return undefined;
    const lines = text.split("\n");
    let at = -1;
    let candidates: ReadCandidate[] | undefined;
    for (let i = lines.length - 1; i >= 0 && !candidates; i--) {
      const line = lines[i]!.trim();
      if (!line.startsWith("{")) continue;
      candidates = this.byState.get(textKey(line));
      at = i;
    }
    if (!candidates) return undefined;
    // The question: "Question: <instructions>" (possibly several lines), then the option lines.
    const instructions: string[] = [];
    const listed: Array<{ label: string; text: string }> = [];
    for (const raw of lines.slice(at + 1)) {
      const m = OPTION_LINE.exec(raw);
      if (m) listed.push({ label: m[1]!, text: textKey(m[2]!) });
      else if (listed.length > 0) break;
      else instructions.push(raw);
    }
    const asked = textKey(instructions.join("\n").trim().replace(/^Question:/, ""));
    for (const c of candidates) {
      if (c.instructions !== asked) continue;
      let names: string[];
      if (c.options === null) {
        if (listed.length !== 2 || !listed.some((o) => o.label === "yes") || !listed.some((o) => o.label === "no")) continue;
        names = listed.map((o) => o.label);
      } else {
        const options = c.options;
        if (listed.length !== options.size || !listed.every((o) => options.has(o.text))) continue;
        names = listed.map((o) => options.get(o.text)!);
      }
      if (!names.includes(goldName(c.gold, c.options === null))) continue;
      return { entry: c, labels: listed.map((o) => o.label), probs: oracleDistribution(seed, accuracy, c, names, c.options === null) };
    }
    return undefined;
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

/** How a suite question reads in a prompt. */
function readKey(state: Record<string, string>, q: Question): ReadKey {
  const key: ReadKey = { state: textKey(JSON.stringify(state)), instructions: textKey(q.instructions ?? "") };
  if (q.type === "choice") key.options = Object.fromEntries(Object.entries(q.criteria).map(([k, d]) => [textKey(optionText(k, d)), k]));
  return key;
}

/** One oracle line per record of every track of a suite. */
export async function* oracleLines(suiteDir: string): AsyncGenerator<OracleLine> {
  const suite = openSuite(suiteDir);
  for (const file of suite.files) {
    for await (const rec of readTrackRecords(file)) {
      yield oracleLine(rec._evaluation.run_id, rec.state, rec.questions, rec.expected);
    }
  }
}

/** The oracle line of one record. */
export function oracleLine(runId: string, state: Record<string, string>, questionMap: Record<string, Question>, expected: OracleLine["expected"]): OracleLine {
  const questions = Object.entries(questionMap);
  const keys = Object.fromEntries(questions.map(([qk, q]) => [qk, oracleKey(state, qk, q.type === "noul" ? null : Object.keys(q.criteria))]));
  const reads = Object.fromEntries(questions.map(([qk, q]) => [qk, readKey(state, q)]));
  return { run_id: runId, expected, keys, reads };
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
