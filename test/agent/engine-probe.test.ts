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
