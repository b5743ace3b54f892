// The coordinator end to end with real gRPC on 127.0.0.1:0, real files, and test agents.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { writeTinySuite, tinyTracks } from "./helpers/tiny-suite.js";
import { resultLines, useHarness } from "./helpers/harness.js";
import { eventually, uniformAnswer } from "./helpers/test-agent.js";
import { loadHealthPackageDefinition } from "../../proto/health-loader.js";

const { tmp, start, agent } = useHarness();

describe("coordinator run", () => {
  it("commits every record exactly once with two agents, sends no gold, and completes", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const committed: string[] = [];
    const completeTracks: string[] = [];
    const h = await start({
      suiteDir,
      outDir,
      onCommitted: (line) => committed.push(line.recordKey),
      onTrackComplete: (t) => completeTracks.push(t),
    });
    expect(h.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const a = agent(h.address, { agentId: "a", credit: 2 });
    const b = agent(h.address, { agentId: "b", credit: 1 });
    const outcome = await h.done;
    expect(outcome.state).toBe("complete");
    const tracks = tinyTracks();
    const total = tracks.reduce((n, t) => n + t.records.length, 0);
    expect(outcome.recordsCommitted).toBe(total);
    expect(new Set(committed).size).toBe(total);
    expect(committed.length).toBe(total);
    expect(completeTracks.sort()).toEqual(["tiny-guard", "tiny-rr", "tiny-sa"]);
    for (const t of tracks) {
      const lines = resultLines(outDir, t.family, t.track);
      expect(lines.map((l) => l.run_id).sort()).toEqual(t.records.map((r) => r._evaluation.run_id).sort());
      for (const l of lines) {
        expect(l).toMatchObject({ track: t.track, family: t.family, skipped: [], format: 1 });
        expect(typeof l.agent).toBe("string");
      }
    }
    // Gold never leaves the coordinator: nothing any agent received mentions expected or scoring.
    for (const msg of [...a.received, ...b.received]) {
      const text = JSON.stringify(msg);
      expect(text).not.toMatch(/"expected"|"scoring"|qrels/);
      for (const p of msg.unit?.records ?? []) {
        expect(Object.keys(JSON.parse(p.state_json) as object).length).toBeGreaterThan(0);
        expect(JSON.parse(p.questions_json)).toBeTypeOf("object");
      }
    }
    expect(a.received[0]?.kind).toBe("welcome");
    expect(a.received[0]?.welcome?.params?.method).toBe("systemone");
    // Drain follows completion.
    await a.waitFor(() => a.received.some((m) => m.kind === "drain"), 5000, "drain");
    const status = await h.status();
    expect(status.state).toBe("complete");
    expect(status.recordsCommitted).toBe(total);
    expect(status.tracks.every((t) => t.complete)).toBe(true);
    const runJson = JSON.parse(readFileSync(join(outDir, "run.json"), "utf8")) as Record<string, unknown>;
    expect(runJson.run_id).toBe(h.runId);
    expect(runJson.sessions).toBe(1);
  });

  it("reports the run totals (tokens, latency, GPU-seconds, ETA) in the handle's status and over Status", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out") });
    const a = agent(h.address, { agentId: "a", credit: 2 });
    expect((await h.done).state).toBe("complete");
    const total = tinyTracks().reduce((n, t) => n + t.records.length, 0);
    // uniformAnswer: latency 3 ms, 10 prompt tokens (4 cached), 1 completion token per record.
    const t = (await h.status()).totals;
    expect(t).toMatchObject({ promptTokens: 10 * total, completionTokens: total, cachedTokens: 4 * total, etaSeconds: 0 });
    expect(t.latency).toEqual({ count: total, meanMs: 3, p50Ms: 3, p95Ms: 3 });
    expect(t.gpuSeconds).toBeGreaterThan(0);
    expect(t.recordsPerSecond).toBeGreaterThan(0);
    const wire = (await a.status()).totals!;
    expect(wire).toMatchObject({
      prompt_tokens: 10 * total,
      completion_tokens: total,
      cached_tokens: 4 * total,
      cached_tokens_known: true,
      latency_count: total,
      latency_mean_ms: 3,
      latency_p50_ms: 3,
      latency_p95_ms: 3,
      eta_seconds: 0,
      eta_known: true,
    });
    expect(wire.gpu_seconds).toBeGreaterThanOrEqual(t.gpuSeconds);
  });

  it("refuses a wrong or missing bearer token with UNAUTHENTICATED", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), token: "s3cret" });
    const bad = agent(h.address, { token: "nope" });
    await bad.closed;
    expect(bad.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(bad.units).toHaveLength(0);
    const none = agent(h.address, {});
    await none.closed;
    expect(none.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    await expect(none.status(undefined)).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const good = agent(h.address, { token: "s3cret", credit: 3 });
    expect((await h.done).state).toBe("complete");
    expect(good.units.length).toBeGreaterThan(0);
    expect((await good.status()).state).toBe("complete");
  });

  it("refuses another process's Hello naming a live agent_id (ALREADY_EXISTS); the same process takes its id over", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out") });
    const first = agent(h.address, { agentId: "gpu-0", instance: "process-a", credit: 1, auto: false });
    await first.waitFor(() => first.units.length === 1, 20_000, "a unit for the first stream");
    const rogue = agent(h.address, { agentId: "gpu-0", instance: "process-b", credit: 5 });
    await rogue.closed;
    expect(rogue.error?.code).toBe(grpc.status.ALREADY_EXISTS);
    expect(rogue.error?.details).toMatch(/agent_id gpu-0 is attached from another agent process/);
    expect(rogue.units).toHaveLength(0);
    expect(first.ended).toBe(false);
    expect((await h.status()).agents.map((a) => a.agentId)).toEqual(["gpu-0"]);
    // The same process reconnecting (its old stream not yet noticed as dead) takes the id over.
    const again = agent(h.address, { agentId: "gpu-0", instance: "process-a", credit: 3 });
    await first.closed;
    expect(first.error?.code).toBe(grpc.status.ABORTED);
    expect((await h.done).state).toBe("complete");
    expect(again.units.length).toBeGreaterThan(0);
  });

  it("never sends more units than the agent granted", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), planLimits: { maxRecords: 1 } });
    const a = agent(h.address, { credit: 2, auto: false });
    await a.waitFor(() => a.units.length === 2, 10_000, "two units");
    // Answer one unit without granting more; once its results are committed the coordinator has
    // read everything sent before them on this stream, and still owes no third unit.
    const first = a.units[0]!;
    a.answerUnit(first);
    const n = first.records.length;
    await eventually(async () => (await h.status()).recordsCommitted === n, 10_000, "commit");
    expect(a.units).toHaveLength(2);
    expect((await h.status()).agents[0]).toMatchObject({ credit: 0, inflightUnits: 1 });
    a.grant(1);
    await a.waitFor(() => a.units.length === 3, 10_000, "third unit");
    expect(a.maxHeld).toBeLessThanOrEqual(a.granted);
  });

  it("gives nothing to an agent that is not ready", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out") });
    const idle = agent(h.address, { agentId: "idle", credit: 5, ready: false });
    await eventually(async () => (await h.status()).agents.length === 1, 10_000, "idle attached");
    const worker = agent(h.address, { agentId: "worker", credit: 1 });
    expect((await h.done).state).toBe("complete");
    expect(idle.units).toHaveLength(0);
    expect(worker.units.length).toBeGreaterThan(0);
  });

  it("requeues only the unanswered records of a unit whose lease expired", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir, tracks: ["tiny-rr"], leaseMs: 300, planLimits: { maxRecords: 3 } });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const unit = a.units[0]!;
    expect(unit.records).toHaveLength(3);
    expect(new Set(unit.group_ids).size).toBe(1);
    a.result(unit.unit_id, unit.records[0]!.run_id, uniformAnswer(unit.records[0]!));
    // No heartbeat: the lease runs out and the holder is told to drop the unit.
    await a.waitFor(() => a.cancels.includes(unit.unit_id), 10_000, "cancel");
    const b = agent(h.address, { agentId: "b", credit: 1 });
    expect((await h.done).state).toBe("complete");
    const again = b.units.find((u) => u.unit_id === unit.unit_id)!;
    expect(again.records.map((r) => r.run_id)).toEqual(unit.records.slice(1).map((r) => r.run_id));
    const lines = resultLines(outDir, "passage_reranking", "tiny-rr");
    expect(lines).toHaveLength(9);
    expect(new Set(lines.map((l) => l.run_id)).size).toBe(9);
    expect(lines.find((l) => l.run_id === unit.records[0]!.run_id)?.agent).toBe("a");
    expect((await h.status()).leasesExpired).toBeGreaterThanOrEqual(1);
  });

  it("hands a backup copy of the in-flight unit at the tail and cancels the slower holder", async () => {
    const outDir = tmp("out");
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir, tracks: ["tiny-sa"], leaseMs: 5000 });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false, heartbeatMs: 100 });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const unit = a.units[0]!;
    expect(unit.records).toHaveLength(12);
    for (const p of unit.records.slice(0, 5)) a.result(unit.unit_id, p.run_id, uniformAnswer(p));
    await eventually(async () => (await h.status()).recordsCommitted === 5, 10_000, "five committed");
    const b = agent(h.address, { agentId: "b", credit: 1 });
    expect((await h.done).state).toBe("complete");
    expect(b.units[0]).toMatchObject({ unit_id: unit.unit_id, backup: true });
    expect(b.units[0]!.records.map((r) => r.run_id)).toEqual(unit.records.slice(5).map((r) => r.run_id));
    await a.waitFor(() => a.cancels.includes(unit.unit_id), 10_000, "cancel to the slower holder");
    const lines = resultLines(outDir, "sentiment", "tiny-sa");
    expect(lines).toHaveLength(12);
    expect(lines.filter((l) => l.agent === "a")).toHaveLength(5);
    expect(lines.filter((l) => l.agent === "b")).toHaveLength(7);
    expect((await h.status()).backupUnits).toBe(1);
  });

  it("rejects malformed results, counts them by reason and agent, and redoes the record", async () => {
    const outDir = tmp("out");
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir, tracks: ["tiny-guard"] });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const unit = a.units[0]!;
    const [p0, ...rest] = unit.records;
    const ok = uniformAnswer(p0!);
    const probs = ok.probs as Record<string, { p: Record<string, number> }>;
    a.result(unit.unit_id, p0!.run_id, { ...ok, probs: { ...probs, harmful: { p: { yes: 0.5, no: 0.5 } } } });
    a.result(unit.unit_id, p0!.run_id, { ...ok, probs: { ...probs, harmful: { p: { true: 0.5, false: 0.6 } } } });
    a.result(unit.unit_id, p0!.run_id, { ...ok, probs: { ...probs, harmful: { p: { true: Number.NaN, false: 0.5 } } } });
    a.result(unit.unit_id, p0!.run_id, { ...ok, probs: { harmful: probs.harmful! } });
    a.result(unit.unit_id, "tiny-guard:nope", ok);
    a.result("tiny-guard/99", p0!.run_id, ok);
    for (const p of rest) a.result(unit.unit_id, p.run_id, uniformAnswer(p));
    a.unitDone(unit.unit_id);
    a.grant(1);
    await a.waitFor(() => a.units.length === 2, 10_000, "the rejected record again");
    expect(a.units[1]!.records.map((r) => r.run_id)).toEqual([p0!.run_id]);
    a.answerUnit(a.units[1]!);
    expect((await h.done).state).toBe("complete");
    const st = await h.status();
    expect(st.resultsRejected).toBe(6);
    expect(st.rejectedByReason).toEqual({ bad_distribution: 3, unanswered_question: 1, unknown_run_id: 1, no_lease: 1 });
    expect(st.agents.find((x) => x.agentId === "a")?.rejected).toBe(6);
    const lines = resultLines(outDir, "safety_guardrail", "tiny-guard");
    expect(lines).toHaveLength(6);
    const l0 = lines.find((l) => l.run_id === p0!.run_id)!;
    expect(l0.probs).toEqual({ harmful: { true: 0.5, false: 0.5 }, category: { cybercrime: 1 / 3, none: 1 / 3, "skill:x": 1 / 3 } });
  });

  it("serves grpc.health.v1 (Check, Watch) and stops serving on drain", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out") });
    const pkg = grpc.loadPackageDefinition(loadHealthPackageDefinition()) as unknown as {
      grpc: { health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { Check: Function; Watch: Function } } } };
    };
    const client = new pkg.grpc.health.v1.Health(h.address, grpc.credentials.createInsecure());
    const check = (service: string) =>
      new Promise<{ status: string }>((resolve, reject) =>
        client.Check({ service }, (err: Error | null, res: { status: string }) => (err ? reject(err) : resolve(res))),
      );
    expect(await check("")).toEqual({ status: "SERVING" });
    expect(await check("udm.v1.Coordinator")).toEqual({ status: "SERVING" });
    await expect(check("nope")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    const seen: string[] = [];
    const watch = (client as unknown as { Watch: (req: object) => grpc.ClientReadableStream<{ status: string }> }).Watch({ service: "" });
    watch.on("data", (m) => seen.push(m.status));
    watch.on("error", () => undefined);
    await eventually(() => seen.length === 1, 10_000, "first watch status");
    await h.drain();
    await eventually(() => seen.includes("NOT_SERVING"), 10_000, "NOT_SERVING");
    expect(seen).toEqual(["SERVING", "NOT_SERVING"]);
    client.close();
  });

  it("drain() asks agents to finish, flushes and stops; the run ends cancelled", async () => {
    const outDir = tmp("out");
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir, planLimits: { maxRecords: 2 } });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    a.answerUnit(a.units[0]!);
    await h.drain();
    expect(a.received.some((m) => m.kind === "drain")).toBe(true);
    const outcome = await h.done;
    expect(outcome.state).toBe("cancelled");
    expect(outcome.recordsCommitted).toBe(a.units[0]!.records.length);
    expect(h.state()).toBe("stopped");
    expect((await h.status()).state).toBe("cancelled");
  });

  it("a crashed agent's unit goes back at once with only its unanswered records", async () => {
    const outDir = tmp("out");
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir, tracks: ["tiny-rr"], planLimits: { maxRecords: 3 } });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const unit = a.units[0]!;
    a.result(unit.unit_id, unit.records[0]!.run_id, uniformAnswer(unit.records[0]!));
    await eventually(async () => (await h.status()).recordsCommitted === 1, 10_000, "one committed");
    a.kill();
    await eventually(async () => (await h.status()).agents.length === 0, 10_000, "agent gone");
    const b = agent(h.address, { agentId: "b", credit: 1 });
    expect((await h.done).state).toBe("complete");
    expect(b.units.find((u) => u.unit_id === unit.unit_id)!.records.map((r) => r.run_id)).toEqual(unit.records.slice(1).map((r) => r.run_id));
    expect(resultLines(outDir, "passage_reranking", "tiny-rr")).toHaveLength(9);
    expect((await h.status()).leasesExpired).toBe(0);
  });
});
