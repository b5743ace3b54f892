// Fuzz of a live coordinator over raw gRPC (issue 14): streams that send random bytes, random
// protobuf messages and mutated valid ones, while a real test agent works through the run. The
// coordinator must stay up and serving, and every record must be committed exactly once.
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { loadPackageDefinition } from "../../proto/loader.js";
import type { ProtoGrpcType } from "../../proto/generated/orchestrator.js";
import type { AgentMessage } from "../../proto/generated/udm/v1/AgentMessage.js";
import { resultLines, useHarness } from "./helpers/harness.js";
import { tinyTracks, writeTinySuite } from "./helpers/tiny-suite.js";

const { tmp, start, agent } = useHarness();
const attach = (grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType).udm.v1.Coordinator.service.Attach;

const runIds = tinyTracks().flatMap((t) => t.records.map((r) => r._evaluation.run_id));
const str = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...runIds), fc.constantFrom("tiny-sa/0", "tiny-rr/1", "tiny-guard/0", "", "label", "harmful"));
const num = fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.double({ noNaN: false }));
const message: fc.Arbitrary<AgentMessage> = fc.oneof(
  fc.record({ hello: fc.record({ agent_id: str, model: str, methods: fc.array(str, { maxLength: 3 }), max_model_len: fc.nat(), capacity: fc.nat({ max: 1000 }), version: str, ready: fc.boolean(), engine_url: str }, { requiredKeys: [] }) }),
  fc.record({ credit: fc.record({ units: fc.nat({ max: 100 }) }) }),
  fc.record({
    result: fc.record(
      {
        unit_id: str,
        run_id: str,
        probs: fc.dictionary(str, fc.record({ p: fc.dictionary(str, num, { maxKeys: 4 }) }), { maxKeys: 3 }),
        skipped: fc.array(str, { maxLength: 2 }),
        errors: fc.dictionary(str, str, { maxKeys: 2 }),
        latency_ms: fc.nat(),
        payload_sha256: str,
        retries: fc.nat({ max: 10 }),
        approximate: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ unit_done: fc.record({ unit_id: str }, { requiredKeys: [] }) }),
  fc.record({ heartbeat: fc.record({ held_unit_ids: fc.array(str, { maxLength: 3 }), ready: fc.boolean() }, { requiredKeys: [] }) }),
) as fc.Arbitrary<AgentMessage>;

/** One frame a hostile client sends: random bytes, a random message, or a valid message with bytes flipped. */
const frame = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  message.map((m) => attach.requestSerialize(m)),
  fc.tuple(message, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 })).map(([m, flips]) => {
    const b = Buffer.from(attach.requestSerialize(m));
    for (const [at, x] of flips) if (b.length > 0) b[at % b.length]! ^= x;
    return b;
  }),
);

/** Results the coordinator has rejected so far, by any reason. */
async function rejectedSoFar(h: { status(): Promise<{ rejectedByReason: Partial<Record<string, number>> }> }): Promise<number> {
  const st = await h.status();
  return Object.values(st.rejectedByReason).reduce((n: number, k) => n + (k ?? 0), 0);
}

/**
 * One hostile stream. A stream that says Hello first waits for the coordinator's first answer (its
 * Welcome) before the fuzz frames, and then until the coordinator has rejected something more or
 * a second has passed: on a loaded machine a fixed pause let the cancel overtake the frames, and
 * the fuzz then never reached the validator. A stream of anything has no state to wait on: 50 ms.
 */
async function hostileStream(address: string, frames: Buffer[], hello: boolean, rejected: () => Promise<number>): Promise<void> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest<Buffer, Buffer>("/udm.v1.Coordinator/Attach", (b) => b, (b) => b);
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
  call.on("data", () => answered());
  const ended = new Promise<void>((resolve) => {
    call.on("status", () => resolve());
    call.on("error", () => resolve());
  });
  const until = (p: Promise<unknown>, ms: number) => Promise.race([p, ended, new Promise((r) => setTimeout(r, ms))]);
  const before = await rejected();
  if (hello) {
    for (const f of frames.slice(0, 2)) call.write(f);
    await until(firstAnswer, 5_000);
  }
  for (const f of hello ? frames.slice(2) : frames) call.write(f);
  if (hello) {
    const deadline = Date.now() + 1_000;
    while (Date.now() < deadline && (await rejected()) === before) await until(new Promise((r) => setTimeout(r, 20)), 20);
  } else await until(new Promise(() => undefined), 50);
  call.cancel();
  await ended;
  client.close();
}

describe("fuzz: a live coordinator fed random and mutated protobuf", () => {
  it("stays up and commits every record exactly once", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir, leaseMs: 400, heartbeatMs: 100 });
    // Half the streams first say a valid Hello and grant credit, so what follows reaches the
    // scheduler and the result validator with units held; the others start with anything.
    const streams = fc.sample(fc.array(frame, { minLength: 1, maxLength: 40 }), { numRuns: 60, seed: 14 }).map((frames, i) =>
      i % 2 === 0
        ? [
            attach.requestSerialize({ hello: { agent_id: `rogue-${i}`, model: "sim/test", methods: ["systemone"], capacity: 4, ready: true } }),
            attach.requestSerialize({ credit: { units: 2 } }),
            ...frames,
          ]
        : frames,
    );
    // The honest agent starts once the fuzzing is under way, and works alongside it.
    let underWay!: () => void;
    const firstBatch = new Promise<void>((resolve) => (underWay = resolve));
    const fuzzing = (async () => {
      for (let i = 0; i < streams.length; i += 6) {
        await Promise.all(streams.slice(i, i + 6).map((s, j) => hostileStream(h.address, s, (i + j) % 2 === 0, () => rejectedSoFar(h))));
        underWay();
      }
    })();
    await firstBatch;
    agent(h.address, { agentId: "honest", credit: 2, heartbeatMs: 100 });
    await fuzzing;
    const outcome = await h.done;
    expect(outcome.state).toBe("complete");
    // The fuzz reached the validator, not only the stream handshake.
    expect(outcome.counters.rejected).toBeGreaterThan(0);
    expect((await h.status()).recordsCommitted).toBe(runIds.length);
    const committed = tinyTracks().flatMap((t) => resultLines(outDir, t.family, t.track).map((l) => l.run_id as string));
    expect(committed.sort()).toEqual([...runIds].sort());
  }, 120_000);
});
