// The attach loop's parts: back-pressure, record slots, reconnect backoff, engine load, lifecycle.
import { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { StreamWriter } from "../../agent/transport/stream-writer.js";
import { RecordSlots } from "../../agent/record-slots.js";
import { reconnectDelayMs } from "../../agent/reconnect-backoff.js";
import { parseEngineLoad, readEngineLoad } from "../../agent/engine-load.js";
import { canTransition } from "../../agent/agent-state.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { waitFor } from "./attach-fakes.js";

/** An object stream that takes a message only when the test lets it. */
class SlowSink extends Duplex {
  readonly received: number[] = [];
  readonly writesWhileFull: number[] = [];
  private pending: Array<() => void> = [];
  constructor() {
    super({ objectMode: true, highWaterMark: 2 });
  }
  override write(chunk: unknown, ...rest: never[]): boolean {
    if (this.writableNeedDrain) this.writesWhileFull.push(chunk as number);
    return super.write(chunk, ...rest);
  }
  override _write(chunk: number, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.received.push(chunk);
    this.pending.push(() => cb());
  }
  override _read(): void {}
  takeOne(): boolean {
    const next = this.pending.shift();
    next?.();
    return next !== undefined;
  }
}

describe("StreamWriter", () => {
  it("waits for 'drain' when write() returns false, and keeps the order", async () => {
    const sink = new SlowSink();
    const writer = new StreamWriter<number>(sink);
    const sent = Array.from({ length: 12 }, (_, i) => writer.send(i));
    await waitFor("the sink is full", () => sink.writableNeedDrain);
    let settled = false;
    const all = Promise.all(sent).finally(() => (settled = true));
    while (!settled) {
      sink.takeOne();
      await new Promise((r) => setImmediate(r));
    }
    expect(await all).toEqual(Array(12).fill(true));
    expect(sink.received).toEqual([...Array(12).keys()]);
    expect(sink.writesWhileFull).toEqual([]);
  });

  it("resolves pending sends with false when the stream closes", async () => {
    const sink = new SlowSink();
    const writer = new StreamWriter<number>(sink);
    const sent = Array.from({ length: 6 }, (_, i) => writer.send(i));
    await waitFor("the sink is full", () => sink.writableNeedDrain);
    sink.destroy();
    // The first went out; the one that filled the buffer and those queued behind it did not.
    expect(await Promise.all(sent)).toEqual([true, false, false, false, false, false]);
    expect(await writer.send(99)).toBe(false);
  });
});

describe("RecordSlots", () => {
  it("bounds holders, serves waiters first come first served, and drops aborted waiters", async () => {
    const slots = new RecordSlots(2);
    const never = new AbortController().signal;
    const r1 = await slots.acquire(never);
    const r2 = await slots.acquire(never);
    expect(slots.inUse).toBe(2);
    const order: string[] = [];
    const aborter = new AbortController();
    const a = slots.acquire(never).then((r) => (order.push("a"), r));
    const b = slots.acquire(aborter.signal).then((r) => (order.push("b"), r));
    const c = slots.acquire(never).then((r) => (order.push("c"), r));
    aborter.abort(new Error("cancelled"));
    await expect(b).rejects.toThrow("cancelled");
    r1();
    r1(); // a second release of the same slot is a no-op
    const ra = await a;
    expect(slots.inUse).toBe(2);
    r2();
    const rc = await c;
    expect(order).toEqual(["a", "c"]);
    ra();
    rc();
    expect(slots.inUse).toBe(0);
    expect(() => new RecordSlots(0)).toThrow(RangeError);
  });
});

describe("reconnectDelayMs", () => {
  it.each([
    [0, 0, 50],
    [0, 1, 100],
    [3, 0, 400],
    [3, 0.999999, 800],
    [20, 0, 5_000],
    [20, 1, 10_000],
  ])("attempt %i with random %f gives %i ms (initial 100, max 10000)", (attempt, random, expected) => {
    expect(reconnectDelayMs(attempt, { initialMs: 100, maxMs: 10_000 }, () => random)).toBe(expected);
  });
});

describe("engine load", () => {
  it("sums vllm:num_requests_waiting/running over series and ignores the rest", () => {
    const text = [
      "# HELP vllm:num_requests_running Number of requests in model execution batches.",
      "# TYPE vllm:num_requests_running gauge",
      'vllm:num_requests_running{engine="0",model_name="m a"} 7.0',
      'vllm:num_requests_running{engine="1",model_name="m a"} 5',
      'vllm:num_requests_waiting{engine="0",model_name="m"} 2.0',
      'vllm:num_requests_waiting_by_reason{reason="x"} 100',
      "vllm:kv_cache_usage_perc 0.5",
    ].join("\n");
    expect(parseEngineLoad(text)).toEqual({ running: 12, waiting: 2 });
    expect(parseEngineLoad("other 1\n")).toEqual({ running: undefined, waiting: undefined });
  });

  it("reads the simulated engine's /metrics, and fails on an engine without the gauges", async () => {
    const engine = await startSimEngine();
    try {
      expect(await readEngineLoad(engine.url, new AbortController().signal)).toEqual({ waiting: 0, running: 0 });
      await expect(readEngineLoad(`${engine.url}/v1`, new AbortController().signal)).rejects.toThrow(/metrics/);
    } finally {
      await engine.close();
    }
  });
});

describe("agent lifecycle", () => {
  it("allows the documented transitions only", () => {
    expect(canTransition("starting", "connecting")).toBe(true);
    expect(canTransition("running", "connecting")).toBe(true);
    expect(canTransition("running", "draining")).toBe(true);
    expect(canTransition("draining", "running")).toBe(false);
    expect(canTransition("stopped", "connecting")).toBe(false);
  });
});
