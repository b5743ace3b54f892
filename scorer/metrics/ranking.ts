// Ranking metrics of one reranking query, exactly as trec_eval computes them (docs/scoring.md "retrieval_ranking").

export interface ScoredDocument {
  doc: string;
  /** p(true) of the document's question. */
  score: number;
}

/**
 * trec_eval's order: score descending, ties by document id compared as a byte string, the greater first
 * (trec_eval form_res_rels.c sorts by sim, then by docno in decreasing strcmp order).
 */
export function rankDocuments(docs: readonly ScoredDocument[]): ScoredDocument[] {
  const bytes = new Map<string, Buffer>();
  const b = (d: string): Buffer => {
    let v = bytes.get(d);
    // Stryker disable next-line ConditionalExpression,StringLiteral: a cache ("true" recomputes the same bytes); Buffer.from's default encoding is utf8
    if (!v) bytes.set(d, (v = Buffer.from(d, "utf8")));
    return v;
  };
  return [...docs].sort((x, y) => (x.score !== y.score ? y.score - x.score : Buffer.compare(b(y.doc), b(x.doc))));
}

export const CUTOFF = 10;

/** Linear-gain nDCG@k: gains are max(grade, 0); the ideal ranking is over every judged document. */
export function ndcgAt(ranked: readonly string[], qrels: ReadonlyMap<string, number>, k = CUTOFF): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    const g = Math.max(qrels.get(ranked[i]!) ?? 0, 0);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a gain of 0 adds 0 (g is never negative here)
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  // Stryker disable next-line EqualityOperator: grades of 0 sort after the positive ones and add 0 to the ideal DCG
  const ideal = [...qrels.values()].filter((g) => g > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i]! / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

/** Reciprocal rank of the first document with grade >= threshold within the top k, else 0. */
export function reciprocalRankAt(ranked: readonly string[], qrels: ReadonlyMap<string, number>, threshold: number, k = CUTOFF): number {
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    if ((qrels.get(ranked[i]!) ?? -Infinity) >= threshold) return 1 / (i + 1);
  }
  return 0;
}

export interface KeepSet {
  precision: number;
  recall: number;
  f1: number;
}

/** Keep-set of a fully judged pool: kept = answered with p(true) >= 0.5; relevant = pool documents with grade >= threshold. */
export function keepSet(pool: readonly string[], kept: ReadonlySet<string>, qrels: ReadonlyMap<string, number>, threshold: number): KeepSet {
  let relevant = 0;
  let hit = 0;
  for (const doc of pool) {
    if ((qrels.get(doc) ?? -Infinity) >= threshold) {
      relevant++;
      if (kept.has(doc)) hit++;
    }
  }
  const precision = kept.size === 0 ? 0 : hit / kept.size;
  const recall = relevant === 0 ? 0 : hit / relevant;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}

/** Whether a query enters the averages: at least one judged document of grade >= threshold. */
export function hasRelevant(qrels: ReadonlyMap<string, number>, threshold: number): boolean {
  for (const g of qrels.values()) if (g >= threshold) return true;
  return false;
}
