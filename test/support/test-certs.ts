// A throwaway CA, a server certificate for 127.0.0.1 and a client certificate, made with the
// openssl CLI in a temp dir, for TLS and mutual-TLS tests against real servers.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toolMode, underCi } from "./real-tool.js";

export interface TestCerts {
  dir: string;
  caFile: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  remove(): void;
}

function opensslRuns(): boolean {
  const r = spawnSync("openssl", ["version"], { stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

/**
 * Whether the TLS tests skip: only when openssl is missing on a developer's machine. Under CI (a
 * true value) they run, and makeTestCerts fails them with the reason when openssl is missing.
 */
export function skipWithoutOpenssl(): boolean {
  if (opensslRuns()) return false;
  return toolMode(["openssl"], "apt-get install openssl").mode === "skip";
}

export function makeTestCerts(): TestCerts {
  if (!opensslRuns()) throw new Error(`openssl not found (apt-get install openssl)${underCi() ? `: CI=${process.env.CI} needs it; .ci/run installs it` : ""}`);
  const dir = mkdtempSync(join(tmpdir(), "udm-certs-"));
  const p = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=udm-test-ca");
  const leaf = (name: string, cn: string, ext: string) => {
    writeFileSync(p(`${name}.ext`), ext);
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", p(`${name}.key`), "-out", p(`${name}.csr`), "-subj", `/CN=${cn}`);
    ssl("x509", "-req", "-in", p(`${name}.csr`), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial", "-out", p(`${name}.pem`), "-days", "2", "-extfile", p(`${name}.ext`));
  };
  leaf("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  leaf("client", "udm-agent", "extendedKeyUsage=clientAuth\n");
  return {
    dir,
    caFile: p("ca.pem"),
    serverCert: p("server.pem"),
    serverKey: p("server.key"),
    clientCert: p("client.pem"),
    clientKey: p("client.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
