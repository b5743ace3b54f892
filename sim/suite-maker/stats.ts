// stats.json: label balance per track and question, like the card's stats file (ignored by scoring).
import type { SyntheticRecord } from "./record.js";

export interface TrackStats {
  family: string;
  lang: string;
  origin: string;
  rows: number;
  groups: number;
  /** question key -> gold value -> count; reranking questions are pooled under `doc:*`. */
  label_balance: Record<string, Record<string, number>>;
  /** question key -> option count -> rows. */
  option_counts: Record<string, Record<string, number>>;
  strata: Record<string, number>;
}

export class TrackStatsCollector {
  private readonly stats: TrackStats;
  private readonly groups = new Set<string>();

  constructor(family: string, lang: string, origin: string) {
    this.stats = { family, lang, origin, rows: 0, groups: 0, label_balance: {}, option_counts: {}, strata: {} };
  }

  add(record: SyntheticRecord): void {
    const s = this.stats;
    s.rows++;
    this.groups.add(record.metadata.group_id);
    s.strata[record.metadata.stratum] = (s.strata[record.metadata.stratum] ?? 0) + 1;
    for (const [key, gold] of Object.entries(record.expected)) {
      const k = key.startsWith("doc:") ? "doc:*" : key;
      const balance = (s.label_balance[k] ??= {});
      balance[String(gold)] = (balance[String(gold)] ?? 0) + 1;
    }
    for (const [key, q] of Object.entries(record.questions)) {
      if (q.type !== "choice") continue;
      const counts = (s.option_counts[key] ??= {});
      const n = String(Object.keys(q.criteria).length);
      counts[n] = (counts[n] ?? 0) + 1;
    }
  }

  result(): TrackStats {
    return { ...this.stats, groups: this.groups.size };
  }
}
