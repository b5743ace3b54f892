// Original file: proto/udm/v1/orchestrator.proto


export interface UnitDone {
  'unit_id'?: (string);
}

export interface UnitDone__Output {
  'unit_id': (string);
}
