// grpc.health.v1 Health service: Check and Watch, for probes. "" names the whole server.
import * as grpc from "@grpc/grpc-js";
import { loadHealthPackageDefinition, type HealthCheckRequest, type HealthCheckResponse, type ServingStatus } from "../../proto/health-loader.js";

export const COORDINATOR_SERVICE = "udm.v1.Coordinator";

export class HealthService {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Set<{ service: string; call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse> }>();

  constructor(initial: ServingStatus = "NOT_SERVING") {
    this.statuses.set("", initial);
    this.statuses.set(COORDINATOR_SERVICE, initial);
  }

  /** Sets the status of the server and of the coordinator service, telling every watcher. */
  set(status: ServingStatus): void {
    for (const service of this.statuses.keys()) this.statuses.set(service, status);
    for (const w of this.watchers) w.call.write({ status: this.statuses.get(w.service) ?? "SERVICE_UNKNOWN" });
  }

  /** Ends every Watch stream (server shutting down). */
  endWatches(): void {
    for (const w of this.watchers) w.call.end();
    this.watchers.clear();
  }

  addTo(server: grpc.Server): void {
    const pkg = grpc.loadPackageDefinition(loadHealthPackageDefinition()) as unknown as {
      grpc: { health: { v1: { Health: { service: grpc.ServiceDefinition } } } };
    };
    server.addService(pkg.grpc.health.v1.Health.service, {
      Check: (call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, cb: grpc.sendUnaryData<HealthCheckResponse>) => {
        const status = this.statuses.get(call.request.service);
        if (!status) cb({ code: grpc.status.NOT_FOUND, details: `unknown service ${JSON.stringify(call.request.service)}` });
        else cb(null, { status });
      },
      Watch: (call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) => {
        const w = { service: call.request.service, call };
        this.watchers.add(w);
        call.write({ status: this.statuses.get(w.service) ?? "SERVICE_UNKNOWN" });
        call.on("cancelled", () => this.watchers.delete(w));
      },
    });
  }
}
