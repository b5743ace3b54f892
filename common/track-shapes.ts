// Shape of every track of udm-eval-v1, from the dataset card and shared/data/udm-eval-v1-tracks.json.
// rows/groups/lang/origin/headline are the card's; option counts given as ranges and label balances are estimates.
// Data only: common/catalogue.ts is the API over it.

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

export const SUITE_SHAPE: SuiteShape = {
 "suite": "udm-eval-v1",
 "records": 58366,
 "files": 44,
 "note": "Shape of each track for synthetic suites. rows/groups/lang/origin/headline are from the dataset card; option counts marked as ranges and label balances are estimates.",
 "tracks": [
  {
   "track": "vihsd",
   "family": "content_moderation",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "native",
   "rows": 6680,
   "groups": 6680,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "label",
     "type": "choice",
     "options": [
      "CLEAN",
      "OFFENSIVE",
      "HATE"
     ],
     "gold_balance": [
      0.82,
      0.07,
      0.11
     ]
    }
   ]
  },
  {
   "track": "vihos",
   "family": "content_moderation",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "native",
   "rows": 1106,
   "groups": 1106,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "contains_hate_or_offense",
     "type": "noul",
     "p_true": 0.5
    }
   ]
  },
  {
   "track": "victsd",
   "family": "content_moderation",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "native",
   "rows": 1000,
   "groups": 1000,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "toxic",
     "type": "noul",
     "p_true": 0.11
    }
   ]
  },
  {
   "track": "deepedubench-qa",
   "family": "education",
   "pillar": "education",
   "lang": "vi",
   "origin": "native",
   "rows": 795,
   "groups": 795,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "deepedubench-cdpk",
   "family": "education",
   "pillar": "education",
   "lang": "vi",
   "origin": "translated",
   "rows": 900,
   "groups": 900,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "deepedubench-grading-binary",
   "family": "education",
   "pillar": "education",
   "lang": "vi",
   "origin": "native",
   "rows": 165,
   "groups": 165,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "question",
    "student_submission"
   ],
   "questions": [
    {
     "key": "grading",
     "type": "noul",
     "p_true": 0.5
    }
   ]
  },
  {
   "track": "deepedubench-grading-score",
   "family": "education",
   "pillar": "education",
   "lang": "vi",
   "origin": "native",
   "rows": 63,
   "groups": 63,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question",
    "student_submission"
   ],
   "questions": [
    {
     "key": "grading",
     "type": "choice",
     "codes": "letters",
     "options": 11,
     "option_text": "scores 0..10",
     "ordinal": true
    }
   ]
  },
  {
   "track": "aimy144-fact-checking-vi",
   "family": "fact_checking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 7521,
   "groups": 7521,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "claim",
    "evidence_text"
   ],
   "questions": [
    {
     "key": "verdict",
     "type": "choice",
     "codes": "letters",
     "options": 3
    }
   ]
  },
  {
   "track": "massive-vi-vn",
   "family": "intent",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "translated",
   "rows": 2974,
   "groups": 2974,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "intent",
     "type": "choice",
     "codes": "letters",
     "options": 60
    }
   ]
  },
  {
   "track": "routerbench",
   "family": "model_routing",
   "pillar": "agentic_routing",
   "lang": "multi",
   "origin": "native",
   "rows": 1001,
   "groups": 1000,
   "headline": "accepted-route accuracy",
   "scored_in_v1": false,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "route",
     "type": "choice",
     "options": "11 model names",
     "scoring": "routing_outcome"
    }
   ]
  },
  {
   "track": "aiv-vlmu-mcqa-extend400",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 514,
   "groups": 514,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "aiv-hle-mc-vi",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "translated",
   "rows": 506,
   "groups": 506,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": "5 to 12"
    }
   ]
  },
  {
   "track": "aiv-culture100",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 100,
   "groups": 100,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "aiv-pragmatic50",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 50,
   "groups": 50,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "aiv-syntax50",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 50,
   "groups": 50,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "mmlu-prox-vi",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "translated",
   "rows": 3000,
   "groups": 3000,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 10
    }
   ]
  },
  {
   "track": "vimmrc-vi",
   "family": "multiple_choice",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 512,
   "groups": 512,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "question"
   ],
   "questions": [
    {
     "key": "answer",
     "type": "choice",
     "codes": "letters",
     "options": 4
    }
   ]
  },
  {
   "track": "aiv-nli500",
   "family": "nli",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 500,
   "groups": 500,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "premise",
    "hypothesis"
   ],
   "questions": [
    {
     "key": "label",
     "type": "choice",
     "codes": "letters",
     "options": 3
    }
   ]
  },
  {
   "track": "zalo-legal",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 788,
   "groups": 788,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "trec-dl19",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "en",
   "origin": "native",
   "rows": 109,
   "groups": 43,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "trec-dl20",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "en",
   "origin": "native",
   "rows": 142,
   "groups": 54,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "wixqa-expertwritten",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "en",
   "origin": "native",
   "rows": 800,
   "groups": 200,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "wixqa-simulated",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "en",
   "origin": "native",
   "rows": 800,
   "groups": 200,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "viequad-retrieval",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 4000,
   "groups": 1000,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "vinli-reranking",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 363,
   "groups": 363,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "table-markdown-vn",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 4000,
   "groups": 1000,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "tvpl-retrieval-vn",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "native",
   "rows": 4000,
   "groups": 1000,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "askubuntu-reranking-vn",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "translated",
   "rows": 305,
   "groups": 305,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "stackoverflow-reranking-vn",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "translated",
   "rows": 1497,
   "groups": 1000,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "scidocs-reranking-vn",
   "family": "passage_reranking",
   "pillar": "retrieval_grounding",
   "lang": "vi",
   "origin": "translated",
   "rows": 1100,
   "groups": 1000,
   "headline": "nDCG@10",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "doc:<id>",
     "type": "noul",
     "per": "candidate passage",
     "max_per_row": 25
    }
   ],
   "scoring": "retrieval_ranking"
  },
  {
   "track": "fineweb-c-vi",
   "family": "quality_scoring",
   "pillar": "preference_quality",
   "lang": "vi",
   "origin": "native",
   "rows": 945,
   "groups": 945,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "quality",
     "type": "choice",
     "options": [
      "0",
      "1",
      "2",
      "3",
      "4"
     ],
     "ordinal": true
    }
   ]
  },
  {
   "track": "deepedu",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "native",
   "rows": 961,
   "groups": 961,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "harmful",
     "type": "noul",
     "p_true": 0.5
    },
    {
     "key": "attack_type",
     "type": "choice",
     "codes": "letters",
     "options": 5
    }
   ]
  },
  {
   "track": "visafe",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "native/synthetic/translated",
   "rows": 1000,
   "groups": 1000,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "harmful",
     "type": "noul",
     "p_true": 0.5
    },
    {
     "key": "category",
     "type": "choice",
     "options": "9 named categories"
    }
   ]
  },
  {
   "track": "budguardrail",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "en",
   "origin": "synthetic",
   "rows": 2000,
   "groups": 2000,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "harmful",
     "type": "noul",
     "p_true": 0.5
    }
   ]
  },
  {
   "track": "respan",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "en",
   "origin": "native",
   "rows": 2000,
   "groups": 2000,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "jailbreak",
     "type": "noul",
     "p_true": 0.15
    },
    {
     "key": "system_prompt_leak",
     "type": "noul",
     "p_true": 0.15
    },
    {
     "key": "unsafe",
     "type": "noul",
     "p_true": 0.15
    },
    {
     "key": "hate",
     "type": "noul",
     "p_true": 0.15
    },
    {
     "key": "self_harm",
     "type": "noul",
     "p_true": 0.15
    },
    {
     "key": "sexual",
     "type": "noul",
     "p_true": 0.15
    },
    {
     "key": "violence",
     "type": "noul",
     "p_true": 0.15
    }
   ]
  },
  {
   "track": "aiv-jbb",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "translated",
   "rows": 180,
   "groups": 180,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "harmful",
     "type": "noul",
     "p_true": 0.5
    }
   ]
  },
  {
   "track": "seasafeguard",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "native/translated",
   "rows": 1231,
   "groups": 1231,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt",
    "response"
   ],
   "questions": [
    {
     "key": "harmful",
     "type": "noul",
     "p_true": 0.5
    },
    {
     "key": "response_harmful",
     "type": "noul",
     "p_true": 0.3
    }
   ]
  },
  {
   "track": "multijail",
   "family": "safety_guardrail",
   "pillar": "guardrail_moderation",
   "lang": "vi",
   "origin": "translated",
   "rows": 315,
   "groups": 315,
   "headline": "macro-F1",
   "scored_in_v1": true,
   "state_keys": [
    "prompt"
   ],
   "questions": [
    {
     "key": "harmful",
     "type": "noul",
     "p_true": 0.8
    }
   ]
  },
  {
   "track": "aiv-sa24-easy",
   "family": "sentiment",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 24,
   "groups": 24,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "label",
     "type": "choice",
     "codes": "letters",
     "options": 3
    }
   ]
  },
  {
   "track": "aiv-sa26-hard",
   "family": "sentiment",
   "pillar": "language_understanding",
   "lang": "vi",
   "origin": "native",
   "rows": 26,
   "groups": 26,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "text"
   ],
   "questions": [
    {
     "key": "label",
     "type": "choice",
     "codes": "letters",
     "options": 3
    }
   ]
  },
  {
   "track": "skillgym-sft",
   "family": "skill_routing",
   "pillar": "agentic_routing",
   "lang": "en",
   "origin": "synthetic",
   "rows": 1527,
   "groups": 1500,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "query"
   ],
   "questions": [
    {
     "key": "skill",
     "type": "choice",
     "options": "10 to 40 skill ids like skill:monitoring-observability"
    }
   ]
  },
  {
   "track": "nemotron-tools",
   "family": "tool_selection",
   "pillar": "agentic_routing",
   "lang": "en",
   "origin": "synthetic",
   "rows": 2585,
   "groups": 1000,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "tools",
    "messages"
   ],
   "questions": [
    {
     "key": "next_tool",
     "type": "choice",
     "options": "3 to 15 tool names plus none"
    }
   ]
  },
  {
   "track": "toucan-kimi-k2",
   "family": "tool_selection",
   "pillar": "agentic_routing",
   "lang": "en",
   "origin": "synthetic",
   "rows": 202,
   "groups": 45,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "tools",
    "messages"
   ],
   "questions": [
    {
     "key": "next_tool",
     "type": "choice",
     "options": "3 to 30 tool names plus none"
    }
   ]
  },
  {
   "track": "deepseek-v4-pro",
   "family": "tool_selection",
   "pillar": "agentic_routing",
   "lang": "en",
   "origin": "synthetic",
   "rows": 29,
   "groups": 4,
   "headline": "accuracy",
   "scored_in_v1": true,
   "state_keys": [
    "tools",
    "messages"
   ],
   "questions": [
    {
     "key": "next_tool",
     "type": "choice",
     "options": "5 to 20 tool names plus none"
    }
   ]
  }
 ]
};
