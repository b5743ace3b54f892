// Work units go to grpc-js already framed and are sent without its copy (framed-send.ts): the hook
// is installed on this grpc-js, hands an EncodedUnit's own frame to the stream and frames every
// other message as grpc-js does; over a real Attach stream the unit arrives whole and its buffer
// goes back to the pool once written.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { BaseServerInterceptingCall } from "@grpc/grpc-js/build/src/server-interceptors.js";
import { afterAll, describe, expect, it } from "vitest";
import { framedSendInstalled } from "../../coordinator/transport/framed-send.js";
import { CoordinatorService, type AttachStream } from "../../coordinator/transport/grpc-service.js";
import { AgentConnection } from "../../coordinator/transport/agent-connection.js";
import { UnitBufferPool } from "../../coordinator/transport/unit-buffer-pool.js";
import { EncodedUnit, FRAME_PREFIX, encodeWorkUnit } from "../../coordinator/transport/work-unit-encoder.js";
import { drainToWire } from "../../coordinator/transport/wire.js";
import { PayloadSpill } from "../../coordinator/payload-spill.js";
import type { PlannedUnit } from "../../coordinator/planner.js";
import { OptionInterner, compactQuestions, type RecordEntry } from "../../coordinator/suite-index.js";
import { startingStatus } from "../../common/run-status/index.js";
import { TestAgent } from "./helpers/test-agent.js";

const dir = mkdtempSync(join(tmpdir(), "udm-framed-"));
const spill = new PayloadSpill(join(dir, "payloads.bin"));
afterAll(() => {
  spill.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function unitOf(n: number): { unit: PlannedUnit; records: RecordEntry[] } {
  const interner = new OptionInterner();
  const records: RecordEntry[] = Array.from({ length: n }, (_, i) => ({
    ...spill.add(JSON.stringify({ i, text: "trạng thái ".repeat(200) }), JSON.stringify({ q: { type: "single", criteria: { A: "a", B: "b" } } })),
    recordKey: `t:r${i}`,
    id: `r${i}`,
    groupId: "g",
    payloadSha256: "ab".repeat(32),
    ...compactQuestions([{ key: "q", options: ["A", "B"] }], interner),
  }));
  return { unit: { unitId: "t/1", track: "t", family: "f", groupIds: ["g"], records } as unknown as PlannedUnit, records };
}

type Serialize = (this: unknown, value: unknown) => Buffer;
const serializeMessage = (BaseServerInterceptingCall.prototype as unknown as { serializeMessage: Serialize }).serializeMessage;

describe("framed send", () => {
  it("is installed on this grpc-js", () => {
    expect(framedSendInstalled).toBe(true);
  });

  it("hands a unit's own frame to the stream, and frames any other message as grpc-js does", () => {
    const { unit, records } = unitOf(3);
    const encoded = encodeWorkUnit(unit, records, false, 60_000, spill);
    expect(encoded.framed[0]).toBe(0);
    expect(encoded.framed.readUInt32BE(1)).toBe(encoded.bytes.length);
    expect(encoded.framed.length).toBe(encoded.bytes.length + FRAME_PREFIX);
    const call = { handler: { serialize: () => Buffer.from("not used for a unit") } };
    expect(serializeMessage.call(call, encoded)).toBe(encoded.framed);
    encoded.written();

    const other = { handler: { serialize: () => Buffer.from([7, 8, 9]) } };
    expect([...serializeMessage.call(other, { drain: {} })]).toEqual([0, 0, 0, 0, 3, 7, 8, 9]);
  });

  it("sends a unit whole over a real Attach stream, and its buffer goes back to the pool once written", async () => {
    const { unit, records } = unitOf(40);
    const pool = new UnitBufferPool();
    const encoded = encodeWorkUnit(unit, records, true, 60_000, spill);
    const buf = pool.lend(encoded.framed.length);
    encoded.framed.copy(buf);
    encoded.written();
    const sent = new EncodedUnit(buf, pool);

    const service = new CoordinatorService({ onFailure: (err) => expect.unreachable(err.message) });
    service.serve({
      status: () => startingStatus(),
      openSession: (stream: AttachStream) => {
        const conn = new AgentConnection("a#1", "a", "i", stream, { unitMessage: () => sent, onWritable: () => undefined });
        let said = false;
        return {
          receive: () => {
            if (said) return;
            said = true;
            conn.send(sent);
            conn.send(drainToWire("test over", false));
          },
          closed: () => undefined,
        };
      },
    });
    const server = new grpc.Server();
    service.addTo(server);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    const agent = new TestAgent(`127.0.0.1:${port}`, { auto: false, ignoreDrain: true });
    try {
      await agent.waitFor(() => agent.received.some((m) => m.kind === "drain"));
      expect(agent.units).toHaveLength(1);
      const got = agent.units[0]!;
      expect(got.unit_id).toBe("t/1");
      expect(got.backup).toBe(true);
      expect(got.lease_ms).toBe(60_000);
      expect(got.records.map((r) => r.run_id)).toEqual(records.map((r) => r.recordKey));
      expect(got.records.map((r) => JSON.parse(r.state_json) as { i: number })).toEqual(records.map((_, i) => ({ i, text: "trạng thái ".repeat(200) })));
      expect(pool.lent).toBe(0);
      expect(pool.freeCount).toBe(1);
    } finally {
      agent.close();
      server.forceShutdown();
    }
  });
});
