// VllmSupervisor with a real child process: a small node script standing in for vLLM that serves
// /health and exits when asked.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VllmSupervisor, type SupervisorState } from "../../agent/vllm-supervisor.js";
import type { Logger } from "../../common/log.js";

const FAKE_VLLM = `
import { createServer } from "node:http";
const port = Number(process.argv[2]);
console.log("INFO fake vllm pid " + process.pid + " starting");
const server = createServer((req, res) => {
  if (req.url === "/health") { res.writeHead(200); res.end(); return; }
  if (req.url === "/exit") { res.writeHead(200); res.end(); console.log("exiting on request"); setImmediate(() => process.exit(3)); return; }
  res.writeHead(404); res.end();
});
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => { console.log("SIGTERM: stopping"); server.close(); process.exit(0); });
`;

/**
 * A free port for the stand-in to listen on, as `vllm serve --port` needs one known in advance.
 * Chosen below Linux's ephemeral range (32768+), where the servers other tests start on port 0
 * land, so no other test's /health can answer on it in the meantime.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const candidate = 20_000 + Math.floor(Math.random() * 10_000);
    const s = createServer();
    const ok = await new Promise<boolean>((r) => {
      s.once("error", () => r(false));
      s.listen(candidate, "127.0.0.1", () => r(true));
    });
    if (ok) {
      await new Promise<void>((r) => s.close(() => r()));
      return candidate;
    }
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function nextState(sup: VllmSupervisor, wanted: SupervisorState): Promise<void> {
  return new Promise((resolve) => {
    const off = sup.onChange((s) => {
      if (s === wanted) {
        off();
        resolve();
      }
    });
  });
}

describe("VllmSupervisor", () => {
  it("starts the command, waits for /health, restarts it when it exits, and stops it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "udm-supervisor-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, "fake-vllm.mjs");
    writeFileSync(script, FAKE_VLLM);
    const port = await freePort();
    const lines: string[] = [];
    const capture: Logger = {
      debug: () => undefined,
      info: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
      error: (m: string) => lines.push(m),
      child: () => capture,
    };
    const sup = new VllmSupervisor({
      command: `${JSON.stringify(process.execPath)} ${JSON.stringify(script)} ${port}`,
      healthUrl: `http://127.0.0.1:${port}/health`,
      logger: capture,
      backoff: { initialMs: 50, maxMs: 200 },
      healthIntervalMs: 50,
      stopGraceMs: 2_000,
    });
    cleanups.push(() => sup.stop());
    expect(sup.state).toBe("down");
    sup.start();
    await sup.waitReady();
    expect(sup.state).toBe("ready");
    expect(sup.starts).toBe(1);
    const firstPid = sup.pid;

    const down = nextState(sup, "down");
    await fetch(`http://127.0.0.1:${port}/exit`);
    await down;
    await sup.waitReady();
    expect(sup.starts).toBe(2);
    expect(sup.pid).not.toBe(firstPid);
    expect(lines.some((l) => /exited \(code 3\); restarting in \d+ ms/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith("INFO fake vllm pid"))).toBe(true);
    expect(lines.some((l) => l === "exiting on request")).toBe(true);

    const lastPid = sup.pid!;
    await sup.stop();
    expect(sup.state).toBe("stopped");
    // The process is gone. (Not probed through its port: under parallel tests another server may
    // have taken that port by now.)
    expect(() => process.kill(lastPid, 0)).toThrow(/ESRCH/);
    expect(lines.some((l) => l === "SIGTERM: stopping")).toBe(true);
    expect(sup.starts).toBe(2);
  }, 30_000);
});
