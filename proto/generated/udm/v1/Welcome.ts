// Original file: proto/udm/v1/orchestrator.proto

import type { MethodParams as _udm_v1_MethodParams, MethodParams__Output as _udm_v1_MethodParams__Output } from '../../udm/v1/MethodParams.js';

export interface Welcome {
  'run_id'?: (string);
  'params'?: (_udm_v1_MethodParams | null);
  'lease_ms'?: (number);
  'heartbeat_ms'?: (number);
}

export interface Welcome__Output {
  'run_id': (string);
  'params': (_udm_v1_MethodParams__Output | null);
  'lease_ms': (number);
  'heartbeat_ms': (number);
}
