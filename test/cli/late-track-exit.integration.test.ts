// Issue 26: the coordinator serves the first track while it reads the rest, so a later track whose
// file fails verification is found after the start. `coordinator` then ends the run failed with the
// suite's error line and exits 2 (bad input), within seconds (its scorer thread, which waits for
// the whole suite's gold, does not keep it running); the run it started is on disk (run.json) and
// nothing of the failing track was written.
import { existsSync, readFileSync, writeFileSync, cpSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";

const fx = cliFixture("late-track-exit", { seed: 7, tracks: ["vihsd", "aiv-sa24-easy"] });
const TRACK_FILES = ["test/content_moderation/vihsd.jsonl.gz", "test/sentiment/aiv-sa24-easy.jsonl.gz"];

describe("`coordinator` with a later track that fails verification", () => {
  it("ends the run failed with the suite's error and exits 2; nothing of that track is written", async () => {
    const bad = join(fx.root, "bad-late");
    cpSync(fx.suite, bad, { recursive: true });
    // Tracks are read smallest file first: the larger one is the later track.
    const late = [...TRACK_FILES].sort((a, b) => statSync(join(bad, b)).size - statSync(join(bad, a)).size)[0]!;
    const [family, file] = late.split("/").slice(1) as [string, string];
    const track = file.replace(".jsonl.gz", "");
    const manifest = JSON.parse(readFileSync(join(bad, "manifest.json"), "utf8"));
    manifest.files[late].sha256 = "0".repeat(64);
    writeFileSync(join(bad, "manifest.json"), JSON.stringify(manifest));
    const out = join(fx.root, "out");
    const p = fx.cli(["coordinator", "--suite", bad, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    const code = await exitWithin(p, 30_000);
    expect(p.output()).toMatch(new RegExp(`${track}\\.jsonl\\.gz: sha256 mismatch`));
    expect(code, p.output()).toBe(2);
    expect(existsSync(join(out, "run.json"))).toBe(true);
    expect(existsSync(join(out, family, `${track}.jsonl`))).toBe(false);
  }, 90_000);
});
