// metrics.json (docs/scoring.md "metrics.json"): its shape, version and how it is written.
import { writeJsonAtomic } from "../common/atomic-file.js";
import type { GroupMean, PillarMean, Summary } from "./aggregate.js";
import type { TrackMetrics } from "./track-metrics.js";

/** Bump when the meaning of a field of metrics.json changes. */
export const METRICS_FORMAT = 1;

export const METRICS_FILE = "metrics.json";

export interface MetricsJson {
  format: number;
  suite: { identity: string; tracks: number };
  tracks: Record<string, TrackMetrics>;
  families: Record<string, GroupMean>;
  pillars: Record<string, PillarMean>;
  summary: Summary;
}

/** Writes metrics.json whole (temp file, fsync, rename): a reader never sees half of it. */
export function writeMetricsJson(path: string, metrics: MetricsJson): void {
  writeJsonAtomic(path, metrics);
}
