// A cluster run watched the way users watch it, with real parts only: a coordinator, two agents
// and the streaming scorer as `udm-orch` processes (NATS between coordinator and scorer) on two
// simulated engines; a real Prometheus scraping all four; a real headless Chromium on the live
// page; the page's event stream. The agents are drained after the first track completes, so the
// run stands still part-way while the figures are compared with the result lines on disk.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { REPO_ROOT, resultLines, spawnCli, type CliProcess } from "../support/cli-process.js";
import { natsTestMode, startNatsServer, type RunningNatsServer } from "../support/nats-server.js";
import { startPrometheus, type RunningPrometheus } from "../support/prometheus.js";
import { launchChromium } from "../support/chromium.js";
import { toolTestMode } from "../support/real-tool.js";
import { readEventsUntil } from "../support/sse.js";

const TOKEN = "watch-me";
const modes = [natsTestMode(), toolTestMode(["prometheus", "chromium"], "prometheus chromium")];
const mode = modes.includes("fail") ? "fail" : modes.includes("skip") ? "skip" : "run";

let root: string;
let nats: RunningNatsServer | undefined;
let prometheus: RunningPrometheus | undefined;
const started: CliProcess[] = [];
let coordinator: CliProcess;
let scorer: CliProcess;
let agents: CliProcess[] = [];
let page: string;
let outDir: string;
/** The first track_complete event, and the run's status when it arrived. */
let firstTrack: { event: { track: string; records: number }; status: RunStatusJson };

interface RunStatusJson {
  run_id: string;
  state: string;
  records_total: number;
  records_committed: number;
  tracks: Array<{ track: string; family: string; records: number; committed: number; complete: boolean }>;
  agents: Array<{ agent_id: string }>;
}

function cli(args: string[]): CliProcess {
  const p = spawnCli(args);
  started.push(p);
  return p;
}

const api = async <T>(path: string, token: string | null = TOKEN): Promise<{ status: number; body: T }> => {
  const res = await fetch(page + path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: res.status, body: (res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text()) as T };
};

const hostPort = (url: string) => new URL(url).host;

describe.skipIf(mode === "skip")("a run watched through Prometheus, the live page and its events", () => {
  beforeAll(async () => {
    expect(mode, "nats-server, prometheus and chromium must be installed under CI=true (.ci/run installs them)").toBe("run");
    root = mkdtempSync(join(tmpdir(), "udm-observed-"));
    const suiteDir = join(root, "suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 3 });
    outDir = join(root, "run");
    nats = await startNatsServer();
    coordinator = cli([
      "coordinator", "--suite", suiteDir, "--out", outDir, "--listen", "127.0.0.1:0", "--token", TOKEN,
      "--nats", nats.url, "--metrics", "127.0.0.1:0", "--gpu-hour-usd", "2.5", "--heartbeat-ms", "500",
    ]);
    page = (await coordinator.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
    const address = (await coordinator.waitFor(/listening on (127\.0\.0\.1:\d+)/))[1]!;
    scorer = cli(["scorer", "--suite", suiteDir, "--nats", nats.url, "--out", join(root, "scorer"), "--metrics", "127.0.0.1:0"]);
    const scorerMetrics = (await scorer.waitFor(/metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/))[1]!;
    const engines = await Promise.all(
      [0, 1].map(async () => (await cli(["sim-engine", "--port", "0", "--tokens-per-s", "20000"]).waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!),
    );
    agents = engines.map((e, i) =>
      cli(["agent", "--coordinator", address, "--engine", e, "--token", TOKEN, "--agent-id", `agent-${i}`, "--metrics", "127.0.0.1:0", "--capacity", "2"]),
    );
    const agentMetrics = await Promise.all(agents.map(async (a) => (await a.waitFor(/metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/))[1]!));
    const tokenFile = join(root, "metrics-token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    prometheus = await startPrometheus(
      join(root, "prometheus"),
      [
        // The page's /metrics needs the run's token: Prometheus sends it from a file, as deploy/prometheus/prometheus.yml shows.
        { job: "udm-coordinator", targets: [hostPort(page)], credentialsFile: tokenFile },
        { job: "udm-scorer", targets: [hostPort(scorerMetrics)] },
        { job: "udm-agent", targets: agentMetrics.map(hostPort) },
      ],
      { ruleFiles: [join(REPO_ROOT, "deploy", "prometheus", "udm-orch-rules.yml")] },
    );

    // The event stream delivers a track's completion while the run goes on.
    const e = (await readEventsUntil(`${page}/api/events?token=${TOKEN}`, (type) => type === "track_complete", 90_000)).at(-1)!;
    const status = (await api<RunStatusJson>("/api/status")).body;
    firstTrack = { event: e.data as { track: string; records: number }, status };
    // Prometheus has scraped every target up, and each agent after it answered records, before
    // the agents go: what is checked below was seen while they ran, however slow the machine.
    const p = prometheus;
    let seen = "";
    await waitUntilAsync(async () => {
      const up = await p.query("up == 1");
      const answered = await p.query('udm_agent_records_total{outcome="answered"} > 0');
      seen = `up: ${up.map((s) => s.metric.instance).join(",")}; answered: ${answered.map((s) => s.metric.agent).join(",")}`;
      return up.length === 4 && new Set(answered.map((s) => s.metric.agent)).size === 2;
    }, 60_000, () => `Prometheus saw ${seen}`);
    // Then the agents drain (finish what they hold) and the run stands still part-way.
    for (const a of agents) a.kill("SIGTERM");
    for (const a of agents) expect((await a.exited).code, a.output()).toBe(0);
  }, 180_000);

  afterAll(async () => {
    for (const p of started) p.kill("SIGKILL");
    await prometheus?.stop();
    await nats?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("/api/events delivered a track-complete event before the run ended", () => {
    const t = firstTrack.status.tracks.find((x) => x.track === firstTrack.event.track);
    expect(t, "the event's track is in the status").toMatchObject({ complete: true, committed: firstTrack.event.records, records: firstTrack.event.records });
    expect(firstTrack.status.state).toBe("running");
    expect(firstTrack.status.records_committed).toBeLessThan(firstTrack.status.records_total);
  });

  it("Prometheus scrapes coordinator, agents and scorer; its committed-records total equals the result lines on disk", async () => {
    // The drained agents' last results are committed (fsynced in batches) within moments.
    let lines = -1;
    let status = (await api<RunStatusJson>("/api/status")).body;
    await waitUntilAsync(async () => {
      const before = resultLines(outDir).length;
      await new Promise((r) => setTimeout(r, 500));
      status = (await api<RunStatusJson>("/api/status")).body;
      lines = resultLines(outDir).length;
      return lines === before && status.records_committed === lines;
    }, 20_000, () => `status ${status.records_committed} vs ${lines} lines on disk`);
    expect(lines).toBeGreaterThan(0);
    expect(status.records_committed).toBeLessThan(status.records_total);
    const p = prometheus!;
    let committed: number | undefined;
    await waitUntilAsync(async () => {
      const r = await p.query('udm_records_committed_total{job="udm-coordinator"}');
      committed = r.length === 1 ? Number(r[0]!.value[1]) : undefined;
      return committed === lines;
    }, 30_000, () => `udm_records_committed_total = ${committed}, ${lines} lines on disk`);
    expect(resultLines(outDir).length).toBe(lines);

    // The drained agents are gone now; each was scraped while it ran, and answered records.
    const up = await p.query("max_over_time(up[10m])");
    expect(up.map((s) => `${s.metric.job}=${s.value[1]}`).sort()).toEqual(["udm-agent=1", "udm-agent=1", "udm-coordinator=1", "udm-scorer=1"]);
    const answered = await p.query('max_over_time(udm_agent_records_total{outcome="answered"}[10m])');
    expect(answered.map((s) => s.metric.agent).sort()).toEqual(["agent-0", "agent-1"]);
    for (const s of answered) expect(Number(s.value[1]), s.metric.agent).toBeGreaterThan(0);
    const requests = await p.query('sum by (endpoint) (max_over_time(udm_agent_engine_requests_total{status_class="2xx"}[10m]))');
    expect(requests.map((s) => s.metric.endpoint)).toContain("/v1/systemone");
    // The scorer applied exactly the committed lines (from NATS) and scored the finished tracks.
    await waitUntilAsync(async () => {
      const r = await p.query('udm_scorer_results_total{outcome="applied"}');
      return r.length === 1 && Number(r[0]!.value[1]) === lines;
    }, 30_000, () => "scorer applied == lines on disk");
    const complete = status.tracks.filter((t) => t.complete).length;
    const scored = await p.query("udm_scorer_tracks_scored");
    expect(Number(scored[0]!.value[1])).toBe(complete);
    const perTrack = await p.query('sum(udm_track_records_committed{job="udm-coordinator"})');
    expect(Number(perTrack[0]!.value[1])).toBe(lines);
    // The alert rules are loaded and evaluated by the real Prometheus.
    const rules = await p.get<{ groups: Array<{ rules: Array<{ name: string; health: string }> }> }>("/api/v1/rules");
    const loaded = rules.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(["UdmBusDown", "UdmLeasesExpiring", "UdmMetricsDown", "UdmNoReadyAgents", "UdmRunStalled"]);
    await waitUntilAsync(async () => (await p.get<typeof rules>("/api/v1/rules")).groups.flatMap((g) => g.rules).every((r) => r.health === "ok"), 15_000, () => "rules evaluated");
  }, 90_000);

  it("a headless Chromium renders the live page: progress and per-track rows match /api/status; no request leaves 127.0.0.1", async () => {
    const browser = await launchChromium();
    try {
      const tab = await browser.open(`${page}/?token=${TOKEN}`);
      // The first complete track's score, from the scorer through the bus, in the feed and its row.
      const firstRow = `#tracks tbody tr[data-track=${JSON.stringify(firstTrack.event.track)}]`;
      await tab.waitFor(`document.querySelector(${JSON.stringify(firstRow + " .headline")})?.textContent && document.querySelector("#feed li[data-type=track_scored]")`);
      const rendered = await tab.evaluate<{ committed: number; total: number; text: string; rows: Array<{ track: string; committed: string; records: string; headline: string }>; runId: string; state: string }>(`(() => {
        const p = document.getElementById("progress");
        return {
          committed: Number(p.dataset.committed), total: Number(p.dataset.total), text: document.getElementById("progress-text").textContent,
          runId: document.getElementById("run-id").textContent, state: document.getElementById("state").textContent,
          rows: [...document.querySelectorAll("#tracks tbody tr[data-track]")].map((r) => ({
            track: r.dataset.track, committed: r.querySelector(".committed").textContent, records: r.querySelector(".records").textContent,
            headline: r.querySelector(".headline").textContent,
          })),
        };
      })()`);
      const status = (await api<RunStatusJson>("/api/status")).body;
      expect(rendered.committed).toBe(status.records_committed);
      expect(rendered.total).toBe(status.records_total);
      expect(rendered.text).toContain(`${status.records_committed.toLocaleString("en-US")} / ${status.records_total.toLocaleString("en-US")} records`);
      expect(rendered.runId).toBe(status.run_id);
      expect(rendered.state).toBe(status.state);
      // Every track has its row (those with work left first, the complete ones folded below them).
      const byTrack = (a: string[], b: string[]) => (a[0]! < b[0]! ? -1 : 1);
      expect(rendered.rows.map((r) => [r.track, r.committed, r.records]).sort(byTrack)).toEqual(
        status.tracks.map((t) => [t.track, t.committed.toLocaleString("en-US"), t.records.toLocaleString("en-US")]).sort(byTrack),
      );
      // The scorer's headline reached the page (through the bus) for the track that completed first.
      expect(rendered.rows.find((r) => r.track === firstTrack.event.track)!.headline).toMatch(/\d\.\d{4}|n\/a/);
      const png = await tab.screenshot();
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      writeFileSync(join(root, "live-page.png"), png);
      const requests = tab.requests();
      expect(requests.length).toBeGreaterThanOrEqual(4);
      expect(requests.filter((u) => !u.startsWith("http://127.0.0.1:"))).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);

  it("serves /healthz and /readyz openly, and /api and /metrics only with the token", async () => {
    expect((await fetch(`${page}/healthz`)).status).toBe(200);
    expect((await fetch(`${page}/readyz`)).status).toBe(200);
    expect((await api("/api/status", null)).status).toBe(401);
    expect((await api("/api/status", "wrong")).status).toBe(401);
    expect((await fetch(`${page}/api/events`)).status).toBe(401);
    const run = await api<{ runId: string; method: string; gpuHourUsd: number }>("/api/run");
    expect(run.body).toMatchObject({ method: "systemone", gpuHourUsd: 2.5 });
    expect((await fetch(`${page}/metrics`)).status).toBe(401);
    expect((await fetch(`${page}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const metrics = await (await fetch(`${page}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } })).text();
    expect(metrics).toMatch(/^udm_gpu_hour_price_usd 2\.5$/m);
    expect(metrics).toMatch(/^udm_bus_connected 1$/m);
    expect(metrics).toMatch(/^process_cpu_user_seconds_total /m);
  });
});

async function waitUntilAsync(cond: () => Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms: ${what()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
