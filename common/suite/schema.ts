// zod schemas of the suite format (docs/suite-format.md). Lenient on input: unknown fields pass
// through and both documented alternatives (qrels as map or list, manifest files as map or list)
// are accepted and normalised.
import { z } from "zod";

export const QuestionSchema = z.looseObject({
  type: z.enum(["choice", "noul"]),
  instructions: z.string(),
  criteria: z.record(z.string(), z.string()),
});
export type Question = z.infer<typeof QuestionSchema>;

const QrelsSchema = z
  .union([
    z.record(z.string(), z.number()),
    z.array(z.looseObject({ doc: z.union([z.string(), z.number()]), grade: z.number() })),
  ])
  .transform((q): Record<string, number> =>
    Array.isArray(q) ? Object.fromEntries(q.map((e) => [String(e.doc), e.grade])) : q,
  );

export const RetrievalScoringSchema = z.looseObject({
  type: z.literal("retrieval_ranking"),
  qrels: QrelsSchema,
  field_to_document: z.record(z.string(), z.string()).optional(),
  scorable_ids: z.array(z.string()).optional(),
  relevance_threshold: z.number().optional(),
  fully_judged: z.boolean().optional(),
  combine_chunks_by: z.string().optional(),
});
export type RetrievalScoring = z.infer<typeof RetrievalScoringSchema>;

export const RoutingScoringSchema = z.looseObject({
  type: z.literal("routing_outcome"),
  outcomes: z.record(
    z.string(),
    z.looseObject({ quality: z.number().optional(), cost_usd: z.number().optional() }),
  ),
  accepted: z.array(z.string()),
});
export type RoutingScoring = z.infer<typeof RoutingScoringSchema>;

/** Ordinal choice tracks and any other scoring block: only `ordinal` is read. */
export const PlainScoringSchema = z.looseObject({ type: z.undefined().optional(), ordinal: z.boolean().optional() });

export const ScoringSchema = z.union([RetrievalScoringSchema, RoutingScoringSchema, PlainScoringSchema]);
export type Scoring = z.infer<typeof ScoringSchema>;

export const RecordSchema = z.looseObject({
  id: z.string(),
  family: z.string(),
  split: z.string().optional(),
  state: z.record(z.string(), z.string()),
  questions: z.record(z.string(), QuestionSchema),
  expected: z.record(z.string(), z.union([z.string(), z.boolean()])).default({}),
  metadata: z.looseObject({ group_id: z.string(), lang: z.string() }),
  scoring: ScoringSchema.optional(),
  _evaluation: z.looseObject({ run_id: z.string(), payload_sha256: z.string().optional() }),
});
export type SuiteRecord = z.infer<typeof RecordSchema>;

/**
 * The part of a record that scoring reads (scorer/track-accumulator.ts): a SuiteRecord is one, and so
 * is the slimmer gold the coordinator hands its scorer (gold-feed.ts goldLine). A reranking record's
 * `combine_chunks_by` may name any other field, which is then there too.
 */
export interface ScoredRecord {
  _evaluation: { run_id: string };
  metadata: { group_id: string; lang: string };
  /** A noul question's options are always true/false: only a choice question needs its criteria. */
  questions: Readonly<Record<string, { type: "choice"; criteria: Readonly<Record<string, string>> } | { type: "noul" }>>;
  expected: Readonly<Record<string, string | boolean>>;
  scoring?: Scoring | undefined;
}

/**
 * A reranking chunk's gold as the coordinator hands it to its scorer (gold-feed.ts goldLine): its
 * questions, every one noul, as their keys in the order `Object.keys(questions)` gives them, and its
 * qrels as documents and grades in the order `Object.entries(qrels)` gives them. An object of keys no
 * other record has takes JSON.parse 4x as long as a list of them (the suite's reranking gold: 1.0 s
 * against 0.24 s), on the scorer's thread while the suite is still being read.
 */
export interface ScoredChunk {
  _evaluation: { run_id: string };
  metadata: { group_id: string; lang: string };
  questionKeys: readonly string[];
  qrelDocuments: readonly string[];
  qrelGrades: readonly number[];
  /** Chunks combined by their group (the default): one combined by another field is a ScoredRecord, with that field. */
  scoring: Omit<RetrievalScoring, "qrels">;
}

const ManifestFileSchema = z.looseObject({
  rows: z.number().int().nonnegative().optional(),
  groups: z.number().int().nonnegative().optional(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/i, "sha256 must be 64 hex digits"),
});

export const ManifestSchema = z
  .looseObject({
    revision: z.string().optional(),
    seed: z.number().optional(),
    files: z.union([
      z.record(z.string(), ManifestFileSchema),
      z.array(ManifestFileSchema.extend({ path: z.string() })),
    ]),
    tracks: z.array(z.string()).optional(),
  })
  .transform((m) => ({
    ...m,
    files: Array.isArray(m.files)
      ? Object.fromEntries(m.files.map(({ path, ...rest }) => [path, rest]))
      : m.files,
  }));
export type Manifest = z.infer<typeof ManifestSchema>;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
function isStringMap(v: unknown): v is Record<string, string> {
  if (!isObj(v)) return false;
  for (const k in v) if (typeof v[k] !== "string") return false;
  return true;
}

/**
 * RecordSchema's answer for the common case, without zod's per-field cost (the suite is 58k
 * records and most of `score`'s time is reading it): returns the record when `value` is plainly
 * well-formed and needs no normalisation, undefined otherwise, and then RecordSchema decides and
 * names the field. Scoring blocks still go through zod. test/common/suite-schema.test.ts holds the
 * two to the same verdicts.
 */
export function wellFormedRecord(value: unknown): SuiteRecord | undefined {
  if (!isObj(value)) return undefined;
  const v = value;
  if (typeof v.id !== "string" || typeof v.family !== "string") return undefined;
  if (v.split !== undefined && typeof v.split !== "string") return undefined;
  if (!isStringMap(v.state) || !isObj(v.questions) || !isObj(v.expected)) return undefined;
  for (const k in v.questions) {
    const q = v.questions[k];
    if (!isObj(q) || (q.type !== "choice" && q.type !== "noul") || typeof q.instructions !== "string" || !isStringMap(q.criteria)) return undefined;
  }
  for (const k in v.expected) {
    const e = v.expected[k];
    if (typeof e !== "string" && typeof e !== "boolean") return undefined;
  }
  const m = v.metadata;
  if (!isObj(m) || typeof m.group_id !== "string" || typeof m.lang !== "string") return undefined;
  const ev = v._evaluation;
  if (!isObj(ev) || typeof ev.run_id !== "string" || (ev.payload_sha256 !== undefined && typeof ev.payload_sha256 !== "string")) return undefined;
  if (v.scoring !== undefined) {
    // Only the plain map form of qrels needs no normalisation.
    if (isObj(v.scoring) && Array.isArray(v.scoring.qrels)) return undefined;
    const plain = wellFormedScoring(v.scoring);
    const scoring = plain ? { success: true as const, data: plain } : ScoringSchema.safeParse(v.scoring);
    if (!scoring.success) return undefined;
    v.scoring = scoring.data;
  }
  return v as SuiteRecord;
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isString = (v: unknown): v is string => typeof v === "string";
const isBoolean = (v: unknown): v is boolean => typeof v === "boolean";

/**
 * A zod looseObject's output for `o`, or undefined when zod would refuse it or when this cannot
 * tell (then zod decides): the shape's keys first, in the shape's order, each given by `shape`
 * (undefined: refused), then the other keys as they are, in their order. The `required` keys must
 * be there. `__proto__` anywhere is left to zod.
 */
function looseObject(o: unknown, shape: Record<string, (v: unknown) => unknown>, required: readonly string[] = []): Obj | undefined {
  if (!isObj(o) || Object.hasOwn(o, "__proto__")) return undefined;
  for (const key of required) if (!Object.hasOwn(o, key)) return undefined;
  const out: Obj = {};
  for (const key in shape) {
    if (!Object.hasOwn(o, key)) continue;
    const v = shape[key]!(o[key]);
    if (v === undefined) return undefined;
    out[key] = v;
  }
  for (const key in o) if (!Object.hasOwn(shape, key)) out[key] = o[key];
  return out;
}

/**
 * z.record(z.string(), value)'s output when each value passes: zod's is a copy with the same
 * entries in the same order, so `o` itself is returned (a qrels map may hold thousands).
 */
function recordOf(o: unknown, ok: (v: unknown) => boolean): Obj | undefined {
  if (!isObj(o) || Object.hasOwn(o, "__proto__")) return undefined;
  for (const key in o) if (!ok(o[key])) return undefined;
  return o;
}

const literal = (want: string) => (v: unknown) => (v === want ? v : undefined);
const when = (ok: (v: unknown) => boolean) => (v: unknown) => (ok(v) ? v : undefined);
const outcome = (v: unknown) => looseObject(v, { quality: when(isNumber), cost_usd: when(isNumber) });

/**
 * ScoringSchema's output for the forms the suite uses (qrels as a map), made without zod (its
 * union of loose objects was most of a record check's cost), or undefined for zod to decide.
 * test/common/suite/schema.test.ts holds it to zod's output, key order included.
 */
export function wellFormedScoring(s: unknown): Scoring | undefined {
  if (!isObj(s)) return undefined;
  if (s.type === "retrieval_ranking") {
    return looseObject(s, {
      type: literal("retrieval_ranking"),
      qrels: (q) => recordOf(q, isNumber),
      field_to_document: (f) => recordOf(f, isString),
      scorable_ids: (ids) => (Array.isArray(ids) && ids.every(isString) ? [...ids] : undefined),
      relevance_threshold: when(isNumber),
      fully_judged: when(isBoolean),
      combine_chunks_by: when(isString),
    }, ["type", "qrels"]) as Scoring | undefined;
  }
  if (s.type === "routing_outcome") {
    return looseObject(s, {
      type: literal("routing_outcome"),
      outcomes: (o) => {
        if (!isObj(o) || Object.hasOwn(o, "__proto__")) return undefined;
        const out: Obj = {};
        for (const key in o) {
          const v = outcome(o[key]);
          if (v === undefined) return undefined;
          out[key] = v;
        }
        return out;
      },
      accepted: (a) => (Array.isArray(a) && a.every(isString) ? [...a] : undefined),
    }, ["type", "outcomes", "accepted"]) as Scoring | undefined;
  }
  if (Object.hasOwn(s, "type")) return undefined;
  return looseObject(s, { ordinal: when(isBoolean) }) as Scoring | undefined;
}
