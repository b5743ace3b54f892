// The Coordinator gRPC service (Attach, Status): checks the bearer token once per call, turns
// wire messages into domain events and the run status into its proto form (wire.ts), and reports
// every refusal through one error-to-status mapping (refusal.ts). Before the run is served (the
// suite is still being read) Attach is refused UNAVAILABLE and Status says "starting".
import { bearerMatches } from "../../common/bearer-token.js";
import * as grpc from "@grpc/grpc-js";
import { loadPackageDefinition, type ProtoGrpcType } from "../../proto/loader.js";
import { grpcStatusOf, Refusal } from "./refusal.js";
import { startingStatus, type RunStatus } from "../../common/run-status/index.js";
import { EncodedUnit } from "./work-unit-encoder.js";
import { agentEventFromBytes, runStatusToWire, type AgentEvent, type AgentMessageWire, type OutboundMessage, type RunStatusWire, type StatusRequestWire } from "./wire.js";

/** Agent messages arrive as domain events (decoded in the deserializer); units already encoded are sent as they are. */
export type AttachStream = grpc.ServerDuplexStream<AgentEvent, OutboundMessage>;

/** One agent's stream as the run handles it. */
export interface AgentSessionInput {
  /** Throws a Refusal to end the stream with its status; any other error is the run's failure. */
  receive(event: AgentEvent): void;
  /**
   * The stream ended, failed or was cancelled (may be called more than once): `how` is the first
   * of the stream's events that said so ("end": the agent closed its side itself; "cancelled" or
   * "error": the connection was lost, the agent killed, or keepalive found it gone).
   */
  closed(how: StreamEnd): void;
}

export type StreamEnd = "end" | "error" | "cancelled" | "close";

/** What the service serves once the run is ready. */
export interface ServedRun {
  /** A new Attach stream; throws a Refusal when the run takes no agents. */
  openSession(stream: AttachStream): AgentSessionInput;
  status(): RunStatus;
}

export class CoordinatorService {
  private run: ServedRun | undefined;
  private readonly expectedAuth: Buffer | undefined;

  constructor(private readonly options: { token?: string; onFailure: (err: Error) => void }) {
    this.expectedAuth = options.token === undefined ? undefined : Buffer.from(options.token);
  }

  /** Registers Attach and Status on `server` (orchestrator.proto, loaded here as health.ts loads its own). */
  addTo(server: grpc.Server): void {
    const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
    const service = proto.udm.v1.Coordinator.service;
    const attach = service.Attach;
    const decode = attach.requestDeserialize as (buf: Buffer) => AgentMessageWire;
    const encode = attach.responseSerialize as (m: Exclude<OutboundMessage, EncodedUnit>) => Buffer;
    // The hot messages skip the generic codec: results are decoded straight into domain events,
    // work units come already encoded (work-unit-encoder.ts).
    const definition = {
      ...service,
      Attach: {
        ...attach,
        requestDeserialize: (buf: Buffer) => agentEventFromBytes(buf, decode),
        responseSerialize: (m: OutboundMessage) => (m instanceof EncodedUnit ? m.bytes : encode(m)),
      },
    } as unknown as grpc.ServiceDefinition;
    server.addService(definition, {
      Attach: (call: AttachStream) => this.attach(call),
      Status: (call: grpc.ServerUnaryCall<StatusRequestWire, RunStatusWire>, cb: grpc.sendUnaryData<RunStatusWire>) => {
        try {
          this.checkToken(call.metadata);
          cb(null, runStatusToWire(this.run ? this.run.status() : startingStatus()));
        } catch (err) {
          cb(grpcStatusOf(err));
        }
      },
    });
  }

  serve(run: ServedRun): void {
    this.run = run;
  }

  private attach(call: AttachStream): void {
    let session: AgentSessionInput;
    try {
      this.checkToken(call.metadata);
      if (!this.run) throw new Refusal("unavailable", "coordinator is starting (reading the suite)");
      session = this.run.openSession(call);
    } catch (err) {
      call.emit("error", grpcStatusOf(err));
      return;
    }
    call.on("data", (event: AgentEvent) => {
      try {
        session.receive(event);
      } catch (err) {
        if (err instanceof Refusal) call.emit("error", grpcStatusOf(err));
        else this.options.onFailure(err as Error);
      }
    });
    for (const how of ["end", "error", "cancelled", "close"] as const) call.on(how, () => session.closed(how));
  }

  private checkToken(md: grpc.Metadata): void {
    if (!this.expectedAuth) return;
    const got = md.get("authorization")[0];
    if (
      !bearerMatches(
        // Stryker disable next-line ConditionalExpression: "authorization" is not a -bin key, so gRPC gives a string or nothing (the test is for the type)
        typeof got === "string" ? got : undefined,
        this.expectedAuth,
      )
    ) {
      throw new Refusal("unauthenticated", "missing or wrong bearer token");
    }
  }
}
