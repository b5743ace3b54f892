// nDCG@10 held to trec_eval's own output, not to our reading of its rules: the fixture
// (fixtures/trec-eval/, made by make-fixture.mjs) is 60 reranking queries cut into chunks, with
// graded, negative and missing judgements, judged documents outside the pool, unanswered
// documents, a document in two chunks, many tied scores and document ids whose byte order is not
// their UTF-16 order; ndcg_cut_10.txt is `trec_eval -q -m ndcg_cut.10 qrels.txt run.txt` of
// trec_eval 10.0 (usnistgov/trec_eval at its "version 10.0" commit f425365), stored because CI has
// no trec_eval. trec_eval prints 4 decimals.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RecordSchema } from "../../common/suite/schema.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { noul, record } from "./suite-fixture.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "trec-eval");
const queries = JSON.parse(readFileSync(join(dir, "chunks.json"), "utf8")) as Array<{ id: string; qrels: Record<string, number>; chunks: Array<Record<string, number>> }>;
const trec = new Map<string, number>();
for (const line of readFileSync(join(dir, "ndcg_cut_10.txt"), "utf8").trim().split("\n")) {
  const [measure, qid, value] = line.split("\t").map((s) => s.trim());
  expect(measure).toBe("ndcg_cut_10");
  trec.set(qid!, Number(value));
}
/** Half the last printed digit, and a little for the float. */
const PRINTED = 0.5e-4 + 1e-12;

/** One reranking track of the given queries, scored by our accumulator. */
function score(qs: typeof queries): { ndcg: number | null; queries: number } {
  const acc = new TrackAccumulator("rk", "passage_reranking");
  for (const q of qs) {
    q.chunks.forEach((scores, i) => {
      const id = `${q.id}c${i}`;
      const questions = Object.fromEntries(Object.keys(scores).map((d) => [`doc:${d}`, { type: "noul" as const }]));
      acc.addRecord(RecordSchema.parse(record("rk", { id, family: "passage_reranking", lang: "en", group: q.id, questions, scoring: { type: "retrieval_ranking", qrels: q.qrels, relevance_threshold: 1, fully_judged: true } })));
      acc.addResult({ run_id: `rk:${id}`, probs: Object.fromEntries(Object.entries(scores).map(([d, p]) => [`doc:${d}`, noul(p)])) });
    });
  }
  acc.sealRecords();
  const retrieval = acc.finish().retrieval!;
  return { ndcg: retrieval["ndcg@10"] as number | null, queries: retrieval.queries as number };
}

const eligible = queries.filter((q) => Object.values(q.qrels).some((g) => g >= 1));

describe("nDCG@10 against trec_eval 10.0's stored output", () => {
  it("the fixture covers what it claims", () => {
    expect(queries).toHaveLength(60);
    expect(trec.size).toBe(61); // 60 queries and "all"
    expect(eligible.length).toBeGreaterThan(40);
    expect(eligible.length).toBeLessThan(60);
    expect(queries.some((q) => q.chunks.length > 1 && q.chunks.some((c, i) => Object.keys(c).some((d) => q.chunks.some((o, j) => j !== i && d in o))))).toBe(true);
    expect(queries.some((q) => Object.values(q.qrels).includes(-1))).toBe(true);
  });

  it.each(queries.map((q) => [q.id, q] as const))("query %s: trec_eval's value, or no value where it has no relevant document", (qid, q) => {
    const ours = score([q]).ndcg;
    if (eligible.includes(q)) {
      expect(ours).not.toBeNull();
      expect(Math.abs(ours! - trec.get(qid)!)).toBeLessThanOrEqual(PRINTED);
    } else {
      // trec_eval scores such a query 0 and averages it in; docs/scoring.md leaves it out of the mean.
      expect(trec.get(qid)).toBe(0);
      expect(ours).toBeNull();
    }
  });

  it("the track's mean is trec_eval's over the queries with a relevant document", () => {
    const { ndcg, queries: counted } = score(queries);
    expect(counted).toBe(eligible.length);
    const trecMean = eligible.reduce((s, q) => s + trec.get(q.id)!, 0) / eligible.length;
    expect(Math.abs(ndcg! - trecMean)).toBeLessThanOrEqual(PRINTED);
    // trec_eval's "all" averages every query, those without a relevant document as 0.
    expect(Math.abs((ndcg! * eligible.length) / queries.length - trec.get("all")!)).toBeLessThanOrEqual(PRINTED);
  });
});
