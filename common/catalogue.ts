// The track catalogue of udm-eval-v1: family -> pillar, the 44 tracks with their family, and the 43
// scored tracks (routerbench excluded). Its own small table (common/ may not import sim/); a test
// holds it to sim/suite-maker/track-shapes.json and shared/data/udm-eval-v1-tracks.json.

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

/** The 44 tracks of udm-eval-v1 in the card's order, each with its family. */
export const V1_TRACKS: ReadonlyArray<{ readonly track: string; readonly family: string }> = (
  [
    ["vihsd", "content_moderation"],
    ["vihos", "content_moderation"],
    ["victsd", "content_moderation"],
    ["deepedubench-qa", "education"],
    ["deepedubench-cdpk", "education"],
    ["deepedubench-grading-binary", "education"],
    ["deepedubench-grading-score", "education"],
    ["aimy144-fact-checking-vi", "fact_checking"],
    ["massive-vi-vn", "intent"],
    ["routerbench", "model_routing"],
    ["aiv-vlmu-mcqa-extend400", "multiple_choice"],
    ["aiv-hle-mc-vi", "multiple_choice"],
    ["aiv-culture100", "multiple_choice"],
    ["aiv-pragmatic50", "multiple_choice"],
    ["aiv-syntax50", "multiple_choice"],
    ["mmlu-prox-vi", "multiple_choice"],
    ["vimmrc-vi", "multiple_choice"],
    ["aiv-nli500", "nli"],
    ["zalo-legal", "passage_reranking"],
    ["trec-dl19", "passage_reranking"],
    ["trec-dl20", "passage_reranking"],
    ["wixqa-expertwritten", "passage_reranking"],
    ["wixqa-simulated", "passage_reranking"],
    ["viequad-retrieval", "passage_reranking"],
    ["vinli-reranking", "passage_reranking"],
    ["table-markdown-vn", "passage_reranking"],
    ["tvpl-retrieval-vn", "passage_reranking"],
    ["askubuntu-reranking-vn", "passage_reranking"],
    ["stackoverflow-reranking-vn", "passage_reranking"],
    ["scidocs-reranking-vn", "passage_reranking"],
    ["fineweb-c-vi", "quality_scoring"],
    ["deepedu", "safety_guardrail"],
    ["visafe", "safety_guardrail"],
    ["budguardrail", "safety_guardrail"],
    ["respan", "safety_guardrail"],
    ["aiv-jbb", "safety_guardrail"],
    ["seasafeguard", "safety_guardrail"],
    ["multijail", "safety_guardrail"],
    ["aiv-sa24-easy", "sentiment"],
    ["aiv-sa26-hard", "sentiment"],
    ["skillgym-sft", "skill_routing"],
    ["nemotron-tools", "tool_selection"],
    ["toucan-kimi-k2", "tool_selection"],
    ["deepseek-v4-pro", "tool_selection"],
  ] as const
).map(([track, family]) => ({ track, family }));

/** Kept for protection and reference; not one of the 43 scored tracks. */
export const UNSCORED_TRACKS: ReadonlySet<string> = new Set(["routerbench"]);

export const V1_TRACK_COUNT = 43;

export function pillarOf(family: string): string {
  return FAMILY_PILLAR[family] ?? "other";
}

/** Whether a track enters the v1 43-track mean. */
export function isScoredInV1(track: string): boolean {
  return !UNSCORED_TRACKS.has(track);
}

/** The 43 scored track names of v1, in catalogue order. */
export const V1_SCORED_TRACKS: readonly string[] = V1_TRACKS.filter((t) => isScoredInV1(t.track)).map((t) => t.track);
