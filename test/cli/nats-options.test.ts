import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../../common/errors.js";
import { natsBusOptionsFrom, natsCliOptions, type NatsFlagValues } from "../../cli/nats-options.js";

const dir = mkdtempSync(join(tmpdir(), "udm-nats-opts-"));
const file = (name: string) => {
  const p = join(dir, name);
  writeFileSync(p, "-----BEGIN X-----\n");
  return p;
};
const ca = file("ca.pem");
const cert = file("client.pem");
const key = file("client.key");
const creds = file("user.creds");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Parses argv with a command carrying the NATS flags, with `env` as the environment. */
function parse(argv: string[], env: Record<string, string> = {}): NatsFlagValues {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith("UDM_NATS")) delete process.env[k];
  Object.assign(process.env, env);
  try {
    const cmd = new Command("scorer").exitOverride();
    for (const o of natsCliOptions()) cmd.addOption(o);
    cmd.parse(argv, { from: "user" });
    return cmd.opts<NatsFlagValues>();
  } finally {
    process.env = saved;
  }
}

describe("natsBusOptionsFrom", () => {
  it("is undefined without --nats (the in-process bus)", () => {
    expect(natsBusOptionsFrom(parse([]))).toBeUndefined();
  });

  it.each<[string, string[], Record<string, string>, object]>([
    ["one URL", ["--nats", "nats://nats:4222"], {}, { servers: ["nats://nats:4222"] }],
    ["several URLs, host:port without scheme", ["--nats", "nats://a:4222, b:4222"], {}, { servers: ["nats://a:4222", "b:4222"] }],
    ["user and password", ["--nats", "nats://n:4222", "--nats-user", "udm", "--nats-pass", "pw"], {}, { servers: ["nats://n:4222"], user: "udm", pass: "pw" }],
    ["token from UDM_NATS_TOKEN", ["--nats", "nats://n:4222"], { UDM_NATS_TOKEN: "t0k" }, { servers: ["nats://n:4222"], token: "t0k" }],
    ["everything from the environment", [], { UDM_NATS: "nats://n:4222", UDM_NATS_USER: "u", UDM_NATS_PASS: "p" }, { servers: ["nats://n:4222"], user: "u", pass: "p" }],
    ["creds file", ["--nats", "nats://n:4222", "--nats-creds", creds], {}, { servers: ["nats://n:4222"], credsFile: creds }],
    ["TLS with a CA", ["--nats", "nats://n:4222", "--nats-tls-ca", ca], {}, { servers: ["nats://n:4222"], tls: { caFile: ca } }],
    ["mutual TLS", ["--nats", "nats://n:4222", "--nats-tls-ca", ca, "--nats-tls-cert", cert, "--nats-tls-key", key], {}, { servers: ["nats://n:4222"], tls: { caFile: ca, certFile: cert, keyFile: key } }],
    ["tls:// URL requires TLS", ["--nats", "tls://n:4222"], {}, { servers: ["tls://n:4222"], tls: {} }],
  ])("%s", (_name, argv, env, expected) => {
    expect(natsBusOptionsFrom(parse(argv, env))).toEqual(expected);
  });

  it("a flag wins over its environment variable", () => {
    expect(natsBusOptionsFrom(parse(["--nats", "nats://flag:4222"], { UDM_NATS: "nats://env:4222" }))?.servers).toEqual(["nats://flag:4222"]);
  });

  it.each<[string, string[], RegExp]>([
    ["credentials without --nats", ["--nats-token", "t"], /need --nats/],
    ["user without password", ["--nats", "nats://n:4222", "--nats-user", "u"], /--nats-user and --nats-pass go together/],
    ["password without user", ["--nats", "nats://n:4222", "--nats-pass", "p"], /--nats-user and --nats-pass go together/],
    ["token and user", ["--nats", "nats://n:4222", "--nats-token", "t", "--nats-user", "u", "--nats-pass", "p"], /one kind of NATS credentials, not --nats-user and --nats-token/],
    ["cert without key", ["--nats", "nats://n:4222", "--nats-tls-cert", "/x"], /--nats-tls-cert and --nats-tls-key go together/],
    ["missing CA file", ["--nats", "nats://n:4222", "--nats-tls-ca", "/nonexistent/ca.pem"], /--nats-tls-ca: file \/nonexistent\/ca.pem does not exist/],
    ["missing creds file", ["--nats", "nats://n:4222", "--nats-creds", "/nonexistent/u.creds"], /--nats-creds: file/],
    ["http URL", ["--nats", "http://n:4222"], /must use nats:\/\/ or tls:\/\//],
    ["empty list", ["--nats", " , "], /no server URL/],
  ])("rejects %s with a usage error", (_name, argv, message) => {
    const run = () => natsBusOptionsFrom(parse(argv));
    expect(run).toThrow(UsageError);
    expect(run).toThrow(message);
  });
});
