// Original file: proto/udm/v1/orchestrator.proto

import type { Long } from '@grpc/proto-loader';

export interface TrackProgress {
  'track'?: (string);
  'family'?: (string);
  'records'?: (number | string | Long);
  'committed'?: (number | string | Long);
  'complete'?: (boolean);
}

export interface TrackProgress__Output {
  'track': (string);
  'family': (string);
  'records': (number);
  'committed': (number);
  'complete': (boolean);
}
