// Loads the grpc.health.v1 protocol (proto/grpc/health/v1/health.proto) at run time, like loader.ts.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import * as protoLoader from "@grpc/proto-loader";
import { LOADER_OPTIONS } from "./loader.js";

export type ServingStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";

export interface HealthCheckRequest {
  service: string;
}

export interface HealthCheckResponse {
  status: ServingStatus;
}

/** The .proto file, found both from the source tree (proto/) and from the build (dist/proto/). */
export function healthProtoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, "grpc/health/v1/health.proto"), join(here, "../../proto/grpc/health/v1/health.proto")]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`health.proto not found near ${here}`);
}

export function loadHealthPackageDefinition(): protoLoader.PackageDefinition {
  return protoLoader.loadSync(healthProtoPath(), LOADER_OPTIONS);
}
