// Original file: proto/udm/v1/orchestrator.proto


/**
 * Finish what is in hand, send it, then close the stream.
 */
export interface Drain {
  'reason'?: (string);
  /**
   * The coordinator stops to be restarted (the run is not complete): after closing the stream the
   * agent reattaches with its backoff instead of exiting. Agents that predate the field exit.
   */
  'reconnect'?: (boolean);
}

/**
 * Finish what is in hand, send it, then close the stream.
 */
export interface Drain__Output {
  'reason': (string);
  /**
   * The coordinator stops to be restarted (the run is not complete): after closing the stream the
   * agent reattaches with its backoff instead of exiting. Agents that predate the field exit.
   */
  'reconnect': (boolean);
}
