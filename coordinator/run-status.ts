// RunStatus: what the Status RPC, `udm-orch status` and the handle report (the wire shape,
// proto/udm/v1 RunStatus, snake_case), so the CLI prints exactly what the handle holds.
import type { RunStatus__Output } from "../proto/generated/udm/v1/RunStatus.js";

export type RunStatus = RunStatus__Output;
