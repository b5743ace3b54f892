// `card reproduce` says which fields of the setup differ when the rerun's fingerprint is not the
// card's (here: the engine serves another model), and waits for engines only as long as
// --engine-ready-timeout-ms says.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { freePort } from "../../bench/bench-args.js";

let dir: string;
let suite: string;
let pseudo: SimEngine;
let other: SimEngine;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-repro-note-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 6, tracks: ["vihsd"] });
  pseudo = await startSimEngine({ port: 0, model: "pseudo" });
  other = await startSimEngine({ port: 0, model: "other" });
  // The card: the engine's own model (no --model), so a rerun on another engine serves another.
  const run = spawnCli(["run", "--suite", suite, "--out", join(dir, "r1"), "--engine", pseudo.url]);
  const { code } = await run.exited;
  if (code !== 0) throw new Error(run.output());
}, 120_000);

afterAll(async () => {
  await pseudo?.close();
  await other?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("card reproduce", () => {
  it("names the fields of the setup that differ, not a guess", async () => {
    const p = spawnCli(["card", "reproduce", join(dir, "r1", "run-card.json"), "--engine", other.url, "--out", join(dir, "r1-other")]);
    await p.exited;
    expect(p.output()).toMatch(/note: the rerun's fingerprint [0-9a-f]{12} differs from the card's [0-9a-f]{12}: another setup in one field:\n {2}method\.model_slug: "sim\/pseudo" -> "sim\/other"\n/);
    expect(p.output()).not.toMatch(/harness version/);
  }, 120_000);

  it("--engine-ready-timeout-ms: no engine ready within it fails the rerun after that long, not 120 s", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const p = spawnCli(["card", "reproduce", join(dir, "r1", "run-card.json"), "--engine", closed, "--out", join(dir, "r1-none"), "--engine-ready-timeout-ms", "1500"]);
    const { code } = await p.exited;
    expect(code, p.output()).toBe(1);
    expect(p.output()).toMatch(/not ready|no engine/i);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});
