// An engine started with an API key (vLLM's --api-key / VLLM_API_KEY; the sim's --api-key), with the
// real coordinator and agents (Agent, as `udm-orch agent` builds it):
// - with --engine-api-key every engine request carries "Authorization: Bearer KEY" and the run
//   completes without errors;
// - without the key, or with a wrong one, the agent says once "engine refused the API key (HTTP
//   401)", stays not ready (the coordinator sends it nothing), and commits nothing, errored or not;
// - with --vllm-cmd the engine gets the key as VLLM_API_KEY (the sim reads it as vLLM does), and
//   the log shows VLLM_API_KEY=*** only. The key is in no log line.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Agent } from "../../agent/agent.js";
import type { Logger } from "../../common/log.js";
import { startCoordinator } from "../../coordinator/server.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { BIN, requireBuild } from "../support/cli-process.js";
import { startEngineProxy } from "./engine-proxy.js";

const cleanups: Array<() => unknown> = [];
const dirs: string[] = [];
function tmp(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `udm-apikey-${name}-`));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const line = (level: string) => (m: string, f?: Record<string, unknown>) => void lines.push(`${level} ${m}${f ? ` ${JSON.stringify(f)}` : ""}`);
  const logger: Logger = { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error"), child: () => logger };
  return { logger, lines };
}

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
    .flatMap((d) => readdirSync(join(outDir, d.name)).filter((f) => f.endsWith(".jsonl")).flatMap((f) => readFileSync(join(outDir, d.name, f), "utf8").split("\n").filter(Boolean)))
    .map((l) => JSON.parse(l) as { run_id: string; agent?: string; errors?: Record<string, string> });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const REFUSED = /engine refused the API key \(HTTP 401\)/;

async function agent(options: Parameters<typeof Agent.create>[0]): Promise<Agent> {
  const a = await Agent.create(options);
  cleanups.push(async () => {
    a.stop();
    await a.run();
  });
  void a.run();
  return a;
}

describe("engine API key", () => {
  it("missing or wrong key: one clear line, not ready, nothing committed; the right key: every request carries it and the run completes", async () => {
    const suiteDir = tmp("suite");
    const outDir = tmp("out");
    const records = (await makeSuite({ out: suiteDir, scale: "small", seed: 21, tracks: ["vihsd", "respan", "trec-dl19"] })).records;
    const coordinator = await startCoordinator({ suiteDir, outDir, leaseMs: 600_000, heartbeatMs: 200, logger: capture().logger });
    cleanups.push(() => coordinator.close());
    const RIGHT = "k-right-7f3a91";
    const WRONG = "k-wrong-0b44c2";
    // One engine per agent: the agents of one process share their engine's key (engine-auth.ts).
    const engines = await Promise.all([0, 1, 2].map(() => startSimEngine({ tokensPerS: 20_000, apiKeys: [RIGHT] })));
    for (const e of engines) cleanups.push(() => e.close());
    const [engine, other, third] = engines as [typeof engines[0], typeof engines[0], typeof engines[0]];

    const none = capture();
    const wrong = capture();
    const noKey = await agent({ coordinator: coordinator.address, engineUrl: engine.url, agentId: "no-key", logger: none.logger });
    const wrongKey = await agent({ coordinator: coordinator.address, engineUrl: other.url, agentId: "wrong-key", engineApiKey: WRONG, logger: wrong.logger });
    await waitFor("both attached, not ready", async () => {
      const s = await coordinator.status();
      return ["no-key", "wrong-key"].every((id) => s.agents.some((a) => a.agentId === id && !a.ready));
    }, 20_000);
    // Probed every second while down: still one line each, not a stream of them.
    await new Promise((r) => setTimeout(r, 3_500));
    expect(none.lines.filter((l) => REFUSED.test(l))).toEqual([expect.stringMatching(/^error engine refused the API key \(HTTP 401\): give --engine-api-key/)]);
    expect(wrong.lines.filter((l) => REFUSED.test(l))).toEqual([expect.stringMatching(/^error engine refused the API key \(HTTP 401\): check --engine-api-key/)]);
    for (const l of [...none.lines, ...wrong.lines]) expect(l).not.toMatch(/still trying|not ready after|HTTP 401 /);
    expect(noKey.stats().ready).toBe(false);
    expect(wrongKey.stats().ready).toBe(false);
    expect((await coordinator.status()).recordsCommitted).toBe(0);

    // The right key, through a proxy that records each request's Authorization header.
    const proxy = await startEngineProxy(third.url);
    cleanups.push(() => proxy.close());
    const good = capture();
    await agent({ coordinator: coordinator.address, engineUrl: proxy.url, agentId: "right-key", engineApiKey: RIGHT, logger: good.logger });
    const outcome = await coordinator.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: records, recordsErrored: 0 });
    const lines = resultLines(outDir);
    expect(lines).toHaveLength(records);
    expect(lines.filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);
    expect(new Set(lines.map((l) => l.agent))).toEqual(new Set(["right-key"]));
    expect(noKey.stats().resultsSent + wrongKey.stats().resultsSent).toBe(0);
    expect(noKey.stats().recordFailures + wrongKey.stats().recordFailures).toBe(0);
    // Every engine request (probe, /v1/models, the method's endpoint, the load reads) carried the key.
    const paths = new Set(proxy.requests.map((r) => r.path));
    for (const p of ["/health", "/v1/models", "/v1/systemone"]) expect(paths).toContain(p);
    expect(proxy.requests.filter((r) => r.authorization !== `Bearer ${RIGHT}`)).toEqual([]);
    expect(proxy.requests.filter((r) => r.status === 401)).toEqual([]);
    for (const l of [...none.lines, ...wrong.lines, ...good.lines]) {
      expect(l).not.toContain(RIGHT);
      expect(l).not.toContain(WRONG);
    }
  }, 120_000);

  it("the engine restarted with another key mid-run: said once, not ready, units handed back, no errored records", async () => {
    const suiteDir = tmp("suite-rekey");
    const outDir = tmp("out-rekey");
    const records = (await makeSuite({ out: suiteDir, scale: "small", seed: 23, tracks: ["vihsd", "respan", "trec-dl19"] })).records;
    const coordinator = await startCoordinator({ suiteDir, outDir, leaseMs: 600_000, heartbeatMs: 200, logger: capture().logger });
    cleanups.push(() => coordinator.close());
    const first = await startSimEngine({ tokensPerS: 4_000, apiKeys: ["k-old-1"] });
    const log = capture();
    const rekeyed = await agent({ coordinator: coordinator.address, engineUrl: first.url, agentId: "rekeyed", engineApiKey: "k-old-1", capacity: 2, logger: log.logger });
    await waitFor("the agent answering, units in hand", () => rekeyed.stats().resultsSent >= 2 && rekeyed.stats().inflightUnits > 0, 60_000);
    await first.close();
    const second = await startSimEngine({ port: first.port, tokensPerS: 4_000, apiKeys: ["k-new-2"] });
    cleanups.push(() => second.close());
    await waitFor("the agent not ready, its units handed back", () => !rekeyed.stats().ready && rekeyed.stats().inflightUnits === 0, 20_000);
    await waitFor("the refusal said", () => log.lines.some((l) => REFUSED.test(l)), 10_000);
    const steadyEngine = await startSimEngine({ tokensPerS: 20_000 });
    cleanups.push(() => steadyEngine.close());
    await agent({ coordinator: coordinator.address, engineUrl: steadyEngine.url, agentId: "steady", logger: capture().logger });
    const outcome = await coordinator.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: records, recordsErrored: 0 });
    expect(resultLines(outDir).filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);
    expect(log.lines.filter((l) => REFUSED.test(l))).toEqual([expect.stringMatching(/^error engine refused the API key \(HTTP 401\): check --engine-api-key/)]);
  }, 120_000);

  it("refuses a second, different key for an engine this process already sends one to", async () => {
    const engine = await startSimEngine({ tokensPerS: 0, apiKeys: ["k-a"] });
    cleanups.push(() => engine.close());
    await agent({ coordinator: "127.0.0.1:1", engineUrl: engine.url, engineApiKey: "k-a", logger: capture().logger });
    await expect(Agent.create({ coordinator: "127.0.0.1:1", engineUrl: engine.url, engineApiKey: "k-b", logger: capture().logger })).rejects.toThrow(/already sends another key to the engine at http:\/\/127\.0\.0\.1:\d+; an engine has one key/);
  });

  it("--vllm-cmd: the engine gets the key as VLLM_API_KEY, never on its command line or in the log", async () => {
    requireBuild();
    const suiteDir = tmp("suite-cmd");
    const outDir = tmp("out-cmd");
    const records = (await makeSuite({ out: suiteDir, scale: "small", seed: 22, tracks: ["vihsd"] })).records;
    const coordinator = await startCoordinator({ suiteDir, outDir, leaseMs: 600_000, heartbeatMs: 200, logger: capture().logger });
    cleanups.push(() => coordinator.close());
    const KEY = "k-vllm-env-5d61e0";
    const port = await freePort();
    const engineUrl = `http://127.0.0.1:${port}`;
    const log = capture();
    await agent({
      coordinator: coordinator.address,
      engineUrl,
      agentId: "supervised",
      engineApiKey: KEY,
      // The sim reads VLLM_API_KEY as vLLM does: it answers 401 to a caller without the key.
      vllmCmd: `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} sim-engine --port ${port} --tokens-per-s 20000`,
      logger: log.logger,
    });
    await waitFor("the supervised engine up", async () => (await fetch(`${engineUrl}/health`).catch(() => undefined))?.status === 200, 30_000);
    expect((await fetch(`${engineUrl}/v1/models`)).status).toBe(401);
    const outcome = await coordinator.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: records, recordsErrored: 0 });
    expect(log.lines.some((l) => /starting \(first start\): VLLM_API_KEY=\*\*\* /.test(l))).toBe(true);
    expect(log.lines.filter((l) => l.includes(KEY))).toEqual([]);
    expect(log.lines.filter((l) => REFUSED.test(l))).toEqual([]);
  }, 120_000);
});
