// Which metric is the headline of a track, by the kind of its headline question (docs/scoring.md "Headline of a track").

export type HeadlineKind = "choice" | "noul" | "retrieval" | "routing";

export const HEADLINE_METRIC: Readonly<Record<HeadlineKind, string>> = {
  choice: "accuracy",
  noul: "macro_f1",
  retrieval: "ndcg@10",
  routing: "accepted_accuracy",
};
