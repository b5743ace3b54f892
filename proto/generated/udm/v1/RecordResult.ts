// Original file: proto/udm/v1/orchestrator.proto

import type { Distribution as _udm_v1_Distribution, Distribution__Output as _udm_v1_Distribution__Output } from '../../udm/v1/Distribution.js';
import type { Usage as _udm_v1_Usage, Usage__Output as _udm_v1_Usage__Output } from '../../udm/v1/Usage.js';

export interface RecordResult {
  'unit_id'?: (string);
  'run_id'?: (string);
  /**
   * question key -> distribution over its option keys (noul: "true"/"false").
   */
  'probs'?: ({[key: string]: _udm_v1_Distribution});
  /**
   * Questions not run (prompt longer than max_model_len, ...).
   */
  'skipped'?: (string)[];
  /**
   * Questions that failed after the last retry: question key -> message.
   */
  'errors'?: ({[key: string]: string});
  'usage'?: (_udm_v1_Usage | null);
  'latency_ms'?: (number | string);
  'payload_sha256'?: (string);
  /**
   * question key -> engine method that answered it (systemone, label-read, decisions).
   */
  'answered_by'?: ({[key: string]: string});
  'retries'?: (number);
  /**
   * True when probabilities were renormalised from a top-k read (older vLLM without logprob_token_ids).
   */
  'approximate'?: (boolean);
  /**
   * Compact form of probs (no map entries to decode): the questions answered with probabilities,
   * and their distributions one after another in prob_values, each over the question's option keys
   * in the record's criteria order (noul: true, false). A question is in probs or here, not both.
   */
  'prob_questions'?: (string)[];
  'prob_values'?: (number | string)[];
}

export interface RecordResult__Output {
  'unit_id': (string);
  'run_id': (string);
  /**
   * question key -> distribution over its option keys (noul: "true"/"false").
   */
  'probs': ({[key: string]: _udm_v1_Distribution__Output});
  /**
   * Questions not run (prompt longer than max_model_len, ...).
   */
  'skipped': (string)[];
  /**
   * Questions that failed after the last retry: question key -> message.
   */
  'errors': ({[key: string]: string});
  'usage': (_udm_v1_Usage__Output | null);
  'latency_ms': (number);
  'payload_sha256': (string);
  /**
   * question key -> engine method that answered it (systemone, label-read, decisions).
   */
  'answered_by': ({[key: string]: string});
  'retries': (number);
  /**
   * True when probabilities were renormalised from a top-k read (older vLLM without logprob_token_ids).
   */
  'approximate': (boolean);
  /**
   * Compact form of probs (no map entries to decode): the questions answered with probabilities,
   * and their distributions one after another in prob_values, each over the question's option keys
   * in the record's criteria order (noul: true, false). A question is in probs or here, not both.
   */
  'prob_questions': (string)[];
  'prob_values': (number)[];
}
