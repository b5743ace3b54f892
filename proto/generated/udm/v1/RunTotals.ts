// Original file: proto/udm/v1/orchestrator.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Tokens and latency are over results committed since the coordinator started.
 */
export interface RunTotals {
  'prompt_tokens'?: (number | string | Long);
  'completion_tokens'?: (number | string | Long);
  'cached_tokens'?: (number | string | Long);
  /**
   * False while no result reported a cached count: cached_tokens is then unknown, not 0.
   */
  'cached_tokens_known'?: (boolean);
  /**
   * Sum over agents of seconds attached while the run was active.
   */
  'gpu_seconds'?: (number | string);
  'latency_count'?: (number | string | Long);
  'latency_mean_ms'?: (number | string);
  'latency_p50_ms'?: (number | string);
  'latency_p95_ms'?: (number | string);
  'records_per_second'?: (number | string);
  /**
   * Seconds until every record is committed at records_per_second; 0 when complete.
   */
  'eta_seconds'?: (number | string);
  /**
   * False while no pace is known (eta_seconds is then 0 and means unknown).
   */
  'eta_known'?: (boolean);
}

/**
 * Tokens and latency are over results committed since the coordinator started.
 */
export interface RunTotals__Output {
  'prompt_tokens': (number);
  'completion_tokens': (number);
  'cached_tokens': (number);
  /**
   * False while no result reported a cached count: cached_tokens is then unknown, not 0.
   */
  'cached_tokens_known': (boolean);
  /**
   * Sum over agents of seconds attached while the run was active.
   */
  'gpu_seconds': (number);
  'latency_count': (number);
  'latency_mean_ms': (number);
  'latency_p50_ms': (number);
  'latency_p95_ms': (number);
  'records_per_second': (number);
  /**
   * Seconds until every record is committed at records_per_second; 0 when complete.
   */
  'eta_seconds': (number);
  /**
   * False while no pace is known (eta_seconds is then 0 and means unknown).
   */
  'eta_known': (boolean);
}
