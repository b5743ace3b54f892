// passage_reranking: one query per group, its candidate pool split into chunks of at most 25
// noul questions `doc:<id>`, with graded qrels shared by every chunk of the query.
import type { BuildContext, GroupBuilder } from "../build-context.js";
import { assembleRecord, type SyntheticQuestion, type SyntheticRecord } from "../record.js";

export const MAX_CHUNK = 25;

type Judging = "single_gold" | "graded" | "binary";

interface RerankProfile {
  judging: Judging;
  relevanceThreshold: number;
  /** Share of groups whose whole pool is judged (graded and binary tracks). */
  fullyJudgedShare: number;
  maxGrade: number;
}

const SINGLE_GOLD = new Set(["viequad-retrieval", "tvpl-retrieval-vn", "zalo-legal", "table-markdown-vn", "wixqa-expertwritten", "wixqa-simulated"]);

function rerankProfile(track: string): RerankProfile {
  if (SINGLE_GOLD.has(track)) return { judging: "single_gold", relevanceThreshold: 1, fullyJudgedShare: 0, maxGrade: 1 };
  if (track.startsWith("trec-dl")) return { judging: "graded", relevanceThreshold: 2, fullyJudgedShare: 0.3, maxGrade: 3 };
  if (track === "vinli-reranking") return { judging: "graded", relevanceThreshold: 1, fullyJudgedShare: 0.8, maxGrade: 3 };
  return { judging: "binary", relevanceThreshold: 1, fullyJudgedShare: 0.8, maxGrade: 1 };
}

const PASSAGE_INSTRUCTIONS = "Does this passage help answer the query?\n\nPassage:\n";

/** Per-track document id counter, so ids never repeat within a track. */
const nextDocId = new WeakMap<BuildContext, number>();

export const buildRerankingGroup: GroupBuilder = (ctx, group, chunks) => {
  const { shape, profile, rng, text } = ctx;
  const rp = rerankProfile(shape.track);
  const query = shape.lang === "en" ? text.question(4, 12) : text.question(6, 18);
  const queryWords = query.replace(/[?,.]/g, "").split(" ").filter((w) => w.length > 2);

  const poolSize = chunks === 1 ? rng.int(6, MAX_CHUNK) : rng.int(MAX_CHUNK * (chunks - 1) + 1, MAX_CHUNK * chunks);
  const pool: string[] = [];
  let doc = nextDocId.get(ctx) ?? rng.int(1_000_000, 5_000_000);
  const newDoc = () => String((doc += rng.int(1, 97)));
  for (let i = 0; i < poolSize; i++) pool.push(newDoc());

  // Schedules by group number make every kind of query appear even in a small suite.
  const qrels: Record<string, number> = {};
  let fullyJudged = false;
  if (rp.judging === "single_gold") {
    const goldOutside = group % 8 === 0 || rng.chance(0.05);
    qrels[goldOutside ? newDoc() : rng.pick(pool)] = 1;
  } else {
    fullyJudged = group % 3 === 2 || rng.chance(rp.fullyJudgedShare);
    const nothingRelevant = group % 10 === 1;
    const topGrade = nothingRelevant ? rp.relevanceThreshold - 1 : rp.maxGrade;
    for (const d of pool) {
      if (!fullyJudged && !rng.chance(0.6)) continue;
      qrels[d] = Math.min(topGrade, gradeDraw(rng.next(), rp.maxGrade));
    }
    if (!nothingRelevant && (group % 3 === 0 || rng.chance(0.3))) {
      for (let n = rng.int(1, 4); n > 0; n--) qrels[newDoc()] = rng.int(rp.relevanceThreshold, rp.maxGrade);
    }
  }
  nextDocId.set(ctx, doc);

  const groupId = ctx.newId();
  const passages = new Map<string, string>();
  for (const d of pool) {
    const relevant = (qrels[d] ?? 0) >= rp.relevanceThreshold;
    passages.set(d, shape.track === "table-markdown-vn" ? markdownTable(ctx) : text.passage(50, 200, relevant ? queryWords : []));
  }

  const records: SyntheticRecord[] = [];
  for (let c = 0; c < chunks; c++) {
    const docs = pool.slice(c * MAX_CHUNK, (c + 1) * MAX_CHUNK);
    const questions: Record<string, SyntheticQuestion> = {};
    const expected: Record<string, boolean> = {};
    const fieldToDocument: Record<string, string> = {};
    for (const d of docs) {
      const key = `doc:${d}`;
      questions[key] = { type: "noul", instructions: PASSAGE_INSTRUCTIONS + (passages.get(d) ?? ""), criteria: {} };
      expected[key] = (qrels[d] ?? 0) >= rp.relevanceThreshold;
      fieldToDocument[key] = d;
    }
    records.push(
      assembleRecord(shape, {
        id: `${groupId}:c${c}`,
        groupId,
        source: profile.source,
        origin: shape.origin,
        stratum: rp.judging,
        state: { query },
        questions,
        expected,
        extra: { query_id: groupId, chunk: c, chunks, pool_size: poolSize },
        scoring: {
          type: "retrieval_ranking",
          qrels,
          field_to_document: fieldToDocument,
          scorable_ids: docs,
          relevance_threshold: rp.relevanceThreshold,
          fully_judged: fullyJudged,
          combine_chunks_by: "metadata.group_id",
        },
      }),
    );
  }
  return records;
};

/** Grades skew low, as in judged pools. */
function gradeDraw(u: number, maxGrade: number): number {
  if (maxGrade === 1) return u < 0.25 ? 1 : 0;
  return u < 0.45 ? 0 : u < 0.7 ? 1 : u < 0.88 ? 2 : 3;
}

function markdownTable(ctx: BuildContext): string {
  const { rng, text } = ctx;
  // Sized so that a table, like a passage, holds roughly 50 to 200 words and numbers.
  const cols = rng.int(3, 5);
  const rows = rng.int(6, 24);
  const header = Array.from({ length: cols }, () => text.phrase(1, 3));
  const lines = [text.sentence(6, 14), "", `| ${header.join(" | ")} |`, `|${" --- |".repeat(cols)}`];
  for (let r = 0; r < rows; r++) {
    const cells = Array.from({ length: cols }, (_, i) => (i === 0 ? text.phrase(1, 3) : String(rng.int(1, 99999))));
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}
