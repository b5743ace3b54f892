// Original file: proto/udm/v1/orchestrator.proto


/**
 * Stop work on a unit (its records were committed elsewhere, or its lease went to another agent).
 */
export interface Cancel {
  'unit_id'?: (string);
}

/**
 * Stop work on a unit (its records were committed elsewhere, or its lease went to another agent).
 */
export interface Cancel__Output {
  'unit_id': (string);
}
