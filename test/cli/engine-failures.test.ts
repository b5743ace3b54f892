// Misbehaving engines and oversized records through `run` and `agent` (issue 14 cases 1, 5, 6 and
// the agent's --tls-ca of case 11): each is reported by name and ends; none loops or waits forever.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { EngineTimeouts } from "../../agent/engine-timeouts.js";
import { createLogger } from "../../common/log.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { runCliCaptured } from "../support/in-process-cli.js";
import { tempDirs } from "../support/temp-dirs.js";

const SA = "test/sentiment/aiv-sa24-easy.jsonl.gz";
const tempDir = tempDirs("udm-engine-failures-");

let suite: string;
beforeAll(async () => {
  suite = tempDir();
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
});

const cli = runCliCaptured;

function resultRunIds(out: string): string[] {
  const ids: string[] = [];
  for (const f of readdirSync(out, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"))) {
    for (const l of readFileSync(join(out, f), "utf8").split("\n").filter(Boolean)) ids.push((JSON.parse(l) as { run_id: string }).run_id);
  }
  return ids;
}

describe("engines at start", () => {
  it("case 5: an invalid --engine is a usage error (exit 2)", async () => {
    for (const bad of ["not-a-url", "ftp://127.0.0.1:8000", "http://127.0.0.1:99999"]) {
      const r = await cli(["run", "--suite", suite, "--out", tempDir(), "--engine", bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--engine (must be|port must be)/);
    }
  });

  it("case 5: an unreachable engine is reported by URL and the run fails (exit 1) after --engine-ready-timeout-ms", async () => {
    const out = tempDir();
    const r = await cli(["run", "--suite", suite, "--out", out, "--engine", "http://127.0.0.1:1", "--engine-ready-timeout-ms", "1500"]);
    expect(r.stderr).toMatch(/engine http:\/\/127\.0\.0\.1:1 not ready after 1500 ms/);
    expect(r.stderr).toMatch(/no engine became ready within 1500 ms \(--engine-ready-timeout-ms\): http:\/\/127\.0\.0\.1:1: /);
    expect(r.code).toBe(1);
  }, 60_000);

  it("case 11: a garbage --tls-ca on the agent is a usage error, not a reattach loop", async () => {
    const ca = join(tempDir(), "ca.pem");
    writeFileSync(ca, "this is not a certificate\n");
    const r = await cli(["agent", "--coordinator", "127.0.0.1:1", "--engine", "http://127.0.0.1:1", "--tls-ca", ca]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/TLS CA .*ca\.pem is not a PEM certificate/);
  });
});

describe("a hung engine", () => {
  it("case 6: requests past --request-timeout-ms are logged once per engine with the count, and the run ends", async () => {
    const out = tempDir();
    const r = await cli(["run", "--suite", suite, "--out", out, "--sim", "1", "--sim-faults", "hang=1", "--request-timeout-ms", "200", "--retries", "1"]);
    const first = r.stderr.split("\n").filter((l) => /a request got no answer within 200 ms/.test(l));
    expect(first).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Every record was answered (with errors) exactly once; the last line and the exit status say so (case 3).
    const ids = resultRunIds(out);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
    expect(r.stdout).toMatch(new RegExp(`\\(0 resumed, ${ids.length} with errors\\)`));
    expect(r.stderr).toMatch(new RegExp(`${ids.length} of ${ids.length} records ended with errors .*rerun the same command to retry them`));
    expect(r.code).toBe(1);

    // The same command against a healthy engine retries every one of them: a new line each, exit 0.
    const again = await cli(["run", "--suite", suite, "--out", out, "--sim", "1"]);
    expect(again.stdout).toMatch(/\(0 resumed, 0 with errors\)/);
    expect(again.code).toBe(0);
    const after = resultRunIds(out);
    expect(after).toHaveLength(2 * ids.length);
    expect(new Set(after)).toEqual(new Set(ids));
  }, 120_000);

  it("EngineTimeouts: the first timeout at once, then at most one line a minute with the count", () => {
    const lines: string[] = [];
    const logger = createLogger("t", "warn");
    logger.warn = (m: string) => void lines.push(m);
    let now = 0;
    const t = new EngineTimeouts("http://e:1", 500, logger, () => now);
    for (let i = 0; i < 10; i++) t.record();
    expect(lines).toHaveLength(1);
    now = 61_000;
    t.record();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/11 requests timed out so far \(10 in the last 61 s\)/);
    expect(t.total).toBe(11);
  });
});

describe("case 1: a record over gRPC's 4 MiB default", () => {
  it("reaches the agent and is committed once; the run ends", async () => {
    const big = tempDir();
    await makeSuite({ out: big, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
    const records = gunzipSync(readFileSync(join(big, SA))).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
    const key = Object.keys(records[0]!.state)[0]!;
    records[0]!.state[key] = "lời ".repeat(5 * 1024 * 1024 / 5);
    const text = records.map((r) => JSON.stringify(r) + "\n").join("");
    writeFileSync(join(big, SA), gzipSync(text));
    const manifest = JSON.parse(readFileSync(join(big, "manifest.json"), "utf8"));
    manifest.files[SA].sha256 = createHash("sha256").update(text).digest("hex");
    writeFileSync(join(big, "manifest.json"), JSON.stringify(manifest));
    const out = tempDir();
    const r = await cli(["run", "--suite", big, "--out", out, "--sim", "1"]);
    expect(r.stderr).not.toMatch(/RESOURCE_EXHAUSTED/);
    const ids = resultRunIds(out);
    expect(ids.sort()).toEqual(records.map((x) => x._evaluation.run_id).sort());
    expect(existsSync(join(out, "run.json"))).toBe(true);
  }, 120_000);
});
