// Why the coordinator refuses an RPC or ends an agent's stream, and the one mapping of errors to
// gRPC statuses: every refusal and failure the service reports goes through it.
import * as grpc from "@grpc/grpc-js";
import { UdmError, UsageError } from "../../common/errors.js";

export type RefusalReason =
  /** Missing or wrong bearer token. */
  | "unauthenticated"
  /** Not serving (yet or any more): the agent retries. */
  | "unavailable"
  /** The stream broke the protocol (the first message must be Hello). */
  | "protocol"
  /** A newer connection of the same agent took over. */
  | "superseded"
  /** Another process holds this agent_id on a live stream. */
  | "agent-id-in-use";

export class Refusal extends UdmError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

const CODES: Record<RefusalReason, grpc.status> = {
  unauthenticated: grpc.status.UNAUTHENTICATED,
  unavailable: grpc.status.UNAVAILABLE,
  protocol: grpc.status.FAILED_PRECONDITION,
  superseded: grpc.status.ABORTED,
  "agent-id-in-use": grpc.status.ALREADY_EXISTS,
};

export interface GrpcStatus {
  code: grpc.status;
  details: string;
}

export function grpcStatusOf(err: unknown): GrpcStatus {
  if (err instanceof Refusal) return { code: CODES[err.reason], details: err.message };
  if (err instanceof UsageError) return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
  return { code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : String(err) };
}
