import { describe, expect, it } from "vitest";
import { InProcessBus } from "../../../common/bus/in-process.js";
import { describeBusContract, line, newRunId, waitFor } from "./bus-contract.js";

describeBusContract("InProcessBus", async () => {
  const shared = new InProcessBus();
  return {
    open: async () => shared,
    openIsolated: async () => new InProcessBus(),
    crash: async (_bus, consumer) => consumer.stop(),
    acked: async () => undefined,
    teardown: () => shared.close(),
  };
});

describe("InProcessBus duplicate window", () => {
  it("drops a re-publish inside the window and accepts it after (the scorer dedupes past it)", async () => {
    let now = 1_000_000;
    const bus = new InProcessBus({ duplicateWindowMs: 120_000, now: () => now });
    const run = newRunId();
    expect(await bus.publishResult(run, "vihsd", line("vihsd", 1))).toMatchObject({ ok: true, duplicate: false });
    now += 119_000;
    expect(await bus.publishResult(run, "vihsd", line("vihsd", 1))).toMatchObject({ ok: true, duplicate: true });
    now += 2_000;
    expect(await bus.publishResult(run, "vihsd", line("vihsd", 1))).toMatchObject({ ok: true, duplicate: false });
    const got: string[] = [];
    const c = await bus.consumeResults(run, { durable: "s", onResult: (l, ack) => (got.push(l.run_id), ack()) });
    await waitFor("2 deliveries", () => got.length >= 2);
    expect(got).toEqual(["vihsd:q1", "vihsd:q1"]);
    await c.stop();
    await bus.close();
  });

  it("allows one consumer per durable in the process", async () => {
    const bus = new InProcessBus();
    const run = newRunId();
    const c = await bus.consumeResults(run, { durable: "s", onResult: () => undefined });
    await expect(bus.consumeResults(run, { durable: "s", onResult: () => undefined })).rejects.toThrow(/already has a consumer/);
    await c.stop();
    await bus.close();
  });
});
