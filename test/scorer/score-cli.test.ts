// `udm-orch score` through the real command tree (runCli): files written, lines printed, exit codes.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../cli/program.js";
import { ABC, noul, peaked, record, tempDir, writeResults, writeSuite } from "./suite-fixture.js";

describe("udm-orch score", () => {
  let dir: string;
  let cleanup: () => void;
  let stdout: string[];
  let stderr: string[];

  beforeEach(() => {
    ({ dir, cleanup } = tempDir("cli"));
    writeSuite(join(dir, "suite"), [
      {
        family: "sentiment",
        track: "aiv-sa24-easy",
        records: [
          record("aiv-sa24-easy", { id: "s1", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" } }),
          record("aiv-sa24-easy", { id: "s2", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "C" } }),
        ],
      },
      {
        family: "content_moderation",
        track: "victsd",
        records: [
          record("victsd", { id: "v1", family: "content_moderation", questions: { toxic: { type: "noul" } }, expected: { toxic: true } }),
          record("victsd", { id: "v2", family: "content_moderation", questions: { toxic: { type: "noul" } }, expected: { toxic: false } }),
        ],
      },
    ]);
    writeResults(join(dir, "results", "sentiment", "aiv-sa24-easy.jsonl"), [
      { run_id: "aiv-sa24-easy:s1", probs: { label: peaked(["A", "B", "C"], "A") } },
      { run_id: "aiv-sa24-easy:s2", probs: { label: peaked(["A", "B", "C"], "B") } },
    ]);
    writeResults(join(dir, "results", "content_moderation", "victsd.jsonl"), [
      { run_id: "victsd:v1", probs: { toxic: noul(0.8) } },
      { run_id: "victsd:v2", probs: { toxic: noul(0.3) } },
    ]);
    stdout = [];
    stderr = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (stdout.push(String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (stderr.push(String(chunk)), true));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    cleanup();
  });

  it("writes metrics.json beside the results and prints a line per track and the summary", async () => {
    const code = await runCli(["score", "--suite", join(dir, "suite"), "--results", join(dir, "results")]);
    expect(code, stderr.join("")).toBe(0);
    const metrics = JSON.parse(readFileSync(join(dir, "results", "metrics.json"), "utf8"));
    // s1 right, s2 wrong: accuracy 1/2. victsd both right: macro-F1 (1 + 1)/2 = 1
    expect(metrics.tracks["aiv-sa24-easy"].headline).toMatchObject({ metric: "accuracy", value: 0.5 });
    expect(metrics.tracks.victsd.headline).toMatchObject({ metric: "macro_f1", value: 1 });
    expect(metrics.summary).toMatchObject({ v1_mean: null, v1_mean_partial: 0.75, v1_tracks: 2, family_macro_mean: 0.75 });
    const out = stdout.join("");
    expect(out).toMatch(/language_understanding\s+sentiment\s+aiv-sa24-easy\s+vi\s+accuracy=0\.5000/);
    expect(out).toMatch(/guardrail_moderation\s+content_moderation\s+victsd\s+vi\s+macro_f1=1\.0000/);
    expect(out).toMatch(/partial mean over 2 of 43 scored tracks: 0\.7500/);
    expect(out).toMatch(/family macro mean: 0\.7500/);
    expect(out).toMatch(/pillar language_understanding: 0\.5000/);
  });

  it("--out and --tracks", async () => {
    const out = join(dir, "elsewhere", "m.json");
    const code = await runCli(["score", "--suite", join(dir, "suite", "test"), "--results", join(dir, "results"), "--out", out, "--tracks", "victsd"]);
    expect(code, stderr.join("")).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(out, "utf8")).tracks)).toEqual(["victsd"]);
    expect(existsSync(join(dir, "results", "metrics.json"))).toBe(false);
  });

  it("exit 2 with file, line and run_id on a result that matches no record", async () => {
    writeResults(join(dir, "results", "extra.jsonl"), [{ run_id: "victsd:v1", probs: {} }, { run_id: "victsd:v9", probs: {} }]);
    const code = await runCli(["score", "--suite", join(dir, "suite"), "--results", join(dir, "results")]);
    expect(code).toBe(2);
    expect(stderr.join("")).toMatch(/extra\.jsonl:2 field run_id: run_id "victsd:v9" matches no record/);
    expect(existsSync(join(dir, "results", "metrics.json"))).toBe(false);
  });

  it("exit 2 on an unknown track and on a missing flag", async () => {
    expect(await runCli(["score", "--suite", join(dir, "suite"), "--results", join(dir, "results"), "--tracks", "nope"])).toBe(2);
    expect(stderr.join("")).toMatch(/unknown track "nope"/);
    expect(await runCli(["score", "--suite", join(dir, "suite")])).toBe(2);
  });
});
