// Who may talk to a coordinator: --token (bearer token) and its server TLS (--tls-cert, --tls-key,
// --tls-ca, --mtls), with the usage errors that name the flags that go together.
import { UsageError } from "../../common/errors.js";
import type { TlsOptions } from "../../coordinator/index.js";
import { flagGroup, type FlagGroup, type FlagSpec } from "../flag-group.js";

export interface AccessOptions {
  /** Bearer token clients must send. @default none */
  token?: string;
  /** Bearer token GET /metrics needs. @default the run's token */
  metricsToken?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  mtls?: boolean;
}

/** --token; a command whose token guards something else (the live page, a sweep) gives its own description. */
export const TOKEN_FLAG: FlagSpec<AccessOptions> = { key: "token", flags: "--token <token>", description: "bearer token agents and status clients must send" };

/** --token and the coordinator's server TLS. */
export const ACCESS_FLAGS = flagGroup<AccessOptions>({}, [
  TOKEN_FLAG,
  { key: "tlsCert", flags: "--tls-cert <file>", description: "server certificate (PEM); enables TLS" },
  { key: "tlsKey", flags: "--tls-key <file>", description: "server private key (PEM)" },
  { key: "tlsCa", flags: "--tls-ca <file>", description: "CA (PEM) that signs agents' client certificates" },
  { key: "mtls", flags: "--mtls", description: "require agents to present a client certificate signed by --tls-ca" },
]);

/** The server TLS the flags ask for (undefined: plaintext); UsageError when they do not go together. */
export function serverTlsFrom(a: AccessOptions): TlsOptions | undefined {
  if (Boolean(a.tlsCert) !== Boolean(a.tlsKey)) throw new UsageError("--tls-cert and --tls-key go together");
  if ((a.tlsCa || a.mtls) && !a.tlsCert) throw new UsageError("--tls-ca and --mtls need --tls-cert and --tls-key");
  if (a.mtls && !a.tlsCa) throw new UsageError("--mtls needs --tls-ca to check agents' certificates");
  return a.tlsCert ? { cert: a.tlsCert, key: a.tlsKey!, ...(a.tlsCa ? { ca: a.tlsCa } : {}), requireClientCert: Boolean(a.mtls) } : undefined;
}

/** --token alone, described for what it guards (the live page of `run`, a sweep's coordinator, the coordinator `status` asks). */
export function tokenFlags(description: string): FlagGroup<AccessOptions> {
  return flagGroup<AccessOptions>({}, [{ ...TOKEN_FLAG, description }]);
}

/** --metrics-token: what /metrics needs (Prometheus sends it from its `authorization` block); the run's --token when not given. */
export const METRICS_TOKEN_FLAGS = flagGroup<AccessOptions>({}, [
  { key: "metricsToken", flags: "--metrics-token <token>", description: "bearer token GET /metrics requires (default: --token; /metrics is open without either)" },
]);

/** The token /metrics needs: --metrics-token, else --token, else none. */
export function metricsTokenFrom(a: Pick<AccessOptions, "token" | "metricsToken">): string | undefined {
  return a.metricsToken || a.token || undefined;
}
