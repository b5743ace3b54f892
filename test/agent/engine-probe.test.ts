// The engine probe's reading of failed engine requests, with a fake method and an injected clock:
// a run of 5xx makes the engine not ready for a hold that grows while it repeats, a refused
// connection probes at once, and the engine is ready again once the hold is over and it answers.
import { describe, expect, it } from "vitest";
import { EngineProbe } from "../../agent/engine-probe.js";
import { createLogger } from "../../common/log.js";
import { FakeEngineMethod } from "./attach-fakes.js";

const quiet = createLogger("test", "silent");

function setup() {
  let now = 1_000_000;
  const method = new FakeEngineMethod();
  const changes: boolean[] = [];
  const probe = new EngineProbe(method, { readyIntervalMs: 60_000, downIntervalMs: 60_000, timeoutMs: 1_000, serverErrorStreak: 3, serverErrorHoldMs: 1_000, now: () => now }, quiet);
  probe.onChange((ready) => changes.push(ready));
  return { probe, method, changes, advance: (ms: number) => (now += ms) };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe("EngineProbe", () => {
  it("three 5xx in a row: not ready for the hold, then ready again; a repeat holds twice as long", async () => {
    const { probe, changes, advance } = setup();
    expect(await probe.probe()).toBe(true);
    probe.observe(500);
    probe.observe(503);
    probe.observe(200); // an answer breaks the run
    probe.observe(500);
    probe.observe(502);
    await settle();
    expect(probe.ready).toBe(true);
    probe.observe(500);
    await settle();
    expect(probe.ready).toBe(false);
    expect(probe.lastError?.message).toMatch(/3 engine answers in a row were HTTP 5xx \(last 500\)/);
    advance(500);
    expect(await probe.probe()).toBe(false);
    advance(600);
    expect(await probe.probe()).toBe(true);
    for (const s of [500, 500, 500]) probe.observe(s);
    await settle();
    expect(probe.ready).toBe(false);
    advance(1_100);
    expect(await probe.probe()).toBe(false); // the second hold is 2 s
    advance(1_000);
    expect(await probe.probe()).toBe(true);
    expect(changes).toEqual([true, false, true, false, true]);
  });

  it("501 and 4xx are answers, not failures", async () => {
    const { probe } = setup();
    await probe.probe();
    for (let i = 0; i < 5; i++) probe.observe(501);
    for (let i = 0; i < 5; i++) probe.observe(400);
    await settle();
    expect(probe.ready).toBe(true);
  });

  it("a refused connection probes at once: not ready without waiting for the timed probe", async () => {
    const { probe, method } = setup();
    await probe.probe();
    method.down = true;
    probe.observe("unreachable");
    await settle();
    expect(probe.ready).toBe(false);
    method.down = false;
    expect(await probe.probe()).toBe(true);
  });
});

describe("EngineProbe down reports", () => {
  it("names an unreachable engine after downReportMs, again every downReportRepeatMs while it stays down, and not after stop()", async () => {
    const { createServer } = await import("node:net");
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    const url = `http://127.0.0.1:${port}`;
    const warnings: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: (m: string) => warnings.push(m), error: () => undefined, child: () => logger };
    const method = new FakeEngineMethod(); // never asked: /health is refused first
    const probe = new EngineProbe(method, { readyIntervalMs: 60_000, downIntervalMs: 50, timeoutMs: 1_000, engineUrl: url, healthUrl: `${url}/health`, downReportMs: 200, downReportRepeatMs: 300 }, logger);
    probe.start();
    await new Promise((r) => setTimeout(r, 1_000));
    probe.stop();
    const reports = warnings.filter((w) => w.startsWith(`engine ${url} unreachable (still trying): `) && w.includes("ECONNREFUSED"));
    expect(reports.length).toBeGreaterThanOrEqual(2);
    expect(reports.length).toBeLessThanOrEqual(4);
    const after = warnings.length;
    await new Promise((r) => setTimeout(r, 400));
    expect(warnings.length).toBe(after); // stopped: no more reports
  });
});
