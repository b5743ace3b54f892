// The distributed run with real processes: a coordinator, agents and simulated engines, each its own
// `udm-orch` process talking gRPC and HTTP on 127.0.0.1, killed with SIGKILL part-way.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { resultLines, spawnCli, waitUntil, type CliProcess } from "../support/cli-process.js";
import { readEventsUntil } from "../support/sse.js";

let root: string;
let suiteDir: string;
let records: number;
/** metrics.json of an uninterrupted embedded run on the same suite: what every recovered run must reproduce. */
let reference: unknown;
const started: CliProcess[] = [];

function cli(args: string[]): CliProcess {
  const p = spawnCli(args);
  started.push(p);
  return p;
}

async function simEngine(extra: string[] = []): Promise<string> {
  const p = cli(["sim-engine", "--port", "0", ...extra]);
  return (await p.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
}

async function coordinator(outDir: string, extra: string[] = []): Promise<{ p: CliProcess; address: string }> {
  const p = cli(["coordinator", "--suite", suiteDir, "--out", outDir, "--token", "s3cret", "--after-complete", "exit", ...extra]);
  const address = (await p.waitFor(/listening on (127\.0\.0\.1:\d+)/))[1]!;
  return { p, address };
}

function agent(address: string, engine: string, token = "s3cret"): CliProcess {
  return cli(["agent", "--coordinator", address, "--engine", engine, "--token", token]);
}

function expectExactlyOnce(outDir: string): void {
  const lines = resultLines(outDir);
  const ids = lines.map((l) => l.run_id);
  expect(new Set(ids).size, "distinct run_ids").toBe(records);
  expect(ids.length, "result lines (a duplicate would make this larger)").toBe(records);
  expect(lines.filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);
}

function metricsOf(outDir: string): unknown {
  return JSON.parse(readFileSync(join(outDir, "metrics.json"), "utf8"));
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "udm-e2e-"));
  suiteDir = join(root, "suite");
  records = (await makeSuite({ out: suiteDir, scale: "small", seed: 7 })).records;
  const ref = cli(["run", "--suite", suiteDir, "--out", join(root, "reference"), "--sim", "2"]);
  expect((await ref.exited).code, ref.output()).toBe(0);
  reference = metricsOf(join(root, "reference"));
}, 120_000);

afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("distributed run across processes", () => {
  it("three agents over real gRPC finish the suite with every record exactly once", async () => {
    const out = join(root, "three");
    const { p, address } = await coordinator(out, ["--metrics", "127.0.0.1:0"]);
    const page = (await p.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
    let attached!: () => void;
    const watching = new Promise<void>((r) => (attached = r));
    const tracks = Object.keys((reference as { tracks: object }).tracks).length;
    let scoredSoFar = 0; // every track's headline, then stop
    const events = readEventsUntil(`${page}/api/events?token=s3cret`, (type) => type === "track_scored" && ++scoredSoFar === tracks, 120_000, attached);
    events.catch(() => undefined); // awaited below; reported there
    await watching;
    const engines = await Promise.all([simEngine(["--tokens-per-s", "0"]), simEngine(["--tokens-per-s", "0"]), simEngine(["--tokens-per-s", "0"])]);
    for (const e of engines) agent(address, e);
    const end = await p.exited;
    expect(end.code, p.output()).toBe(0);
    expect(p.output()).toMatch(new RegExp(`complete: ${records}/${records} records committed`));
    expectExactlyOnce(out);
    // The coordinator's own scorer (its thread, fed by the coordinator's thread) wrote metrics.json: score's, byte for byte.
    const own = readFileSync(join(out, "metrics.json"), "utf8");
    const score = cli(["score", "--suite", suiteDir, "--results", out]);
    expect((await score.exited).code, score.output()).toBe(0);
    expect(readFileSync(join(out, "metrics.json"), "utf8")).toBe(own);
    // With no bus scorer, the live page's headlines come from that scorer: one per track, with
    // metrics.json's value, the first of them while the run went on.
    const seen = await events;
    const scored = seen.filter((e) => e.type === "track_scored").map((e) => e.data as { track: string; metric: string; value: number | null });
    const final = (JSON.parse(own) as { tracks: Record<string, { headline: { metric: string; value: number | null } }> }).tracks;
    expect(scored.map((e) => e.track).sort()).toEqual(Object.keys(final).sort());
    for (const e of scored) expect({ metric: e.metric, value: e.value }, e.track).toEqual({ metric: final[e.track]!.headline.metric, value: final[e.track]!.headline.value });
    const runComplete = seen.findIndex((e) => e.type === "run_complete");
    expect(seen.findIndex((e) => e.type === "track_scored")).toBeLessThan(runComplete === -1 ? Infinity : runComplete);
    expect(metricsOf(out)).toEqual(reference);
  }, 120_000);

  it("metrics.json cannot be written: the coordinator's scorer thread ends the run with that error, and what was committed stays", async () => {
    const out = join(root, "metrics-unwritable");
    mkdirSync(join(out, "metrics.json"), { recursive: true }); // a directory where the file goes
    const c = await coordinator(out, ["--lease-ms", "3000"]);
    const a = agent(c.address, await simEngine(["--tokens-per-s", "40000"]));
    const end = await c.p.exited;
    expect(end.code, c.p.output()).toBe(1);
    expect(c.p.output()).toMatch(/metrics\.json/);
    expect(c.p.output()).not.toMatch(/\n\s+at /); // no stack trace
    const ids = resultLines(out).map((l) => l.run_id);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
    a.kill("SIGKILL");
  }, 120_000);

  it("an agent killed with SIGKILL mid-run: its units are re-leased and the run completes without duplicates", async () => {
    const out = join(root, "agent-kill");
    const c = await coordinator(out, ["--lease-ms", "3000", "--heartbeat-ms", "500"]);
    const [e1, e2] = await Promise.all([simEngine(["--tokens-per-s", "40000"]), simEngine(["--tokens-per-s", "40000"])]);
    const victim = agent(c.address, e1!);
    agent(c.address, e2!);
    await waitUntil(() => resultLines(out).length >= 30, 60_000, "30 committed results");
    victim.kill("SIGKILL");
    const end = await c.p.exited;
    expect(end.code, c.p.output()).toBe(0);
    expectExactlyOnce(out);
    const score = cli(["score", "--suite", suiteDir, "--results", out]);
    expect((await score.exited).code).toBe(0);
    expect(metricsOf(out)).toEqual(reference);
  }, 120_000);

  it("the coordinator killed with SIGKILL mid-run: restarted on the same address, agents reattach and nothing committed is redone", async () => {
    const out = join(root, "coordinator-kill");
    const first = await coordinator(out);
    const [e1, e2] = await Promise.all([simEngine(["--tokens-per-s", "40000"]), simEngine(["--tokens-per-s", "40000"])]);
    const agents = [agent(first.address, e1!), agent(first.address, e2!)];
    await waitUntil(() => resultLines(out).length >= 40, 60_000, "40 committed results");
    first.p.kill("SIGKILL");
    await first.p.exited;
    const before = resultLines(out).length;
    const port = first.address.split(":")[1]!;
    const second = await coordinator(out, ["--listen", `127.0.0.1:${port}`]);
    const resumed = Number(second.p.output().match(/(\d+) already committed/)![1]);
    expect(resumed).toBeGreaterThanOrEqual(before - 1); // a torn last line is repaired and redone
    expect((await second.p.exited).code, second.p.output()).toBe(0);
    for (const a of agents) expect((await a.exited).code, a.output()).toBe(0);
    expectExactlyOnce(out);
    // The resumed coordinator's scorer replayed the first run's lines from disk: still score's metrics.json.
    const own = readFileSync(join(out, "metrics.json"), "utf8");
    const score = cli(["score", "--suite", suiteDir, "--results", out]);
    expect((await score.exited).code).toBe(0);
    expect(readFileSync(join(out, "metrics.json"), "utf8")).toBe(own);
    expect(metricsOf(out)).toEqual(reference);
  }, 180_000);

  it("`run` killed with SIGKILL part-way and rerun with the same command resumes to the same metrics", async () => {
    const out = join(root, "run-kill");
    const args = ["run", "--suite", suiteDir, "--out", out, "--sim", "2", "--sim-tokens-per-s", "40000"];
    const first = cli(args);
    await waitUntil(() => resultLines(out).length >= 40, 60_000, "40 committed results");
    first.kill("SIGKILL");
    await first.exited;
    const committedBefore = new Set(resultLines(out).map((l) => l.run_id));
    expect(committedBefore.size).toBeLessThan(records);
    const second = cli(args);
    expect((await second.exited).code, second.output()).toBe(0);
    expect(second.output()).toMatch(/\((\d+) resumed, 0 with errors\)/);
    expect(Number(second.output().match(/\((\d+) resumed, 0 with errors\)/)![1])).toBeGreaterThanOrEqual(committedBefore.size - 1);
    expectExactlyOnce(out);
    expect(metricsOf(out)).toEqual(reference);
  }, 180_000);

  it("an agent with a wrong token is refused and exits non-zero", async () => {
    const out = join(root, "token");
    const c = await coordinator(out);
    const engine = await simEngine(["--tokens-per-s", "0"]);
    const intruder = agent(c.address, engine, "wrong");
    const end = await intruder.exited;
    expect(end.code).not.toBe(0);
    expect(intruder.output()).toMatch(/UNAUTHENTICATED|token|credentials/i);
    expect(resultLines(out)).toEqual([]);
    c.p.kill("SIGTERM");
    await c.p.exited;
  }, 60_000);

  it("engines answering 5xx 10% of the time still give a complete run with the reference metrics", async () => {
    const out = join(root, "faults");
    const p = cli(["run", "--suite", suiteDir, "--out", out, "--sim", "2", "--sim-faults", "5xx=0.1"]);
    expect((await p.exited).code, p.output()).toBe(0);
    expectExactlyOnce(out);
    expect(metricsOf(out)).toEqual(reference);
  }, 120_000);
});
