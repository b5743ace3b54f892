// Original file: proto/udm/v1/orchestrator.proto


export interface Heartbeat {
  /**
   * Units held by the agent.
   */
  'inflight_units'?: (number);
  /**
   * Requests in flight to its engine.
   */
  'inflight_requests'?: (number);
  /**
   * The engine's vllm:num_requests_waiting and vllm:num_requests_running.
   */
  'engine_waiting'?: (number | string);
  'engine_running'?: (number | string);
  'ready'?: (boolean);
}

export interface Heartbeat__Output {
  /**
   * Units held by the agent.
   */
  'inflight_units': (number);
  /**
   * Requests in flight to its engine.
   */
  'inflight_requests': (number);
  /**
   * The engine's vllm:num_requests_waiting and vllm:num_requests_running.
   */
  'engine_waiting': (number);
  'engine_running': (number);
  'ready': (boolean);
}
