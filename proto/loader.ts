// Loads orchestrator.proto at run time with @grpc/proto-loader (no protoc, nothing downloaded at
// install). The TypeScript types in proto/generated/ come from the same file via
// `npm run proto:gen` (proto-loader-gen-types) and are committed.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./generated/orchestrator.js";

/** Options that must match the `proto:gen` script so runtime objects have the generated shape. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The .proto file, found both from the source tree (proto/) and from the build (dist/proto/). */
export function protoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, "udm/v1/orchestrator.proto"), join(here, "../../proto/udm/v1/orchestrator.proto")]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`orchestrator.proto not found near ${here}`);
}

export function loadPackageDefinition(): protoLoader.PackageDefinition {
  return protoLoader.loadSync(protoPath(), LOADER_OPTIONS);
}

export type { ProtoGrpcType };
