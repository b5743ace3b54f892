// Original file: proto/udm/v1/orchestrator.proto

import type { Long } from '@grpc/proto-loader';

export interface AgentStatus {
  'agent_id'?: (string);
  'model'?: (string);
  'ready'?: (boolean);
  'inflight_units'?: (number);
  'credit'?: (number);
  'results'?: (number | string | Long);
  'rejected'?: (number | string | Long);
  'engine_url'?: (string);
  /**
   * From its last heartbeat: requests in flight to its engine, and the engine's own queue
   * (vllm:num_requests_waiting, vllm:num_requests_running).
   */
  'inflight_requests'?: (number);
  'engine_waiting'?: (number | string);
  'engine_running'?: (number | string);
  /**
   * Set when the agent has left (its stream ended, it was killed, its lease expired or it was
   * drained): why, and when (ISO 8601). A left agent is listed for a while after it leaves
   * (coordinator/left-agents.ts) with ready false and nothing in flight.
   */
  'left_reason'?: (string);
  'left_at'?: (string);
}

export interface AgentStatus__Output {
  'agent_id': (string);
  'model': (string);
  'ready': (boolean);
  'inflight_units': (number);
  'credit': (number);
  'results': (number);
  'rejected': (number);
  'engine_url': (string);
  /**
   * From its last heartbeat: requests in flight to its engine, and the engine's own queue
   * (vllm:num_requests_waiting, vllm:num_requests_running).
   */
  'inflight_requests': (number);
  'engine_waiting': (number);
  'engine_running': (number);
  /**
   * Set when the agent has left (its stream ended, it was killed, its lease expired or it was
   * drained): why, and when (ISO 8601). A left agent is listed for a while after it leaves
   * (coordinator/left-agents.ts) with ready false and nothing in flight.
   */
  'left_reason': (string);
  'left_at': (string);
}
