// The coordinator's HTTP port under a flood of idle connections (issue 27, item 1): a coordinator
// started under `ulimit -n 1024` with 1,100 unauthenticated idle TCP connections open to its page
// keeps serving: /healthz answers while they are open, an agent attaches and the run completes.
// Before the connection cap the connections took every descriptor and the coordinator died with
// EMFILE. Real processes: the coordinator, a sim engine, an agent.
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HTTP_LIMITS_DEFAULTS } from "../../common/http-limits.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { BIN, REPO_ROOT, requireBuild, spawnCli, type CliProcess } from "../support/cli-process.js";

const IDLE = 1_100;
let root: string;
let suite: string;
const started: CliProcess[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  requireBuild();
  root = mkdtempSync(join(tmpdir(), "udm-bounded-http-"));
  suite = join(root, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["aiv-sa24-easy", "aiv-culture100"] });
}, 120_000);

afterAll(() => {
  for (const s of sockets) s.destroy();
  for (const p of started) p.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

/** A `udm-orch` process started by bash under a descriptor limit. */
function underLimit(limit: number, args: string[]): CliProcess {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const child = spawn("bash", ["-c", `ulimit -n ${limit} && exec ${quoted}`], { cwd: REPO_ROOT, env: { ...process.env, UDM_NO_PROGRESS: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once("exit", (code, signal) => res({ code, signal })));
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const p: CliProcess = {
    child,
    output: () => out,
    exited,
    kill: (signal = "SIGKILL") => void child.kill(signal),
    async waitFor(re, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const m = out.match(re);
        if (m) return m;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before printing ${re}:\n${out.slice(-3000)}`);
        if (Date.now() > end) throw new Error(`timed out waiting for ${re}:\n${out.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
  started.push(p);
  return p;
}

/** Opens `n` idle connections; resolves once each has connected or been closed by the server. */
async function openIdle(port: number, n: number): Promise<{ connected: number; closed: () => number }> {
  let connected = 0;
  let closed = 0;
  await Promise.all(
    Array.from({ length: n }, () =>
      new Promise<void>((resolve) => {
        const s = connect(port, "127.0.0.1");
        sockets.push(s);
        s.on("connect", () => {
          connected++;
          resolve();
        });
        s.on("data", () => undefined);
        s.on("error", () => resolve());
        s.on("close", () => {
          closed++;
          resolve();
        });
      }),
    ),
  );
  return { connected, closed: () => closed };
}

describe("the coordinator's HTTP port under 1,100 idle connections (ulimit -n 1024)", () => {
  it("keeps serving: /healthz answers, an agent attaches, the run completes", async () => {
    const engine = spawnCli(["sim-engine", "--port", "0"]);
    started.push(engine);
    const engineUrl = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const coordinator = underLimit(1024, ["coordinator", "--suite", suite, "--out", join(root, "out"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--after-complete", "exit"]);
    const page = (await coordinator.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
    const address = (await coordinator.waitFor(/listening on (127\.0\.0\.1:\d+) run/))[1]!;

    const flood = await openIdle(Number(new URL(page).port), IDLE);
    expect(flood.connected).toBeGreaterThan(0);
    // The coordinator has accepted them all once it has closed every one past its cap (the oldest
    // idle ones make room): waits on that, not on a fixed time a loaded machine may not keep to.
    await vi.waitFor(() => expect(flood.closed()).toBeGreaterThanOrEqual(flood.connected - HTTP_LIMITS_DEFAULTS.maxConnections), { timeout: 60_000, interval: 50 });
    expect(coordinator.child.exitCode, coordinator.output()).toBeNull();
    const health = await fetch(`${page}/healthz`);
    expect(health.status, coordinator.output()).toBe(200);

    const agent = spawnCli(["agent", "--coordinator", address, "--engine", engineUrl]);
    started.push(agent);
    await coordinator.waitFor(/agent attached/, 60_000);
    const end = await coordinator.exited;
    expect(coordinator.output()).not.toMatch(/EMFILE/);
    expect(end.code, coordinator.output()).toBe(0);
    expect(coordinator.output()).toMatch(/ complete: (\d+)\/\1 records committed/);
    expect((await agent.exited).code, agent.output()).toBe(0);
  }, 180_000);
});
