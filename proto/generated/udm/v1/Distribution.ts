// Original file: proto/udm/v1/orchestrator.proto


export interface Distribution {
  'p'?: ({[key: string]: number | string});
}

export interface Distribution__Output {
  'p': ({[key: string]: number});
}
