// The coordinator's side of writing a results line (SUITE_FORMAT.md "Results"): an accepted result
// is written straight to the line's text, byte for byte what JSON.stringify gives for the line
// object of common/results/format.ts (acceptedResultLine: same fields, same order, distributions
// in criteria order), without building that object. On the hot path the objects (a map per
// question, then an ordered copy, then the line) cost more than the writing; the text is what the
// results file, the bus and the run card's scorer take.
import { type CommittedLine, givenUpResultLine, lineHasErrors, RESULT_FORMAT } from "../common/results/index.js";
import type { IncomingResult } from "./incoming-result.js";
import { RecordQuestions } from "./record-questions.js";
import { questionSpecs, type RecordEntry } from "./suite-index.js";

/** The line of an accepted (validated) result. */
export function resultLine(result: IncomingResult, record: RecordEntry, track: string, family: string, agentId: string): CommittedLine {
  const qs = RecordQuestions.of(record);
  const values = result.compactProbs?.values;
  const at = compactOffsets(result, qs);
  let probs = "";
  for (const i of jsonOrder(qs.keys)) {
    const key = qs.keys[i]!;
    const options = qs.options(i);
    const enc = encodedOptions(options);
    let dist = "";
    if (at && at[i]! >= 0) {
      const from = at[i]!;
      for (const j of enc.order) dist += (dist === "" ? "{" : ",") + enc.keys[j] + num(values![from + j]!);
    } else if (Object.hasOwn(result.probs, key)) {
      const d = result.probs[key]!;
      for (const j of enc.order) dist += (dist === "" ? "{" : ",") + enc.keys[j] + num(d[options[j]!]!);
    } else continue;
    probs += (probs === "" ? "{" : ",") + JSON.stringify(key) + ":" + (dist === "" ? "{}" : dist + "}");
  }
  let text =
    `{"run_id":${JSON.stringify(record.runId)},"id":${JSON.stringify(record.id)},"track":${JSON.stringify(track)},"family":${JSON.stringify(family)}` +
    `,"probs":${probs === "" ? "{}" : probs + "}"},"skipped":${skippedInCriteriaOrder(result.skipped, qs.keys)}`;
  const errored = lineHasErrors(result);
  if (errored) text += `,"errors":${JSON.stringify(result.errors)}`;
  text +=
    `,"payload_sha256":${JSON.stringify(record.payloadSha256)},"agent":${JSON.stringify(agentId)},"latency_ms":${num(result.latencyMs)}` +
    `,"prompt_tokens":${num(result.promptTokens)}`;
  if (result.cachedTokens !== null) text += `,"cached_tokens":${num(result.cachedTokens)}`;
  text += `,"completion_tokens":${num(result.completionTokens)},"answered_by":${JSON.stringify(result.answeredBy)}`;
  if (result.retries > 0) text += `,"retries":${num(result.retries)}`;
  if (result.approximate) text += `,"approximate":true`;
  text += `,"format":${RESULT_FORMAT}}`;
  return {
    runId: record.runId,
    track,
    family,
    text,
    errored,
    usage: { latencyMs: result.latencyMs, promptTokens: result.promptTokens, cachedTokens: result.cachedTokens, completionTokens: result.completionTokens },
  };
}

/** The line of a record given up after repeated invalid results: every question in errors. */
export function givenUpLine(record: RecordEntry, track: string, family: string, reason: string): CommittedLine {
  const line = givenUpResultLine({ runId: record.runId, id: record.id, track, family, payloadSha256: record.payloadSha256, questions: questionSpecs(record) }, reason);
  return { runId: record.runId, track, family, text: JSON.stringify(line), errored: lineHasErrors(line) };
}

// Reused: a line is written to its end before the next.
let offsets = new Int32Array(256);

/** Per question, where its values start in prob_values; -1 for a question not there. */
function compactOffsets(result: IncomingResult, qs: RecordQuestions): Int32Array | undefined {
  const compact = result.compactProbs;
  if (!compact || compact.questions.length === 0) return undefined;
  if (offsets.length < qs.count) offsets = new Int32Array(qs.count * 2);
  const at = offsets.fill(-1, 0, qs.count);
  let offset = 0;
  let hint = 0;
  for (const key of compact.questions) {
    const i = qs.indexOf(key, hint);
    if (at[i]! < 0) at[i] = offset;
    offset += qs.options(i).length;
    hint = i + 1;
  }
  return at;
}

function skippedInCriteriaOrder(skipped: readonly string[], keys: readonly string[]): string {
  if (skipped.length === 0) return "[]";
  const set = new Set(skipped);
  let out = "";
  for (const k of keys) if (set.has(k)) out += (out === "" ? "[" : ",") + JSON.stringify(k);
  return out === "" ? "[]" : out + "]";
}

/** A number as JSON.stringify writes it (null when not finite). */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}

// JSON.stringify writes an object's integer-like keys ("0", "17") first, in ascending order, then the
// others in insertion order; the line's objects are built in criteria order, so the text follows
// the same rule.
function isArrayIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  if (!(c >= 48 && c <= 57)) return false;
  return /^(?:0|[1-9][0-9]*)$/.test(key) && Number(key) < 4294967295;
}

/** Indices of `keys` in the order JSON.stringify writes an object built with them in this order. */
function jsonOrder(keys: readonly string[]): readonly number[] {
  let indexed: number[] | undefined;
  for (let i = 0; i < keys.length; i++) if (isArrayIndex(keys[i]!)) (indexed ??= []).push(i);
  if (!indexed) return identityOrder(keys.length);
  indexed.sort((a, b) => Number(keys[a]) - Number(keys[b]));
  const rest: number[] = [];
  for (let i = 0; i < keys.length; i++) if (!isArrayIndex(keys[i]!)) rest.push(i);
  return [...indexed, ...rest];
}

const identities = new Map<number, readonly number[]>();
function identityOrder(n: number): readonly number[] {
  let order = identities.get(n);
  if (!order) identities.set(n, (order = Array.from({ length: n }, (_, i) => i)));
  return order;
}

interface EncodedOptions {
  /** Option indices in JSON order. */
  order: readonly number[];
  /** Per option, its key as JSON and the colon. */
  keys: readonly string[];
}

// Option lists are interned by the suite index (A..D, "0".."4", noul): each is encoded once.
const encoded = new WeakMap<readonly string[], EncodedOptions>();
function encodedOptions(options: readonly string[]): EncodedOptions {
  let e = encoded.get(options);
  if (!e) encoded.set(options, (e = { order: jsonOrder(options), keys: options.map((o) => JSON.stringify(o) + ":") }));
  return e;
}
