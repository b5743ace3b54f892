// A command that has printed a fatal error exits with its code within seconds, whatever it had
// started (issue 27, item 3): `coordinator` on a broken suite (a manifest hash that does not match,
// a corrupted line) and on a --listen port in use. Before the fix its scorer thread and live page
// kept the process running after the error line. Each case is a real `udm-orch` process; the test
// waits on its exit, with a deadline.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { requireBuild, spawnCli, type CliProcess } from "../support/cli-process.js";

/** A loaded 2-core machine starts a process in a few seconds; before the fix none exited at all. */
const EXIT_MS = 20_000;
const SA = "test/sentiment/aiv-sa24-easy.jsonl.gz";
let root: string;
let suite: string;
const started: CliProcess[] = [];

async function exitOf(args: string[]): Promise<{ code: number | null; output: string }> {
  const p = spawnCli(args);
  started.push(p);
  let timer: NodeJS.Timeout | undefined;
  const end = await Promise.race([p.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), EXIT_MS)))]);
  clearTimeout(timer);
  if (!end) {
    p.kill("SIGKILL");
    throw new Error(`still running ${EXIT_MS} ms after it started:\n${p.output().slice(-3000)}`);
  }
  return { code: end.code, output: p.output() };
}

beforeAll(async () => {
  requireBuild();
  root = mkdtempSync(join(tmpdir(), "udm-fatal-exit-"));
  suite = join(root, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
}, 120_000);

afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("`coordinator` exits after its fatal error", () => {
  it("a manifest hash that does not match: exit 2", async () => {
    const bad = join(root, "bad-hash");
    cpSync(suite, bad, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(bad, "manifest.json"), "utf8"));
    manifest.files[SA].sha256 = "0".repeat(64);
    writeFileSync(join(bad, "manifest.json"), JSON.stringify(manifest));
    const end = await exitOf(["coordinator", "--suite", bad, "--out", join(root, "out-hash"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    expect(end.output).toMatch(/sha256 mismatch/);
    expect(end.code, end.output).toBe(2);
  }, 60_000);

  it("a corrupted line (the manifest's hash matches it): exit 2", async () => {
    const bad = join(root, "bad-line");
    cpSync(suite, bad, { recursive: true });
    const lines = gunzipSync(readFileSync(join(bad, SA))).toString("utf8").split("\n");
    lines[1] = lines[1]!.slice(0, 20);
    const text = lines.join("\n");
    writeFileSync(join(bad, SA), gzipSync(text));
    const manifest = JSON.parse(readFileSync(join(bad, "manifest.json"), "utf8"));
    manifest.files[SA].sha256 = createHash("sha256").update(text).digest("hex");
    writeFileSync(join(bad, "manifest.json"), JSON.stringify(manifest));
    const end = await exitOf(["coordinator", "--suite", bad, "--out", join(root, "out-line"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    expect(end.output).toMatch(/^udm-orch: /m);
    expect(end.code, end.output).toBe(2);
  }, 60_000);

  it("--listen on a port in use: exit 2 after EADDRINUSE", async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    const port = (holder.address() as { port: number }).port;
    try {
      const end = await exitOf(["coordinator", "--suite", suite, "--out", join(root, "out-port"), "--listen", `127.0.0.1:${port}`, "--metrics", "127.0.0.1:0"]);
      expect(end.output).toMatch(/EADDRINUSE/);
      expect(end.code, end.output).toBe(2);
    } finally {
      holder.close();
    }
  }, 60_000);
});
