// Original file: proto/udm/v1/orchestrator.proto


export interface MethodParams {
  /**
   * systemone | decisions | label-read
   */
  'method'?: (string);
  /**
   * Label-permutation seeds averaged per question; empty = one read in natural order.
   */
  'seeds'?: (number)[];
  'temperature'?: (number | string);
  /**
   * Model to ask the engine for; empty = the engine's own.
   */
  'model'?: (string);
}

export interface MethodParams__Output {
  /**
   * systemone | decisions | label-read
   */
  'method': (string);
  /**
   * Label-permutation seeds averaged per question; empty = one read in natural order.
   */
  'seeds': (number)[];
  'temperature': (number);
  /**
   * Model to ask the engine for; empty = the engine's own.
   */
  'model': (string);
}
