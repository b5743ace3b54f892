// Original file: proto/udm/v1/orchestrator.proto

import type { Hello as _udm_v1_Hello, Hello__Output as _udm_v1_Hello__Output } from '../../udm/v1/Hello.js';
import type { Credit as _udm_v1_Credit, Credit__Output as _udm_v1_Credit__Output } from '../../udm/v1/Credit.js';
import type { RecordResult as _udm_v1_RecordResult, RecordResult__Output as _udm_v1_RecordResult__Output } from '../../udm/v1/RecordResult.js';
import type { UnitDone as _udm_v1_UnitDone, UnitDone__Output as _udm_v1_UnitDone__Output } from '../../udm/v1/UnitDone.js';
import type { Heartbeat as _udm_v1_Heartbeat, Heartbeat__Output as _udm_v1_Heartbeat__Output } from '../../udm/v1/Heartbeat.js';
import type { ResultBatch as _udm_v1_ResultBatch, ResultBatch__Output as _udm_v1_ResultBatch__Output } from '../../udm/v1/ResultBatch.js';

export interface AgentMessage {
  'hello'?: (_udm_v1_Hello | null);
  'credit'?: (_udm_v1_Credit | null);
  'result'?: (_udm_v1_RecordResult | null);
  'unit_done'?: (_udm_v1_UnitDone | null);
  'heartbeat'?: (_udm_v1_Heartbeat | null);
  /**
   * Many results in one message (agents send their results this way, one message per unit or
   * per flush); each is validated, accepted or rejected on its own.
   */
  'results'?: (_udm_v1_ResultBatch | null);
  'kind'?: "hello"|"credit"|"result"|"unit_done"|"heartbeat"|"results";
}

export interface AgentMessage__Output {
  'hello'?: (_udm_v1_Hello__Output | null);
  'credit'?: (_udm_v1_Credit__Output | null);
  'result'?: (_udm_v1_RecordResult__Output | null);
  'unit_done'?: (_udm_v1_UnitDone__Output | null);
  'heartbeat'?: (_udm_v1_Heartbeat__Output | null);
  /**
   * Many results in one message (agents send their results this way, one message per unit or
   * per flush); each is validated, accepted or rejected on its own.
   */
  'results'?: (_udm_v1_ResultBatch__Output | null);
  'kind'?: "hello"|"credit"|"result"|"unit_done"|"heartbeat"|"results";
}
