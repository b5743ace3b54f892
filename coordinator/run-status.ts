// RunStatus: what the Status RPC, `udm-orch status` and the handle report. The wire shape
// (snake_case, proto/udm/v1 RunStatus) plus counters the proto does not carry.
import type { RunStatus__Output } from "../proto/generated/udm/v1/RunStatus.js";
import type { RejectReason } from "./result-validator.js";

export interface RunStatus extends RunStatus__Output {
  rejected_by_reason: Partial<Record<RejectReason, number>>;
  /** Results dropped because their run_id was already answered (first result wins). */
  results_duplicate: number;
  /** Records committed with every question in errors after repeated invalid results. */
  records_given_up: number;
}
