// sweep.yaml's models reach the agents' --vllm-cmd templates: a name that is not a model id is a
// bad input (exit 2) naming the file, line and field, before anything runs.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSweepConfig } from "../../card/sweep/sweep-config.js";
import { FormatError } from "../../common/errors.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function config(models: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "udm-sweep-config-"));
  dirs.push(dir);
  const path = join(dir, "sweep.yaml");
  writeFileSync(path, `suite: suite\nout: out\nmodels:\n${models.map((m) => `  - ${JSON.stringify(m)}`).join("\n")}\n`);
  return path;
}

describe("sweep config models", () => {
  it.each(["sim/pseudo$(touch /tmp/x)`touch /tmp/y`", "a b", "m'x", 'm"x', "m;rm", "x".repeat(257)])("refuses %j", (model) => {
    const path = config(["sim/ok", model]);
    let error: unknown;
    try {
      readSweepConfig(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(FormatError);
    expect((error as FormatError).exitCode).toBe(2);
    expect((error as Error).message).toMatch(/:5 field models\.1: the model name .*(has characters a model id does not|characters long)/);
  });

  it("accepts model ids", () => {
    const models = ["Qwen/Qwen2.5-7B-Instruct", "/models/llama-3.1-8b", "sim/pseudo", "org/m:q4@rev+1_x.y", "x".repeat(256)];
    expect(readSweepConfig(config(models)).models).toEqual(models);
  });
});
