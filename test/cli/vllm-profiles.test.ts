// `run --sim --sim-vllm legacy`: a vLLM without /v1/systemone or /v1/decisions (404) is read by
// label-read, said once, and no record ends with errors, for both batched methods.
import { beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { runCliCaptured } from "../support/in-process-cli.js";
import { tempDirs } from "../support/temp-dirs.js";

const tempDir = tempDirs("udm-vllm-profiles-");

let suite: string;
beforeAll(async () => {
  suite = tempDir();
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
});

const cli = runCliCaptured;

describe("run --sim-vllm legacy", () => {
  for (const method of ["systemone", "decisions"]) {
    it(`--method ${method}: answered by label-read, said once, no record with errors`, async () => {
      const r = await cli(["run", "--suite", suite, "--out", tempDir(), "--sim", "1", "--sim-vllm", "legacy", "--method", method]);
      expect(r.stdout).toMatch(/\(0 resumed, 0 with errors\)/);
      expect(r.stderr).not.toMatch(/records ended with errors/);
      expect(r.stderr.split("\n").filter((l) => /is not served by this engine \(HTTP 404\)/.test(l))).toHaveLength(1);
      expect(r.code).toBe(0);
    }, 120_000);
  }

  it("an unknown profile is a usage error (exit 2)", async () => {
    const r = await cli(["run", "--suite", suite, "--out", tempDir(), "--sim", "1", "--sim-vllm", "ancient"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--sim-vllm must be one of structured-seed, legacy, current, got ancient/);
  });
});
