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
}
