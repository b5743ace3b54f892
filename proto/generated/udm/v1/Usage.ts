// Original file: proto/udm/v1/orchestrator.proto

import type { Long } from '@grpc/proto-loader';

export interface Usage {
  'prompt_tokens'?: (number | string | Long);
  /**
   * Absent when the engine does not report it (vLLM's systemone usage has no cached count): unknown, not 0.
   */
  'cached_tokens'?: (number | string | Long);
  'completion_tokens'?: (number | string | Long);
  'requests'?: (number);
  '_cached_tokens'?: "cached_tokens";
}

export interface Usage__Output {
  'prompt_tokens': (number);
  /**
   * Absent when the engine does not report it (vLLM's systemone usage has no cached count): unknown, not 0.
   */
  'cached_tokens'?: (number);
  'completion_tokens': (number);
  'requests': (number);
  '_cached_tokens'?: "cached_tokens";
}
