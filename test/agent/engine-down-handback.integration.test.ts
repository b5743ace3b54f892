// An agent whose engine dies (the sim-engine process SIGKILLed mid-run) with the real coordinator
// and a second agent: it reports not ready within seconds, hands its units back at once (the
// lease is ten minutes, so nothing waits for it to expire; a not-ready heartbeat, then its stream
// closed in order), the other agent redoes them, and when an engine answers on the same address
// again the agent is ready and takes work. While it is down, `status`, the progress line and
// run.json show it attached and not ready. Every record is committed exactly once, without errors.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoordinator } from "../../coordinator/server.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { startAgent } from "../../agent/attach-loop.js";
import { createLogger } from "../../common/log.js";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import * as grpc from "@grpc/grpc-js";
import { fetchStatus, formatStatus } from "../../cli/status.js";
import { runStatusFromWire } from "../../coordinator/transport/wire.js";
import { createProgressBar, progressOf } from "../../run/progress.js";

const quiet = createLogger("test", "silent");
const cleanups: Array<() => unknown> = [];
const dirs: string[] = [];
function tmp(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `udm-handback-${name}-`));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function simEngineProcess(port: number, tokensPerS: number): Promise<{ proc: CliProcess; url: string }> {
  const proc = spawnCli(["sim-engine", "--port", String(port), "--tokens-per-s", String(tokensPerS)], { UDM_LOG_LEVEL: "warn" });
  cleanups.push(() => proc.kill("SIGKILL"));
  const url = (await proc.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m, 30_000))[1]!;
  return { proc, url };
}

/** Polls `check` (sync or async) every 20 ms until it holds. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function resultLines(outDir: string): Array<{ run_id: string; agent?: string; errors?: Record<string, string> }> {
  return readdirSync(outDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(join(outDir, d.name))
        .filter((f) => f.endsWith(".jsonl"))
        .flatMap((f) => readFileSync(join(outDir, d.name, f), "utf8").split("\n").filter(Boolean)),
    )
    .map((l) => JSON.parse(l) as { run_id: string; agent?: string; errors?: Record<string, string> });
}

const TRACKS = ["vihsd", "respan", "toucan-kimi-k2", "trec-dl19", "skillgym-sft", "nemotron-tools", "routerbench", "deepedubench-cdpk", "deepedubench-grading-binary", "aimy144-fact-checking-vi", "aiv-vlmu-mcqa-extend400", "aiv-hle-mc-vi", "aiv-pragmatic50"];

describe("engine down: not ready, units handed back, ready again", () => {
  const LEASE_MS = 600_000;
  let outDir: string;
  let records: number;
  let coordinator: Awaited<ReturnType<typeof startCoordinator>>;

  beforeAll(async () => {
    const suiteDir = tmp("suite");
    outDir = tmp("out");
    records = (await makeSuite({ out: suiteDir, scale: "small", seed: 11, tracks: TRACKS })).records;
    coordinator = await startCoordinator({ suiteDir, outDir, leaseMs: LEASE_MS, heartbeatMs: 200, logger: quiet });
    cleanups.push(() => coordinator.close());
  });

  it("SIGKILL of the engine: not ready within seconds, records redone by the other agent; engine back: ready and working; every record once", async () => {
    const doomedEngine = await simEngineProcess(0, 20_000);
    const port = Number(new URL(doomedEngine.url).port);
    const doomed = startAgent({
      coordinator: coordinator.address,
      method: new SystemOneMethod({ baseUrl: doomedEngine.url, capacity: 3 }),
      agentId: "doomed",
      engineUrl: doomedEngine.url,
      engineHealthUrl: `${doomedEngine.url}/health`,
      // The timed probe alone would take a minute to notice: failed requests must trigger it.
      probeMs: { ready: 60_000, down: 100 },
      logger: quiet,
    });
    cleanups.push(() => doomed.stop());
    const steady = await startSimEngine({ tokensPerS: 4_000 });
    cleanups.push(() => steady.close());
    const other = startAgent({
      coordinator: coordinator.address,
      method: new SystemOneMethod({ baseUrl: steady.url, capacity: 2 }),
      agentId: "steady",
      engineUrl: steady.url,
      logger: quiet,
    });
    cleanups.push(() => other.stop());

    await waitFor("the doomed agent answering, units in hand", () => doomed.stats().resultsSent >= 3 && doomed.stats().inflightUnits > 0, 60_000);
    doomedEngine.proc.kill("SIGKILL");
    await doomedEngine.proc.exited;

    await waitFor("the doomed agent not ready", () => !doomed.stats().ready, 10_000);
    await waitFor("its units handed back", () => doomed.stats().unitsDropped > 0 && doomed.stats().inflightUnits === 0, 10_000);
    // The agent closes its stream after handing its units back and attaches again not ready (see
    // attach-session.ts engineLost): wait for that settled state, in which every view must agree.
    let atHandback = await coordinator.status();
    let table = "";
    await waitFor("the coordinator and the Status RPC seeing it attached again, not ready", async () => {
      atHandback = await coordinator.status();
      table = formatStatus(runStatusFromWire(await fetchStatus(coordinator.address, grpc.credentials.createInsecure(), undefined, 10_000)));
      return (
        atHandback.agents.some((a) => a.agentId === "doomed" && !a.ready && a.inflightUnits === 0) &&
        atHandback.agents.some((a) => a.agentId === "steady" && a.ready) &&
        table.includes("agents 1 ready of 2 attached")
      );
    }, 10_000);
    expect(atHandback.recordsCommitted).toBeLessThan(records);
    // Every view says ready vs attached: the Status RPC (`udm-orch status`), the progress line, run.json.
    expect(table).toMatch(/^doomed +no +0 /m);
    const progress: string[] = [];
    const bar = createProgressBar("run", { plainEveryMs: 0, stream: { isTTY: false, write: (l: string) => progress.push(l) } as unknown as NodeJS.WriteStream });
    bar.update(progressOf(atHandback));
    bar.stop();
    expect(progress.join("")).toContain("| agents 1/2 ready");
    await waitFor("run.json showing 1 ready of 2 attached", () => {
      const agents = (JSON.parse(readFileSync(join(outDir, "run.json"), "utf8")) as { agents?: { attached: number; ready: number; list: Array<{ agent_id: string; ready: boolean }> } }).agents;
      return agents?.attached === 2 && agents.ready === 1 && agents.list.some((a) => a.agent_id === "doomed" && !a.ready);
    }, 10_000);
    const receivedWhileDown = doomed.stats().unitsReceived;

    // The engine is back on the same address: the agent turns ready and takes units.
    await simEngineProcess(port, 20_000);
    await waitFor("the doomed agent ready again", () => doomed.stats().ready, 15_000);
    await waitFor("the coordinator seeing it ready", async () => (await coordinator.status()).agents.some((a) => a.agentId === "doomed" && a.ready), 10_000);
    await waitFor("work for the recovered agent", () => doomed.stats().unitsReceived > receivedWhileDown, 30_000);

    const outcome = await coordinator.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: records, recordsErrored: 0 });
    // Nothing waited for a lease to run out: the handed-back records were requeued at once.
    expect(outcome.counters.leasesExpired).toBe(0);
    expect(outcome.counters.handedBack).toBeGreaterThan(0);
    expect(outcome.elapsedSeconds * 1000).toBeLessThan(LEASE_MS / 4);

    const lines = resultLines(outDir);
    expect(lines).toHaveLength(records);
    expect(new Set(lines.map((l) => l.run_id)).size).toBe(records);
    expect(lines.filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);
    expect(lines.filter((l) => l.agent === "steady").length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.agent === "doomed").length).toBeGreaterThan(0);
  }, 180_000);
});

// An engine that answers every inference request HTTP 500 (its /health and /v1/models still answer,
// so only the run of 5xx tells): its agent turns not ready after three in a row, hands its units back
// at once and commits nothing; the healthy agent does the run. No record ends with errors.
describe("engine answering 5xx: not ready, units handed back", () => {
  it("a run of 5xx makes the agent not ready and hand its units back; nothing committed from it, nothing with errors", async () => {
    const suiteDir = tmp("suite-5xx");
    const outDir = tmp("out-5xx");
    const records = (await makeSuite({ out: suiteDir, scale: "small", seed: 12, tracks: ["vihsd", "respan", "trec-dl19"] })).records;
    const coordinator = await startCoordinator({ suiteDir, outDir, leaseMs: 600_000, heartbeatMs: 200, logger: quiet });
    cleanups.push(() => coordinator.close());
    const failing = await startSimEngine({ tokensPerS: 20_000, faults: "5xx=1" });
    cleanups.push(() => failing.close());
    const healthy = await startSimEngine({ tokensPerS: 20_000 });
    cleanups.push(() => healthy.close());
    const retry = { retries: 4, minBackoffMs: 10, maxBackoffMs: 50, timeoutMs: 30_000 };
    const bad = startAgent({
      coordinator: coordinator.address,
      method: new SystemOneMethod({ baseUrl: failing.url, capacity: 3, retry }),
      agentId: "failing",
      engineUrl: failing.url,
      engineHealthUrl: `${failing.url}/health`,
      probeMs: { ready: 60_000, down: 100 },
      logger: quiet,
    });
    cleanups.push(() => bad.stop());
    await waitFor("the failing agent handing units back", () => bad.stats().unitsDropped > 0, 30_000);
    await waitFor("the coordinator seeing it not ready", async () => (await coordinator.status()).agents.some((a) => a.agentId === "failing" && !a.ready), 10_000);
    const good = startAgent({
      coordinator: coordinator.address,
      method: new SystemOneMethod({ baseUrl: healthy.url, capacity: 2 }),
      agentId: "healthy",
      engineUrl: healthy.url,
      logger: quiet,
    });
    cleanups.push(() => good.stop());

    const outcome = await coordinator.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: records, recordsErrored: 0 });
    expect(outcome.counters.leasesExpired).toBe(0);
    expect(outcome.counters.handedBack).toBeGreaterThan(0);
    expect(bad.stats().resultsSent).toBe(0);
    const lines = resultLines(outDir);
    expect(lines).toHaveLength(records);
    expect(new Set(lines.map((l) => l.run_id)).size).toBe(records);
    expect(lines.filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);
    expect(lines.every((l) => l.agent === "healthy")).toBe(true);
  }, 120_000);
});
