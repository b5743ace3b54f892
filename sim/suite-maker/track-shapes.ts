// The shape of every track of udm-eval-v1 (rows, groups, language, origin, questions), which the
// synthetic suite maker reproduces. The data is track-shapes.json beside this file, a copy of
// shared/data/udm-eval-v1-tracks.json: rows/groups/lang/origin/headline are the dataset card's;
// option counts given as ranges and label balances are estimates.
import shapes from "./track-shapes.json" with { type: "json" };

export interface QuestionShape {
  key: string;
  type: "choice" | "noul";
  /** Named options, a count of letter-coded options, or a free description of a range. */
  options?: readonly string[] | number | string;
  codes?: string;
  gold_balance?: readonly number[];
  p_true?: number;
  ordinal?: boolean;
  option_text?: string;
  per?: string;
  max_per_row?: number;
  scoring?: string;
}

export interface TrackShape {
  track: string;
  family: string;
  pillar: string;
  lang: string;
  origin: string;
  rows: number;
  groups: number;
  headline: string;
  scored_in_v1: boolean;
  state_keys: readonly string[];
  questions: readonly QuestionShape[];
  scoring?: string;
}

export interface SuiteShape {
  suite: string;
  records: number;
  files: number;
  note: string;
  tracks: readonly TrackShape[];
}

export const SUITE_SHAPE: SuiteShape = shapes as SuiteShape;

const BY_NAME = new Map<string, TrackShape>(SUITE_SHAPE.tracks.map((t) => [t.track, t]));

export function trackShape(track: string): TrackShape | undefined {
  return BY_NAME.get(track);
}

/** Every track, in the card's order. */
export function allTrackShapes(): readonly TrackShape[] {
  return SUITE_SHAPE.tracks;
}
