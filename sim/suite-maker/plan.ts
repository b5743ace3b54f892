// How many rows and groups each track gets, and how the rows fall into groups, before any text
// is written. Full scale reproduces the dataset card's counts exactly.
import { UsageError } from "../../common/errors.js";
import { allTrackShapes, trackShape, type TrackShape } from "./track-shapes.js";
import { Rng } from "./prng.js";

export type SuiteScale = "small" | "full";

export interface TrackPlan {
  shape: TrackShape;
  rows: number;
  groups: number;
  /** Rows of each group, in file order; sums to `rows`. Reranking: chunks per query. */
  groupSizes: number[];
}

/** Most chunks (reranking) or steps (tools) per group at small scale. */
const SMALL_MAX_PER_GROUP = 3;

/** Track shapes of the suite, in catalogue order; unknown names are a usage error. */
export function selectShapes(tracks?: readonly string[]): TrackShape[] {
  if (!tracks || tracks.length === 0) return [...allTrackShapes()];
  const unknown = tracks.filter((t) => !trackShape(t));
  if (unknown.length > 0) {
    throw new UsageError(`unknown track(s) ${unknown.map((t) => JSON.stringify(t)).join(", ")} (not in udm-eval-v1)`);
  }
  const wanted = new Set(tracks);
  return allTrackShapes().filter((t) => wanted.has(t.track));
}

export function planTrack(shape: TrackShape, scale: SuiteScale, seed: number): TrackPlan {
  const rng = Rng.from(seed, shape.track, "plan");
  if (scale === "full") return { shape, rows: shape.rows, groups: shape.groups, groupSizes: spread(shape.rows, shape.groups, rng) };
  const groups = Math.min(shape.groups, rng.int(3, 6));
  if (shape.rows === shape.groups) return { shape, rows: groups, groups, groupSizes: new Array<number>(groups).fill(1) };
  // Tracks whose groups hold several rows keep that property: the first group always does.
  const groupSizes = Array.from({ length: groups }, (_, g) => (g === 0 ? rng.int(2, SMALL_MAX_PER_GROUP) : rng.int(1, SMALL_MAX_PER_GROUP)));
  return { shape, rows: groupSizes.reduce((a, b) => a + b, 0), groups, groupSizes };
}

export function planSuite(scale: SuiteScale, seed: number, tracks?: readonly string[]): TrackPlan[] {
  return selectShapes(tracks).map((shape) => planTrack(shape, scale, seed));
}

/** Every group gets one row; the rest go to groups drawn uniformly, so group sizes vary. */
function spread(rows: number, groups: number, rng: Rng): number[] {
  if (groups <= 0 || rows < groups) throw new Error(`cannot spread ${rows} rows over ${groups} groups`);
  const sizes = new Array<number>(groups).fill(1);
  for (let extra = rows - groups; extra > 0; extra--) {
    const g = Math.floor(rng.next() * groups);
    sizes[g] = (sizes[g] ?? 0) + 1;
  }
  return sizes;
}
