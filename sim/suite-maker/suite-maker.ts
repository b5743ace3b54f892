// Synthetic suites in the exact on-disk format of udm-eval-v1 (docs/suite-format.md, the dataset card):
// test/<family>/<track>.jsonl.gz, manifest.json and stats.json. Deterministic per seed; each
// track has its own random streams, so a --tracks subset writes the same bytes as the full suite.
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../common/errors.js";
import { suiteIdentity } from "../../common/suite/index.js";
import { createContext, type GroupBuilder } from "./build-context.js";
import { buildClassificationGroup } from "./builders/classification.js";
import { buildRerankingGroup } from "./builders/reranking.js";
import { buildRoutingGroup } from "./builders/routing.js";
import { buildSkillGroup } from "./builders/skills.js";
import { buildToolGroup } from "./builders/tools.js";
import { planSuite, type SuiteScale, type TrackPlan } from "./plan.js";
import { TrackStatsCollector, type TrackStats } from "./stats.js";
import { TrackFileWriter } from "./track-file-writer.js";

export type { SuiteScale } from "./plan.js";
export { planSuite, planTrack } from "./plan.js";

export interface MakeSuiteOptions {
  out: string;
  scale: SuiteScale;
  seed: number;
  /** Restrict to these tracks (default: all 44). Unknown names throw a UsageError. */
  tracks?: readonly string[];
  /** Replace an existing suite in `out` (removes out/test, manifest.json, stats.json). Default false. */
  force?: boolean;
  /** gzip level 1..9 (default 6, zlib's default). */
  gzipLevel?: number;
}

export interface SuiteManifestFile {
  rows: number;
  groups: number;
  sha256: string;
  /** Decompressed bytes; informational. */
  bytes: number;
}

export interface SyntheticManifest {
  revision: string;
  seed: number;
  scale: SuiteScale;
  synthetic: true;
  files: Record<string, SuiteManifestFile>;
  tracks: string[];
}

export interface MadeSuite {
  /** Number of track files written. */
  files: number;
  records: number;
  /** Decompressed bytes of all track files. */
  bytes: number;
  identity: string;
  manifest: SyntheticManifest;
}

export const SYNTHETIC_REVISION_PREFIX = "synthetic-udm-eval-v1";

export async function makeSuite(options: MakeSuiteOptions): Promise<MadeSuite> {
  const { out, scale, seed } = options;
  if (scale !== "small" && scale !== "full") throw new UsageError(`--scale must be small or full, got ${JSON.stringify(scale)}`);
  if (!Number.isInteger(seed) || seed < 0) throw new UsageError(`--seed must be an integer >= 0, got ${seed}`);
  const plans = planSuite(scale, seed, options.tracks);
  prepareOut(out, options.force ?? false);

  const manifest: SyntheticManifest = {
    revision: `${SYNTHETIC_REVISION_PREFIX}-${scale}-seed${seed}`,
    seed,
    scale,
    synthetic: true,
    files: {},
    tracks: [],
  };
  const stats: Record<string, TrackStats> = {};
  let records = 0;
  let bytes = 0;
  for (const plan of plans) {
    const { shape } = plan;
    const relPath = `test/${shape.family}/${shape.track}.jsonl.gz`;
    mkdirSync(join(out, "test", shape.family), { recursive: true });
    const collector = new TrackStatsCollector(shape.family, shape.lang, shape.origin);
    const written = await writeTrack(plan, seed, join(out, relPath), options.gzipLevel ?? 6, collector);
    const trackStats = collector.result();
    manifest.files[relPath] = { rows: written.lines, groups: trackStats.groups, sha256: written.sha256, bytes: written.bytes };
    manifest.tracks.push(shape.track);
    stats[shape.track] = trackStats;
    records += written.lines;
    bytes += written.bytes;
  }
  writeFileSync(join(out, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  writeFileSync(join(out, "stats.json"), JSON.stringify({ revision: manifest.revision, seed, tracks: stats }, null, 2) + "\n");
  const identity = suiteIdentity(Object.fromEntries(Object.entries(manifest.files).map(([p, f]) => [p, f.sha256])));
  return { files: plans.length, records, bytes, identity, manifest };
}

function builderFor(family: string): GroupBuilder {
  switch (family) {
    case "passage_reranking":
      return buildRerankingGroup;
    case "tool_selection":
      return buildToolGroup;
    case "skill_routing":
      return buildSkillGroup;
    case "model_routing":
      return buildRoutingGroup;
    default:
      return buildClassificationGroup;
  }
}

async function writeTrack(plan: TrackPlan, seed: number, path: string, level: number, collector: TrackStatsCollector) {
  const ctx = createContext(plan.shape, seed);
  const build = builderFor(plan.shape.family);
  const writer = new TrackFileWriter(path, level);
  for (let g = 0; g < plan.groupSizes.length; g++) {
    const size = plan.groupSizes[g] ?? 0;
    const group = build(ctx, g, size);
    if (group.length !== size) throw new Error(`${plan.shape.track}: group ${g} built ${group.length} rows, planned ${size}`);
    for (const record of group) {
      collector.add(record);
      await writer.writeLine(JSON.stringify(record));
    }
  }
  return writer.close();
}

/** Refuses to mix a new suite into an old one unless `force`. */
function prepareOut(out: string, force: boolean): void {
  const testDir = join(out, "test");
  const occupied = existsSync(testDir) && readdirSync(testDir).length > 0;
  if (occupied && !force) throw new UsageError(`${out} already holds a suite (test/ is not empty); choose an empty directory or pass --force`);
  if (occupied || force) {
    rmSync(testDir, { recursive: true, force: true });
    rmSync(join(out, "manifest.json"), { force: true });
    rmSync(join(out, "stats.json"), { force: true });
  }
  mkdirSync(testDir, { recursive: true });
}
