// Agents built by startAgent with the systemone method against simulated engines, attached to the
// real coordinator over gRPC on 127.0.0.1: the run completes, every record is committed, and the
// agents end drained by the coordinator.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCoordinator } from "../../coordinator/server.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { startAgent } from "../../agent/attach-loop.js";
import { AgentAuthError } from "../../agent/agent-errors.js";
import { createLogger } from "../../common/log.js";
import { makeTestCerts, skipWithoutOpenssl } from "../support/test-certs.js";
import { waitFor } from "./attach-fakes.js";

const quiet = createLogger("test", "silent");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `udm-attach-${name}-`));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const TRACKS = ["vihsd", "trec-dl19", "respan", "toucan-kimi-k2"];

describe("agent with the real coordinator", () => {
  it("two agents complete a run; every record is committed; both end drained by the coordinator", async () => {
    const suiteDir = tmp("suite");
    const made = await makeSuite({ out: suiteDir, scale: "small", seed: 7, tracks: TRACKS });
    const coordinator = await startCoordinator({ suiteDir, outDir: tmp("out"), token: "t0k", heartbeatMs: 200, logger: quiet });
    cleanups.push(() => coordinator.close());
    const agents = [];
    for (const name of ["a", "b"]) {
      const engine = await startSimEngine({ seed: 1 });
      cleanups.push(() => engine.close());
      const agent = startAgent({
        coordinator: coordinator.address,
        method: new SystemOneMethod({ baseUrl: engine.url, capacity: 2 }),
        agentId: `agent-${name}`,
        token: "t0k",
        engineUrl: engine.url,
        logger: quiet,
      });
      cleanups.push(() => agent.stop());
      agents.push(agent);
    }
    const outcome = await coordinator.done;
    expect(outcome.state).toBe("complete");
    expect(outcome.recordsTotal).toBe(made.records);
    expect(outcome.recordsCommitted).toBe(made.records);
    for (const agent of agents) {
      expect(await agent.done).toEqual({ kind: "drained", by: "coordinator", reason: "run complete" });
    }
    const sent = agents.reduce((n, a) => n + a.stats().resultsSent, 0);
    expect(sent).toBeGreaterThanOrEqual(made.records);
    expect(agents.reduce((n, a) => n + a.stats().recordFailures, 0)).toBe(0);
  });

  it("an engine that crashes mid-run costs no records: its units go back and another agent commits them without errors", async () => {
    const suiteDir = tmp("suite");
    const outDir = tmp("out");
    const made = await makeSuite({ out: suiteDir, scale: "small", seed: 5, tracks: TRACKS });
    const coordinator = await startCoordinator({ suiteDir, outDir, heartbeatMs: 200, logger: quiet });
    cleanups.push(() => coordinator.close());
    const fast = { retry: { minBackoffMs: 5, maxBackoffMs: 20, retries: 2 } };
    const crashing = await startSimEngine({ faults: "crash-after=4", tokensPerS: 200_000 });
    cleanups.push(() => crashing.close());
    const doomed = startAgent({
      coordinator: coordinator.address,
      method: new SystemOneMethod({ baseUrl: crashing.url, capacity: 2, ...fast }),
      agentId: "doomed",
      probeMs: { ready: 60_000, down: 50 },
      logger: quiet,
    });
    cleanups.push(() => doomed.stop());
    await waitFor("the crashed engine noticed", () => crashing.stats().crashed && !doomed.stats().ready && doomed.stats().unitsDropped > 0);

    const healthy = await startSimEngine();
    cleanups.push(() => healthy.close());
    const rescuer = startAgent({
      coordinator: coordinator.address,
      method: new SystemOneMethod({ baseUrl: healthy.url, capacity: 2, ...fast }),
      agentId: "rescuer",
      logger: quiet,
    });
    cleanups.push(() => rescuer.stop());
    const outcome = await coordinator.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: made.records });
    const lines = readdirSync(outDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) =>
        readdirSync(join(outDir, d.name))
          .filter((f) => f.endsWith(".jsonl"))
          .flatMap((f) => readFileSync(join(outDir, d.name, f), "utf8").split("\n").filter(Boolean)),
      )
      .map((l) => JSON.parse(l) as { run_id: string; errors?: Record<string, string> });
    expect(new Set(lines.map((l) => l.run_id)).size).toBe(made.records);
    expect(lines.filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);
    expect(doomed.state()).not.toBe("stopped");
  });

  it("a run with label-permutation seeds: the method takes them from the Welcome and the run completes", async () => {
    const suiteDir = tmp("suite");
    const made = await makeSuite({ out: suiteDir, scale: "small", seed: 9, tracks: ["vihsd", "respan"] });
    const coordinator = await startCoordinator({ suiteDir, outDir: tmp("out"), method: { seeds: [0, 1, 2] }, logger: quiet });
    cleanups.push(() => coordinator.close());
    const engine = await startSimEngine();
    cleanups.push(() => engine.close());
    const agent = startAgent({ coordinator: coordinator.address, method: new SystemOneMethod({ baseUrl: engine.url, capacity: 2 }), logger: quiet });
    cleanups.push(() => agent.stop());
    expect(await coordinator.done).toMatchObject({ state: "complete", recordsCommitted: made.records });
    expect(await agent.done).toMatchObject({ kind: "drained", by: "coordinator" });
    expect(agent.stats().recordFailures).toBe(0);
    // Three seeded reads per record instead of one.
    expect(engine.stats().requests).toBeGreaterThanOrEqual(3 * made.records);
  });

  it("a wrong token ends the agent with an auth error", async () => {
    const suiteDir = tmp("suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 7, tracks: ["vihsd"] });
    const coordinator = await startCoordinator({ suiteDir, outDir: tmp("out"), token: "right", logger: quiet });
    cleanups.push(() => coordinator.close());
    const engine = await startSimEngine();
    cleanups.push(() => engine.close());
    const agent = startAgent({ coordinator: coordinator.address, method: new SystemOneMethod({ baseUrl: engine.url }), token: "wrong", logger: quiet });
    cleanups.push(() => agent.stop());
    const outcome = await agent.done;
    expect(outcome.kind).toBe("failed");
    expect(outcome.kind === "failed" && outcome.error).toBeInstanceOf(AgentAuthError);
    expect(agent.stats().attaches).toBe(1);
  });

  describe.skipIf(skipWithoutOpenssl())("mutual TLS (certificates made with openssl)", () => {
    it("an agent with the CA and a client certificate completes the run; one without a certificate is never attached", async () => {
      const certs = makeTestCerts();
      cleanups.push(() => certs.remove());
      const suiteDir = tmp("suite");
      const made = await makeSuite({ out: suiteDir, scale: "small", seed: 3, tracks: ["vihos"] });
      const coordinator = await startCoordinator({
        suiteDir,
        outDir: tmp("out"),
        tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.caFile, requireClientCert: true },
        logger: quiet,
      });
      cleanups.push(() => coordinator.close());
      const engine = await startSimEngine();
      cleanups.push(() => engine.close());
      const method = () => new SystemOneMethod({ baseUrl: engine.url, capacity: 2 });

      const without = startAgent({ coordinator: coordinator.address, method: method(), tls: { ca: certs.caFile }, reconnect: { initialMs: 20, maxMs: 100 }, logger: quiet });
      cleanups.push(() => without.stop());
      await waitFor("several refused handshakes", () => without.stats().attaches >= 3);
      expect(without.state()).toBe("connecting");

      const agent = startAgent({
        coordinator: coordinator.address,
        method: method(),
        tls: { ca: certs.caFile, cert: certs.clientCert, key: certs.clientKey },
        logger: quiet,
      });
      cleanups.push(() => agent.stop());
      const outcome = await coordinator.done;
      expect(outcome).toMatchObject({ state: "complete", recordsCommitted: made.records });
      expect(await agent.done).toMatchObject({ kind: "drained", by: "coordinator" });
      expect(without.stats().unitsReceived).toBe(0);
    });
  });
});
