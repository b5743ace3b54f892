// Run cards of real runs (the built CLI, simulated engines): a demo run's card verifies and carries
// the run's totals; changing a byte of a score, a results line or a method field is caught by
// `card verify`; two runs of the same setup on the deterministic simulated engine have the same
// fingerprint and identical metrics; `card reproduce` reruns a card within ±2% (and names the
// tracks outside when an engine answers differently); the leaderboard also ranks a plain results
// directory, scored against --suite.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync, readdirSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { runCardHash } from "../../card/card-hash.js";
import { canonicalJson } from "../../common/canonical-json.js";
import { qualityTier } from "../../card/quality-tier.js";
import { compareHeadlines } from "../../card/reproduce-compare.js";
import type { RunCard } from "../../card/run-card.js";
import type { Leaderboard } from "../../card/leaderboard/leaderboard-rows.js";

const TRACKS = "vihsd,aiv-nli500,trec-dl19";
let dir: string;
let suite: string;

async function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  const p = spawnCli(args);
  const { code } = await p.exited;
  return { code, out: p.output() };
}

function readCard(path: string): RunCard {
  return JSON.parse(readFileSync(path, "utf8")) as RunCard;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-card-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 5, tracks: TRACKS.split(",") });
  for (const out of ["a", "b"]) {
    const r = await cli(["run", "--suite", suite, "--out", join(dir, out), "--sim", "2", "--method-class", "pipeline", "--gpu-hour-usd", "2"]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/run card .*run-card\.json \(fingerprint [0-9a-f]{12}/);
  }
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("run card of a run", () => {
  it("has every docs/run-card.md field, seals every results file and verifies", async () => {
    const card = readCard(join(dir, "a", "run-card.json"));
    expect(card.status).toBe("complete");
    expect(card.finished).not.toBeNull();
    expect(card.method).toMatchObject({ model_slug: "sim/pseudo", model_id: "sim/pseudo", condition: "systemone", temperature: 0, batch_size: 8, tools_enabled: [], method_class: "pipeline" });
    expect(card.method.system_prompt_sha256).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const metrics = JSON.parse(readFileSync(join(dir, "a", "metrics.json"), "utf8"));
    expect(card.dataset.sha256).toBe(metrics.suite.identity);
    expect(card.dataset.entry_count).toBeGreaterThan(0);
    expect(card.scores.summary).toEqual(metrics.summary);
    for (const [t, m] of Object.entries<{ headline: unknown }>(metrics.tracks)) expect(card.scores.tracks[t]!.headline).toEqual(m.headline);
    expect(Object.keys(card.results_files).sort()).toEqual(["content_moderation/vihsd.jsonl", "nli/aiv-nli500.jsonl", "passage_reranking/trec-dl19.jsonl"]);
    expect(card.totals.gpu_hour_usd).toBe(2);
    expect(card.quality_tier.provisional).toBe(true);
    expect(card.verification_tier).toBe("self-benchmarked");
    // Two agents were started; on a loaded machine one may finish the small suite before the other attaches.
    expect(card.cluster.agents_seen).toBe(card.cluster.agents.length);
    expect([1, 2]).toContain(card.cluster.agents_seen);
    expect(card.cluster.agents.reduce((n, a) => n + a.results, 0)).toBe(card.dataset.entry_count);
    expectRunTotals(card, 2);
    // Three of the 43 v1 tracks: the partial mean, with its interval (the pillar rule over them).
    expect(card.scores.summary.v1_mean).toBeNull();
    expectV1Interval(card, card.scores.summary.v1_mean_partial!);
    expect(card.run_card_hash).toBe(runCardHash(card));
    const v = await cli(["card", "verify", join(dir, "a", "run-card.json"), join(dir, "b", "run-card.json")]);
    expect(v.code, v.out).toBe(0);
    expect(v.out).toMatch(/verifies .*3 results files rehashed/);
  });

  it("run --help and coordinator --help describe the --out layout the run wrote", async () => {
    const written = new Set(readdirSync(join(dir, "a"), { recursive: true, encoding: "utf8" }));
    for (const command of ["run", "coordinator"]) {
      const help = (await cli([command, "--help"])).out.replace(/\s+/g, " ");
      const named = [...new Set([...help.matchAll(/<out>\/([^\s,()]+)/g)].map((m) => m[1]!))];
      expect(named, command).toEqual(["<family>/<track>.jsonl", "run.json", "metrics.json", "run-card.json"]);
      for (const path of named.slice(1)) expect(written.has(path), `${command} --help names ${path}`).toBe(true);
      expect(written.has("content_moderation/vihsd.jsonl")).toBe(true);
    }
  });

  it("same setup on the deterministic engine: same fingerprint, identical metrics, reproduced within ±2%", () => {
    const a = readCard(join(dir, "a", "run-card.json"));
    const b = readCard(join(dir, "b", "run-card.json"));
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(b.run_id).not.toBe(a.run_id);
    expect(readFileSync(join(dir, "b", "metrics.json"), "utf8")).toBe(readFileSync(join(dir, "a", "metrics.json"), "utf8"));
    expect(compareHeadlines(a, b)).toMatchObject({ within: true, outside: [] });
  });

  it.each([
    ["a score", (c: Record<string, any>) => (c.scores.summary.family_macro_mean = Number(c.scores.summary.family_macro_mean) + 1e-9), /run_card_hash/],
    ["a method field", (c: Record<string, any>) => (c.method.temperature = 0.5), /fingerprint/],
    ["the model", (c: Record<string, any>) => (c.method.model_slug = "sim/other"), /fingerprint/],
    ["the verification tier", (c: Record<string, any>) => (c.verification_tier = "reproduced"), /run_card_hash/],
  ])("changing %s is caught", async (_what, change, expected) => {
    const copy = join(dir, `tamper-${Math.random().toString(36).slice(2)}`);
    cpSync(join(dir, "a"), copy, { recursive: true });
    const path = join(copy, "run-card.json");
    const card = JSON.parse(readFileSync(path, "utf8"));
    change(card);
    writeFileSync(path, JSON.stringify(card, null, 2));
    const v = await cli(["card", "verify", path]);
    expect(v.code).toBe(1);
    expect(v.out).toMatch(expected);
  });

  it("changing one byte of a results line, or adding a results file, is caught", async () => {
    const copy = join(dir, "tamper-results");
    cpSync(join(dir, "a"), copy, { recursive: true });
    const file = join(copy, "content_moderation", "vihsd.jsonl");
    const text = readFileSync(file, "utf8");
    const i = text.indexOf("0.");
    writeFileSync(file, text.slice(0, i + 2) + (text[i + 2] === "1" ? "2" : "1") + text.slice(i + 3));
    const v = await cli(["card", "verify", join(copy, "run-card.json")]);
    expect(v.code).toBe(1);
    expect(v.out).toMatch(/results file content_moderation\/vihsd\.jsonl: sha256/);
    writeFileSync(file, text);
    writeFileSync(join(copy, "content_moderation", "extra.jsonl"), "");
    const w = await cli(["card", "verify", join(copy, "run-card.json")]);
    expect(w.code).toBe(1);
    expect(w.out).toMatch(/extra\.jsonl: present .* not sealed/);
  });

  it("a listed results file that is missing is caught", async () => {
    const copy = join(dir, "tamper-missing");
    cpSync(join(dir, "a"), copy, { recursive: true });
    rmSync(join(copy, "nli", "aiv-nli500.jsonl"));
    const v = await cli(["card", "verify", join(copy, "run-card.json")]);
    expect(v.code, v.out).toBe(1);
    expect(v.out).toMatch(/nli\/aiv-nli500\.jsonl/);
    expect(v.out).toMatch(/DOES NOT VERIFY/);
  });

  it("a results line edited and its sha256 updated in the card, but the card not resealed, is caught", async () => {
    const copy = join(dir, "tamper-resha");
    cpSync(join(dir, "a"), copy, { recursive: true });
    const file = join(copy, "content_moderation", "vihsd.jsonl");
    const text = readFileSync(file, "utf8");
    const i = text.indexOf("0.");
    const edited = text.slice(0, i + 2) + (text[i + 2] === "1" ? "2" : "1") + text.slice(i + 3);
    writeFileSync(file, edited);
    const path = join(copy, "run-card.json");
    const card = JSON.parse(readFileSync(path, "utf8"));
    card.results_files["content_moderation/vihsd.jsonl"] = createHash("sha256").update(edited).digest("hex");
    writeFileSync(path, JSON.stringify(card, null, 2));
    const v = await cli(["card", "verify", path]);
    expect(v.code, v.out).toBe(1);
    expect(v.out).toMatch(/run_card_hash: recorded/);
    expect(v.out).not.toMatch(/results file content_moderation\/vihsd\.jsonl: sha256/);
  });

  it("a card alone (no results beside it) verifies by its hash", async () => {
    const alone = join(dir, "alone");
    cpSync(join(dir, "a", "run-card.json"), join(alone, "run-card.json"));
    expect(readdirSync(alone)).toEqual(["run-card.json"]);
    const v = await cli(["card", "verify", join(alone, "run-card.json")]);
    expect(v.code, v.out).toBe(0);
    expect(v.out).toMatch(/hash only/);
  });
});

/** The run's totals (the coordinator's run progress): tokens, GPU-seconds, cost, latency, speed. */
function expectRunTotals(card: RunCard, gpuHourUsd: number): void {
  const t = card.totals;
  expect(t.prompt_tokens).toBeGreaterThan(0);
  expect(t.completion_tokens).toBeGreaterThan(0);
  expect(t.gpu_seconds).toBeGreaterThan(0);
  expect(t.gpu_hour_usd).toBe(gpuHourUsd);
  expect(t.total_cost_usd).toBeCloseTo((t.gpu_seconds! * gpuHourUsd) / 3600, 6);
  // Both are rounded in the card (cost to 6 digits, cost per entry to 9).
  expect(t.cost_per_entry_usd).toBeCloseTo(t.total_cost_usd! / card.dataset.entry_count, 7);
  const m = card.timing;
  expect(m.timed_records).toBe(card.dataset.entry_count);
  expect(m.avg_latency_seconds).toBeGreaterThan(0);
  expect(m.median_latency_seconds).toBeGreaterThan(0);
  expect(m.p95_latency_seconds).toBeGreaterThanOrEqual(m.median_latency_seconds!);
  expect(m.entries_per_minute).toBeGreaterThan(0);
  expect(m.tokens_per_second).toBeCloseTo((t.prompt_tokens! + t.completion_tokens!) / card.elapsed_seconds, 1);
}

function expectV1Interval(card: RunCard, mean: number): void {
  const ci = card.scores.v1_ci!;
  expect(ci.ci_low).toBeTypeOf("number");
  expect(ci.ci_low!).toBeLessThanOrEqual(mean);
  expect(ci.ci_high!).toBeGreaterThanOrEqual(mean);
  expect(ci.ci_high!).toBeGreaterThan(ci.ci_low!);
}

describe("demo", () => {
  it("prints where its run card is and that it verifies; the card is complete with the run's totals and the v1 mean's CI", async () => {
    const out = join(dir, "demo");
    const d = await cli(["demo", "--out", out]);
    expect(d.code, d.out).toBe(0);
    const cardFile = join(out, "run", "run-card.json");
    expect(d.out).toContain(`demo: run card ${cardFile}\n`);
    expect(d.out).toMatch(/demo: the run card verifies \(fingerprint [0-9a-f]{12}, 44 results files rehashed\): udm-orch card verify /);
    const card = readCard(cardFile);
    expect(card.status).toBe("complete");
    expect(card.method.model_id).toBe("sim/pseudo");
    // All 43 v1 tracks: the v1 mean itself, with its interval.
    expect(card.scores.summary.v1_mean).toBeTypeOf("number");
    expectV1Interval(card, card.scores.summary.v1_mean!);
    expectRunTotals(card, 0);
    expect(card.totals.total_cost_usd).toBeNull(); // no --gpu-hour-usd: cost unknown, not 0
    const v = await cli(["card", "verify", cardFile]);
    expect(v.code, v.out).toBe(0);
  }, 240_000);
});

describe("card reproduce", () => {
  it("reruns the card's setup: every headline within ±2% marks the new card reproduced", async () => {
    const out = join(dir, "a-reproduce");
    const r = await cli(["card", "reproduce", join(dir, "a", "run-card.json"), "--sim", "2", "--out", out, "--metrics", "127.0.0.1:0"]);
    // A rerun is a run: watched on its own live page like one.
    expect(r.out).toMatch(/live page: http:\/\/127\.0\.0\.1:\d+\//);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/all within ±2%: reproduced/);
    const original = readCard(join(dir, "a", "run-card.json"));
    const card = readCard(join(out, "run-card.json"));
    expect(card.verification_tier).toBe("reproduced");
    expect(card.fingerprint).toBe(original.fingerprint);
    expect(card.reproduction).toMatchObject({ of_run_id: original.run_id, of_run_card_hash: original.run_card_hash, tolerance: 0.02, compared: 4, outside: [], within: true }); // 3 tracks and the v1 mean
    const v = await cli(["card", "verify", join(out, "run-card.json")]);
    expect(v.code, v.out).toBe(0);
  }, 180_000);

  it("an engine that answers otherwise is not reproduced, and the tracks outside ±2% are named", async () => {
    const r = await cli(["card", "reproduce", join(dir, "a", "run-card.json"), "--sim", "2", "--sim-oracle", suite, "--sim-accuracy", "1", "--out", join(dir, "a-oracle")]);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/\d outside ±2%: not reproduced/);
    expect(r.out).toMatch(/ {2}(vihsd|aiv-nli500|trec-dl19): \S+ -> \S+/);
    const card = readCard(join(dir, "a-oracle", "run-card.json"));
    expect(card.verification_tier).toBe("self-benchmarked");
    expect(card.reproduction!.within).toBe(false);
    expect(card.reproduction!.outside.length).toBeGreaterThan(0);
  }, 180_000);
});

describe("leaderboard of a card and a plain results directory", () => {
  it("scores the directory without a card against --suite, lists it as `no card`, and refuses results of another suite", async () => {
    // The results as the reference `udm.infer` leaves them: result files only.
    const plain = join(dir, "plain-results");
    for (const family of ["content_moderation", "nli", "passage_reranking"]) cpSync(join(dir, "b", family), join(plain, family), { recursive: true });
    const json = join(dir, "board-plain.json");
    const l = await cli(["leaderboard", join(dir, "a", "run-card.json"), plain, "--suite", suite, "--json", json]);
    expect(l.code, l.out).toBe(0);
    const board = JSON.parse(readFileSync(json, "utf8")) as Leaderboard;
    expect(board.groups).toHaveLength(1);
    const rows = board.groups[0]!.rows;
    const card = readCard(join(dir, "a", "run-card.json"));
    const fromDir = rows.find((r) => r.source === plain)!;
    const fromCard = rows.find((r) => r.verification_tier === "self-benchmarked")!;
    expect(fromDir).toMatchObject({ verification_tier: "no card", fingerprint: null });
    // The same answers (deterministic engine) give the same mean and interval, card or not.
    expect(fromDir.v1_mean).toBe(card.scores.summary.v1_mean_partial);
    expect(fromCard.v1_mean).toBe(card.scores.summary.v1_mean_partial);
    expect([fromDir.v1_ci_low, fromDir.v1_ci_high]).toEqual([card.scores.v1_ci!.ci_low, card.scores.v1_ci!.ci_high]);
    expect(l.out).toMatch(/no card/);
    // A results line whose run_id is no row of the suite is refused, naming it.
    const foreign = join(dir, "foreign-results");
    mkdirSync(join(foreign, "nli"), { recursive: true });
    const line = JSON.parse(readFileSync(join(plain, "nli", "aiv-nli500.jsonl"), "utf8").split("\n")[0]!);
    writeFileSync(join(foreign, "nli", "aiv-nli500.jsonl"), JSON.stringify({ ...line, run_id: "not-in-the-suite" }) + "\n");
    const bad = await cli(["leaderboard", foreign, "--suite", suite]);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/not-in-the-suite/);
  }, 120_000);
});

describe("card parts", () => {
  it("canonical JSON sorts keys at every depth, without spaces", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: null }], c: "x" } })).toBe('{"a":{"c":"x","d":[1,{"y":null,"z":0}]},"b":1}');
  });

  it("quality tiers follow the protocol's bounds", () => {
    expect([0, 0.29999, 0.3, 0.49, 0.5, 0.69, 0.7, 0.849, 0.85, 1].map(qualityTier)).toEqual([
      "Baseline", "Baseline", "Emerging", "Emerging", "Functional", "Functional", "Deployable", "Deployable", "Fluent", "Fluent",
    ]);
    expect(qualityTier(null)).toBeNull();
  });
});
