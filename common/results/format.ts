// The results line (docs/suite-format.md "Results"), compatible with the reference runner udm.infer:
// its schema and version, the full line as the coordinator writes it (and how it is built from plain
// inputs, field order included), the part the scorer reads, and what makes a distribution valid.
import { z } from "zod";
import { answeredByRecord, type AnsweredBy } from "./answered-by.js";

/** Bump when a field's meaning changes. */
export const RESULT_FORMAT = 1;

export const ResultLineSchema = z.looseObject({
  run_id: z.string(),
  id: z.string().optional(),
  track: z.string().optional(),
  family: z.string().optional(),
  // Validity is decided per question by the scorer: one bad distribution makes that question
  // missing, not the whole line unreadable.
  probs: z.record(z.string(), z.unknown()).default({}),
  skipped: z.array(z.string()).default([]),
  errors: z.record(z.string(), z.string()).optional(),
});
export type ResultLine = z.infer<typeof ResultLineSchema>;

/** One results line as written: the reference runner's fields first, then ours. */
export interface StoredResultLine {
  run_id: string;
  id: string;
  track: string;
  family: string;
  probs: Record<string, Record<string, number>>;
  skipped: string[];
  errors?: Record<string, string>;
  [extra: string]: unknown;
}

/** The part of a result line the scorer reads. */
export interface ResultInput {
  run_id: string;
  /** question key -> distribution: as JSON.parse gives it, or a Map (scored-part-reader.ts). */
  probs: Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>;
  skipped?: readonly string[];
  errors?: Readonly<Record<string, unknown>>;
}

/** Which record a line is for. */
export interface LineRecord {
  recordKey: string;
  id: string;
  track: string;
  family: string;
  payloadSha256: string;
  /** The record's questions in criteria order, each with its option keys in criteria order. */
  questions: ReadonlyArray<{ key: string; options: readonly string[] }>;
}

/** What an engine answered for one record beyond its probabilities, as accepted and written. */
export interface AnswerFields {
  skipped: readonly string[];
  errors: Readonly<Record<string, string>>;
  latencyMs: number;
  promptTokens: number;
  /** null: unknown (the line then has no cached_tokens). */
  cachedTokens: number | null;
  completionTokens: number;
  /** Question key -> engine method: an object, or its pairs (a decoded result's). */
  answeredBy: AnsweredBy;
  retries: number;
  approximate: boolean;
}

/** What an engine answered for one record, as accepted, with its probabilities as a map. */
export interface AcceptedAnswer extends AnswerFields {
  probs: Readonly<Record<string, Readonly<Record<string, number>>>>;
  agent: string;
}

/** The line of an accepted result. */
export function acceptedResultLine(record: LineRecord, answer: AcceptedAnswer): StoredResultLine {
  // Distributions are written in criteria order whatever order the map arrived in.
  const probs: Record<string, Record<string, number>> = {};
  for (const q of record.questions) {
    const dist = answer.probs[q.key];
    if (!dist) continue;
    const ordered: Record<string, number> = {};
    for (const o of q.options) ordered[o] = dist[o]!;
    probs[q.key] = ordered;
  }
  const line: StoredResultLine = {
    run_id: record.recordKey,
    id: record.id,
    track: record.track,
    family: record.family,
    probs,
    skipped: record.questions.map((q) => q.key).filter((k) => answer.skipped.includes(k)),
  };
  if (Object.keys(answer.errors).length > 0) line.errors = { ...answer.errors };
  line.payload_sha256 = record.payloadSha256;
  line.agent = answer.agent;
  line.latency_ms = answer.latencyMs;
  line.prompt_tokens = answer.promptTokens;
  if (answer.cachedTokens !== null) line.cached_tokens = answer.cachedTokens;
  line.completion_tokens = answer.completionTokens;
  line.answered_by = answeredByRecord(answer.answeredBy);
  if (answer.retries > 0) line.retries = answer.retries;
  if (answer.approximate) line.approximate = true;
  line.format = RESULT_FORMAT;
  return line;
}

/** The line has an errored question: its record is redone by the next start, and this line superseded. */
export function lineHasErrors(line: { readonly errors?: Readonly<Record<string, unknown>> | undefined }): boolean {
  return line.errors !== undefined && Object.keys(line.errors).length > 0;
}

/** The line of a record given up (repeated invalid results): every question in errors. */
export function givenUpResultLine(record: LineRecord, reason: string): StoredResultLine {
  return {
    run_id: record.recordKey,
    id: record.id,
    track: record.track,
    family: record.family,
    probs: {},
    skipped: [],
    errors: Object.fromEntries(record.questions.map((q) => [q.key, `rejected by the coordinator: ${reason}`])),
    payload_sha256: record.payloadSha256,
    agent: "",
    format: RESULT_FORMAT,
  };
}

export type Distribution = Record<string, number>;

/** Tolerance of docs/suite-format.md on the sum of a distribution. */
export const SUM_TOLERANCE = 1e-6;

/**
 * Why a distribution is invalid for the given option keys, or undefined when valid.
 * Choice: exactly the criteria keys; noul: exactly "true" and "false". Finite, in [0,1], sum 1±1e-6.
 * The map form (as results lines hold it) is laid out as the compact form, then checked by its rule.
 */
export function distributionProblem(value: unknown, keys: readonly string[]): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "not an object";
  const dist = value as Record<string, unknown>;
  const got = Object.keys(dist);
  if (got.length !== keys.length) return `has ${got.length} options, expected ${keys.length}`;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: presizing only; an array grows on assignment, and the check reads keys.length values whatever its length
  if (laidOut.length < keys.length) laidOut.length = keys.length;
  // Stryker disable next-line EqualityOperator: "<=" writes one more slot, which the check (keys.length values) never reads
  for (let i = 0; i < keys.length; i++) laidOut[i] = dist[keys[i]!];
  return compactDistributionProblem(laidOut, 0, keys);
}

// Reused: a check runs to its end before the next.
// Stryker disable next-line ArrayDeclaration: every slot a check reads is written first
const laidOut: unknown[] = [];

/**
 * Why one question's probabilities in the compact form (RecordResult.prob_values: its values from
 * `at` on, over `keys` in criteria order) are not a distribution, or undefined when valid. The one
 * rule of distributions: distributionProblem goes through it.
 */
export function compactDistributionProblem(values: ArrayLike<unknown>, at: number, keys: readonly string[]): string | undefined {
  let sum = 0;
  for (let i = 0; i < keys.length; i++) {
    const p = values[at + i] as number;
    // Number.isFinite is false for a value that is not a number: one test on the valid path.
    if (!Number.isFinite(p) || p < 0 || p > 1 + SUM_TOLERANCE) {
      return typeof p !== "number" ? `option ${JSON.stringify(keys[i])} missing or not a number` : `option ${JSON.stringify(keys[i])} = ${p} is not a probability`;
    }
    sum += p;
  }
  // Stryker disable next-line EqualityOperator: ">=" differs only where |sum - 1| is exactly 1e-6, which no double sum reaches (sum - 1 is a multiple of 2^-53 near 1; 1e-6 is not)
  if (Math.abs(sum - 1) > SUM_TOLERANCE) return `sums to ${sum}, not 1`;
  return undefined;
}

export const NOUL_KEYS = ["true", "false"] as const;
