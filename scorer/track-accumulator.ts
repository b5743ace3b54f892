// Streaming scorer of one track. Gold records (from the suite) and result lines arrive in any order;
// each is reduced at once to what scoring needs (gold label, predicted option, p(gold); p(true) per
// reranking document), so memory does not hold whole records or whole result lines. A later result for
// the same run_id replaces the earlier one. A reranking query is scored once all its chunks are in.
import { FormatError, UsageError } from "../common/errors.js";
import { pillarOf } from "../common/catalogue.js";
import { distributionProblem, NOUL_KEYS, type ResultInput } from "../common/results/index.js";
import { derivedDocument, type ScoredChunk, type ScoredRecord } from "../common/suite/index.js";
import { BOOTSTRAP_RESAMPLES, bootstrapResamples, percentileInterval, trackSeed, type GroupSums } from "./bootstrap.js";
import { argmaxIndex } from "./metrics/argmax.js";
import { choiceMetrics, type ChoiceItem, type ChoiceMetrics } from "./metrics/choice.js";
import { HEADLINE_METRIC, type HeadlineKind } from "./metrics/headline.js";
import { f1FromCounts } from "./metrics/macro-f1.js";
import { noulMetrics, noulPrediction, type NoulItem, type NoulMetrics } from "./metrics/noul.js";
import { hasRelevant, keepSet, ndcgAt, rankDocuments, reciprocalRankAt, type ScoredDocument } from "./metrics/ranking.js";
import { routingMetrics, type RoutingItem } from "./metrics/routing.js";
import type { RetrievalMetrics, TrackMetrics } from "./track-metrics.js";

/** Where a record came from, for error messages. */
export interface RecordSource {
  file: string;
  line?: number;
}

const MISSING = -1;

interface QuestionGold {
  key: string;
  type: "choice" | "noul";
  /** Option keys in criteria order (interned; shared between records with the same criteria). */
  options: readonly string[];
  /** Gold option index (choice), 1/0 (noul), or MISSING when the record has no gold for the key. */
  gold: number;
  ordinal: boolean;
  /** Its index among the track's distinct question golds. */
  id: number;
}

interface RoutingGold {
  /** Index into questions of the route question. */
  question: number;
  outcomes: Readonly<Record<string, { quality?: number; cost_usd?: number }>>;
  accepted: ReadonlySet<string>;
}

/** A record of a choice/noul/routing track. */
interface PlainRecord {
  kind: "plain";
  group: string;
  /** Interned: records with the same questions, options and gold share one array. */
  questions: readonly QuestionGold[];
  /** Per question: predicted option index (choice), 1/0 (noul), MISSING. */
  pred: number[];
  /** Per question: p(gold) (choice) or p(true) (noul). */
  p: number[];
  routing: RoutingGold | undefined;
  answered: boolean;
}

/** One chunk (row) of a reranking query. */
interface ChunkRecord {
  kind: "chunk";
  group: string;
  keys: readonly string[];
  /** Document id per question; undefined when each is its key less "doc:" (the usual case: not stored twice). */
  docs: readonly string[] | undefined;
  /** Indices of the questions whose document is scorable; undefined when every one is. */
  scorable: readonly number[] | undefined;
  /** p(true) per document question; NaN when missing. */
  p: number[];
  query: QueryState;
  answered: boolean;
}

interface QueryState {
  group: string;
  qrels: Map<string, number>;
  threshold: number;
  fullyJudged: boolean;
  chunks: ChunkRecord[];
  /** Cached per-query scores; dropped when a chunk's result changes. */
  scored: QueryScore | undefined;
}

interface QueryScore {
  eligible: boolean;
  ndcg: number;
  rr: number;
  keep: { precision: number; recall: number; f1: number } | undefined;
}

type RecordState = PlainRecord | ChunkRecord;

export class TrackAccumulator {
  private readonly records = new Map<string, RecordState>();
  private readonly order: RecordState[] = [];
  private readonly pending = new Map<string, ResultInput>();
  private readonly queries = new Map<string, QueryState>();
  private readonly optionSets = new Map<string, readonly string[]>();
  private readonly optionSetIds = new Map<readonly string[], number>();
  private readonly golds = new Map<string, QuestionGold>();
  private readonly questionSets = new Map<string, readonly QuestionGold[]>();
  private readonly questionOrder = new Map<string, { type: "choice" | "noul"; ordinal: boolean }>();
  private headlineKey: string | undefined;
  private lang: string | undefined;
  private sealed = false;
  private answeredCount = 0;
  private invalid = 0;
  private version = 0;
  private cachedBootstrap: { version: number; values: Float64Array } | undefined;

  constructor(
    readonly track: string,
    readonly family: string,
  ) {}

  /** Adds the gold side of one record. Throws FormatError on gold that cannot be scored. */
  addRecord(record: ScoredRecord | ScoredChunk, source: RecordSource = { file: this.track }): void {
    if (this.sealed) throw new UsageError(`track ${this.track}: record added after the suite was sealed`);
    const runId = record._evaluation.run_id;
    if (this.records.has(runId)) throw new FormatError(source.file, source.line, "_evaluation.run_id", `duplicate run_id ${JSON.stringify(runId)}`);
    this.lang ??= record.metadata.lang;
    // A ScoredChunk's scoring is always retrieval_ranking.
    const state = record.scoring?.type === "retrieval_ranking" ? this.chunkOf(record, source) : this.plainOf(record as ScoredRecord, source);
    this.records.set(runId, state);
    this.order.push(state);
    this.version++;
    const early = this.pending.get(runId);
    if (early) {
      this.pending.delete(runId);
      this.addResult(early);
    }
  }

  /** No more records will come: results for unknown run_ids are now an error. */
  sealRecords(): void {
    this.sealed = true;
    const first = this.pending.keys().next();
    if (!first.done) throw new UsageError(`track ${this.track}: result for run_id ${JSON.stringify(first.value)} matches no record of the suite`);
  }

  hasRecord(runId: string): boolean {
    return this.records.has(runId);
  }

  /** A result for this record has been added. */
  hasResult(runId: string): boolean {
    return this.records.get(runId)?.answered === true;
  }

  /** Adds or replaces the result of one record. */
  addResult(result: ResultInput): void {
    const state = this.records.get(result.run_id);
    if (!state) {
      if (this.sealed) throw new UsageError(`track ${this.track}: result for run_id ${JSON.stringify(result.run_id)} matches no record of the suite`);
      this.pending.set(result.run_id, result);
      return;
    }
    const skipped = new Set(result.skipped);
    const answerOf = (key: string, options: readonly string[]): Readonly<Record<string, number>> | undefined => {
      if (skipped.has(key) || (result.errors !== undefined && Object.hasOwn(result.errors, key))) return undefined;
      const { probs } = result;
      let dist: unknown;
      if (probs instanceof Map) {
        if (!probs.has(key)) return undefined;
        dist = probs.get(key);
      } else {
        if (!Object.hasOwn(probs, key)) return undefined;
        dist = (probs as Readonly<Record<string, unknown>>)[key];
      }
      if (distributionProblem(dist, options) !== undefined) {
        this.invalid++;
        return undefined;
      }
      return dist as Record<string, number>;
    };
    if (!state.answered) this.answeredCount++;
    state.answered = true;
    this.version++;
    if (state.kind === "chunk") {
      for (let i = 0; i < state.keys.length; i++) {
        const dist = answerOf(state.keys[i]!, NOUL_KEYS);
        state.p[i] = dist ? dist.true! : NaN;
      }
      state.query.scored = undefined;
      // Stryker disable next-line MethodExpression,ArrowFunction,ConditionalExpression: only when the query is scored: every result resets the cache and a finish scores an unscored query itself
      if (state.query.chunks.every((c) => c.answered)) state.query.scored = scoreQuery(state.query);
      return;
    }
    for (let i = 0; i < state.questions.length; i++) {
      const q = state.questions[i]!;
      // A noul question's options are NOUL_KEYS (plainOf).
      const dist = answerOf(q.key, q.options);
      if (!dist) {
        state.pred[i] = MISSING;
        state.p[i] = NaN;
      } else if (q.type === "noul") {
        state.p[i] = dist.true!;
        state.pred[i] = noulPrediction(dist.true!) ? 1 : 0;
      } else {
        state.pred[i] = argmaxIndex(dist, q.options);
        // Stryker disable next-line ConditionalExpression: p(gold) of a question without gold is never read (metrics and sums take only questions with gold)
        state.p[i] = q.gold === MISSING ? NaN : dist[q.options[q.gold]!]!;
      }
    }
  }

  /** Every record of the (sealed) suite track has a result line. */
  isComplete(): boolean {
    return this.sealed && this.answeredCount === this.records.size;
  }

  get recordCount(): number {
    return this.records.size;
  }

  get resultCount(): number {
    return this.answeredCount;
  }

  /** Distributions rejected as invalid (counted as missing), over all results added. */
  get invalidDistributions(): number {
    return this.invalid;
  }

  /** Headline of each bootstrap resample (NaN where undefined); the pillar intervals average these. */
  headlineResamples(): Float64Array {
    // Stryker disable next-line ConditionalExpression: a cache: "true" draws the same resamples again
    if (this.cachedBootstrap?.version !== this.version) {
      this.cachedBootstrap = { version: this.version, values: bootstrapResamples(this.groupSums(), trackSeed(this.track), BOOTSTRAP_RESAMPLES) };
    }
    return this.cachedBootstrap.values;
  }

  finish(): TrackMetrics {
    const kind = this.headlineKind();
    const questions = this.questionMetrics();
    const retrieval = this.queries.size > 0 ? this.retrievalMetrics() : null;
    const routing = this.routingItems();
    const routingOut = routing.length > 0 ? routingMetrics(routing) : null;
    // The kind says which metrics exist: a retrieval kind has queries, a routing kind routing records,
    // a choice or noul kind a headline key (one of the track's questions); no kind (no gold), no value.
    let value: number | null = null;
    switch (kind) {
      case "retrieval":
        value = retrieval!["ndcg@10"];
        break;
      case "routing":
        value = routingOut!.accepted_accuracy;
        break;
      case "choice":
        value = questions[this.headlineKey!]!.accuracy;
        break;
      case "noul":
        value = questions[this.headlineKey!]!.macro_f1;
        break;
    }
    // Stryker disable next-line ConditionalExpression: a track without a headline has NaN in every resample: its interval is null either way
    const ci = value === null ? null : percentileInterval(this.headlineResamples());
    const groups = new Set(this.order.map((r) => r.group)).size;
    return {
      family: this.family,
      pillar: pillarOf(this.family),
      lang: this.lang ?? "unknown",
      records: this.records.size,
      groups,
      headline: { metric: HEADLINE_METRIC[kind ?? "choice"], value, ci_low: ci?.ci_low ?? null, ci_high: ci?.ci_high ?? null },
      questions: kind === "retrieval" ? {} : questions,
      retrieval,
      routing: routingOut,
      missing: this.missingCount(),
    };
  }

  // --- gold side -------------------------------------------------------------------------------

  private plainOf(record: ScoredRecord, source: RecordSource): PlainRecord {
    const ordinal = (record.scoring as { ordinal?: unknown } | undefined)?.ordinal === true;
    const questions: QuestionGold[] = [];
    for (const [key, q] of Object.entries(record.questions)) {
      const options = q.type === "noul" ? NOUL_KEYS : this.intern(Object.keys(q.criteria));
      const expected = Object.hasOwn(record.expected, key) ? record.expected[key] : undefined;
      let gold = MISSING;
      if (expected !== undefined) {
        if (q.type === "noul") {
          if (typeof expected !== "boolean") throw new FormatError(source.file, source.line, `expected.${key}`, `gold of a noul question must be true or false, got ${JSON.stringify(expected)}`);
          gold = expected ? 1 : 0;
        } else {
          // A gold that is no option (a boolean too) has index -1: MISSING.
          gold = (options as readonly unknown[]).indexOf(expected);
          if (gold === MISSING) throw new FormatError(source.file, source.line, `expected.${key}`, `gold ${JSON.stringify(expected)} is not an option of questions.${key}.criteria`);
        }
      }
      // Stryker disable next-line ConditionalExpression: only choice metrics read ordinal
      const qOrdinal = ordinal && q.type === "choice";
      questions.push(this.internGold(key, q.type, options, gold, qOrdinal));
      const seen = this.questionOrder.get(key);
      if (!seen) this.questionOrder.set(key, { type: q.type, ordinal: qOrdinal });
      else if (qOrdinal) seen.ordinal = true;
    }
    if (this.headlineKey === undefined) this.headlineKey = questions.find((q) => q.gold !== MISSING)?.key;
    let routing: RoutingGold | undefined;
    if (record.scoring?.type === "routing_outcome") {
      const s = record.scoring as { outcomes: RoutingGold["outcomes"]; accepted: string[] };
      let question = questions.findIndex((q) => q.key === "route");
      if (question === -1) question = questions.findIndex((q) => q.type === "choice");
      if (question === -1) throw new FormatError(source.file, source.line, "questions", "routing_outcome record has no choice question to route with");
      routing = { question, outcomes: s.outcomes, accepted: new Set(s.accepted) };
    }
    const n = questions.length;
    // Stryker disable next-line ArrayDeclaration: p is written before it is read (only answered questions with gold are read); an empty pred is killed (missing counts)
    return { kind: "plain", group: record.metadata.group_id, questions: this.internQuestions(questions), pred: new Array<number>(n).fill(MISSING), p: new Array<number>(n).fill(NaN), routing, answered: false };
  }

  private chunkOf(record: ScoredRecord | ScoredChunk, source: RecordSource): ChunkRecord {
    const s = record.scoring as {
      qrels?: Record<string, number>;
      field_to_document?: Record<string, string>;
      scorable_ids?: string[];
      relevance_threshold?: number;
      fully_judged?: boolean;
      combine_chunks_by?: string;
    };
    const by = s.combine_chunks_by ?? "metadata.group_id";
    const queryValue = valueAtPath(record, by);
    if (typeof queryValue !== "string" && typeof queryValue !== "number") {
      throw new FormatError(source.file, source.line, by, `combine_chunks_by names ${JSON.stringify(by)}, which is not a string in this record`);
    }
    const queryId = String(queryValue);
    let query = this.queries.get(queryId);
    if (!query) {
      query = { group: record.metadata.group_id, qrels: new Map(), threshold: s.relevance_threshold ?? 1, fullyJudged: true, chunks: [], scored: undefined };
      this.queries.set(queryId, query);
    }
    // Grades are JSON numbers (never NaN): the highest is kept.
    const grade = (doc: string, g: number) => query.qrels.set(doc, Math.max(query.qrels.get(doc) ?? g, g));
    let keys: readonly string[];
    if ("questionKeys" in record) {
      // The gold feed's form (gold-feed.ts goldLine), written only when every question is noul.
      record.qrelDocuments.forEach((doc, i) => grade(doc, record.qrelGrades[i]!));
      keys = record.questionKeys;
    } else {
      for (const [doc, g] of Object.entries(s.qrels!)) grade(doc, g);
      keys = Object.keys(record.questions);
      for (const key of keys) {
        if (record.questions[key]!.type !== "noul") throw new FormatError(source.file, source.line, `questions.${key}.type`, "reranking document questions must be noul");
      }
    }
    query.fullyJudged &&= s.fully_judged === true;
    const docs = keys.map((k) => s.field_to_document?.[k] ?? derivedDocument(k));
    const scorableSet = s.scorable_ids ? new Set(s.scorable_ids) : undefined;
    const scorable: number[] = [];
    for (let i = 0; i < docs.length; i++) if (scorableSet === undefined || scorableSet.has(docs[i]!)) scorable.push(i);
    // The full suite's gold is held for the whole run (a few hundred thousand documents): keep only what cannot be derived.
    const chunk: ChunkRecord = {
      kind: "chunk",
      group: record.metadata.group_id,
      keys,
      // Stryker disable next-line ArrowFunction,ConditionalExpression: storage only: "() => undefined" and "false" store the ids always, which score the same; "true" (never stored) is a real bug, killed by "every document named by field_to_document" (accumulator-gold-corners.test.ts)
      docs: docs.every((d, i) => d === derivedDocument(keys[i]!)) ? undefined : docs,
      // Stryker disable next-line ConditionalExpression: storage only: a list of every index scores the same documents
      scorable: scorable.length === keys.length ? undefined : scorable,
      p: new Array<number>(keys.length).fill(NaN),
      query,
      answered: false,
    };
    query.chunks.push(chunk);
    query.scored = undefined;
    return chunk;
  }

  private intern(options: string[]): readonly string[] {
    const key = options.join("\u0000");
    let v = this.optionSets.get(key);
    // Stryker disable next-line ConditionalExpression: interning for memory: a fresh array (and id) for each record scores the same
    if (!v) {
      this.optionSets.set(key, (v = Object.freeze(options)));
      this.optionSetIds.set(v, this.optionSetIds.size);
    }
    return v;
  }

  // The gold of a track's records repeats (same questions and options, a few gold answers): one
  // object per distinct question gold and one array per distinct record gold hold the whole suite's
  // in a fraction of the memory, for the run's whole length.
  private internGold(key: string, type: "choice" | "noul", options: readonly string[], gold: number, ordinal: boolean): QuestionGold {
    // NOUL_KEYS has no option set id (undefined): the type in the id keeps noul apart.
    const optionsId = this.optionSetIds.get(options);
    const id = `${key}\u0000${type}\u0000${optionsId}\u0000${gold}\u0000${ordinal ? 1 : 0}`;
    let q = this.golds.get(id);
    if (!q) this.golds.set(id, (q = Object.freeze({ key, type, options, gold, ordinal, id: this.golds.size })));
    return q;
  }

  private internQuestions(questions: QuestionGold[]): readonly QuestionGold[] {
    const id = questions.map((q) => q.id).join(",");
    let v = this.questionSets.get(id);
    // Stryker disable next-line ConditionalExpression: interning for memory: the record's own array scores the same
    if (!v) this.questionSets.set(id, (v = Object.freeze(questions)));
    return v;
  }

  // --- metrics ---------------------------------------------------------------------------------

  private headlineKind(): HeadlineKind | undefined {
    if (this.queries.size > 0) return "retrieval";
    // Not a retrieval track: every record is plain (a chunk makes a query).
    if ((this.order as PlainRecord[]).some((r) => r.routing !== undefined)) return "routing";
    // The headline key is a question plainOf recorded in questionOrder; without one (no gold), no kind.
    return this.questionOrder.get(this.headlineKey as string)?.type;
  }

  private questionMetrics(): Record<string, ChoiceMetrics | NoulMetrics> {
    const out: Record<string, ChoiceMetrics | NoulMetrics> = {};
    for (const [key, { type, ordinal }] of this.questionOrder) {
      if (type === "choice") {
        const items: ChoiceItem[] = [];
        for (const r of this.order) {
          if (r.kind !== "plain") continue;
          const i = r.questions.findIndex((q) => q.key === key);
          const q = r.questions[i];
          if (!q || q.type !== "choice" || q.gold === MISSING) continue;
          const pred = r.pred[i]!;
          items.push({
            gold: q.options[q.gold]!,
            pred: pred === MISSING ? null : q.options[pred]!,
            pGold: r.p[i]!,
            goldLevel: q.gold,
            predLevel: pred,
          });
        }
        out[key] = choiceMetrics(items, ordinal);
      } else {
        const items: NoulItem[] = [];
        for (const r of this.order) {
          if (r.kind !== "plain") continue;
          const i = r.questions.findIndex((q) => q.key === key);
          const q = r.questions[i];
          if (!q || q.type !== "noul" || q.gold === MISSING) continue;
          items.push({ gold: q.gold === 1, pTrue: r.pred[i] === MISSING ? null : r.p[i]! });
        }
        out[key] = noulMetrics(items);
      }
    }
    return out;
  }

  private scoredQueries(): QueryScore[] {
    const out: QueryScore[] = [];
    for (const q of this.queries.values()) out.push((q.scored ??= scoreQuery(q)));
    return out;
  }

  private retrievalMetrics(): RetrievalMetrics {
    const scores = this.scoredQueries();
    const eligible = scores.filter((s) => s.eligible);
    const keep = eligible.filter((s) => s.keep !== undefined).map((s) => s.keep!);
    const avg = (xs: number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
    return {
      "ndcg@10": avg(eligible.map((s) => s.ndcg)),
      "mrr@10": avg(eligible.map((s) => s.rr)),
      queries: eligible.length,
      queries_total: scores.length,
      keep_precision: avg(keep.map((k) => k.precision)),
      keep_recall: avg(keep.map((k) => k.recall)),
      keep_f1: avg(keep.map((k) => k.f1)),
    };
  }

  private routingItems(): RoutingItem[] {
    const items: RoutingItem[] = [];
    for (const r of this.order) {
      // Stryker disable next-line ConditionalExpression: a chunk has no routing either
      if (r.kind !== "plain" || !r.routing) continue;
      const q = r.questions[r.routing.question]!;
      const pred = r.pred[r.routing.question]!;
      items.push({ pred: pred === MISSING ? null : q.options[pred]!, accepted: r.routing.accepted, outcomes: r.routing.outcomes });
    }
    return items;
  }

  private missingCount(): number {
    let missing = 0;
    for (const r of this.order) {
      if (r.kind === "chunk") {
        for (const p of r.p) if (Number.isNaN(p)) missing++;
      } else {
        for (const p of r.pred) if (p === MISSING) missing++;
      }
    }
    return missing;
  }

  /**
   * Whether each record's headline question is right (true), wrong or missing (false), in file
   * order; null where the record has no gold for it. Retrieval tracks rank whole queries: none.
   */
  headlineOutcomes(): Array<{ runId: string; right: boolean | null }> {
    const kind = this.headlineKind();
    const out: Array<{ runId: string; right: boolean | null }> = [];
    if (kind === "retrieval" || kind === undefined) return out;
    // Not a retrieval track: every record is plain (a chunk makes a query).
    for (const [runId, r] of this.records as Map<string, PlainRecord>) {
      if (kind === "routing") {
        out.push({ runId, right: r.routing ? routeAccepted(r, r.routing) : null });
        continue;
      }
      const i = r.questions.findIndex((q) => q.key === this.headlineKey);
      const q = r.questions[i];
      out.push({ runId, right: !q || q.gold === MISSING ? null : r.pred[i] === q.gold });
    }
    return out;
  }

  /** The per-group sums behind the headline (groups in the order of their first record), for paired comparisons. */
  headlineGroupSums(): GroupSums {
    return this.groupSums();
  }

  /** Per-group sums behind the headline, for the bootstrap. */
  private groupSums(): GroupSums {
    const kind = this.headlineKind();
    const index = new Map<string, number>();
    for (const r of this.order) if (!index.has(r.group)) index.set(r.group, index.size);
    const groupsOf = (g: string): number => index.get(g)!;
    if (kind === "retrieval") {
      // [sum of nDCG@10, eligible queries]
      const sums = new Float64Array(index.size * 2);
      for (const q of this.queries.values()) {
        const s = (q.scored ??= scoreQuery(q));
        if (!s.eligible) continue;
        const g = groupsOf(q.group) * 2;
        sums[g]! += s.ndcg;
        sums[g + 1]! += 1;
      }
      // No eligible query: 0 / 0, NaN.
      return { width: 2, sums, headline: (t) => t[0]! / t[1]! };
    }
    // Not a retrieval track: every record is plain (a chunk makes a query).
    const plain = this.order as PlainRecord[];
    if (kind === "routing") {
      // [accepted, records]
      const sums = new Float64Array(index.size * 2);
      for (const r of plain) {
        if (!r.routing) continue;
        const g = groupsOf(r.group) * 2;
        if (routeAccepted(r, r.routing)) sums[g]! += 1;
        sums[g + 1]! += 1;
      }
      // No routing record: 0 / 0, NaN.
      return { width: 2, sums, headline: (t) => t[0]! / t[1]! };
    }
    const key = this.headlineKey;
    if (kind === "noul") {
      // [tp, fp, fn] of label true, then of label false
      const sums = new Float64Array(index.size * 6);
      for (const r of plain) {
        const i = r.questions.findIndex((q) => q.key === key);
        const q = r.questions[i];
        if (!q || q.type !== "noul" || q.gold === MISSING) continue;
        const g = groupsOf(r.group) * 6;
        const gold = q.gold === 1;
        const pred = r.pred[i]!;
        const goldBase = g + (gold ? 0 : 3);
        if (pred !== MISSING && (pred === 1) === gold) sums[goldBase]! += 1;
        else {
          sums[goldBase + 2]! += 1;
          if (pred !== MISSING) sums[g + (pred === 1 ? 0 : 3) + 1]! += 1;
        }
      }
      return {
        width: 6,
        sums,
        headline: (t) => (t[0]! + t[2]! + t[3]! + t[5]! === 0 ? NaN : (f1FromCounts(t[0]!, t[1]!, t[2]!) + f1FromCounts(t[3]!, t[4]!, t[5]!)) / 2),
      };
    }
    // choice accuracy: [correct, n]
    const sums = new Float64Array(index.size * 2);
    for (const r of plain) {
      const i = r.questions.findIndex((q) => q.key === key);
      const q = r.questions[i];
      if (!q || q.gold === MISSING) continue;
      const g = groupsOf(r.group) * 2;
      if (r.pred[i] === q.gold) sums[g]! += 1;
      sums[g + 1]! += 1;
    }
    // No record with gold: 0 / 0, NaN.
    return { width: 2, sums, headline: (t) => t[0]! / t[1]! };
  }
}

/** Scores one merged reranking query from the current p(true) of its chunks. */
function scoreQuery(q: QueryState): QueryScore {
  // Pool: scorable documents of every chunk; a document in several chunks keeps its best answered score.
  const pool = new Map<string, number>();
  for (const c of q.chunks) {
    const n = c.scorable ? c.scorable.length : c.keys.length;
    for (let j = 0; j < n; j++) {
      const i = c.scorable ? c.scorable[j]! : j;
      const doc = c.docs ? c.docs[i]! : derivedDocument(c.keys[i]!);
      const p = c.p[i]!;
      const prev = pool.get(doc);
      if (prev === undefined || Number.isNaN(prev)) pool.set(doc, p);
      else if (!Number.isNaN(p)) pool.set(doc, Math.max(prev, p));
    }
  }
  const answered: ScoredDocument[] = [];
  for (const [doc, score] of pool) if (!Number.isNaN(score)) answered.push({ doc, score });
  const ranked = rankDocuments(answered).map((d) => d.doc);
  const kept = new Set(answered.filter((d) => noulPrediction(d.score)).map((d) => d.doc));
  return {
    eligible: hasRelevant(q.qrels, q.threshold),
    ndcg: ndcgAt(ranked, q.qrels),
    rr: reciprocalRankAt(ranked, q.qrels, q.threshold),
    keep: q.fullyJudged ? keepSet([...pool.keys()], kept, q.qrels, q.threshold) : undefined,
  };
}

/** Whether a routing record's routed option is accepted; a missing answer is not (options[MISSING] is undefined, in no accepted set). */
function routeAccepted(r: PlainRecord, routing: RoutingGold): boolean {
  return (routing.accepted as ReadonlySet<unknown>).has(r.questions[routing.question]!.options[r.pred[routing.question]!]);
}

function valueAtPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
