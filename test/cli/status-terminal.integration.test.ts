// `status` prints what a coordinator sends: agent ids, models, track names and the run id are text
// from the network, so control characters (a title-setting OSC, a screen clear, C1 CSI) are printed
// as escapes; and a status of 300,000 tracks prints (no spread of a remote-sized array into a call).
// A stand-in coordinator (a real gRPC server on 127.0.0.1:0 answering Status) sends crafted replies.
import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { loadPackageDefinition, type ProtoGrpcType } from "../../proto/loader.js";
import type { RunStatus } from "../../proto/generated/udm/v1/RunStatus.js";
import { spawnCli } from "../support/cli-process.js";

let server: grpc.Server | undefined;
afterEach(() => server?.forceShutdown());

async function serveStatus(status: RunStatus): Promise<string> {
  const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
  server = new grpc.Server({ "grpc.max_send_message_length": -1 });
  server.addService(proto.udm.v1.Coordinator.service, {
    Status: (_call: unknown, cb: grpc.sendUnaryData<RunStatus>) => cb(null, status),
  } as unknown as grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) => server!.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return `127.0.0.1:${port}`;
}

async function status(address: string): Promise<{ code: number | null; out: string }> {
  const p = spawnCli(["status", "--coordinator", address]);
  const { code } = await p.exited;
  return { code, out: p.output() };
}

const base: RunStatus = { run_id: "r1", state: "running", suite_identity: "0".repeat(64), records_total: 10, records_committed: 5, agents: [], tracks: [] };

describe("status of a hostile coordinator", () => {
  it("prints control characters in remote text as escapes", async () => {
    const address = await serveStatus({
      ...base,
      run_id: "run\u001b[2J",
      agents: [{ agent_id: "a1\u001b]0;pwned\u0007\u001b[2J\u009b31m", model: "m\u007f\r\nforged line", ready: true, inflight_units: 1, credit: 1, results: 3, rejected: 0 }],
      tracks: [{ track: "t\u001b[1A", family: "f\u0085", records: 10, committed: 5, complete: false }],
      rejected_by_reason: { "no_lease\u001b[K": 2 },
    });
    const r = await status(address);
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(r.out).toContain("a1\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m");
    expect(r.out).toContain("m\\x7f\\x0d\\x0aforged line");
    expect(r.out).not.toMatch(/^forged line/m);
    expect(r.out).toContain("run run\\x1b[2J");
  });

  it("prints a status of 300,000 tracks", async () => {
    const tracks = Array.from({ length: 300_000 }, (_, i) => ({ track: i.toString(36), records: 1, committed: 1, complete: true }));
    const address = await serveStatus({ ...base, tracks, agents: Array.from({ length: 2 }, (_, i) => ({ agent_id: `a${i}`, model: "m", ready: true })) });
    const r = await status(address);
    expect(r.code, r.out.slice(-2000)).toBe(0);
    expect(r.out).not.toMatch(/Maximum call stack/);
    expect(r.out.split("\n").filter((l) => / yes$/.test(l))).toHaveLength(300_000);
  }, 60_000);
});
