// Original file: proto/udm/v1/orchestrator.proto

import type { Long } from '@grpc/proto-loader';

export interface Usage {
  'prompt_tokens'?: (number | string | Long);
  'cached_tokens'?: (number | string | Long);
  'completion_tokens'?: (number | string | Long);
  'requests'?: (number);
}

export interface Usage__Output {
  'prompt_tokens': (number);
  'cached_tokens': (number);
  'completion_tokens': (number);
  'requests': (number);
}
