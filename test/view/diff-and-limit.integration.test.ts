// `udm-orch diff` and `--limit` on real runs (`udm-orch run` on simulated engines over a small
// synthetic suite): a run against itself differs by nothing (p = 1); an oracle against the pseudo
// model differs beyond noise on most tracks; runs of other scopes are refused with exit 2; a
// `--limit 2` run answers at most 2 records per track, whole groups, the same ones every time,
// under another fingerprint than the unlimited run.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { resultLines } from "../support/cli-process.js";
import { limitRecords } from "../../common/suite/index.js";

const TRACKS = ["vihsd", "aiv-culture100", "mmlu-prox-vi", "skillgym-sft", "nemotron-tools", "trec-dl19"];
const f = cliFixture("diff", { seed: 5, tracks: TRACKS });

interface DiffJson {
  permutations: number;
  tracks: Array<{ track: string; a: number | null; b: number | null; difference: number | null; ci_low: number | null; ci_high: number | null; p_value: number | null; flips: { right_to_wrong: string[]; wrong_to_right: string[] } | null }>;
  v1: { difference: number | null; ci_low: number | null; ci_high: number | null; p_value: number | null };
}

async function run(out: string, extra: string[]): Promise<void> {
  const p = f.cli(["run", "--suite", f.suite, "--out", join(f.root, out), "--sim", "1", "--metrics", "off", ...extra]);
  expect(await exitWithin(p, 120_000), p.output()).toBe(0);
}

let outputs = 0;
/** `diff a b`; with `--format json` the JSON (written with --out) is `stdout`. */
async function diff(a: string, b: string, extra: string[] = []): Promise<{ code: number | null; stdout: string; output: string }> {
  const json = extra.includes("json") ? join(f.root, `diff-${++outputs}.json`) : undefined;
  const p = f.cli(["diff", join(f.root, a), join(f.root, b), ...extra, ...(json ? ["--out", json] : [])]);
  const code = await exitWithin(p, 60_000);
  return { code, stdout: json && code === 0 ? readFileSync(json, "utf8") : p.output(), output: p.output() };
}

const card = (dir: string) => JSON.parse(readFileSync(join(f.root, dir, "run-card.json"), "utf8")) as { fingerprint: string; dataset: { limit?: number; entry_count: number } };

describe("diff and --limit on real runs", () => {
  beforeAll(async () => {
    await run("pseudo", []);
    await run("oracle", ["--sim-oracle", f.suite, "--sim-accuracy", "1"]);
    await run("limited", ["--limit", "2"]);
    await run("limited-again", ["--limit", "2"]);
  }, 300_000);

  it("a run against itself: every difference 0, every p-value 1", async () => {
    const r = await diff("pseudo", "pseudo", ["--format", "json"]);
    expect(r.code, r.output).toBe(0);
    const d = JSON.parse(r.stdout) as DiffJson;
    expect(d.tracks.map((t) => t.track).sort()).toEqual([...TRACKS].sort());
    for (const t of d.tracks) {
      expect(t, t.track).toMatchObject({ difference: 0, ci_low: 0, ci_high: 0, p_value: 1 });
      if (t.flips) expect(t.flips).toEqual({ right_to_wrong: [], wrong_to_right: [] });
    }
    expect(d.v1).toMatchObject({ difference: 0, ci_low: 0, ci_high: 0, p_value: 1 });
  });

  it("an oracle against the pseudo model: significant on most tracks, flipped records listed and linked into view", async () => {
    const r = await diff("oracle", "pseudo", ["--format", "json"]);
    expect(r.code, r.output).toBe(0);
    const d = JSON.parse(r.stdout) as DiffJson;
    const significant = d.tracks.filter((t) => t.ci_low !== null && t.ci_low > 0);
    expect(significant.length, JSON.stringify(d.tracks)).toBeGreaterThan(TRACKS.length / 2);
    expect(d.v1.difference!).toBeGreaterThan(0);
    expect(d.v1.ci_low!).toBeGreaterThan(0);
    expect(d.v1.p_value!).toBeLessThan(0.05);
    // The flips agree with the headlines: accuracy moves by (wrong→right − right→wrong) / records.
    const vihsd = d.tracks.find((t) => t.track === "vihsd")!;
    const n = resultLines(join(f.root, "pseudo")).filter((l) => l.run_id.startsWith("vihsd:")).length;
    expect(vihsd.difference!).toBeCloseTo((vihsd.flips!.right_to_wrong.length - vihsd.flips!.wrong_to_right.length) / n, 10);
    const md = await diff("oracle", "pseudo");
    expect(md.stdout).toContain(`http://127.0.0.1:9480/#/t/vihsd/r/${encodeURIComponent(vihsd.flips!.right_to_wrong[0]!)}`);
    expect(md.stdout).toMatch(/1000 permutations/);
  });

  it("runs of different scopes are refused with exit 2, saying why", async () => {
    const r = await diff("pseudo", "limited");
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/udm-orch: cannot diff: the runs cover different scopes: .*pseudo has every record, .*limited has --limit 2/);
    expect(r.output).not.toMatch(/\n\s+at /);
    const notARun = await diff("pseudo", "suite");
    expect(notARun.code).toBe(2);
    expect(notARun.output).toMatch(/udm-orch: .*suite has no run\.json: not the directory of a run/);
  });

  it("the leaderboard marks significant neighbours and sets a limited scope apart", async () => {
    const json = join(f.root, "board.json");
    const html = join(f.root, "board.html");
    const p = f.cli(["leaderboard", join(f.root, "oracle"), join(f.root, "pseudo"), join(f.root, "limited"), "--json", json, "--html", html]);
    expect(await exitWithin(p, 120_000), p.output()).toBe(0);
    expect(p.output()).toMatch(/- 1 \(sim\/pseudo\) vs 2 \(sim\/pseudo\): \+0\.\d+ \[\+0\.\d+, \+0\.\d+\], p 0\.\d+ \*/);
    expect(p.output()).toMatch(/limited scope: 2 records per track \(--limit\)/);
    const board = JSON.parse(readFileSync(json, "utf8")) as { groups: Array<{ limit?: number | null; rows: Array<{ source: string; vs_next?: { significant: boolean; difference: number } }> }> };
    const full = board.groups.find((g) => !g.limit)!;
    expect(full.rows.map((r) => r.source)).toEqual([join(f.root, "oracle", "run-card.json"), join(f.root, "pseudo", "run-card.json")]);
    expect(full.rows[0]!.vs_next).toMatchObject({ significant: true });
    expect(full.rows[1]!.vs_next).toBeUndefined();
    expect(board.groups.find((g) => g.limit === 2)!.rows.map((r) => r.source)).toEqual([join(f.root, "limited", "run-card.json")]);
    const page = readFileSync(html, "utf8");
    expect(page).toMatch(/limited scope: 2 records per track/);
    expect(page).toMatch(/<li class="significant">1 \(sim\/pseudo\) vs 2 \(sim\/pseudo\): \+0\.\d+ \[/);
  });

  it("--limit 2: at most 2 records per track, whole groups, the same ones every time, another fingerprint", async () => {
    const lines = resultLines(join(f.root, "limited"));
    const byTrack = new Map<string, string[]>();
    for (const l of lines) byTrack.set(l.run_id.split(":")[0]!, [...(byTrack.get(l.run_id.split(":")[0]!) ?? []), l.run_id]);
    expect([...byTrack.keys()].sort()).toEqual([...TRACKS].sort());
    for (const track of TRACKS) {
      const records = suiteRecords(track);
      const expected = limitRecords(records, (r) => r.group, 2).map((r) => r.runId);
      expect(byTrack.get(track)!.sort(), track).toEqual([...expected].sort());
      // Whole groups: every record of a group that is in is in; more than 2 only when the first group alone is larger.
      const groups = new Set(records.filter((r) => expected.includes(r.runId)).map((r) => r.group));
      expect(records.filter((r) => groups.has(r.group)).length, track).toBe(expected.length);
      expect(expected.length <= 2 || groups.size === 1, `${track}: ${expected.length} records in ${groups.size} groups`).toBe(true);
      expect(groups.has(records[0]!.group), track).toBe(true);
    }
    // A reranking query of several chunks is taken whole.
    expect(byTrack.get("trec-dl19")!.length).toBeGreaterThan(1);
    expect(resultLines(join(f.root, "limited-again")).map((l) => l.run_id).sort()).toEqual(lines.map((l) => l.run_id).sort());
    expect(card("limited").dataset.limit).toBe(2);
    expect(card("limited").dataset.entry_count).toBe(lines.length);
    expect(card("pseudo").dataset.limit).toBeUndefined();
    expect(card("limited").fingerprint).not.toBe(card("pseudo").fingerprint);
    expect(card("limited").fingerprint).toBe(card("limited-again").fingerprint);
    // The card's scores recompute under its limit, and `score --limit 2` gives the run's metrics.json.
    const verify = f.cli(["card", "verify", join(f.root, "limited", "run-card.json"), "--suite", f.suite]);
    expect(await exitWithin(verify, 60_000), verify.output()).toBe(0);
    expect(verify.output()).toMatch(/verifies .*scores recomputed/);
    const scored = join(f.root, "limited-score.json");
    const score = f.cli(["score", "--suite", f.suite, "--results", join(f.root, "limited"), "--limit", "2", "--out", scored]);
    expect(await exitWithin(score, 60_000), score.output()).toBe(0);
    const metrics = (p: string) => JSON.parse(readFileSync(p, "utf8")) as { tracks: unknown; summary: unknown };
    expect(metrics(scored).tracks).toEqual(metrics(join(f.root, "limited", "metrics.json")).tracks);
    // `card reproduce` reruns a limited card over the same records.
    const reproduce = f.cli(["card", "reproduce", join(f.root, "limited", "run-card.json"), "--sim", "1", "--out", join(f.root, "limited-reproduced"), "--metrics", "off"]);
    expect(await exitWithin(reproduce, 120_000), reproduce.output()).toBe(0);
    expect(reproduce.output()).toMatch(/reproduced/);
    expect(card("limited-reproduced").dataset.limit).toBe(2);
    expect(card("limited-reproduced").dataset.entry_count).toBe(lines.length);
    // `status --out` counts the records the limit kept, not the suite's.
    const status = f.cli(["status", "--out", join(f.root, "limited"), "--json"]);
    expect(await exitWithin(status, 60_000), status.output()).toBe(0);
    expect(JSON.parse(status.output())).toMatchObject({ records_total: lines.length, records_committed: lines.length });
    // Resuming the limited run without its limit is refused (run.json pins it).
    const p = f.cli(["run", "--suite", f.suite, "--out", join(f.root, "limited"), "--sim", "1", "--metrics", "off"]);
    expect(await exitWithin(p, 60_000)).toBe(2);
    expect(p.output()).toMatch(/limit 2 -> none/);
  });
});

describe("run --config run.yaml: a sweep config of one cell", () => {
  it("runs that cell (its scope and limit, its price); a matrix is refused with exit 2", async () => {
    const config = join(f.root, "run.yaml");
    writeFileSync(config, `suite: ${f.suite}\nout: ${join(f.root, "configured")}\nmodels: [sim/pseudo]\nmethods: [systemone]\ntracks: [vihsd, trec-dl19]\nlimit: 2\ngpu_hour_usd: 2\n`);
    const p = f.cli(["run", "--config", config, "--sim", "1", "--metrics", "off"]);
    expect(await exitWithin(p, 120_000), p.output()).toBe(0);
    const c = JSON.parse(readFileSync(join(f.root, "configured", "run-card.json"), "utf8")) as { dataset: { tracks: string[]; limit: number }; method: { model_slug: string }; totals: { gpu_hour_usd: number } };
    expect(c.dataset).toMatchObject({ tracks: ["trec-dl19", "vihsd"], limit: 2 });
    expect(c.method.model_slug).toBe("sim/pseudo");
    expect(c.totals.gpu_hour_usd).toBe(2);
    const limited = resultLines(join(f.root, "limited")).filter((l) => /^(vihsd|trec-dl19):/.test(l.run_id)).map((l) => l.run_id);
    expect(resultLines(join(f.root, "configured")).map((l) => l.run_id).sort()).toEqual(limited.sort());
    writeFileSync(config, `suite: ${f.suite}\nout: ${join(f.root, "matrix")}\nmodels: [a, b]\n`);
    const m = f.cli(["run", "--config", config, "--sim", "1", "--metrics", "off"]);
    expect(await exitWithin(m, 60_000)).toBe(2);
    expect(m.output()).toMatch(/run --config takes one run, this config declares 2 \(2 models/);
  });
});

function suiteRecords(track: string): Array<{ runId: string; group: string }> {
  const family = { vihsd: "content_moderation", "aiv-culture100": "multiple_choice", "mmlu-prox-vi": "multiple_choice", "skillgym-sft": "skill_routing", "nemotron-tools": "tool_selection", "trec-dl19": "passage_reranking" }[track]!;
  const text = gunzipSync(readFileSync(join(f.suite, "test", family, `${track}.jsonl.gz`))).toString("utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { _evaluation: { run_id: string }; metadata: { group_id: string } })
    .map((r) => ({ runId: r._evaluation.run_id, group: r.metadata.group_id }));
}
