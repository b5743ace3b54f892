// TLS and mutual TLS on the coordinator, and the `udm-orch status` / `udm-orch coordinator` commands.
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { runCli } from "../../cli/program.js";
import { makeTestCerts, skipWithoutOpenssl, type TestCerts } from "../support/test-certs.js";
import { useHarness } from "./helpers/harness.js";
import { eventually } from "./helpers/test-agent.js";
import { writeTinySuite } from "./helpers/tiny-suite.js";

const { tmp, start, agent } = useHarness();

describe.skipIf(skipWithoutOpenssl())("TLS", () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs.remove());

  it("serves agents over TLS and refuses plaintext", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), tls: { cert: certs.serverCert, key: certs.serverKey } });
    const plain = agent(h.address, {});
    await plain.closed;
    expect(plain.error?.code).toBe(grpc.status.UNAVAILABLE);
    const a = agent(h.address, { credit: 2, credentials: grpc.credentials.createSsl(readFileSync(certs.caFile)) });
    expect((await h.done).state).toBe("complete");
    expect(a.units.length).toBeGreaterThan(0);
  });

  it("with mutual TLS refuses an agent without a client certificate", async () => {
    const h = await start({
      suiteDir: writeTinySuite(tmp("suite")),
      outDir: tmp("out"),
      tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.caFile, requireClientCert: true },
    });
    const anonymous = agent(h.address, { credentials: grpc.credentials.createSsl(readFileSync(certs.caFile)) });
    await anonymous.closed;
    expect(anonymous.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(anonymous.units).toHaveLength(0);
    const creds = grpc.credentials.createSsl(readFileSync(certs.caFile), readFileSync(certs.clientKey), readFileSync(certs.clientCert));
    const a = agent(h.address, { credit: 2, credentials: creds });
    expect((await h.done).state).toBe("complete");
    expect(a.units.length).toBeGreaterThan(0);
  });
});

describe("udm-orch status", () => {
  let stdout: string[];
  afterEach(() => vi.restoreAllMocks());
  const capture = () => {
    stdout = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (stdout.push(String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  };

  it("prints the RunStatus as a table and as JSON; a wrong token is exit 2", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), token: "tk" });
    const a = agent(h.address, { agentId: "worker-1", token: "tk", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const p0 = a.units[0]!.records[0]!;
    a.result(a.units[0]!.unit_id, p0.run_id, { probs: {}, skipped: [], errors: {} });
    await eventually(async () => (await h.status()).resultsRejected === 1, 10_000, "rejection");
    capture();
    expect(await runCli(["status", "--coordinator", h.address, "--token", "tk"])).toBe(0);
    const table = stdout.join("");
    expect(table).toContain(`run ${h.runId}  state running`);
    expect(table).toMatch(/records 0\/27 /);
    expect(table).toMatch(/tiny-rr\s+passage_reranking\s+0\s+9/);
    expect(table).toMatch(/worker-1\s+yes\s+1\s+0\s+0\s+1/);
    expect(table).toContain("agents 1 ready of 1 attached");
    expect(table).toContain("rejected by reason: unanswered_question=1; 0 duplicates dropped, 0 records given up");
    capture();
    expect(await runCli(["status", "--coordinator", h.address, "--token", "tk", "--json"])).toBe(0);
    const json = JSON.parse(stdout.join(""));
    expect(json).toMatchObject({ run_id: h.runId, state: "running", records_total: 27, units_inflight: 1 });
    expect(json.tracks).toHaveLength(3);
    expect(json.rejected_by_reason).toEqual({ unanswered_question: 1 });
    capture();
    expect(await runCli(["status", "--coordinator", h.address, "--token", "wrong"])).toBe(2);
    expect(await runCli(["status", "--coordinator", "not-an-address"])).toBe(2);
  });
});

describe("udm-orch coordinator", () => {
  afterEach(() => vi.restoreAllMocks());

  it("prints the listen address, exits 0 when the run completes, and 2 on a run.json mismatch", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const stdout: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (stdout.push(String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    process.env.UDM_LOG_LEVEL = "silent";
    try {
      const exit = runCli(["coordinator", "--suite", suiteDir, "--out", outDir, "--listen", "127.0.0.1:0", "--tracks", "tiny-sa", "--after-complete", "exit"]);
      let address: string | undefined;
      for (let i = 0; i < 1000 && !address; i++) {
        address = /listening on (\S+)/.exec(stdout.join(""))?.[1];
        if (!address) await new Promise((r) => setTimeout(r, 10));
      }
      expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
      agent(address!, { credit: 1 });
      expect(await exit).toBe(0);
      expect(stdout.join("")).toMatch(/complete: 12\/12 records committed/);
      expect(await runCli(["coordinator", "--suite", suiteDir, "--out", outDir, "--listen", "127.0.0.1:0", "--tracks", "tiny-sa", "--method", "label-read"])).toBe(2);
      expect(await runCli(["coordinator", "--suite", suiteDir, "--out", outDir, "--mtls"])).toBe(2);
    } finally {
      delete process.env.UDM_LOG_LEVEL;
    }
  });
});
