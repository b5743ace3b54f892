// The NATS connection flags shared by `coordinator` and `scorer` (and their UDM_NATS_* variables,
// derived from the flag as every flag's is), turned into NatsBusOptions with usage errors that name
// the flag. One group, so every command that talks to the bus offers the same flags.
import { existsSync } from "node:fs";
import type { Option } from "commander";
import type { NatsBusOptions } from "../common/bus/index.js";
import { UsageError } from "../common/errors.js";
import { flagGroup, flagOptions } from "./flag-group.js";

/** Values as commander parses them (camelCase of the long flags). */
export interface NatsFlagValues {
  nats?: string;
  natsUser?: string;
  natsPass?: string;
  natsToken?: string;
  natsCreds?: string;
  natsTlsCa?: string;
  natsTlsCert?: string;
  natsTlsKey?: string;
}

/** The NATS flags; their values become NatsBusOptions in natsBusOptionsFrom(), which checks them together. */
export const NATS_FLAGS = flagGroup<NatsFlagValues>({}, [
  { key: "nats", flags: "--nats <url>", description: "NATS server URL(s), comma-separated (nats://host:4222); without it the bus is in-process" },
  { key: "natsUser", flags: "--nats-user <user>", description: "NATS user (with --nats-pass)" },
  { key: "natsPass", flags: "--nats-pass <password>", description: "NATS password (with --nats-user)" },
  { key: "natsToken", flags: "--nats-token <token>", description: "NATS authorization token" },
  { key: "natsCreds", flags: "--nats-creds <file>", description: "NATS credentials file (JWT and NKey seed)" },
  { key: "natsTlsCa", flags: "--nats-tls-ca <file>", description: "CA certificate (PEM) to verify the NATS server; implies TLS" },
  { key: "natsTlsCert", flags: "--nats-tls-cert <file>", description: "client certificate (PEM) for mutual TLS, with --nats-tls-key" },
  { key: "natsTlsKey", flags: "--nats-tls-key <file>", description: "client key (PEM) for mutual TLS, with --nats-tls-cert" },
]);

/** The options to add to a command: `for (const o of natsCliOptions()) cmd.addOption(o)`. */
export function natsCliOptions(): Option[] {
  return flagOptions(NATS_FLAGS);
}

function parseServers(value: string): string[] {
  const servers = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (servers.length === 0) throw new UsageError(`--nats: no server URL in ${JSON.stringify(value)}`);
  for (const s of servers) {
    const withScheme = /^[a-z]+:\/\//.test(s) ? s : `nats://${s}`;
    let url: URL;
    try {
      url = new URL(withScheme);
    } catch {
      throw new UsageError(`--nats: ${JSON.stringify(s)} is not a URL (expected nats://host:port)`);
    }
    if (!["nats:", "tls:"].includes(url.protocol)) {
      throw new UsageError(`--nats: ${JSON.stringify(s)} must use nats:// or tls://`);
    }
    if (!url.hostname) throw new UsageError(`--nats: ${JSON.stringify(s)} has no host`);
  }
  return servers;
}

function existingFile(flag: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  if (!existsSync(path)) throw new UsageError(`--${flag}: file ${path} does not exist`);
  return path;
}

/**
 * NatsBusOptions from the flags, or undefined when --nats is not given (the in-process bus).
 * One kind of credentials at a time: user+password, token, or a creds file.
 */
export function natsBusOptionsFrom(v: NatsFlagValues): NatsBusOptions | undefined {
  const authGiven = [v.natsUser, v.natsPass, v.natsToken, v.natsCreds, v.natsTlsCa, v.natsTlsCert, v.natsTlsKey].some((x) => x !== undefined);
  if (v.nats === undefined || v.nats.trim() === "") {
    if (authGiven) throw new UsageError("--nats-* credentials or TLS flags need --nats <url>");
    return undefined;
  }
  const servers = parseServers(v.nats);
  if ((v.natsUser === undefined) !== (v.natsPass === undefined)) {
    throw new UsageError("--nats-user and --nats-pass go together");
  }
  const kinds = [v.natsUser !== undefined && "--nats-user", v.natsToken !== undefined && "--nats-token", v.natsCreds !== undefined && "--nats-creds"].filter(Boolean);
  if (kinds.length > 1) throw new UsageError(`give one kind of NATS credentials, not ${kinds.join(" and ")}`);
  if ((v.natsTlsCert === undefined) !== (v.natsTlsKey === undefined)) {
    throw new UsageError("--nats-tls-cert and --nats-tls-key go together");
  }
  const options: NatsBusOptions = { servers };
  if (v.natsUser !== undefined) {
    options.user = v.natsUser;
    options.pass = v.natsPass ?? "";
  }
  if (v.natsToken !== undefined) options.token = v.natsToken;
  const creds = existingFile("nats-creds", v.natsCreds);
  if (creds !== undefined) options.credsFile = creds;
  const ca = existingFile("nats-tls-ca", v.natsTlsCa);
  const cert = existingFile("nats-tls-cert", v.natsTlsCert);
  const key = existingFile("nats-tls-key", v.natsTlsKey);
  if (ca !== undefined || cert !== undefined || servers.some((s) => s.startsWith("tls://"))) {
    options.tls = {};
    if (ca !== undefined) options.tls.caFile = ca;
    if (cert !== undefined) options.tls.certFile = cert;
    if (key !== undefined) options.tls.keyFile = key;
  }
  return options;
}
