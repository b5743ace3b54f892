// The gRPC client of the coordinator: credentials (insecure, TLS, mutual TLS), keepalive, and the
// Attach stream it opens.
import { readFileSync } from "node:fs";
import { X509Certificate, createPrivateKey } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { UsageError } from "../../common/errors.js";
import { loadPackageDefinition } from "../../proto/loader.js";
import type { ProtoGrpcType } from "../../proto/generated/orchestrator.js";
import type { CoordinatorClient } from "../../proto/generated/udm/v1/Coordinator.js";
import type { AgentWireMessage, CoordinatorWireMessage } from "./wire.js";

export type { CoordinatorClient };

/** One Attach stream: the agent writes AgentWireMessages and reads CoordinatorWireMessages. */
export type AttachCall = grpc.ClientDuplexStream<AgentWireMessage, CoordinatorWireMessage>;

/** PEM file paths. CA alone: TLS; with cert and key: mutual TLS. */
export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Keepalive pings find a dead coordinator (or a silent NAT drop) on an otherwise idle stream. */
export const KEEPALIVE_OPTIONS: grpc.ChannelOptions = {
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
};

/** Reads a PEM file and checks that it is what it claims, so a garbage file is a usage error, not an endless reattach. */
function readPem(what: "CA" | "key" | "certificate", file: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw new UsageError(`cannot read TLS ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    if (what === "key") createPrivateKey(pem);
    else new X509Certificate(pem);
  } catch (err) {
    throw new UsageError(`TLS ${what} ${file} is not a PEM ${what === "key" ? "private key" : "certificate"}: ${(err as Error).message}`, { cause: err });
  }
  return pem;
}

export function channelCredentials(tls: TlsFiles | undefined): grpc.ChannelCredentials {
  if (!tls || (!tls.ca && !tls.cert && !tls.key)) return grpc.credentials.createInsecure();
  if (Boolean(tls.cert) !== Boolean(tls.key)) throw new UsageError("TLS client certificate and key go together (--tls-cert and --tls-key)");
  return grpc.credentials.createSsl(
    tls.ca ? readPem("CA", tls.ca) : null,
    tls.key ? readPem("key", tls.key) : null,
    tls.cert ? readPem("certificate", tls.cert) : null,
  );
}

let clientConstructor: ProtoGrpcType["udm"]["v1"]["Coordinator"] | undefined;

/** A new channel to the coordinator; each attach gets its own so our backoff, not the channel's, decides when to retry. */
export function createCoordinatorClient(address: string, credentials: grpc.ChannelCredentials, options: grpc.ChannelOptions = {}): CoordinatorClient {
  clientConstructor ??= (grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType).udm.v1.Coordinator;
  return new clientConstructor(address, credentials, { ...KEEPALIVE_OPTIONS, ...options });
}

/** Opens an Attach stream as `agentId`, with the bearer token when there is one. */
export function openAttach(client: CoordinatorClient, agentId: string, token: string | undefined): AttachCall {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  metadata.set("x-udm-agent-id", agentId);
  return client.Attach(metadata);
}
