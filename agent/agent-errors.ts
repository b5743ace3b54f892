// Errors that end an agent, as opposed to the disconnects it retries.
import { UdmError } from "../common/errors.js";

/** The coordinator refused the agent's credentials (gRPC UNAUTHENTICATED / PERMISSION_DENIED); retrying cannot help. */
export class AgentAuthError extends UdmError {
  constructor(
    readonly coordinator: string,
    readonly grpcCode: number,
    options?: { cause?: unknown },
  ) {
    super(
      `coordinator ${coordinator} refused the agent's credentials (gRPC status ${grpcCode}); check --token and the TLS client certificate`,
      options,
    );
  }
}

/** The coordinator spoke outside the protocol in a way the agent cannot continue from (e.g. rejected the method). */
export class AgentProtocolError extends UdmError {}
