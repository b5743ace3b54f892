// Original file: proto/udm/v1/orchestrator.proto


/**
 * Finish what is in hand, send it, then close the stream.
 */
export interface Drain {
  'reason'?: (string);
}

/**
 * Finish what is in hand, send it, then close the stream.
 */
export interface Drain__Output {
  'reason': (string);
}
