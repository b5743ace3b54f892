// The behaviour every Bus must have, run against InProcessBus and against NatsBus on a real
// nats-server. Each test uses its own run id, so the tests of one file share a server.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catchUpResults, type Bus, type BusEvent, type BusState, type MetricsMessage, type ResultConsumer, type ResultDelivery } from "../../../common/bus/bus.js";
import { UsageError } from "../../../common/errors.js";
import type { ResultLine } from "../../../common/results/format.js";

export interface BusHarness {
  /** A bus on the shared backend; for NATS each call is a new connection (a new process, as it were). */
  open(): Promise<Bus>;
  /** Ends a consumer the way a crash would: NATS drops the connection, in-process stops the consumer. */
  crash(bus: Bus, consumer: ResultConsumer): Promise<void>;
  /** A bus of its own that a test may close (in-process: a new InProcessBus). */
  openIsolated(): Promise<Bus>;
  /** Waits until the backend holds the first `count` acks of `durable` on `runId` (ack() gets no reply; in-process it is immediate). */
  acked(runId: string, durable: string, count: number): Promise<void>;
  teardown(): Promise<void>;
}

export const newRunId = () => `r${randomUUID().slice(0, 8)}`;

export function line(track: string, n: number, extra: Record<string, unknown> = {}): ResultLine {
  return { run_id: `${track}:q${n}`, id: `q${n}`, track, family: "sentiment", probs: { label: { A: 0.25, B: 0.75 } }, skipped: [], ...extra };
}

/** Polls until `cond` holds; the bound only stops a broken test, it asserts no speed. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Received {
  line: ResultLine;
  delivery: ResultDelivery;
  ack: () => void;
}

function collector() {
  const got: Received[] = [];
  return {
    got,
    onResult: (l: ResultLine, ack: () => void, delivery: ResultDelivery) => void got.push({ line: l, ack, delivery }),
    ids: () => got.map((g) => g.line.run_id),
  };
}

function event(i: number): BusEvent {
  return { type: "unit_done", at: new Date(0).toISOString(), unitId: `u${i}`, track: "vihsd", agentId: "a1", results: i };
}

export function describeBusContract(name: string, makeHarness: () => Promise<BusHarness>): void {
  describe(`${name}: Bus contract`, () => {
    let h: BusHarness;
    const opened: Bus[] = [];
    const open = async () => {
      const b = await h.open();
      opened.push(b);
      return b;
    };
    beforeAll(async () => {
      h = await makeHarness();
    });
    afterAll(async () => {
      for (const b of opened) await b.close();
      await h?.teardown();
    });

    it("delivers published results to a durable consumer in order; acked ones are not delivered again", async () => {
      const bus = await open();
      const run = newRunId();
      expect(bus.state).toBe("connected");
      for (let i = 0; i < 5; i++) {
        const out = await bus.publishResult(run, i % 2 ? "vihos" : "vihsd", line(i % 2 ? "vihos" : "vihsd", i));
        expect(out).toMatchObject({ ok: true, duplicate: false });
      }
      const c = collector();
      const consumer = await bus.consumeResults(run, { durable: "scorer", ackWaitMs: 1000, onResult: (l, ack, d) => (c.onResult(l, ack, d), ack()) });
      await waitFor("5 results", () => c.got.length >= 5);
      // The server holds all 5 acks (NATS: the consumer's ack floor; in process, ack() is at once):
      // an ack that did not count would keep the floor below 5, and nothing acked can come back.
      await h.acked(run, "scorer", 5);
      expect(c.ids()).toEqual(["vihsd:q0", "vihos:q1", "vihsd:q2", "vihos:q3", "vihsd:q4"]);
      expect(c.got.map((g) => g.delivery.track)).toEqual(["vihsd", "vihos", "vihsd", "vihos", "vihsd"]);
      expect(c.got.every((g) => g.delivery.deliveryCount === 1 && g.delivery.runId === run)).toBe(true);
      expect(c.got[0]!.line.probs).toEqual({ label: { A: 0.25, B: 0.75 } });
      const seqs = c.got.map((g) => g.delivery.seq);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      await consumer.stop();

      // The same durable again: only what came after.
      await bus.publishResult(run, "vihsd", line("vihsd", 5));
      const again = collector();
      const consumer2 = await bus.consumeResults(run, { durable: "scorer", ackWaitMs: 1000, onResult: (l, ack, d) => (again.onResult(l, ack, d), ack()) });
      await waitFor("the 6th result", () => again.got.length >= 1);
      await h.acked(run, "scorer", 6); // every delivery of the durable acked: none may come back
      expect(again.ids()).toEqual(["vihsd:q5"]);
      await consumer2.stop();
    });

    it("a new durable starts at the start of the run's results and sees no other run's", async () => {
      const bus = await open();
      const run = newRunId();
      const other = newRunId();
      for (let i = 0; i < 3; i++) await bus.publishResult(run, "vihsd", line("vihsd", i));
      await bus.publishResult(other, "vihsd", line("vihsd", 99));
      const c = collector();
      const consumer = await bus.consumeResults(run, { durable: "late", onResult: (l, ack, d) => (c.onResult(l, ack, d), ack()) });
      await waitFor("3 results", () => c.got.length >= 3);
      await sleep(300); // nothing more may come: the other run's line would
      expect(c.ids()).toEqual(["vihsd:q0", "vihsd:q1", "vihsd:q2"]);
      await consumer.stop();
    });

    it("drops a result published twice (same run and run_id) and delivers it once", async () => {
      const bus = await open();
      const run = newRunId();
      const first = await bus.publishResult(run, "vihsd", line("vihsd", 1));
      const second = await bus.publishResult(run, "vihsd", line("vihsd", 1, { latency_ms: 5 }));
      expect(first).toMatchObject({ ok: true, duplicate: false });
      expect(second).toMatchObject({ ok: true, duplicate: true });
      if (first.ok && second.ok) expect(second.seq).toBe(first.seq);
      // The same record in another run is not a duplicate.
      expect(await bus.publishResult(newRunId(), "vihsd", line("vihsd", 1))).toMatchObject({ ok: true, duplicate: false });
      await bus.publishResult(run, "vihsd", line("vihsd", 2));
      const c = collector();
      const consumer = await bus.consumeResults(run, { durable: "scorer", onResult: (l, ack, d) => (c.onResult(l, ack, d), ack()) });
      await waitFor("2 results", () => c.got.length >= 2);
      await sleep(300); // nothing more may come: the duplicate would
      expect(c.ids()).toEqual(["vihsd:q1", "vihsd:q2"]);
      expect(c.got[0]!.line.latency_ms).toBeUndefined();
      await consumer.stop();
    });

    it("redelivers un-acked results to the same durable after its consumer dies", async () => {
      const bus1 = await open();
      const run = newRunId();
      for (let i = 0; i < 3; i++) await bus1.publishResult(run, "vihsd", line("vihsd", i));
      const c1 = collector();
      const consumer1 = await bus1.consumeResults(run, { durable: "scorer", ackWaitMs: 1000, onResult: c1.onResult });
      await waitFor("3 results", () => c1.got.length >= 3);
      c1.got[0]!.ack(); // applied q0 only, then died
      await h.acked(run, "scorer", 1);
      await h.crash(bus1, consumer1);

      const bus2 = await open();
      const c2 = collector();
      const consumer2 = await bus2.consumeResults(run, { durable: "scorer", ackWaitMs: 1000, onResult: (l, ack, d) => (c2.onResult(l, ack, d), ack()) });
      await waitFor("2 redelivered results", () => c2.got.length >= 2);
      // Every message of the run acked and held by the backend: nothing is left to redeliver.
      await h.acked(run, "scorer", 3);
      expect(c2.ids()).toEqual(["vihsd:q1", "vihsd:q2"]);
      // 2, or more if a loaded machine let the ack wait run out before the crash.
      expect(c2.got.every((g) => g.delivery.deliveryCount >= 2)).toBe(true);
      await consumer2.stop();
    });

    it("redelivers a result whose handler threw, and reports the error", async () => {
      const bus = await open();
      const run = newRunId();
      await bus.publishResult(run, "vihsd", line("vihsd", 0));
      const errors: string[] = [];
      const counts: number[] = [];
      const consumer = await bus.consumeResults(run, {
        durable: "scorer",
        ackWaitMs: 1000,
        onResult: (_l, ack, d) => {
          counts.push(d.deliveryCount);
          if (d.deliveryCount === 1) throw new Error("disk full");
          ack();
        },
        onError: (e) => errors.push(e.message),
      });
      await waitFor("a second delivery", () => counts.length >= 2);
      expect(counts).toEqual([1, 2]);
      expect(errors).toEqual(["disk full"]);
      await consumer.stop();
    });

    it("drops a message that is not a results line, reports it, and goes on", async () => {
      const bus = await open();
      const run = newRunId();
      await bus.publishResult(run, "vihsd", { id: "no run_id" } as unknown as ResultLine);
      await bus.publishResult(run, "vihsd", line("vihsd", 1));
      const c = collector();
      const errors: string[] = [];
      const consumer = await bus.consumeResults(run, {
        durable: "scorer",
        ackWaitMs: 1000,
        onResult: (l, ack, d) => (c.onResult(l, ack, d), ack()),
        onError: (e) => errors.push(e.message),
      });
      await waitFor("the valid result", () => c.got.length >= 1);
      // The bad one ended for good (terminated, counted in the ack floor), the good one acked:
      // nothing is left to come back.
      await h.acked(run, "scorer", 2);
      expect(c.ids()).toEqual(["vihsd:q1"]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/is not a results line.*run_id/s);
      await consumer.stop();
    });

    it("catchUpResults republishes with the same ids: what already arrived is dropped, the rest delivered once", async () => {
      const bus = await open();
      const run = newRunId();
      for (let i = 0; i < 3; i++) await bus.publishResult(run, "vihsd", line("vihsd", i));
      const report = await catchUpResults(bus, run, (function* () {
        for (let i = 0; i < 5; i++) yield { track: "vihsd", line: line("vihsd", i) };
      })());
      expect(report).toEqual({ published: 2, duplicates: 3, failed: 0 });
      const c = collector();
      const consumer = await bus.consumeResults(run, { durable: "scorer", onResult: (l, ack, d) => (c.onResult(l, ack, d), ack()) });
      await waitFor("5 results", () => c.got.length >= 5);
      await sleep(300); // nothing more may come: a republished line would
      expect(c.ids()).toEqual([0, 1, 2, 3, 4].map((i) => `vihsd:q${i}`));
      await consumer.stop();
    });

    it("delivers events in publish order, live and replayed from the start", async () => {
      const bus = await open();
      const run = newRunId();
      await bus.publishEvent(run, event(0)); // before the live subscription: not seen by it
      const live: BusEvent[] = [];
      const sub = await bus.subscribeEvents(run, (e) => live.push(e));
      for (let i = 1; i <= 20; i++) expect((await bus.publishEvent(run, event(i))).ok).toBe(true);
      await bus.publishEvent(run, { type: "run_complete", at: new Date(0).toISOString(), state: "complete" });
      await waitFor("21 live events", () => live.length >= 21);
      expect(live.slice(0, 20).map((e) => (e.type === "unit_done" ? e.results : -1))).toEqual([...Array(20).keys()].map((i) => i + 1));
      expect(live[20]).toEqual({ type: "run_complete", at: new Date(0).toISOString(), state: "complete" });

      const replayed: BusEvent[] = [];
      const sub2 = await (await open()).subscribeEvents(run, (e) => replayed.push(e), { from: "start" });
      await waitFor("22 replayed events", () => replayed.length >= 22);
      expect(replayed.slice(0, 21).map((e) => (e.type === "unit_done" ? e.results : -1))).toEqual([...Array(21).keys()]);
      await sub.stop();
      await sub2.stop();
    });

    it("metrics: live subscribers get every message in order, late ones the latest per track", async () => {
      const bus = await open();
      const run = newRunId();
      const m = (track: string, records: number, final: boolean): MetricsMessage => ({ track, final, records, metrics: { accuracy: records / 10 } });
      const live: MetricsMessage[] = [];
      const sub = await bus.subscribeMetrics(run, (x) => live.push(x), { from: "new" });
      // The scorer's metrics interface goes in as it is.
      interface TrackNumbers {
        accuracy: number;
      }
      const numbers: TrackNumbers = { accuracy: 0.1 };
      await bus.publishMetrics(run, "vihsd", { track: "vihsd", final: false, records: 1, metrics: numbers });
      await bus.publishMetrics(run, "vihos", m("vihos", 2, false));
      await bus.publishMetrics(run, "vihsd", m("vihsd", 3, true));
      await bus.publishMetrics(run, "summary", m("summary", 5, true));
      await waitFor("4 live metrics", () => live.length >= 4);
      expect(live.map((x) => [x.track, x.records])).toEqual([["vihsd", 1], ["vihos", 2], ["vihsd", 3], ["summary", 5]]);

      const late: MetricsMessage[] = [];
      const sub2 = await (await open()).subscribeMetrics(run, (x) => late.push(x));
      await waitFor("3 latest metrics", () => late.length >= 3);
      await sleep(300); // nothing more may come: an older message of a track would
      expect(late.map((x) => [x.track, x.records, x.final]).sort()).toEqual([["summary", 5, true], ["vihos", 2, false], ["vihsd", 3, true]]);
      await sub.stop();
      await sub2.stop();
    });

    it("keeps the run status: put, get, overwrite; unknown runs have none", async () => {
      const bus = await open();
      const run = newRunId();
      expect(await bus.getStatus(run)).toBeUndefined();
      // A coordinator's own status type with more fields goes in as it is.
      interface CoordinatorStatus {
        runId: string;
        state: "running";
        updatedAt: string;
        recordsTotal: number;
        recordsCommitted: number;
        agents: Array<{ id: string }>;
      }
      const status: CoordinatorStatus = { runId: run, state: "running", updatedAt: "2026-01-01T00:00:00Z", recordsTotal: 10, recordsCommitted: 3, agents: [{ id: "a1" }] };
      await bus.putStatus(run, status);
      expect(await (await open()).getStatus(run)).toEqual({ runId: run, state: "running", updatedAt: "2026-01-01T00:00:00Z", recordsTotal: 10, recordsCommitted: 3, agents: [{ id: "a1" }] });
      await bus.putStatus(run, { runId: run, state: "complete", updatedAt: "2026-01-01T00:01:00Z" });
      expect(await bus.getStatus(run)).toEqual({ runId: run, state: "complete", updatedAt: "2026-01-01T00:01:00Z" });
      const listed = await (await open()).listStatuses();
      expect(listed.filter((s) => s.runId === run)).toEqual([{ runId: run, state: "complete", updatedAt: "2026-01-01T00:01:00Z" }]);
    });

    it("rejects a run id or track that cannot be a subject token", async () => {
      const bus = await open();
      await expect(bus.publishResult("a.b", "vihsd", line("vihsd", 0))).rejects.toBeInstanceOf(UsageError);
      await expect(bus.publishResult(newRunId(), "vi>hsd", line("vihsd", 0))).rejects.toThrow(/subject token/);
      await expect(bus.consumeResults(newRunId(), { durable: "a b", onResult: () => undefined })).rejects.toThrow(/durable/);
    });

    it("reports closed: state listeners hear it and publishing fails without throwing", async () => {
      const bus = await h.openIsolated();
      const states: BusState[] = [];
      bus.onStateChange((s) => states.push(s));
      await bus.close();
      await waitFor("closed state", () => bus.state === "closed");
      expect(states).toContain("closed");
      const out = await bus.publishResult(newRunId(), "vihsd", line("vihsd", 0));
      expect(out.ok).toBe(false);
      if (!out.ok) expect(out.error).toBeInstanceOf(Error);
    });
  });
}
