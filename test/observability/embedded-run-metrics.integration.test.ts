// `udm-orch run` serves one /metrics page for its coordinator (a worker thread), its agents (an
// `agent` label) and its scorer, valid exposition text (promtool), beside the live page's API;
// --per-agent-metrics false drops the per-agent heartbeat gauges. Plus the --metrics flag's parsing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMetricsListen } from "../../common/metrics/metrics-listen.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { toolTestMode } from "../support/real-tool.js";

let root: string;
let suiteDir: string;
const started: CliProcess[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "udm-run-metrics-"));
  suiteDir = join(root, "suite");
  await makeSuite({ out: suiteDir, scale: "small", seed: 5, tracks: ["victsd", "vihsd", "routerbench", "aiv-nli500"] });
});

afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

async function scrapeDuringRun(extra: string[]): Promise<{ text: string; status: { agents: unknown[]; records_total: number }; p: CliProcess }> {
  const p = spawnCli(["run", "--suite", suiteDir, "--out", join(root, `run-${started.length}`), "--sim", "2", "--sim-tokens-per-s", "4000", "--metrics", "127.0.0.1:0", ...extra]);
  started.push(p);
  const page = (await p.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
  // Agents attach after the suite is read; scrape once both are in.
  let text = "";
  for (let i = 0; i < 300; i++) {
    text = await (await fetch(`${page}/metrics`)).text();
    if ((text.match(/^udm_agent_engine_ready\{/gm) ?? []).length === 2 && /^udm_records_committed_total [1-9]/m.test(text)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const status = (await (await fetch(`${page}/api/status`)).json()) as { agents: unknown[]; records_total: number };
  return { text, status, p };
}

describe("udm-orch run --metrics", () => {
  it("serves coordinator, agents (agent label) and scorer on one valid /metrics page", async () => {
    const { text, status, p } = await scrapeDuringRun(["--gpu-hour-usd", "3"]);
    expect(status.agents).toHaveLength(2);
    expect(status.records_total).toBeGreaterThan(0);
    // Each agent's engine queue, from its heartbeats, for the live page's agents table.
    for (const a of status.agents) {
      expect(a).toMatchObject({ inflight_requests: expect.any(Number), engine_waiting: expect.any(Number), engine_running: expect.any(Number) });
    }
    const agents = new Set([...text.matchAll(/^udm_agent_records_total\{agent="([^"]+)",outcome="answered"\}/gm)].map((m) => m[1]));
    expect(agents.size).toBe(2);
    expect(text).toMatch(/^udm_run_info\{run_id="[0-9a-f-]+",/m);
    expect(text).toMatch(/^udm_run_records \d+$/m);
    expect(text).toMatch(/^udm_gpu_hour_price_usd 3$/m);
    expect(text).toMatch(/^udm_scorer_tracks 4$/m);
    // The scorer in this process counts the commits it applied, as the bus scorer counts what it consumes.
    expect(text).toMatch(/^udm_scorer_results_total\{outcome="applied"\} [1-9]/m);
    expect(text).toMatch(/^udm_scorer_consumer_pending 0$/m);
    expect(text).toMatch(/^udm_coordinator_agent_engine_waiting\{agent=/m);
    expect(text).toMatch(/^udm_record_latency_seconds_bucket\{le="600"\}/m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    // One HELP/TYPE per name across the coordinator thread's and the main thread's registries.
    const types = [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
    expect(types.length).toBe(new Set(types).size);
    expect([...text.matchAll(/^udm_build_info\{/gm)]).toHaveLength(1);
    for (const line of text.split("\n")) if (line.includes("run_id=")) expect(line.startsWith("udm_run_info{")).toBe(true);
    const mode = toolTestMode(["promtool"], "prometheus");
    if (mode !== "skip") {
      expect(mode).toBe("run");
      const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
      // promtool's lint flags prom-client's default nodejs_*_total gauges; anything else is ours.
      const problems = (check.stdout + check.stderr).split("\n").filter((l) => l.trim() && !/^nodejs_active_\w+_total non-counter/.test(l));
      expect(problems).toEqual([]);
    }
    expect((await p.exited).code, p.output()).toBe(0);
  }, 120_000);

  it("--per-agent-metrics false drops the per-agent heartbeat gauges, keeping the counts", async () => {
    const { text, p } = await scrapeDuringRun(["--per-agent-metrics", "false"]);
    expect(text).not.toMatch(/^udm_coordinator_agent_/m);
    expect(text).toMatch(/^udm_agents_attached 2$/m);
    expect((await p.exited).code, p.output()).toBe(0);
  }, 120_000);
});

describe("--metrics HOST:PORT|off", () => {
  it("parses addresses and off, and names the flag on bad input", () => {
    expect(parseMetricsListen("127.0.0.1:9470")).toEqual({ host: "127.0.0.1", port: 9470 });
    expect(parseMetricsListen("0.0.0.0:0")).toEqual({ host: "0.0.0.0", port: 0 });
    expect(parseMetricsListen("[::1]:9472")).toEqual({ host: "::1", port: 9472 });
    expect(parseMetricsListen("off")).toBeUndefined();
    expect(() => parseMetricsListen("9470")).toThrow(/--metrics must be HOST:PORT or off/);
    expect(() => parseMetricsListen("host:70000")).toThrow(/--metrics/);
  });
});
