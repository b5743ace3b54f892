// The worker-thread path of scoreResults runs only from compiled JavaScript, so this test compiles the
// scorer into a private folder and runs it in a child process: shards in workers must give exactly
// what one thread gives, and a typed error must cross the thread boundary with its file and line.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABC, noul, peaked, record, tempDir, writeResults, writeSuite } from "./suite-fixture.js";

const ROOT = resolve(import.meta.dirname, "../..");

describe("scoreResults with worker threads (compiled)", () => {
  let build: string;
  let dir: string;
  let cleanup: () => void;

  beforeAll(() => {
    // Inside the repository so that the compiled files resolve zod from its node_modules.
    mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
    build = mkdtempSync(join(ROOT, "node_modules", ".cache", "udm-scorer-build-"));
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "--outDir", build, "--rootDir", ROOT, "--module", "nodenext", "--moduleResolution", "nodenext",
        "--target", "es2022", "--skipLibCheck", "--types", "node", "--strict", join(ROOT, "scorer", "score-results.ts"), join(ROOT, "scorer", "score-worker.ts")],
      { encoding: "utf8", cwd: ROOT },
    );
    if (tsc.status !== 0) throw new Error(`tsc failed: ${tsc.stdout}${tsc.stderr}`);
    ({ dir, cleanup } = tempDir("workers"));
    const tracks = ["t1", "t2", "t3"].map((t, k) => ({
      family: k === 2 ? "content_moderation" : "sentiment",
      track: t,
      records: Array.from({ length: 30 }, (_, i) =>
        k === 2
          ? record(t, { id: `r${i}`, family: "content_moderation", questions: { toxic: { type: "noul" } }, expected: { toxic: i % 3 === 0 }, group: `g${i % 7}` })
          : record(t, { id: `r${i}`, questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "ABC"[i % 3]! }, group: `g${i % 5}` }),
      ),
    }));
    writeSuite(join(dir, "suite"), tracks);
    for (const t of tracks) {
      writeResults(
        join(dir, "results", `${t.track}.jsonl`),
        t.records.map((r, i) => ({
          run_id: (r._evaluation as { run_id: string }).run_id,
          probs: t.track === "t3" ? { toxic: noul(i % 4 === 0 ? 0.8 : 0.3) } : { label: peaked(["A", "B", "C"], "ABC"[(i * 7) % 3]!) },
        })),
      );
    }
  }, 120_000);
  afterAll(() => {
    cleanup();
    rmSync(build, { recursive: true, force: true });
  });

  function run(script: string): { status: number | null; stdout: string; stderr: string } {
    const file = join(dir, "run.mjs");
    writeFileSync(file, script);
    const r = spawnSync(process.execPath, [file], { encoding: "utf8", env: { ...process.env, UDM_LOG_LEVEL: "error" } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it("three workers give exactly what one thread gives", () => {
    const mod = JSON.stringify(join(build, "scorer", "score-results.js"));
    const args = JSON.stringify({ suiteDir: join(dir, "suite"), resultsDir: join(dir, "results") });
    const r = run(`const { scoreResults } = await import(${mod}); const a = ${args};
      const one = await scoreResults({ ...a, workers: 1 }); const three = await scoreResults({ ...a, workers: 3 });
      console.log(JSON.stringify({ one, three }));`);
    expect(r.status, r.stderr).toBe(0);
    const { one, three } = JSON.parse(r.stdout);
    expect(three).toEqual(one);
    expect(Object.keys(three.tracks)).toEqual(["t3", "t1", "t2"]); // suite order: content_moderation/, then sentiment/
    expect(one.tracks.t1.records).toBe(30);
  });

  it("an unknown run_id found in a worker is still a FormatError naming file and line", () => {
    writeResults(join(dir, "results", "zz.jsonl"), [{ run_id: "t2:r1", probs: {} }, { run_id: "t2:nope", probs: {} }]);
    const mod = JSON.stringify(join(build, "scorer", "score-results.js"));
    const args = JSON.stringify({ suiteDir: join(dir, "suite"), resultsDir: join(dir, "results"), workers: 2 });
    const r = run(`const { scoreResults } = await import(${mod});
      try { await scoreResults(${args}); console.log("no error"); } catch (e) { console.log(JSON.stringify({ name: e.name, exitCode: e.exitCode, message: e.message, stack: e.stack })); }`);
    rmSync(join(dir, "results", "zz.jsonl"));
    expect(r.status, r.stderr).toBe(0);
    const err = JSON.parse(r.stdout);
    expect(err.name, err.stack).toBe("FormatError");
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/zz\.jsonl:2 field run_id: run_id "t2:nope" matches no record/);
  });
});
