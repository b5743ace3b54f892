// The agent's attach loop against a real gRPC coordinator on 127.0.0.1 (a recording fake) and a
// real EngineMethod object.
import { afterEach, describe, expect, it } from "vitest";
import { startAgent, type AgentHandle, type AttachOptions } from "../../agent/attach-loop.js";
import { AgentAuthError, AgentProtocolError } from "../../agent/agent-errors.js";
import { createLogger } from "../../common/log.js";
import { FakeCoordinator, FakeEngineMethod, expectedProbs, makeUnit, waitFor } from "./attach-fakes.js";

const quiet = createLogger("test", (process.env.ATTACH_LOG as "debug" | undefined) ?? "silent");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function coordinator(opts: ConstructorParameters<typeof FakeCoordinator>[0] = {}): Promise<FakeCoordinator> {
  const c = new FakeCoordinator(opts);
  await c.start();
  cleanups.push(() => c.kill());
  return c;
}

function agent(c: FakeCoordinator, method: FakeEngineMethod, extra: Partial<AttachOptions> = {}): AgentHandle {
  const a = startAgent({
    coordinator: c.address,
    method,
    agentId: "agent-test",
    reconnect: { initialMs: 20, maxMs: 200 },
    probeMs: { ready: 50, down: 20 },
    logger: quiet,
    ...extra,
  });
  cleanups.push(() => a.stop());
  return a;
}

describe("attach loop", () => {
  it("opens with Hello then Credit, answers every record in order per unit, returns credit after each UnitDone", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 2 });
    const a = agent(c, method, { token: "s3cret", engineUrl: "http://127.0.0.1:8000" });
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit > 0);
    const conn = c.last();
    expect(conn.metadata.get("authorization")).toEqual(["Bearer s3cret"]);
    expect(conn.messages[0]!.kind).toBe("hello");
    expect(conn.messages[0]!.hello).toMatchObject({
      agent_id: "agent-test",
      model: "sim/fake-1",
      methods: ["systemone"],
      max_model_len: 4096,
      capacity: 2,
      ready: true,
      engine_url: "http://127.0.0.1:8000",
    });
    expect(conn.messages[1]!.kind).toBe("credit");
    expect(conn.messages[1]!.credit!.units).toBe(2);

    const units = Array.from({ length: 7 }, (_, i) => makeUnit(`u${i}`, 3 + (i % 3)));
    c.enqueue(...units);
    await waitFor("all units done", () => c.all("unit_done").length === units.length);
    await waitFor("credit returned", () => c.all("credit").reduce((s, x) => s + x.units, 0) === 2 + units.length);

    // A result for every record, with the method's distribution, usage and the payload hash echoed.
    const results = c.all("result");
    const records = units.flatMap((u) => u.records!.map((r) => ({ unit: u.unit_id!, ...r })));
    expect(results.map((r) => r.run_id).sort()).toEqual(records.map((r) => r.run_id!).sort());
    for (const r of records) {
      const res = results.find((x) => x.run_id === r.run_id)!;
      expect(res.unit_id).toBe(r.unit);
      expect(res.payload_sha256).toBe(r.payload_sha256);
      const want = expectedProbs({ state: JSON.parse(r.state_json!), questions: JSON.parse(r.questions_json!) });
      expect(Object.fromEntries(Object.entries(res.probs).map(([k, d]) => [k, d.p]))).toEqual(want);
      expect(res.usage).toEqual({ prompt_tokens: 100, cached_tokens: 40, completion_tokens: 2, requests: 1, _cached_tokens: "cached_tokens" });
      expect(res.answered_by).toEqual({ q_choice: "systemone", q_noul: "systemone" });
    }
    // Records of one unit start in the unit's order (shared prefix first).
    for (const u of units) {
      const order = method.started.filter((id) => id.startsWith(`${u.unit_id}-`));
      expect(order).toEqual(u.records!.map((r) => r.run_id));
    }
    // Every unit's results precede its UnitDone; each credit after the first is preceded by a UnitDone.
    const msgs = conn.messages;
    for (const u of units) {
      const doneAt = msgs.findIndex((m) => m.kind === "unit_done" && m.unit_done!.unit_id === u.unit_id);
      const lastResult = msgs.findLastIndex((m) => m.kind === "result" && m.result!.unit_id === u.unit_id);
      expect(lastResult).toBeLessThan(doneAt);
    }
    let credit = 0;
    let dones = 0;
    for (const m of msgs) {
      if (m.kind === "unit_done") dones++;
      if (m.kind === "credit") {
        credit += m.credit!.units;
        expect(credit).toBeLessThanOrEqual(2 + dones);
      }
    }
    expect(a.state()).toBe("running");
    expect(a.stats()).toMatchObject({ unitsReceived: 7, unitsDone: 7, resultsSent: records.length, runId: "run-1", ready: true });
  });

  it("never holds more units than credited and bounds records in flight", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 3 });
    method.holding = true;
    agent(c, method, { concurrency: 4 });
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 3);
    c.enqueue(...Array.from({ length: 10 }, (_, i) => makeUnit(`h${i}`, 4)));
    // Held: only the credited three arrive; the rest wait in the coordinator's queue.
    await waitFor("three units started", () => new Set(method.started.map((id) => id.split("-")[0])).size === 3);
    expect(c.queue.length).toBe(7);
    expect(c.last().held.size).toBe(3);
    method.release();
    const conn = c.last();
    await waitFor("all done", () => c.all("unit_done").length === 10);
    expect(method.maxInFlight).toBeLessThanOrEqual(4);
    expect(c.all("result").length).toBe(40);
    // Units sent to the agent never exceed its credit: replay the log against the credit.
    const order: string[] = [];
    for (const m of conn.messages) {
      if (m.kind === "credit") order.push(`credit:${m.credit!.units}`);
      if (m.kind === "unit_done") order.push("done");
    }
    let credit = 0;
    let done = 0;
    for (const e of order) {
      if (e === "done") done++;
      else credit += Number(e.split(":")[1]);
      // Credit outstanding beyond held units can never exceed capacity.
      expect(credit - done).toBeLessThanOrEqual(3);
    }
  });

  it("sends heartbeats with inflight counts and readiness", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 2 });
    method.holding = true;
    agent(c, method, { heartbeatMs: 30, engineLoad: async () => ({ waiting: 3, running: 5 }) });
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 2);
    c.enqueue(makeUnit("hb", 2));
    await waitFor("heartbeat with the unit in hand", () =>
      c.all("heartbeat").find((h) => h.inflight_units === 1 && h.inflight_requests === 1 && h.ready),
    );
    const hb = c.all("heartbeat").at(-1)!;
    expect(hb.engine_waiting).toBe(3);
    expect(hb.engine_running).toBe(5);
    method.release();
    await waitFor("heartbeat after the unit", () => c.all("unit_done").length === 1 && c.all("heartbeat").at(-1)!.inflight_units === 0);
  });

  it("uses the Welcome's heartbeat interval when none is configured", async () => {
    // Welcome says 100 ms; the agent's own default is 5 s. Twelve heartbeats within 15 s can only
    // come at the Welcome's interval (at 5 s they would take 55 s). No gap is timed on its own: on
    // a loaded machine the poll below sees several beats at once. setInterval never fires early or
    // in bursts, so the 9 gaps from the 3rd beat (the first may be a readiness beat sent at once)
    // span at least 900 ms as sent; seen here, the span loses at most the 3rd beat's delay in being
    // noticed. 270 ms (30 ms a gap) fails an agent that beats far faster than it was told.
    const c = await coordinator({ heartbeatMs: 100 });
    agent(c, new FakeEngineMethod());
    const arrivals: number[] = [];
    await waitFor(
      "twelve heartbeats at the Welcome's interval",
      () => {
        const n = c.all("heartbeat").length;
        while (arrivals.length < n) arrivals.push(Date.now());
        return n >= 12;
      },
      15_000,
    );
    expect(arrivals[11]! - arrivals[2]!).toBeGreaterThanOrEqual(270);
  });

  it("Cancel aborts the unit's remaining records, sends no UnitDone for it, and returns its credit", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 2 });
    method.holding = true;
    const a = agent(c, method);
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 2);
    c.enqueue(makeUnit("cx", 5));
    await waitFor("first record started", () => method.started.includes("cx-r0"));
    c.send(c.last(), { cancel: { unit_id: "cx" } });
    await waitFor("aborted", () => method.aborted.includes("cx-r0"));
    await waitFor("credit returned", () => c.all("credit").reduce((s, x) => s + x.units, 0) === 3);
    expect(c.all("unit_done")).toEqual([]);
    expect(c.all("result")).toEqual([]);
    expect(method.started).toEqual(["cx-r0"]);
    expect(a.stats().unitsCancelled).toBe(1);
    // The agent goes on: a later unit is answered.
    method.release();
    c.enqueue(makeUnit("after", 1));
    await waitFor("later unit done", () => c.all("unit_done").some((d) => d.unit_id === "after"));
  });

  it("Drain from the coordinator: finishes and sends the work in hand, closes the stream, done resolves", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 2 });
    method.holding = true;
    const a = agent(c, method);
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 2);
    c.enqueue(makeUnit("d1", 3), makeUnit("d2", 2));
    await waitFor("both units started", () => method.started.includes("d1-r0") && method.started.includes("d2-r0"));
    c.send(c.last(), { drain: { reason: "run complete" } });
    await waitFor("draining", () => a.state() === "draining");
    method.release();
    const outcome = await a.done;
    expect(outcome).toEqual({ kind: "drained", by: "coordinator", reason: "run complete" });
    expect(a.state()).toBe("stopped");
    const conn = c.last();
    expect(conn.ended).toBe(true);
    expect(c.all("result").length).toBe(5);
    expect(c.all("unit_done").map((d) => d.unit_id).sort()).toEqual(["d1", "d2"]);
    // No credit after the drain: only the initial grant.
    expect(c.all("credit").reduce((s, x) => s + x.units, 0)).toBe(2);
    expect(c.connections.length).toBe(1);
  });

  it("drain() (SIGTERM) finishes the units in hand before closing", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 1 });
    method.holding = true;
    const a = agent(c, method);
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 1);
    c.enqueue(makeUnit("t1", 2), makeUnit("t2", 2));
    await waitFor("first unit started", () => method.started.includes("t1-r0"));
    const drained = a.drain();
    expect(a.state()).toBe("draining");
    method.release();
    await drained;
    expect(await a.done).toEqual({ kind: "drained", by: "agent", reason: "agent drain" });
    expect(c.all("unit_done").map((d) => d.unit_id)).toEqual(["t1"]);
    expect(c.all("result").map((r) => r.run_id).sort()).toEqual(["t1-r0", "t1-r1"]);
    // The second unit was never credited, so it stayed with the coordinator.
    expect(c.queue.map((u) => u.unit_id)).toEqual(["t2"]);
  });

  it("reattaches after the coordinator restarts on the same port; in-hand units are dropped", async () => {
    const first = await coordinator();
    const port = first.port;
    const method = new FakeEngineMethod({ capacity: 2 });
    method.holding = true;
    const a = agent(first, method);
    await waitFor("attach", () => first.connections.length === 1 && first.last().credit === 2);
    first.enqueue(makeUnit("lost", 2));
    await waitFor("unit started", () => method.started.includes("lost-r0"));
    first.kill();
    await waitFor("unit aborted", () => method.aborted.includes("lost-r0"));
    await waitFor("reconnecting", () => a.state() === "connecting");

    const second = new FakeCoordinator();
    await second.start(port);
    cleanups.push(() => second.kill());
    method.release();
    await waitFor("attached again", () => second.connections.length === 1 && second.last().credit === 2 && a.state() === "running");
    expect(second.last().messages[0]!.hello!.agent_id).toBe("agent-test");
    second.enqueue(makeUnit("lost", 2));
    await waitFor("requeued unit done", () => second.all("unit_done").length === 1);
    expect(second.all("result").length).toBe(2);
    expect(first.all("unit_done")).toEqual([]);
    expect(a.stats()).toMatchObject({ disconnects: 1, unitsDropped: 1, attaches: 2 });
  });

  it("keeps retrying while no coordinator listens", async () => {
    const c = await coordinator();
    const port = c.port;
    c.kill();
    const a = agent(c, new FakeEngineMethod());
    await waitFor("several attempts", () => a.stats().attaches >= 3);
    expect(a.state()).toBe("connecting");
    const back = new FakeCoordinator();
    await back.start(port);
    cleanups.push(() => back.kill());
    await waitFor("attached", () => a.state() === "running" && back.connections.length === 1);
  });

  it("stops with an auth error on a wrong token, without a retry loop", async () => {
    const c = await coordinator({ token: "right" });
    const a = agent(c, new FakeEngineMethod(), { token: "wrong" });
    const outcome = await a.done;
    expect(outcome.kind).toBe("failed");
    if (outcome.kind !== "failed") return;
    expect(outcome.error).toBeInstanceOf(AgentAuthError);
    expect(outcome.error.message).toMatch(/refused the agent's credentials/);
    expect(a.state()).toBe("stopped");
    expect(c.refused.length).toBe(1);
    expect(c.connections.length).toBe(0);
  });

  it("stops when the run needs another engine method", async () => {
    const c = await coordinator({ method: "label-read" });
    const a = agent(c, new FakeEngineMethod());
    const outcome = await a.done;
    expect(outcome.kind === "failed" && outcome.error).toBeInstanceOf(AgentProtocolError);
    expect(outcome.kind === "failed" && outcome.error.message).toMatch(/uses engine method label-read; this agent runs systemone/);
    expect(c.connections.length).toBe(1);
  });

  it("hands the run's parameters to onRunParams or method.applyRunParams; refuses a seeded run when it cannot apply seeds", async () => {
    const c = await coordinator({ seeds: [3, 1, 4] });
    const seen: unknown[] = [];
    const a = agent(c, new FakeEngineMethod(), { onRunParams: (p) => seen.push(p) });
    await waitFor("welcomed", () => seen.length === 1);
    expect(seen[0]).toEqual({ runId: "run-1", method: "systemone", seeds: [3, 1, 4], temperature: 0, model: "", leaseMs: 60_000, heartbeatMs: 0 });
    expect(a.state()).toBe("running");

    const seeded = Object.assign(new FakeEngineMethod(), {
      applied: [] as unknown[],
      applyRunParams(p: unknown) {
        this.applied.push(p);
      },
    });
    agent(c, seeded, { agentId: "seeded" });
    await waitFor("applied through the method", () => seeded.applied.length === 1);
    expect(seeded.applied[0]).toEqual({ seeds: [3, 1, 4] });

    const b = agent(c, new FakeEngineMethod(), { agentId: "no-seeds" });
    const outcome = await b.done;
    expect(outcome.kind === "failed" && outcome.error.message).toMatch(/averages label-permutation seeds 3,1,4; this agent's method cannot apply seeds/);
  });

  it("engine down: Hello ready=false and no credit; attaches again with ready=true when it comes back", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 2 });
    method.down = true;
    const a = agent(c, method, { heartbeatMs: 20 });
    await waitFor("hello", () => c.connections.length === 1 && c.last().messages.length > 0);
    const down = c.connections[0]!;
    expect(down.messages[0]!.hello).toMatchObject({ ready: false, model: "" });
    await waitFor("a heartbeat while down", () => c.all("heartbeat", down).length > 0);
    expect(c.all("heartbeat", down).every((h) => !h.ready)).toBe(true);
    expect(c.all("credit", down)).toEqual([]);
    expect(a.stats().ready).toBe(false);

    method.down = false;
    await waitFor("second attach", () => c.connections.length === 2 && c.last().credit === 2);
    expect(c.last().messages[0]!.hello).toMatchObject({ ready: true, model: "sim/fake-1", capacity: 2 });

    // Down again mid-run: reported by heartbeat on the same stream, then back.
    method.down = true;
    await waitFor("heartbeat ready=false", () => c.all("heartbeat", c.last()).some((h) => !h.ready));
    method.down = false;
    await waitFor("heartbeat ready=true again", () => {
      const hbs = c.all("heartbeat", c.last());
      const i = hbs.findIndex((h) => !h.ready);
      return hbs.slice(i).some((h) => h.ready);
    });
    expect(c.connections.length).toBe(2);
    c.enqueue(makeUnit("up", 1));
    await waitFor("answered", () => c.all("unit_done").length === 1);
  });

  it("engine lost with units in hand: no error results are sent, the units go back, the agent attaches again not ready", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod({ capacity: 2 });
    method.holding = true;
    const a = agent(c, method, { probeMs: { ready: 60_000, down: 20 } });
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 2);
    const units = [makeUnit("e1", 2), makeUnit("e2", 2)];
    c.enqueue(...units);
    await waitFor("both units started", () => method.started.includes("e1-r0") && method.started.includes("e2-r0"));
    method.down = true;
    method.release();
    await waitFor("attached again, not ready", () => c.connections.length === 2 && c.last().messages[0]?.hello?.ready === false);
    const first = c.connections[0]!;
    expect(first.ended).toBe(true);
    expect(c.all("result", first)).toEqual([]);
    expect(c.all("unit_done", first)).toEqual([]);
    expect(c.all("credit", c.connections[1]!)).toEqual([]);
    expect(a.stats().unitsDropped).toBe(2);

    method.down = false;
    await waitFor("attached ready with credit", () => c.connections.length === 3 && c.last().credit === 2);
    c.enqueue(...units); // the coordinator requeued them
    await waitFor("done", () => c.all("unit_done", c.last()).length === 2);
    expect(c.all("result", c.last()).every((r) => Object.keys(r.errors).length === 0)).toBe(true);
  });

  it("a record the method throws on, answers malformed, or whose payload is unreadable, is answered with errors per question", async () => {
    const c = await coordinator();
    const method = new FakeEngineMethod();
    agent(c, method);
    await waitFor("attach", () => c.connections.length === 1 && c.last().credit === 2);
    method.failOn.add("bad-r1");
    method.malformedOn.add("bad-r3");
    const unit = makeUnit("bad", 4);
    unit.records![2]!.state_json = "{not json";
    c.enqueue(unit);
    await waitFor("unit done", () => c.all("unit_done").length === 1);
    const byId = new Map(c.all("result").map((r) => [r.run_id, r]));
    expect(Object.keys(byId.get("bad-r0")!.probs).sort()).toEqual(["q_choice", "q_noul"]);
    expect(byId.get("bad-r1")!.probs).toEqual({});
    expect(byId.get("bad-r1")!.errors.q_choice).toMatch(/engine answered 500 for bad-r1/);
    expect(Object.keys(byId.get("bad-r1")!.errors).sort()).toEqual(["q_choice", "q_noul"]);
    expect(byId.get("bad-r2")!.errors.q_noul).toMatch(/unit bad record bad-r2 field state_json: not JSON/);
    expect(byId.get("bad-r3")!.errors.q_choice).toMatch(/systemone returned a malformed answer/);
  });
});
