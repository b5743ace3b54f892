// `udm-orch agent` with the engine's API key, as a process: from a file (--engine-api-key-file, its
// first line) or the variable UDM_ENGINE_API_KEY, against the sim started with a key. The right key:
// "engine ready"; a wrong one: the one line saying so. Bad key flags: one line, exit 2.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine } from "../../sim/engine/server.js";
import { spawnCli } from "../support/cli-process.js";
import { tempDirs } from "../support/temp-dirs.js";

const tempDir = tempDirs("udm-engine-api-key-");
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// Nothing listens there: the agent probes its engine first, then keeps trying the coordinator.
const NO_COORDINATOR = "127.0.0.1:1";

describe("agent --engine-api-key-file / UDM_ENGINE_API_KEY", () => {
  it("reads the key from a file or the variable and is ready; a wrong key is said once", async () => {
    const engine = await startSimEngine({ tokensPerS: 0, apiKeys: ["k-file-31c9"] });
    cleanups.push(() => engine.close());
    const dir = tempDir();
    const right = join(dir, "right");
    const wrong = join(dir, "wrong");
    writeFileSync(right, "k-file-31c9\n", { mode: 0o600 });
    writeFileSync(wrong, "k-not-it\n", { mode: 0o600 });
    const run = (args: string[], env: Record<string, string> = {}) => {
      const p = spawnCli(["agent", "--coordinator", NO_COORDINATOR, "--engine", engine.url, ...args], { UDM_LOG_LEVEL: "info", ...env });
      cleanups.push(() => p.kill("SIGKILL"));
      return p;
    };
    const fromFile = run(["--engine-api-key-file", right]);
    const fromEnv = run([], { UDM_ENGINE_API_KEY: "k-file-31c9" });
    const refused = run(["--engine-api-key-file", wrong]);
    await fromFile.waitFor(/engine ready/, 20_000);
    await fromEnv.waitFor(/engine ready/, 20_000);
    await refused.waitFor(/engine refused the API key \(HTTP 401\): check --engine-api-key/, 20_000);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(refused.output().match(/engine refused the API key/g)).toHaveLength(1);
    expect(refused.output()).not.toMatch(/engine ready/);
    for (const p of [fromFile, fromEnv, refused]) expect(p.output()).not.toMatch(/k-file-31c9|k-not-it/);
  }, 60_000);

  it.each([
    [["--engine-api-key", "k", "--engine-api-key-file", "F"], /^udm-orch: --engine-api-key and --engine-api-key-file: give one of them$/],
    [["--engine-api-key-file", "MISSING"], /^udm-orch: --engine-api-key-file: cannot read \S+ \(ENOENT\)$/],
    [["--engine-api-key-file", "EMPTY"], /^udm-orch: --engine-api-key-file: \S+ holds no key$/],
    [["--engine-api-key", " "], /^udm-orch: --engine-api-key must not be empty$/],
  ])("%j: one line, exit 2", async (args, message) => {
    const dir = tempDir();
    writeFileSync(join(dir, "F"), "k\n");
    writeFileSync(join(dir, "EMPTY"), "\n");
    const p = spawnCli(["agent", "--coordinator", NO_COORDINATOR, "--engine", "http://127.0.0.1:1", ...args.map((a) => (/^[A-Z]+$/.test(a) ? join(dir, a) : a))]);
    cleanups.push(() => p.kill("SIGKILL"));
    expect((await p.exited).code).toBe(2);
    expect(p.output().trim()).toMatch(message);
  }, 30_000);
});
