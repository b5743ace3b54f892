// Bad output paths and flag values through the real command tree (issue 14 cases 7, 8): a clear
// message naming the path and the reason, exit 2, no stack trace, no temp file left behind.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../cli/program.js";
import { writeFileAtomic } from "../../common/atomic-file.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";

const dir = mkdtempSync(join(tmpdir(), "udm-error-paths-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  let stderr = "";
  process.stdout.write = (() => true) as typeof process.stdout.write;
  process.stderr.write = ((s: string | Uint8Array) => ((stderr += String(s)), true)) as typeof process.stderr.write;
  try {
    return { code: await runCli(args), stderr };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
}

function expectClean(r: { code: number; stderr: string }, pattern: RegExp): void {
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(r.code).toBe(2);
}

// /sys is mounted read-only in containers and refuses new entries even to root; /proc refuses
// mkdir with ENOENT, the misleading case of issue 14.
const READ_ONLY = "/sys/udm-orch-test";
const ENOENT_DIR = "/proc/udm-orch-test";

describe("output paths", () => {
  let suite: string;
  it("score --out naming a directory: says so, exit 2, no .tmp left", async () => {
    suite = join(dir, "suite");
    await makeSuite({ out: suite, scale: "small", seed: 1, tracks: ["aiv-sa24-easy"] });
    const results = join(dir, "results");
    mkdirSync(results);
    const outDir = join(dir, "metrics-dir");
    mkdirSync(outDir);
    expectClean(await cli(["score", "--suite", suite, "--results", results, "--out", outDir]), /--out .*metrics-dir is a directory; give a file path/);
    expect(readdirSync(outDir)).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.includes(".tmp"))).toEqual([]);
  });

  it("score --out and suite make --out on a read-only filesystem", async () => {
    const results = join(dir, "results");
    expectClean(await cli(["score", "--suite", suite, "--results", results, "--out", join(READ_ONLY, "m.json")]), /--out \/sys\/udm-orch-test: cannot create the directory: (operation not permitted|permission denied|read-only filesystem)/);
    expectClean(await cli(["suite", "make", "--out", READ_ONLY, "--tracks", "aiv-sa24-easy"]), /--out \/sys\/udm-orch-test: cannot create the directory/);
  });

  it("run --out read-only, missing-parent or a file: says which, before any work", async () => {
    expectClean(await cli(["run", "--suite", suite, "--out", ENOENT_DIR, "--sim", "1"]), /--out \/proc\/udm-orch-test: cannot create the directory: a parent directory cannot be created \(read-only or missing\) \(ENOENT\)/);
    const file = join(dir, "a-file");
    writeFileSync(file, "x");
    expectClean(await cli(["run", "--suite", suite, "--out", file, "--sim", "1"]), /--out .*a-file is a file, not a directory/);
    expectClean(await cli(["coordinator", "--suite", suite, "--out", file, "--listen", "127.0.0.1:0"]), /--out .*a-file is a file, not a directory/);
  });

  it("writeFileAtomic leaves no temp file when the write fails", () => {
    const target = join(dir, "in-the-way");
    mkdirSync(join(target, "child"), { recursive: true });
    expect(() => writeFileAtomic(target, "{}\n")).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir).filter((n) => n.includes(".tmp"))).toEqual([]);
  });
});

describe("flag values", () => {
  it("sim-engine --port 99999 and coordinator --listen :99999 are usage errors", async () => {
    expectClean(await cli(["sim-engine", "--port", "99999"]), /--port must be an integer in 0\.\.65535, got "99999"/);
    expectClean(await cli(["coordinator", "--suite", dir, "--out", dir, "--listen", "127.0.0.1:99999"]), /--listen port must be an integer in 0\.\.65535/);
  });

  it.each(["http://127.0.0.1:8000/v1?x=1", "http://127.0.0.1:8000#frag", "http://127.0.0.1:8000/?"])("an --engine URL with a query or fragment (%s) is a usage error in agent, run, card reproduce and sweep", async (url) => {
    const message = /--engine must be a base URL without a query or fragment \(endpoint paths are appended to it\)/;
    expectClean(await cli(["agent", "--coordinator", "127.0.0.1:1", "--engine", url]), message);
    expectClean(await cli(["run", "--suite", dir, "--out", join(dir, "run-out"), "--engine", url]), message);
    expectClean(await cli(["card", "reproduce", join(dir, "no-card.json"), "--engine", `http://127.0.0.1:9,${url}`]), message);
    expectClean(await cli(["sweep", "--config", join(dir, "no-sweep.yaml"), "--dry-run", "--engine", url]), message);
  });
});
