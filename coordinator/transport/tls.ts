// TLS of the coordinator's gRPC server: server certificate, optionally agents' client
// certificates checked against a CA (mutual TLS).
import { existsSync, readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { UsageError } from "../../common/errors.js";

export interface TlsOptions {
  /** PEM text, or a path to it. */
  cert: string | Buffer;
  key: string | Buffer;
  /** CA that signs agents' client certificates (mutual TLS). */
  ca?: string | Buffer;
  /** Refuse agents without a client certificate signed by `ca`. */
  requireClientCert?: boolean;
}

export function serverCredentials(tls: TlsOptions | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  if (tls.requireClientCert && !tls.ca) throw new UsageError("mutual TLS needs a CA (--tls-ca) to check agents' certificates");
  return grpc.ServerCredentials.createSsl(
    tls.ca ? pem(tls.ca, "CA") : null,
    [{ cert_chain: pem(tls.cert, "certificate"), private_key: pem(tls.key, "key") }],
    tls.requireClientCert ?? false,
  );
}

/** PEM text as given, or read from the file it names. */
export function pem(value: string | Buffer, what: string): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value.includes("-----BEGIN")) return Buffer.from(value);
  if (!existsSync(value)) throw new UsageError(`TLS ${what} file not found: ${value}`);
  return readFileSync(value);
}
