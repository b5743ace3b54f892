// Sweep config limits: an alias bomb, a matrix over MAX_SWEEP_RUNS and a port over 65535 are bad
// input (exit 2, one line) found before anything is expanded or bound; a long model name gives a
// run directory name of bounded length that stays unique.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT, UdmError } from "../../common/errors.js";
import { MAX_RUN_NAME, MAX_SWEEP_RUNS, expandSweep, readSweepConfig, runName } from "../../card/sweep/sweep-config.js";

const dir = mkdtempSync(join(tmpdir(), "udm-sweep-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

function badInput(f: () => unknown): UdmError {
  let caught: unknown;
  try {
    f();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(UdmError);
  expect((caught as UdmError).exitCode).toBe(EXIT.badInput);
  expect((caught as Error).message).not.toContain("\n");
  return caught as UdmError;
}

describe("sweep config limits", () => {
  it("a YAML alias bomb is refused as bad input, not expanded", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${prev}`).join(", ")}]`);
    }
    const path = file("bomb.yaml", ["suite: s", "out: o", "models: [m]", ...levels]);
    const started = Date.now();
    expect(badInput(() => readSweepConfig(path)).message).toMatch(/alias/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it(`a matrix of more than ${MAX_SWEEP_RUNS} runs is refused before it is expanded`, () => {
    const models = Array.from({ length: 1_000 }, (_, i) => `m${i}`);
    const temperatures = Array.from({ length: 1_000 }, (_, i) => i / 1_000);
    const started = Date.now();
    expect(badInput(() => expandSweep({ models, methods: ["systemone", "decisions", "label-read"], temperatures, seed_sets: [[]] })).message).toMatch(/3000000 runs, more than the 10000/);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Just over the limit is refused too; the limit itself is allowed.
    badInput(() => expandSweep({ models: models.slice(0, 101), methods: ["systemone"], temperatures: temperatures.slice(0, 100), seed_sets: [[]] }));
    expect(expandSweep({ models: models.slice(0, 100), methods: ["systemone"], temperatures: temperatures.slice(0, 100), seed_sets: [[]] })).toHaveLength(MAX_SWEEP_RUNS);
  });

  it("a listen port over 65535 is refused", () => {
    const path = file("port.yaml", ["suite: s", "out: o", "models: [m]", "listen: 0.0.0.0:99999"]);
    expect(badInput(() => readSweepConfig(path)).message).toMatch(/listen.*port 0\.\.65535/);
    expect(readSweepConfig(file("port-ok.yaml", ["suite: s", "out: o", "models: [m]", "listen: 0.0.0.0:65535"])).listen).toBe("0.0.0.0:65535");
  });

  it("a 5,000-character model name gives a bounded, unique run directory name", () => {
    const long = "org/" + "m".repeat(5_000);
    const a = runName(long, "systemone", 0, []);
    const b = runName(long + "x", "systemone", 0, []);
    expect(a.length).toBeLessThanOrEqual(MAX_RUN_NAME);
    expect(a).toMatch(/^org_m+__[0-9a-f]{16}$/);
    expect(b).not.toBe(a);
    expect(runName("sim/pseudo", "systemone", 0, [])).toBe("sim_pseudo__systemone__t0__seeds-none");
  });
});
