// A results line written straight to its text (docs/suite-format.md "Results"): byte for byte what
// JSON.stringify gives for the line object of format.ts (acceptedResultLine: same fields, same order,
// distributions in criteria order), without building that object. On the coordinator's hot path
// the objects (a map per question, then an ordered copy, then the line) cost more than the writing;
// the text is what the results file, the bus and the run card's scorer take.
import type { CommittedLine } from "./committed-line.js";
import { lineHasErrors, RESULT_FORMAT, type AnswerFields } from "./format.js";
import { LineBytes } from "./line-bytes.js";
import { AnsweredByList, isArrayIndex } from "./answered-by.js";

/** A record's questions as the writer reads them: keys in criteria order, each with its option keys. */
export interface LineQuestions {
  readonly keys: readonly string[];
  readonly count: number;
  /** Option keys of question i, in criteria order. */
  options(i: number): readonly string[];
  /** Index of the question with this key, or -1; `hint` is where it is expected. */
  indexOf(key: string, hint: number): number;
}

/**
 * Probabilities in their one shape (RecordResult.prob_questions / prob_values): the questions
 * answered with probabilities and their values one after another, each over the question's option
 * keys in criteria order. A map form is converted to it where it arrives.
 */
export interface CompactProbs {
  readonly questions: readonly string[];
  readonly values: ArrayLike<number>;
}

/** What an engine answered for one record, as the writer takes it. */
export interface ResultAnswer extends AnswerFields {
  /** Absent when no question was answered with probabilities. */
  compactProbs?: CompactProbs | undefined;
}

/** The record a line is for, beyond its questions (the coordinator passes its record entry as is). */
export interface LineRecordHead {
  readonly recordKey: string;
  readonly id: string;
  readonly payloadSha256: string;
}

/** The line of an accepted (validated) answer. */
export function writeResultLine(record: LineRecordHead, qs: LineQuestions, answer: ResultAnswer, track: string, family: string, agentId: string): CommittedLine {
  const values = answer.compactProbs?.values;
  const at = compactOffsets(answer.compactProbs, qs);
  const runId = record.recordKey;
  const w = writer;
  w.start();
  w.raw(`{"run_id":`);
  w.json(runId);
  w.raw(`,"id":`);
  w.json(record.id);
  w.raw(`,"track":`);
  w.json(track);
  w.raw(`,"family":`);
  w.json(family);
  w.raw(`,"probs":`);
  let opened = false;
  if (at) {
    // Indexed loops: written with for-of, a line allocated an iterator per question and option
    // where the optimizing compiler did not take them away (the writer's own 34 MB of the 407 MB
    // the coordinator's thread allocated while it served, V8's sampling heap profiler).
    const order = jsonOrder(qs.keys);
    for (let q = 0; q < order.length; q++) {
      const i = order[q]!;
      const from = at[i]!;
      if (from < 0) continue;
      w.raw(opened ? "," : "{");
      opened = true;
      w.json(qs.keys[i]!);
      w.raw(":");
      const enc = encodedOptions(qs.options(i));
      if (enc.order.length === 0) w.raw("{}");
      else {
        for (let o = 0; o < enc.order.length; o++) {
          const j = enc.order[o]!;
          w.raw(o === 0 ? "{" : ",");
          w.text(enc.keys[j]!);
          w.raw(num(values![from + j]!));
        }
        w.raw("}");
      }
    }
  }
  w.raw(opened ? "}" : "{}");
  w.raw(`,"skipped":`);
  w.text(skippedInCriteriaOrder(answer.skipped, qs.keys));
  const errored = lineHasErrors(answer);
  if (errored) {
    w.raw(`,"errors":`);
    w.text(JSON.stringify(answer.errors));
  }
  const scoredLength = w.length;
  w.raw(`,"payload_sha256":`);
  w.json(record.payloadSha256);
  w.raw(`,"agent":`);
  w.json(agentId);
  w.raw(`,"latency_ms":`);
  w.raw(num(answer.latencyMs));
  w.raw(`,"prompt_tokens":`);
  w.raw(num(answer.promptTokens));
  if (answer.cachedTokens !== null) {
    w.raw(`,"cached_tokens":`);
    w.raw(num(answer.cachedTokens));
  }
  w.raw(`,"completion_tokens":`);
  w.raw(num(answer.completionTokens));
  w.raw(`,"answered_by":`);
  if (answer.answeredBy instanceof AnsweredByList) writeAnsweredBy(w, answer.answeredBy);
  else w.text(JSON.stringify(answer.answeredBy));
  if (answer.retries > 0) {
    w.raw(`,"retries":`);
    w.raw(num(answer.retries));
  }
  if (answer.approximate) w.raw(`,"approximate":true`);
  w.raw(FORMAT_FIELD);
  return {
    recordKey: runId,
    track,
    family,
    text: w.finish(),
    scoredLength,
    errored,
    usage: { latencyMs: answer.latencyMs, promptTokens: answer.promptTokens, cachedTokens: answer.cachedTokens, completionTokens: answer.completionTokens },
  };
}

/** The line's last field and its end (made once: a template per line was a new string each time). */
const FORMAT_FIELD = `,"format":${RESULT_FORMAT}}`;

// Reused: a line is written to its end before the next (start() forgets one that threw halfway).
// Stryker disable next-line ArithmeticOperator: the first capacity only: the buffer grows to the longest line
const writer = new LineBytes(16 * 1024);

// Reused: a line is written to its end before the next.
let offsets = new Int32Array(256);

/** Per question, where its values start in prob_values (the first listing's); -1 for a question not there. */
function compactOffsets(compact: CompactProbs | undefined, qs: LineQuestions): Int32Array | undefined {
  // Stryker disable next-line ConditionalExpression: "false" lets an empty listing through: every offset stays -1 and no question is written, the same "{}"
  if (!compact || compact.questions.length === 0) return undefined;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: "true" and "<=" only grow the buffer more often ("false" is killed: more than 256 questions)
  if (offsets.length < qs.count) offsets = new Int32Array(qs.count * 2);
  const at = offsets.fill(-1, 0, qs.count);
  let offset = 0;
  let hint = 0;
  const { questions } = compact;
  for (let k = 0; k < questions.length; k++) {
    const i = qs.indexOf(questions[k]!, hint);
    if (at[i]! < 0) at[i] = offset;
    offset += qs.options(i).length;
    // Stryker disable next-line ArithmeticOperator: a hint only: indexOf finds the key wherever it is
    hint = i + 1;
  }
  return at;
}

/** The pairs as JSON.stringify writes the object they stand for (they are in its order already). */
function writeAnsweredBy(w: LineBytes, list: AnsweredByList): void {
  const { keys, methods } = list;
  // Stryker disable next-line ConditionalExpression: an empty list written by the loop below is "{}" too
  if (keys.length === 0) return w.raw("{}");
  for (let i = 0; i < keys.length; i++) {
    w.raw(i === 0 ? "{" : ",");
    w.json(keys[i]!);
    w.raw(":");
    w.json(methods[i]!);
  }
  w.raw("}");
}

function skippedInCriteriaOrder(skipped: readonly string[], keys: readonly string[]): string {
  // Stryker disable next-line ConditionalExpression: a fast path; the loop over no skipped key gives "[]" too
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
  // Stryker disable next-line ConditionalExpression: a cache: "true" builds the same order again
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
  // Stryker disable next-line ConditionalExpression: a cache: "true" encodes the same options again
  if (!e) encoded.set(options, (e = { order: jsonOrder(options), keys: options.map((o) => JSON.stringify(o) + ":") }));
  return e;
}
