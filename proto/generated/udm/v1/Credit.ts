// Original file: proto/udm/v1/orchestrator.proto


/**
 * Grants the coordinator `units` more work units, on top of those already granted.
 */
export interface Credit {
  'units'?: (number);
}

/**
 * Grants the coordinator `units` more work units, on top of those already granted.
 */
export interface Credit__Output {
  'units': (number);
}
