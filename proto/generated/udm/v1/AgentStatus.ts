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
   * Set on the agents of RunStatus.agents_left: why it left (its stream ended, it was killed, its
   * lease expired, it was drained) and when (ISO 8601); empty on attached agents.
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
   * Set on the agents of RunStatus.agents_left: why it left (its stream ended, it was killed, its
   * lease expired, it was drained) and when (ISO 8601); empty on attached agents.
   */
  'left_reason': (string);
  'left_at': (string);
}
