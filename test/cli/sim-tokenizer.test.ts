// `run --sim 1 --sim-tokenizer <name>`: the run's simulated engine uses the model's real tokenizer
// and chat template; label-read against an oracle at accuracy 1 answers every question with its
// gold, the run card's model id names the tokenizer, and an unknown name is a usage error.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import { runCliCaptured } from "../support/in-process-cli.js";
import { tempDirs } from "../support/temp-dirs.js";

const tempDir = tempDirs("udm-sim-tokenizer-");

let suite: string;
beforeAll(async () => {
  suite = tempDir();
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["massive-vi-vn", "aiv-sa24-easy", "deepedu"] });
});

/** Every result line of a run's output directory. */
function resultLines(out: string): Array<Record<string, any>> {
  const lines: Array<Record<string, any>> = [];
  for (const family of readdirSync(out, { withFileTypes: true })) {
    if (!family.isDirectory()) continue;
    for (const f of readdirSync(join(out, family.name))) {
      if (!f.endsWith(".jsonl")) continue;
      for (const l of readFileSync(join(out, family.name, f), "utf8").split("\n")) if (l.trim()) lines.push(JSON.parse(l));
    }
  }
  return lines;
}

describe("run --sim-tokenizer", () => {
  it("llama3.1, --method label-read, oracle at accuracy 1: no errors, accuracy 1", async () => {
    const out = tempDir();
    const r = await runCliCaptured(["run", "--suite", suite, "--out", out, "--sim", "1", "--sim-tokenizer", "llama3.1", "--sim-oracle", suite, "--sim-accuracy", "1", "--method", "label-read"]);
    expect(r.stderr).not.toMatch(/records ended with errors/);
    expect(r.code).toBe(0);
    const gold = new Map<string, Record<string, string | boolean>>();
    for (const file of openSuite(suite).files) for await (const rec of readTrackRecords(file)) gold.set(rec._evaluation.run_id, rec.expected);
    const lines = resultLines(out);
    expect(lines).toHaveLength(gold.size);
    const wrong: string[] = [];
    for (const line of lines) {
      for (const [q, g] of Object.entries(gold.get(line.run_id)!)) {
        const top = Object.entries(line.probs[q] as Record<string, number>).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
        if (top !== String(g)) wrong.push(`${line.run_id} ${q}: ${top} (gold ${String(g)})`);
      }
    }
    expect(wrong).toEqual([]);
    // The run card names the tokenizer through the sim's model id.
    expect(JSON.parse(readFileSync(join(out, "run-card.json"), "utf8")).method.model_id).toBe("sim/pseudo-llama3.1");
  }, 120_000);

  it("an unknown tokenizer is a usage error (exit 2)", async () => {
    const r = await runCliCaptured(["run", "--suite", suite, "--out", tempDir(), "--sim", "1", "--sim-tokenizer", "llama2"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--sim-tokenizer must be one of builtin, qwen3, llama3\.1, gemma3, got llama2/);
  });
});
