// Original file: proto/udm/v1/orchestrator.proto

import type { Welcome as _udm_v1_Welcome, Welcome__Output as _udm_v1_Welcome__Output } from '../../udm/v1/Welcome.js';
import type { WorkUnit as _udm_v1_WorkUnit, WorkUnit__Output as _udm_v1_WorkUnit__Output } from '../../udm/v1/WorkUnit.js';
import type { Cancel as _udm_v1_Cancel, Cancel__Output as _udm_v1_Cancel__Output } from '../../udm/v1/Cancel.js';
import type { Drain as _udm_v1_Drain, Drain__Output as _udm_v1_Drain__Output } from '../../udm/v1/Drain.js';

export interface CoordinatorMessage {
  'welcome'?: (_udm_v1_Welcome | null);
  'unit'?: (_udm_v1_WorkUnit | null);
  'cancel'?: (_udm_v1_Cancel | null);
  'drain'?: (_udm_v1_Drain | null);
  'kind'?: "welcome"|"unit"|"cancel"|"drain";
}

export interface CoordinatorMessage__Output {
  'welcome'?: (_udm_v1_Welcome__Output | null);
  'unit'?: (_udm_v1_WorkUnit__Output | null);
  'cancel'?: (_udm_v1_Cancel__Output | null);
  'drain'?: (_udm_v1_Drain__Output | null);
  'kind'?: "welcome"|"unit"|"cancel"|"drain";
}
