// One record as `view` shows it: its state (long values cut, the whole on asking), each question's
// options with the gold one and the run's distribution, whether the headline answer is right,
// skipped or errored with the reason, what answered and what it cost; for reranking rows the
// documents in the run's rank order with their relevance. Gold leaves the server only in this
// answer, to the viewer's own page.
import { readJsonLines } from "../common/jsonl-reader.js";
import type { SuiteRecord } from "../common/suite/index.js";
import { predictedLabel, type TrackIndex } from "./track-index.js";

/** Characters of a state value or instruction shown before "show all". */
export const TRUNCATE_CHARS = 1200;

export interface RecordPage {
  track: string;
  id: string;
  group: string;
  suite_line: number;
  status: string[];
  headline_key: string | null;
  state: Array<{ key: string; text: string; length: number; truncated: boolean }>;
  questions: Array<{
    key: string;
    type: "choice" | "noul";
    instructions: string;
    headline: boolean;
    gold: string | null;
    predicted: string | null;
    correct: boolean | null;
    skipped: boolean;
    error: string | null;
    answered_by: string | null;
    options: Array<{ key: string; text: string; p: number | null; gold: boolean }>;
  }>;
  retrieval: { threshold: number; documents: Array<{ doc: string; key: string; p: number | null; relevance: number | null; rank: number | null; relevant: boolean }> } | null;
  result: Record<string, unknown> | null;
}

/** The record's suite line (a streaming read of the track file up to it). */
export async function suiteRecordAt(index: TrackIndex, line: number): Promise<SuiteRecord | undefined> {
  for await (const r of readJsonLines(index.file.path)) if (r.line === line) return r.value as SuiteRecord;
  return undefined;
}

export function recordPage(index: TrackIndex, i: number, record: SuiteRecord, result: Record<string, unknown> | undefined, full: boolean): RecordPage {
  const cut = (s: string) => (full || s.length <= TRUNCATE_CHARS ? s : s.slice(0, TRUNCATE_CHARS));
  const probs = (result?.probs ?? {}) as Record<string, Record<string, number>>;
  const skipped = new Set((result?.skipped as string[] | undefined) ?? []);
  const errors = (result?.errors ?? {}) as Record<string, string>;
  const answeredBy = (result?.answered_by ?? {}) as Record<string, string>;
  const questions: RecordPage["questions"] = Object.entries(record.questions).map(([key, q]) => {
    const dist = probs[key];
    const goldValue = record.expected[key];
    const gold = goldValue === undefined ? null : String(goldValue);
    const optionKeys = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
    const predicted = dist && !skipped.has(key) && !Object.hasOwn(errors, key) ? (predictedLabel(dist, q.type) ?? null) : null;
    return {
      key,
      type: q.type,
      instructions: cut(q.instructions),
      headline: key === index.headlineKey,
      gold,
      predicted,
      correct: gold === null ? null : predicted === gold,
      skipped: skipped.has(key),
      error: Object.hasOwn(errors, key) ? errors[key]! : null,
      answered_by: answeredBy[key] ?? null,
      options: optionKeys.map((o) => ({ key: o, text: cut(q.type === "noul" ? (o === "true" ? "yes" : "no") : (q.criteria[o] ?? "")), p: typeof dist?.[o] === "number" ? dist[o]! : null, gold: gold === o })),
    };
  });
  return {
    track: index.file.track,
    id: record.id,
    group: record.metadata.group_id,
    suite_line: index.suiteLines[i]!,
    status: index.statusNames(i),
    headline_key: index.headlineKey ?? null,
    state: Object.entries(record.state).map(([key, text]) => ({ key, text: cut(text), length: text.length, truncated: !full && text.length > TRUNCATE_CHARS })),
    questions,
    retrieval: record.scoring?.type === "retrieval_ranking" ? rankedDocuments(record, probs) : null,
    result: result ? withoutProbs(result) : null,
  };
}

/** The row's documents in the run's order: p(true) descending, ties to the greater document id (docs/scoring.md "Ranking"); unanswered last. */
function rankedDocuments(record: SuiteRecord, probs: Record<string, Record<string, number>>): NonNullable<RecordPage["retrieval"]> {
  const s = record.scoring as { qrels?: Record<string, number> | Array<{ doc: string; grade: number }>; field_to_document?: Record<string, string>; relevance_threshold?: number };
  const qrels = new Map<string, number>(Array.isArray(s.qrels) ? s.qrels.map((q) => [q.doc, q.grade] as [string, number]) : Object.entries(s.qrels ?? {}));
  const threshold = s.relevance_threshold ?? 1;
  const docs = Object.keys(record.questions).map((key) => {
    const doc = s.field_to_document?.[key] ?? (key.startsWith("doc:") ? key.slice(4) : key);
    const p = probs[key]?.true;
    const relevance = qrels.get(doc) ?? null;
    return { doc, key, p: typeof p === "number" ? p : null, relevance, rank: null as number | null, relevant: relevance !== null && relevance >= threshold };
  });
  const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(b), Buffer.from(a));
  docs.sort((a, b) => (a.p === null ? (b.p === null ? cmp(a.doc, b.doc) : 1) : b.p === null ? -1 : b.p - a.p || cmp(a.doc, b.doc)));
  docs.forEach((d, i) => (d.rank = d.p === null ? null : i + 1));
  return { threshold, documents: docs };
}

function withoutProbs(result: Record<string, unknown>): Record<string, unknown> {
  const { probs: _probs, ...rest } = result;
  return rest;
}
