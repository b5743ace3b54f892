// Original file: proto/udm/v1/orchestrator.proto


/**
 * What an engine receives for one record: state and questions only.
 */
export interface Payload {
  'run_id'?: (string);
  'id'?: (string);
  'state_json'?: (string);
  'questions_json'?: (string);
  'payload_sha256'?: (string);
}

/**
 * What an engine receives for one record: state and questions only.
 */
export interface Payload__Output {
  'run_id': (string);
  'id': (string);
  'state_json': (string);
  'questions_json': (string);
  'payload_sha256': (string);
}
