// Original file: proto/udm/v1/orchestrator.proto

import type { RecordResult as _udm_v1_RecordResult, RecordResult__Output as _udm_v1_RecordResult__Output } from '../../udm/v1/RecordResult.js';

export interface ResultBatch {
  'results'?: (_udm_v1_RecordResult)[];
}

export interface ResultBatch__Output {
  'results': (_udm_v1_RecordResult__Output)[];
}
