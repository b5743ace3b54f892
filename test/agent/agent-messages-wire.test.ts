// The agent's other Attach messages at the edge: what it sends (hello, credit, unit_done,
// heartbeat, result batch) and what it reads of the coordinator's messages.
import { describe, expect, it } from "vitest";
import {
  coordinatorMessageFromWire,
  creditToWire,
  heartbeatToWire,
  helloToWire,
  resultBatchToWire,
  resultHasErrors,
  resultUnitId,
  toWire,
  unitDoneToWire,
  failedAnswer,
} from "../../agent/transport/wire.js";
import { makeUnit } from "./attach-fakes.js";

describe("agent messages to the wire", () => {
  it("hello carries every field under its proto name", () => {
    const hello = { agentId: "a-1", model: "m", methods: ["systemone"], maxModelLen: 4096, capacity: 3, version: "1.2.3", ready: true, engineUrl: "http://e", instance: "i" };
    expect(helloToWire(hello)).toEqual({
      hello: { agent_id: "a-1", model: "m", methods: ["systemone"], max_model_len: 4096, capacity: 3, version: "1.2.3", ready: true, engine_url: "http://e", instance: "i" },
    });
  });

  it("credit, unit_done and heartbeat", () => {
    expect(creditToWire(4)).toEqual({ credit: { units: 4 } });
    expect(unitDoneToWire("u-1")).toEqual({ unit_done: { unit_id: "u-1" } });
    expect(heartbeatToWire({ inflightUnits: 2, inflightRequests: 5, engineWaiting: 1, engineRunning: 7, ready: false })).toEqual({
      heartbeat: { inflight_units: 2, inflight_requests: 5, engine_waiting: 1, engine_running: 7, ready: false },
    });
  });

  it("a result batch sends the results array itself (no copy)", () => {
    const results = [toWire("u-1", { recordKey: "r", payloadSha256: "x" }, failedAnswer(["q"], "boom", 1))];
    expect(resultBatchToWire(results).results!.results).toBe(results);
    expect(resultUnitId(results[0]!)).toBe("u-1");
    expect(resultHasErrors(results[0]!)).toBe(true);
    expect(resultHasErrors(toWire("u-1", { recordKey: "r", payloadSha256: "x" }, { ...failedAnswer(["q"], "boom", 1), errors: {} }))).toBe(false);
  });
});

describe("coordinator messages from the wire", () => {
  it("welcome, unit, cancel, drain and an unknown kind", () => {
    const welcome = coordinatorMessageFromWire({ kind: "welcome", welcome: { run_id: "r", lease_ms: 100, heartbeat_ms: 50, params: { method: "decisions", seeds: [1, 2], temperature: 0, model: "m" } } } as never);
    expect(welcome).toEqual({ kind: "welcome", welcome: { runId: "r", method: "decisions", seeds: [1, 2], temperature: 0, model: "m", leaseMs: 100, heartbeatMs: 50 } });
    const unit = coordinatorMessageFromWire({ kind: "unit", unit: { ...makeUnit("u", 1), group_ids: [], backup: false } } as never);
    expect(unit.kind === "unit" && unit.unit.unitId).toBe("u");
    expect(coordinatorMessageFromWire({ kind: "cancel", cancel: { unit_id: "u" } } as never)).toEqual({ kind: "cancel", unitId: "u" });
    expect(coordinatorMessageFromWire({ kind: "drain", drain: { reason: "run complete" } } as never)).toEqual({ kind: "drain", reason: "run complete" });
    expect(coordinatorMessageFromWire({ kind: "drain", drain: { reason: "coordinator restarting", reconnect: true } } as never)).toEqual({ kind: "drain", reason: "coordinator restarting", reconnect: true });
    expect(coordinatorMessageFromWire({} as never)).toEqual({ kind: "unknown", wireKind: undefined });
  });
});
