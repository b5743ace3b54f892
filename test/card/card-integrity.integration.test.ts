// A card proves its numbers only against its results files: a card rewritten and resealed with the
// project's own functions passes the hash check, so `card verify --suite` and `leaderboard --suite`
// rescore the sealed results and name each score that differs. Cards are read field by field (one
// line naming the file and field, never a stack; the leaderboard skips such a card and renders the
// rest), and a card's results_files are opened only when they are regular files inside its
// directory: /dev/zero, a FIFO, `..`, an absolute path or a symlink out are refused at once.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { runCardHash } from "../../card/card-hash.js";
import type { Leaderboard } from "../../card/leaderboard/leaderboard-rows.js";

let dir: string;
let suite: string;
let good: string;

/** The CLI's exit code and output; killed (code null) when it has not exited within `timeoutMs`. */
async function cli(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  const p = spawnCli(args);
  const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, out: p.output(), ms: Date.now() - started };
}

/** A copy of the good run with its card changed by `change` and resealed as the project seals cards. */
function variant(name: string, change: (card: Record<string, any>, runDir: string) => void): string {
  const runDir = join(dir, "variants", name);
  cpSync(join(dir, "good"), runDir, { recursive: true });
  const path = join(runDir, "run-card.json");
  const card = JSON.parse(readFileSync(path, "utf8"));
  change(card, runDir);
  card.run_card_hash = runCardHash(card);
  writeFileSync(path, JSON.stringify(card, null, 2));
  return path;
}

const noStack = (out: string) => expect(out).not.toMatch(/\n\s+at [^\n]*[(:]\d+/);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-card-integrity-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["vihsd", "aiv-nli500"] });
  const r = await cli(["run", "--suite", suite, "--out", join(dir, "good"), "--sim", "1"], 170_000);
  expect(r.code, r.out).toBe(0);
  good = join(dir, "good", "run-card.json");
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("card verify --suite recomputes the scores", () => {
  it("a card as written verifies with its scores recomputed", async () => {
    const v = await cli(["card", "verify", "--suite", suite, good]);
    expect(v.code, v.out).toBe(0);
    expect(v.out).toMatch(/verifies .*2 results files rehashed, scores recomputed against/);
  });

  it("a resealed card with an edited mean and tier passes the hash check but not the rescoring, which names the field", async () => {
    const forged = variant("forged", (c) => {
      c.scores.summary.v1_mean_partial = 0.9712;
      c.verification_tier = "gds-verified";
    });
    expect((await cli(["card", "verify", forged])).code).toBe(0); // the seal alone cannot tell
    const v = await cli(["card", "verify", "--suite", suite, forged]);
    expect(v.code, v.out).toBe(1);
    expect(v.out).toMatch(/scores\.summary\.v1_mean_partial: card records 0\.9712, the results files score 0\.\d+/);
  });

  it("an edited track headline, pillar or interval is named", async () => {
    const forged = variant("forged-track", (c) => {
      c.scores.tracks.vihsd.headline.value = 1;
      const pillar = Object.keys(c.scores.pillars)[0]!;
      c.scores.pillars[pillar].mean = 0.99;
      c.scores.v1_ci = { ci_low: 0.9, ci_high: 1 };
    });
    const v = await cli(["card", "verify", "--suite", suite, forged]);
    expect(v.code, v.out).toBe(1);
    expect(v.out).toMatch(/scores\.tracks\.vihsd\.headline\.value: card records 1,/);
    expect(v.out).toMatch(/scores\.pillars\.[^.]+\.mean: card records 0\.99,/);
    expect(v.out).toMatch(/scores\.v1_ci\.ci_low: card records 0\.9,/);
  });

  it("leaderboard --suite lists the forged card as unverified and the true one as it claims", async () => {
    const forged = variant("forged-board", (c) => {
      c.scores.summary.v1_mean_partial = 0.9712;
      c.verification_tier = "gds-verified";
    });
    const json = join(dir, "board.json");
    const l = await cli(["leaderboard", "--suite", suite, good, forged, "--json", json]);
    expect(l.code, l.out).toBe(0);
    const board = JSON.parse(readFileSync(json, "utf8")) as Leaderboard;
    const rows = board.groups.flatMap((g) => g.rows);
    expect(rows.find((r) => r.source === forged)).toMatchObject({ verification_tier: "unverified" });
    expect(rows.find((r) => r.source === forged)!.problems.join("\n")).toMatch(/scores\.summary\.v1_mean_partial/);
    expect(rows.find((r) => r.source === good)).toMatchObject({ verification_tier: "self-benchmarked" });
  });
});

describe("hostile results files", () => {
  const firstKey = (c: Record<string, any>) => Object.keys(c.results_files)[0]!;
  const cases: Array<[string, (c: Record<string, any>, runDir: string) => void, RegExp]> = [
    ["/dev/zero by `..`", (c) => (c.results_files = { "../../../../../../../../dev/zero": "00" }), /field results_files/],
    ["an absolute path", (c) => (c.results_files = { "/etc/passwd": "0".repeat(64) }), /field results_files/],
    ["a `..` escape", (c) => (c.results_files = { "../../etc/passwd": "0".repeat(64) }), /field results_files/],
    [
      "a FIFO",
      (c, runDir) => {
        execFileSync("mkfifo", [join(runDir, "stall.jsonl")]);
        c.results_files["stall.jsonl"] = "0".repeat(64);
      },
      /results file stall\.jsonl: refused: not a regular file/,
    ],
    [
      "a symlink to /dev/zero",
      (c, runDir) => {
        symlinkSync("/dev/zero", join(runDir, "zero.jsonl"));
        c.results_files["zero.jsonl"] = "0".repeat(64);
      },
      /results file zero\.jsonl: refused: a symbolic link/,
    ],
    [
      "a symlink out",
      (c, runDir) => {
        const key = firstKey(c);
        rmSync(join(runDir, key));
        symlinkSync("/etc/passwd", join(runDir, key));
      },
      /refused: a symbolic link/,
    ],
    [
      "a directory symlinked out",
      (c, runDir) => {
        const outside = join(dir, "outside");
        mkdirSync(outside, { recursive: true });
        writeFileSync(join(outside, "x.jsonl"), "");
        symlinkSync(outside, join(runDir, "elsewhere"));
        c.results_files["elsewhere/x.jsonl"] = "0".repeat(64);
      },
      /results file elsewhere\/x\.jsonl: refused: resolves outside the card's directory/,
    ],
  ];

  it.each(cases)("%s: card verify, leaderboard and card reproduce refuse it at once with one line", async (name, change, expected) => {
    const path = variant(`hostile-${name.replace(/\W+/g, "-")}`, change);
    for (const args of [
      ["card", "verify", path],
      ["leaderboard", path, "--format", "json"],
      ["card", "reproduce", path, "--sim", "1", "--suite", suite, "--out", join(dir, `repro-${Math.random().toString(36).slice(2)}`)],
    ]) {
      const r = await cli(args, 20_000);
      expect(r.code, `${args[1]}: ${r.out}`).not.toBeNull(); // not killed: it did not stall
      noStack(r.out);
      if (args[0] === "leaderboard") {
        // Skipped, or listed unverified with the reason: never read.
        expect(r.code, r.out).toBe(0);
        expect(r.out).toMatch(/skipped|"verification_tier": "unverified"/);
      } else {
        expect(r.code, r.out).not.toBe(0);
      }
      expect(r.out).toMatch(expected);
      expect(r.out).not.toMatch(/root:/);
    }
  }, 90_000);
});

describe("odd card shapes", () => {
  const shapes: Array<[string, (c: Record<string, any>) => void, string]> = [
    ["method_class 42", (c) => (c.method.method_class = 42), "method.method_class"],
    ["verification_tier {}", (c) => (c.verification_tier = {}), "verification_tier"],
    ["an unknown verification tier", (c) => (c.verification_tier = "platinum"), "verification_tier"],
    ["no totals", (c) => delete c.totals, "totals"],
    ["headline null", (c) => (c.scores.tracks.vihsd.headline = null), "scores.tracks.vihsd.headline"],
    ["a v1 mean of 7.5", (c) => (c.scores.summary.v1_mean = 7.5), "scores.summary.v1_mean"],
    ["a v1 mean of -3", (c) => (c.scores.summary.v1_mean = -3), "scores.summary.v1_mean"],
    ["a v1 mean of 1e308", (c) => (c.scores.summary.v1_mean = 1e308), "scores.summary.v1_mean"],
    ["a headline of 2", (c) => (c.scores.tracks.vihsd.headline.value = 2), "scores.tracks.vihsd.headline.value"],
    ["a date that is no date", (c) => (c.timestamp = "last tuesday"), "timestamp"],
    ["a finish that is no date", (c) => (c.finished = 42), "finished"],
    ["pillars null", (c) => (c.scores.pillars = null), "scores.pillars"],
    ["a string fingerprint", (c) => (c.fingerprint = 12), "fingerprint"],
  ];

  it.each(shapes)("%s: card verify says so in one line naming the field, exit 2", async (name, change, field) => {
    const path = variant(`shape-${name.replace(/\W+/g, "-")}`, change);
    const r = await cli(["card", "verify", path]);
    expect(r.code, r.out).toBe(2);
    noStack(r.out);
    expect(r.out.trim().split("\n")).toHaveLength(1);
    expect(r.out).toContain(`${path} field ${field}`);
  });

  it("the leaderboard skips each odd card, lists it, and still renders the good ones", async () => {
    const sweep = join(dir, "sweep");
    mkdirSync(sweep);
    cpSync(join(dir, "good"), join(sweep, "good"), { recursive: true });
    for (const [i, [, change]] of shapes.entries()) {
      const path = variant(`sweep-shape-${i}`, change);
      cpSync(join(path, ".."), join(sweep, `odd-${i}`), { recursive: true });
    }
    const l = await cli(["leaderboard", sweep, "--suite", suite]);
    expect(l.code, l.out).toBe(0);
    noStack(l.out);
    expect(l.out).toMatch(/\| 1 \| sim\/pseudo \|.*self-benchmarked/);
    for (let i = 0; i < shapes.length; i++) expect(l.out).toMatch(new RegExp(`skipped .*odd-${i}/run-card\\.json field ${shapes[i]![2].replace(/\./g, "\\.")}`));
  }, 120_000);
});

describe("card reproduce checks the setup it would rerun", () => {
  it.each([
    ["too many seeds", (c: Record<string, any>) => (c.method.seeds = Array.from({ length: 1000 }, (_, i) => i)), /method\.seeds/],
    ["a negative seed", (c: Record<string, any>) => (c.method.seeds = [-1]), /method\.seeds/],
    ["a fractional seed", (c: Record<string, any>) => (c.method.seeds = [1.5]), /method\.seeds/],
    ["a batch of a million", (c: Record<string, any>) => (c.method.batch_size = 1_000_000), /method\.batch_size/],
    ["a batch of 0", (c: Record<string, any>) => (c.method.batch_size = 0), /method\.batch_size/],
    ["a temperature of 1e9", (c: Record<string, any>) => (c.method.temperature = 1e9), /method\.temperature/],
    ["a negative temperature", (c: Record<string, any>) => (c.method.temperature = -1), /method\.temperature/],
  ])("%s: exit 2 before any engine is asked", async (name, change, expected) => {
    // The fingerprint covers the method: a forger recomputes it too.
    const { componentsOfCard, fingerprint } = await import("../../card/fingerprint.js");
    const path = variant(`repro-${name.replace(/\W+/g, "-")}`, (c) => {
      change(c);
      c.fingerprint = fingerprint(componentsOfCard(c as any));
    });
    const r = await cli(["card", "reproduce", path, "--sim", "1", "--suite", suite, "--out", join(dir, `repro-out-${name.replace(/\W+/g, "-")}`)], 30_000);
    expect(r.code, r.out).toBe(2);
    noStack(r.out);
    expect(r.out).toMatch(expected);
  }, 40_000);
});
