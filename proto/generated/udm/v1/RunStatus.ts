// Original file: proto/udm/v1/orchestrator.proto

import type { AgentStatus as _udm_v1_AgentStatus, AgentStatus__Output as _udm_v1_AgentStatus__Output } from '../../udm/v1/AgentStatus.js';
import type { TrackProgress as _udm_v1_TrackProgress, TrackProgress__Output as _udm_v1_TrackProgress__Output } from '../../udm/v1/TrackProgress.js';
import type { RunTotals as _udm_v1_RunTotals, RunTotals__Output as _udm_v1_RunTotals__Output } from '../../udm/v1/RunTotals.js';
import type { Long } from '@grpc/proto-loader';

export interface RunStatus {
  'run_id'?: (string);
  /**
   * starting | running | draining | complete | failed | cancelled
   */
  'state'?: (string);
  'suite_identity'?: (string);
  'records_total'?: (number | string | Long);
  'records_committed'?: (number | string | Long);
  'records_resumed'?: (number | string | Long);
  'units_queued'?: (number);
  'units_inflight'?: (number);
  'results_rejected'?: (number | string | Long);
  'leases_expired'?: (number | string | Long);
  'backup_units'?: (number | string | Long);
  'records_per_second'?: (number | string);
  'elapsed_seconds'?: (number | string);
  'agents'?: (_udm_v1_AgentStatus)[];
  'tracks'?: (_udm_v1_TrackProgress)[];
  /**
   * Rejected results by reason: unknown_run_id, no_lease, not_in_unit, payload_mismatch,
   * unknown_question, bad_distribution, unanswered_question, conflicting_question.
   */
  'rejected_by_reason'?: ({[key: string]: number | string | Long});
  /**
   * Results dropped because their run_id was already answered (the first result wins).
   */
  'results_duplicate'?: (number | string | Long);
  /**
   * Records committed with every question in errors after repeated invalid results.
   */
  'records_given_up'?: (number | string | Long);
  /**
   * The run's totals (coordinator/run-status.ts RunTotals); absent from coordinators before them.
   */
  'totals'?: (_udm_v1_RunTotals | null);
  /**
   * Seconds of this run before this coordinator started (earlier sessions of the same --out),
   * already counted in elapsed_seconds.
   */
  'elapsed_before_seconds'?: (number | string);
  /**
   * Agents that left lately (the last 10 minutes, at most 64; coordinator/left-agents.ts), each
   * with left_reason and left_at. `agents` lists attached agents only.
   */
  'agents_left'?: (_udm_v1_AgentStatus)[];
}

export interface RunStatus__Output {
  'run_id': (string);
  /**
   * starting | running | draining | complete | failed | cancelled
   */
  'state': (string);
  'suite_identity': (string);
  'records_total': (number);
  'records_committed': (number);
  'records_resumed': (number);
  'units_queued': (number);
  'units_inflight': (number);
  'results_rejected': (number);
  'leases_expired': (number);
  'backup_units': (number);
  'records_per_second': (number);
  'elapsed_seconds': (number);
  'agents': (_udm_v1_AgentStatus__Output)[];
  'tracks': (_udm_v1_TrackProgress__Output)[];
  /**
   * Rejected results by reason: unknown_run_id, no_lease, not_in_unit, payload_mismatch,
   * unknown_question, bad_distribution, unanswered_question, conflicting_question.
   */
  'rejected_by_reason': ({[key: string]: number});
  /**
   * Results dropped because their run_id was already answered (the first result wins).
   */
  'results_duplicate': (number);
  /**
   * Records committed with every question in errors after repeated invalid results.
   */
  'records_given_up': (number);
  /**
   * The run's totals (coordinator/run-status.ts RunTotals); absent from coordinators before them.
   */
  'totals': (_udm_v1_RunTotals__Output | null);
  /**
   * Seconds of this run before this coordinator started (earlier sessions of the same --out),
   * already counted in elapsed_seconds.
   */
  'elapsed_before_seconds': (number);
  /**
   * Agents that left lately (the last 10 minutes, at most 64; coordinator/left-agents.ts), each
   * with left_reason and left_at. `agents` lists attached agents only.
   */
  'agents_left': (_udm_v1_AgentStatus__Output)[];
}
