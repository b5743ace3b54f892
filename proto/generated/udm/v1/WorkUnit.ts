// Original file: proto/udm/v1/orchestrator.proto

import type { Payload as _udm_v1_Payload, Payload__Output as _udm_v1_Payload__Output } from '../../udm/v1/Payload.js';

export interface WorkUnit {
  'unit_id'?: (string);
  'track'?: (string);
  /**
   * The unit's group; for a unit of several small groups, the first of them (all in group_ids).
   */
  'group_id'?: (string);
  'lease_ms'?: (number);
  'records'?: (_udm_v1_Payload)[];
  'group_ids'?: (string)[];
  /**
   * True when this is a backup copy of a unit already leased to another agent.
   */
  'backup'?: (boolean);
}

export interface WorkUnit__Output {
  'unit_id': (string);
  'track': (string);
  /**
   * The unit's group; for a unit of several small groups, the first of them (all in group_ids).
   */
  'group_id': (string);
  'lease_ms': (number);
  'records': (_udm_v1_Payload__Output)[];
  'group_ids': (string)[];
  /**
   * True when this is a backup copy of a unit already leased to another agent.
   */
  'backup': (boolean);
}
