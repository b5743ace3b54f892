// A command that has printed a fatal error exits with its code within seconds, whatever it had
// started (issue 27, item 3): `coordinator` on a broken suite (a manifest hash that does not match,
// a corrupted line) and on a --listen port in use. Before the fix its scorer thread and live page
// kept the process running after the error line. Each case is a real `udm-orch` process; the test
// waits on its exit, with a deadline.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, cpSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";

const fx = cliFixture("fatal-exit", { seed: 7, tracks: ["aiv-sa24-easy"] });
const cli = fx.cli;

/** A loaded 2-core machine starts a process in a few seconds; before the fix none exited at all. */
const EXIT_MS = 20_000;
const SA = "test/sentiment/aiv-sa24-easy.jsonl.gz";

async function exitOf(args: string[]): Promise<{ code: number | null; output: string }> {
  const p = cli(args);
  return { code: await exitWithin(p, EXIT_MS), output: p.output() };
}

describe("`coordinator` exits after its fatal error", () => {
  it("a manifest hash that does not match: exit 2", async () => {
    const bad = join(fx.root, "bad-hash");
    cpSync(fx.suite, bad, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(bad, "manifest.json"), "utf8"));
    manifest.files[SA].sha256 = "0".repeat(64);
    writeFileSync(join(bad, "manifest.json"), JSON.stringify(manifest));
    const end = await exitOf(["coordinator", "--suite", bad, "--out", join(fx.root, "out-hash"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    expect(end.output).toMatch(/sha256 mismatch/);
    expect(end.code, end.output).toBe(2);
  }, 60_000);

  it("a corrupted line (the manifest's hash matches it): exit 2", async () => {
    const bad = join(fx.root, "bad-line");
    cpSync(fx.suite, bad, { recursive: true });
    const lines = gunzipSync(readFileSync(join(bad, SA))).toString("utf8").split("\n");
    lines[1] = lines[1]!.slice(0, 20);
    const text = lines.join("\n");
    writeFileSync(join(bad, SA), gzipSync(text));
    const manifest = JSON.parse(readFileSync(join(bad, "manifest.json"), "utf8"));
    manifest.files[SA].sha256 = createHash("sha256").update(text).digest("hex");
    writeFileSync(join(bad, "manifest.json"), JSON.stringify(manifest));
    const end = await exitOf(["coordinator", "--suite", bad, "--out", join(fx.root, "out-line"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    expect(end.output).toMatch(/^udm-orch: /m);
    expect(end.code, end.output).toBe(2);
  }, 60_000);

  it("--listen on a port in use: exit 2 after EADDRINUSE", async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    const port = (holder.address() as { port: number }).port;
    try {
      const end = await exitOf(["coordinator", "--suite", fx.suite, "--out", join(fx.root, "out-port"), "--listen", `127.0.0.1:${port}`, "--metrics", "127.0.0.1:0"]);
      expect(end.output).toMatch(/EADDRINUSE/);
      expect(end.code, end.output).toBe(2);
    } finally {
      holder.close();
    }
  }, 60_000);
});
