// The track catalogue of udm-eval-v1: family -> pillar, the 43 scored tracks (routerbench excluded).
import { SUITE_SHAPE, type TrackShape } from "./track-shapes.js";

export const FAMILY_PILLAR: Readonly<Record<string, string>> = {
  tool_selection: "agentic_routing",
  skill_routing: "agentic_routing",
  model_routing: "agentic_routing",
  passage_reranking: "retrieval_grounding",
  nli: "retrieval_grounding",
  fact_checking: "retrieval_grounding",
  multiple_choice: "language_understanding",
  sentiment: "language_understanding",
  intent: "language_understanding",
  safety_guardrail: "guardrail_moderation",
  content_moderation: "guardrail_moderation",
  quality_scoring: "preference_quality",
  education: "education",
};

/** Kept for protection and reference; not one of the 43 scored tracks. */
export const UNSCORED_TRACKS: ReadonlySet<string> = new Set(["routerbench"]);

export const V1_TRACK_COUNT = 43;

const BY_NAME = new Map<string, TrackShape>(SUITE_SHAPE.tracks.map((t) => [t.track, t]));

export function trackShape(track: string): TrackShape | undefined {
  return BY_NAME.get(track);
}

export function allTrackShapes(): readonly TrackShape[] {
  return SUITE_SHAPE.tracks;
}

export function pillarOf(family: string): string {
  return FAMILY_PILLAR[family] ?? "other";
}

/** Whether a track enters the v1 43-track mean. */
export function isScoredInV1(track: string): boolean {
  return !UNSCORED_TRACKS.has(track);
}

/** The 43 scored track names of v1, in catalogue order. */
export const V1_SCORED_TRACKS: readonly string[] = SUITE_SHAPE.tracks
  .filter((t) => isScoredInV1(t.track))
  .map((t) => t.track);
