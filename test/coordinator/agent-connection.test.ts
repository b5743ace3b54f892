// Backpressure between the scheduler and an agent's stream: a real object-mode Writable whose
// writes complete only when the test says so stands in for the gRPC call.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { AgentConnection } from "../../coordinator/transport/agent-connection.js";
import { planUnits } from "../../coordinator/planner.js";
import { Scheduler } from "../../coordinator/scheduler.js";
import type { CoordinatorMessage } from "../../proto/generated/udm/v1/CoordinatorMessage.js";
import { entry } from "./helpers/entries.js";
import { UnitBufferPool } from "../../coordinator/transport/unit-buffer-pool.js";
import { EncodedUnit } from "../../coordinator/transport/work-unit-encoder.js";

class HeldWritable extends Writable {
  written: CoordinatorMessage[] = [];
  private held: Array<() => void> = [];
  constructor() {
    super({ objectMode: true, highWaterMark: 2 });
  }
  override _write(chunk: CoordinatorMessage, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.written.push(chunk);
    this.held.push(() => cb());
  }
  release(): void {
    const h = this.held;
    this.held = [];
    for (const f of h) f();
  }
}

describe("AgentConnection", () => {
  it("hands out no unit while write() says stop, queues control messages, and resumes on drain", async () => {
    const recs = Array.from({ length: 10 }, (_, i) => entry("t", `${i}`, `g${i}`));
    const units = planUnits([{ track: "t", family: "f", records: recs }], { maxRecords: 1, maxQuestions: 99, maxPayloadBytes: 1e9 });
    const byRun = new Map(recs.map((r) => [r.recordKey, r]));
    let scheduler: Scheduler | undefined;
    const stream = new HeldWritable();
    const conn = new AgentConnection("a#1", "a", "i1", stream, {
      unitMessage: (unit, records, backup) => ({ unit: { unit_id: unit.unitId, records: records.map((r) => ({ run_id: r.recordKey })), backup } }),
      onWritable: () => scheduler!.pump(),
    });
    scheduler = new Scheduler(units, { leaseMs: 60_000, lookup: (r) => byRun.get(r), onAccept: () => undefined, onGiveUp: () => undefined });
    scheduler.attach(conn.key, { agentId: "a", model: "", engineUrl: "", instance: "i1", methods: [], capacity: 10, maxModelLen: 0 }, conn, true);
    scheduler.grantCredit(conn.key, 10);
    // Two writes fill the buffer (highWaterMark 2): the second returns false and dispatch stops.
    expect(stream.written).toHaveLength(1);
    expect(scheduler.agent(conn.key)!.credit).toBe(8);
    expect(conn.writable()).toBe(false);
    conn.sendCancel("t/0");
    expect(stream.written.filter((m) => m.cancel)).toHaveLength(0);
    // Let the stream drain: the queued Cancel goes first, then units until write() says stop again.
    for (let i = 0; i < 100 && (scheduler.agent(conn.key)!.credit > 0 || stream.writableLength > 0); i++) {
      stream.release();
      await new Promise((r) => setImmediate(r));
      // Whenever the stream is blocked, what was written is at most what it buffers.
      if (!conn.writable()) expect(stream.writableLength).toBeLessThanOrEqual(2);
    }
    expect(scheduler.agent(conn.key)!.credit).toBe(0);
    const kinds = stream.written.map((m) => (m.unit ? "unit" : m.cancel ? "cancel" : "other"));
    expect(kinds.filter((k) => k === "unit")).toHaveLength(10);
    expect(kinds.indexOf("cancel")).toBe(2);
    expect(new Set(stream.written.flatMap((m) => m.unit?.records?.map((r) => r.run_id) ?? [])).size).toBe(10);
  });

  it("says Drain once and writes nothing after end()", () => {
    const stream = new HeldWritable();
    const conn = new AgentConnection("a#1", "a", "i1", stream, { unitMessage: () => ({}), onWritable: () => undefined });
    conn.sendDrain("run complete");
    conn.sendDrain("coordinator draining");
    stream.release();
    conn.end();
    conn.sendCancel("x");
    expect(stream.written).toEqual([{ drain: { reason: "run complete" } }]);
    expect(conn.writable()).toBe(false);
  });
  it("gives an encoded unit's buffer back only once the stream's write of it has called back", async () => {
    const pool = new UnitBufferPool();
    const held: Array<() => void> = [];
    const seen: Buffer[] = [];
    const stream = new Writable({
      objectMode: true,
      highWaterMark: 8,
      write(chunk: EncodedUnit, _enc, cb) {
        seen.push(chunk.bytes);
        held.push(() => cb());
      },
    });
    const conn = new AgentConnection("a#1", "a", "i1", stream, { unitMessage: () => new EncodedUnit(pool.lend(1), pool), onWritable: () => undefined });
    const first = new EncodedUnit(pool.lend(200_000).fill(1), pool);
    const second = new EncodedUnit(pool.lend(200_000).fill(2), pool);
    conn.send(first);
    conn.send(second);
    // The first is being written, the second waits in the stream: both buffers are still lent.
    expect(pool.lent).toBe(2);
    expect(pool.lend(100_000).buffer).not.toBe(first.bytes.buffer);
    held.shift()!();
    await new Promise((r) => setImmediate(r));
    // Written: its buffer serves the next unit; the second's bytes are untouched.
    expect(pool.lend(100_000).buffer).toBe(first.bytes.buffer);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.every((b) => b === 2)).toBe(true);
    held.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(pool.freeCount).toBe(1);
  });
});
