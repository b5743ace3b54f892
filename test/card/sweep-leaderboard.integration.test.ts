// A 2x2 sweep on simulated engines started by the agents themselves (--vllm-cmd template, two
// model names) with two engine methods: it completes, is resumed after SIGKILL mid-sweep without
// redoing finished runs, and its leaderboard ranks the oracle model above the pseudo-model; the
// HTML leaderboard, loaded in a real headless Chromium, shows the rows of the JSON.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, spawnCli, type CliProcess } from "../support/cli-process.js";
import { underCi } from "../support/real-tool.js";
import { readEventsUntil } from "../support/sse.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import type { RunCard } from "../../card/run-card.js";
import type { Leaderboard } from "../../card/leaderboard/leaderboard-rows.js";
import { fixedPort } from "../support/fixed-port.js";

const chromium = spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).stdout.trim();
const CHROMIUM_MISSING = "chromium not installed (apt-get install chromium); .ci/run installs it";


let dir: string;
let suite: string;
let config: string;
const agents: CliProcess[] = [];
let tokenizer: SimEngine;
let coordinatorPort: number;

/**
 * Two agents for the sweep, started with it: an agent started long before dials a closed address
 * with a growing backoff (up to 30 s) and may miss a short sweep altogether, and an agent that
 * never attached is one the sweep cannot know of, nor drain.
 */
async function startAgents(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const enginePort = await fixedPort();
    agents.push(
      spawnCli(["agent", "--coordinator", `127.0.0.1:${coordinatorPort}`, "--engine", `http://127.0.0.1:${enginePort}`, "--method", "any", "--vllm-cmd", agentTemplate(enginePort)], {
        UDM_LOG_LEVEL: "info",
      }),
    );
  }
}

function agentTemplate(enginePort: number): string {
  // {model} is replaced by the quoted model name; the oracle model reads the suite's gold.
  return `case {model} in *oracle) X="--oracle ${suite} --accuracy 0.9";; *) X="";; esac; exec "${process.execPath}" "${BIN}" sim-engine --port ${enginePort} --model {model} --tokens-per-s 0 $X`;
}

/** The process's exit, or an error with the end of its output when it has not exited in time. */
async function exitedWithin(p: CliProcess, ms: number): Promise<{ code: number | null }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${p.output().slice(-3000)}`)), ms);
  });
  try {
    return await Promise.race([p.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

function card(run: string): RunCard {
  return JSON.parse(readFileSync(join(dir, "runs", run, "run-card.json"), "utf8")) as RunCard;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-sweep-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 9, tracks: ["vihsd", "aiv-nli500"] });
  coordinatorPort = await fixedPort();
  config = join(dir, "sweep.yaml");
  writeFileSync(
    config,
    [
      "suite: suite",
      "out: runs",
      `listen: 127.0.0.1:${coordinatorPort}`,
      "models: [sim/pseudo, sim/oracle]",
      "methods: [systemone, decisions]",
      "gpu_hour_usd: 1.5",
      "lease_ms: 5000",
      "",
    ].join("\n"),
  );
  tokenizer = await startSimEngine({ port: 0 });
}, 60_000);

afterAll(async () => {
  for (const a of agents) a.kill("SIGKILL");
  await tokenizer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("sweep", () => {
  it("--dry-run prints the matrix with tokens from the engine's /tokenize, GPU-hours and cost", async () => {
    const p = spawnCli(["sweep", "--config", config, "--dry-run", "--engine", tokenizer.url]);
    const { code } = await p.exited;
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/4 runs over \d+ records/);
    expect(p.output()).toMatch(/measured through .*\/tokenize on \d+ prompts/);
    expect(p.output()).toMatch(/\| sim_oracle__decisions__t0__seeds-none \| to run \| \d+ \| \d+ \| [0-9.]+ \| [0-9.]+ \|/);
    const fallback = spawnCli(["sweep", "--config", config, "--dry-run", "--chars-per-token", "3.5"]);
    expect((await fallback.exited).code).toBe(0);
    expect(fallback.output()).toMatch(/stated ratio of 3.5 characters per token/);
  });

  it("runs the 2x2 matrix, resumed after SIGKILL without redoing finished runs", async () => {
    const first = spawnCli(["sweep", "--config", config]);
    await startAgents();
    await first.waitFor(/sweep: sim_pseudo__systemone__t0__seeds-none complete/, 240_000);
    await first.waitFor(/sweep: run 2\/4 /, 30_000);
    first.kill("SIGKILL");
    await first.exited;
    const done = card("sim_pseudo__systemone__t0__seeds-none");
    expect(done.status).toBe("complete");
    const sweepJson = JSON.parse(readFileSync(join(dir, "runs", "sweep.json"), "utf8"));
    expect(sweepJson.runs.map((r: { status: string }) => r.status)).toEqual(["complete", "running", "pending", "pending"]);

    const second = spawnCli(["sweep", "--config", config, "--metrics", "127.0.0.1:0"]);
    // One live page for the whole sweep: it follows each run in turn (its run id, model and
    // /metrics), and a watcher that connects hears each run's track scores.
    const page = (await second.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
    const watched: Array<{ runId: string; model: string; infoRunId: string | undefined; status: string }> = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        try {
          const run = (await (await fetch(`${page}/api/run`)).json()) as { runId: string; model: string };
          const metrics = await (await fetch(`${page}/metrics`)).text();
          const status = (await (await fetch(`${page}/api/status`)).json()) as { run_id: string };
          if (run.runId) watched.push({ runId: run.runId, model: run.model, infoRunId: /^udm_run_info\{run_id="([^"]+)"/m.exec(metrics)?.[1], status: status.run_id });
        } catch {
          // between runs, or the sweep has ended
        }
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    const scored = readEventsUntil(`${page}/api/events`, (type) => type === "track_scored", 240_000);
    scored.catch(() => undefined);
    const { code } = await exitedWithin(second, 240_000);
    watching = false;
    await watcher;
    expect(code, second.output()).toBe(0);
    // Every agent was back for the last run or its drain window: none is left redialling.
    expect(second.output()).not.toMatch(/did not come back to be drained/);
    expect((await scored).at(-1)!.type).toBe("track_scored");
    const runIds = [...new Set(watched.map((w) => w.runId))];
    expect(runIds.length, JSON.stringify(watched.slice(-5))).toBeGreaterThanOrEqual(2);
    const runModels = new Set(["sim/pseudo", "sim/oracle"]);
    for (const w of watched) expect(runModels.has(w.model), w.model).toBe(true);
    // What the page reads, /metrics and /api/status are of the same run (allowing a switch between reads).
    expect(watched.filter((w) => w.infoRunId === w.runId && w.status === w.runId).length).toBeGreaterThan(watched.length / 2);
    expect(second.output()).toMatch(/skip sim_pseudo__systemone__t0__seeds-none: complete card with the same fingerprint/);
    // The finished run was not redone: its card is the same, byte for byte.
    expect(card("sim_pseudo__systemone__t0__seeds-none")).toEqual(done);
    const record = JSON.parse(readFileSync(join(dir, "runs", "sweep.json"), "utf8"));
    expect(record.runs.map((r: { status: string }) => r.status)).toEqual(["skipped", "complete", "complete", "complete"]);
    expect(record.totals).toMatchObject({ runs: 4, complete: 3, skipped: 1, failed: 0 });
    for (const r of record.runs) {
      const c = card(r.name);
      expect(c.status).toBe("complete");
      expect(c.method.model_slug).toBe(r.model);
      expect(c.method.engine_method).toBe(r.method);
      // The engines were restarted with the run's model: every answer came from it.
      expect(c.method.model_id).toBe(r.model);
      expect(r.fingerprint).toBe(c.fingerprint);
    }
    const verify = spawnCli(["card", "verify", ...record.runs.map((r: { name: string }) => join(dir, "runs", r.name, "run-card.json"))]);
    expect((await verify.exited).code, verify.output()).toBe(0);
    // The last run drained the agents: they exit once the sweep is done.
    for (const a of agents) expect((await exitedWithin(a, 60_000)).code, a.output().slice(-2000)).toBe(0);
    expect(agents[0]!.output()).toMatch(/restarting the engine with it/);
    // sweep.json names every agent of the sweep, those of the run killed before the resume too.
    const ids = agents.map((a) => /\[udm-orch\/agent ([^\]]+)\]/.exec(a.output())![1]!);
    expect(JSON.parse(readFileSync(join(dir, "runs", "sweep.json"), "utf8")).agents).toEqual([...ids].sort());
  }, 420_000);

  it("leaderboard ranks the oracle model above the pseudo-model, in markdown, JSON and HTML", async () => {
    const json = join(dir, "board.json");
    const html = join(dir, "board.html");
    const p = spawnCli(["leaderboard", join(dir, "runs"), "--json", json, "--html", html]);
    expect((await p.exited).code, p.output()).toBe(0);
    expect(p.output()).toMatch(/\| 1 \| sim\/oracle \|/);
    const board = JSON.parse(readFileSync(json, "utf8")) as Leaderboard;
    expect(board.groups).toHaveLength(1);
    const rows = board.groups[0]!.rows;
    expect(rows).toHaveLength(4);
    for (const condition of ["systemone", "decisions"]) {
      const oracle = rows.find((r) => r.condition === condition && r.model === "sim/oracle")!;
      const pseudo = rows.find((r) => r.condition === condition && r.model === "sim/pseudo")!;
      expect(oracle.rank!).toBeLessThan(pseudo.rank!);
      expect(oracle.v1_mean!).toBeGreaterThan(pseudo.v1_mean!);
    }
    expect(rows.map((r) => r.verification_tier)).toEqual(["self-benchmarked", "self-benchmarked", "self-benchmarked", "self-benchmarked"]);
    expect(rows.every((r) => r.tracks.length === 2)).toBe(true);
    const page = readFileSync(html, "utf8");
    expect(page).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
  });

  it.skipIf(!chromium && !underCi())("the HTML leaderboard in headless Chromium shows the JSON's rows and sorts them", () => {
    if (!chromium) throw new Error(CHROMIUM_MISSING);
    const board = JSON.parse(readFileSync(join(dir, "board.json"), "utf8")) as Leaderboard;
    const rows = board.groups[0]!.rows;
    const dom = (hash: string) =>
      execFileSync(chromium, ["--headless", "--no-sandbox", "--disable-gpu", `--user-data-dir=${join(dir, "chromium-profile")}`, "--dump-dom", `file://${join(dir, "board.html")}${hash}`], {
        encoding: "utf8",
        timeout: 90_000,
        stdio: ["ignore", "pipe", "ignore"],
      });
    const parse = (text: string) => {
      expect(text).toMatch(/data-ready="1"/); // the page's script ran
      return [...text.matchAll(/<tr class="row"[^>]*>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td>(.*?)<\/td>/g)].map((c) => c[1]!));
    };
    const shown = parse(dom(""));
    expect(shown.map((cells) => [Number(cells[0]), cells[1], cells[2]])).toEqual(rows.map((r) => [r.rank, r.model, r.condition]));
    expect(shown.map((cells) => cells[4]!.split(" ")[0])).toEqual(rows.map((r) => r.v1_mean!.toFixed(4)));
    // Sorted in the browser by the v1 mean column, ascending (equal means keep their order).
    const ascending = parse(dom("#sort=v1_mean:asc"));
    expect(ascending.map((cells) => Number(cells[4]!.split(" ")[0]))).toEqual(rows.map((r) => Number(r.v1_mean!.toFixed(4))).sort((a, b) => a - b));
    expect(ascending.map((cells) => cells[1]).slice(-2)).toEqual(["sim/oracle", "sim/oracle"]);
  });
});
