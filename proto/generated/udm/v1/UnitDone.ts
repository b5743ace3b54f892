// Original file: proto/udm/v1/orchestrator.proto


export interface UnitDone {
  'unit_id'?: (string);
  /**
   * True when the agent gives the unit back without answering the rest of it (its engine stopped
   * answering): the coordinator requeues the unanswered records at once instead of at lease expiry.
   * Coordinators without this field release the lease the same way (a UnitDone with records left).
   */
  'handed_back'?: (boolean);
}

export interface UnitDone__Output {
  'unit_id': (string);
  /**
   * True when the agent gives the unit back without answering the rest of it (its engine stopped
   * answering): the coordinator requeues the unanswered records at once instead of at lease expiry.
   * Coordinators without this field release the lease the same way (a UnitDone with records left).
   */
  'handed_back': (boolean);
}
