// SIGTERM stops every process within seconds (issue 14, cases 1 and 6): `run` and an agent with
// every engine request hanging, the coordinator behind them, `run` and `coordinator` while reading a
// track file with a 40 MB line, and a scorer waiting for NATS. Each is a real `udm-orch` process.
// The bound (20 s on a loaded 2-core CI machine) is a liveness check, not a speed figure: before
// the fix an agent drained for minutes behind a hung engine.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/bench-args.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { requireBuild, spawnCli, type CliProcess } from "../support/cli-process.js";

const STOP_MS = 20_000;
const SA = "test/sentiment/aiv-sa24-easy.jsonl.gz";
let root: string;
let suite: string;
let longLine: string;
const started: CliProcess[] = [];

function cli(args: string[]): CliProcess {
  const p = spawnCli(args);
  started.push(p);
  return p;
}

/** SIGTERM, then the time to exit (ms) and the exit code; SIGKILL and fail past STOP_MS. */
async function terminate(p: CliProcess): Promise<{ ms: number; code: number | null }> {
  const t0 = Date.now();
  p.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const end = await Promise.race([p.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), STOP_MS)))]);
  clearTimeout(timer);
  if (!end) {
    p.kill("SIGKILL");
    throw new Error(`still running ${STOP_MS} ms after SIGTERM:\n${p.output().slice(-3000)}`);
  }
  return { ms: Date.now() - t0, code: end.code };
}

/** Polls the process's live page until a unit is in flight (handed to an agent, its requests hanging). */
async function unitInFlight(p: CliProcess): Promise<void> {
  const page = (await p.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = (await (await fetch(`${page}/api/status`)).json()) as { units_inflight: number };
    if (status.units_inflight >= 1) return;
    if (Date.now() > deadline) throw new Error(`no unit in flight after 60 s:\n${p.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  requireBuild();
  root = mkdtempSync(join(tmpdir(), "udm-sigterm-"));
  suite = join(root, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
  // The same track with a 40 MB state in its first record (well under the 128 MiB send limit).
  longLine = join(root, "long-line");
  await makeSuite({ out: longLine, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
  const records = gunzipSync(readFileSync(join(longLine, SA))).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
  const key = Object.keys(records[0]!.state)[0]!;
  records[0]!.state[key] = "word ".repeat(8 * 1024 * 1024);
  const text = records.map((r) => JSON.stringify(r) + "\n").join("");
  writeFileSync(join(longLine, SA), gzipSync(text, { level: 1 }));
  const manifest = JSON.parse(readFileSync(join(longLine, "manifest.json"), "utf8"));
  manifest.files[SA].sha256 = createHash("sha256").update(text).digest("hex");
  writeFileSync(join(longLine, "manifest.json"), JSON.stringify(manifest));
}, 120_000);

afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("SIGTERM behind a hung engine (case 6)", () => {
  it("`run`: stops within seconds, not with exit 0 (records remain)", async () => {
    const p = cli(["run", "--suite", suite, "--out", join(root, "run-hang"), "--sim", "1", "--sim-faults", "hang=1"]);
    await unitInFlight(p);
    const end = await terminate(p);
    // The handler's exit (records remain), not death by the signal (code null).
    expect(end.code, p.output()).toBe(1);
    expect(p.output()).toMatch(/interrupted by SIGTERM: 0 of 5 records committed/);
    expect(p.output()).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("an agent (drain cut off after --drain-timeout-ms), then its coordinator: each stops within seconds", async () => {
    const engine = cli(["sim-engine", "--port", "0", "--faults", "hang=1"]);
    const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const coordinator = cli(["coordinator", "--suite", suite, "--out", join(root, "coord-hang"), "--listen", "127.0.0.1:0", "--after-complete", "exit"]);
    const address = (await coordinator.waitFor(/listening on (127\.0\.0\.1:\d+) run/))[1]!;
    const agent = cli(["agent", "--coordinator", address, "--engine", url]);
    await coordinator.waitFor(/agent attached/, 30_000);
    await unitInFlight(coordinator);
    const a = await terminate(agent);
    expect(a.ms).toBeLessThan(STOP_MS);
    expect(agent.output()).toMatch(/SIGTERM: draining/);
    // The drain was cut off: the agent's own exit 0 after its report, not death by the signal.
    expect(a.code, agent.output()).toBe(0);
    expect(agent.output()).toMatch(/drained by the agent/);
    const c = await terminate(coordinator);
    expect(c.code, coordinator.output()).toBe(1);
    expect(coordinator.output()).toMatch(/run stopped before every record was committed/);
    engine.kill("SIGTERM");
  }, 120_000);
});

describe("SIGTERM while a 40 MB line is read (case 1)", () => {
  it("`coordinator` stops within seconds", async () => {
    const p = cli(["coordinator", "--suite", longLine, "--out", join(root, "coord-long"), "--listen", "127.0.0.1:0"]);
    await p.waitFor(/reading the suite/, 60_000);
    const end = await terminate(p);
    expect(end.code, p.output()).toBe(1);
    expect(p.output()).toMatch(/SIGTERM while starting: stopping; nothing was committed/);
    expect(p.output()).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("`run` stops within seconds", async () => {
    const p = cli(["run", "--suite", longLine, "--out", join(root, "run-long"), "--sim", "1"]);
    // The page is up before the suite is read, and the handlers before the page.
    await p.waitFor(/live page: /, 60_000);
    const end = await terminate(p);
    // While the suite is read nothing is committed: not exit 0. On a quick machine the one unit of
    // this 5-record suite may be out already; the drain then finishes it, and exit 0 must mean that
    // every record was committed.
    if (end.code === 0) expect(p.output()).toMatch(/complete: 5 records \(0 resumed, 0 with errors\)/);
    else {
      expect(end.code, p.output()).toBe(1);
      expect(p.output()).toMatch(/interrupted by SIGTERM/);
      expect(p.output()).not.toMatch(/ complete: \d+ records/);
    }
    expect(p.output()).not.toMatch(/\n\s+at /);
  }, 120_000);
});

describe("SIGTERM of a scorer", () => {
  it("waiting for NATS: stops within seconds", async () => {
    const port = await freePort();
    const p = cli(["scorer", "--suite", suite, "--nats", `nats://127.0.0.1:${port}`, "--out", join(root, "scorer"), "--run", "r1"]);
    await p.waitFor(/NATS unreachable; waiting/, 60_000);
    const end = await terminate(p);
    expect(end.ms).toBeLessThan(STOP_MS);
    // The handler's exit 1 and its line (before the fix the handler came after NATS: killed by the signal).
    expect(end.code, p.output()).toBe(1);
    expect(p.output()).toMatch(/SIGTERM while starting: stopping; nothing was scored/);
  }, 120_000);
});
