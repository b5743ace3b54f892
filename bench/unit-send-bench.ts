// Benchmark of sending work units over a real gRPC stream: the CPU of the sending process per unit
// with the unit's own frame handed to HTTP/2 (coordinator/transport/framed-send.ts) against the same
// bytes framed by grpc-js itself (a new buffer and a copy per message), alternately in one run.
//
//   node dist/bench/unit-send-bench.js [--units 1500] [--records-per-unit 40] [--reps 6] [--out bench/out/unit-send.json]
//
// The server is this process's main thread and encodes each unit from a payload spill as the
// coordinator does (encodeWorkUnit); the receiving agent is a child process (this script with
// --client), so the sender's CPU is its own and the loopback's. Records are ~6 KB (the full suite
// averages 6.7 KB of payload per record).
import { fork } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { loadPackageDefinition, type ProtoGrpcType } from "../proto/loader.js";
import { EncodedUnit, OptionInterner, PayloadSpill, compactQuestions, encodeWorkUnit, framedSendInstalled, type PlannedUnit, type RecordEntry } from "../coordinator/index.js";
import { arg } from "./bench-args.js";

const SELF = fileURLToPath(import.meta.url);
const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;

/** The agent: attaches, counts the units it receives, exits after the last. */
async function client(): Promise<void> {
  const [port, units] = process.argv.slice(process.argv.indexOf("--client") + 1).map(Number) as [number, number];
  const c = new proto.udm.v1.Coordinator(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { "grpc.max_receive_message_length": -1 });
  const call = c.Attach();
  let n = 0;
  // After the last unit the client cancels its call and leaves; an error before it is the bench's failure.
  call.on("data", () => {
    if (++n < units) return;
    call.cancel();
    c.close();
    process.exit(0);
  });
  call.on("error", (err: Error) => {
    if (n >= units) return;
    process.stderr.write(`unit-send-bench client: ${err.message} after ${n} of ${units} units\n`);
    process.exit(1);
  });
  call.write({ hello: { agent_id: "bench" } });
}

/** The same unit, not an EncodedUnit: grpc-js frames its bytes itself (its copy). */
class CopiedUnit {
  constructor(readonly unit: EncodedUnit) {}
}

async function bench(): Promise<void> {
  if (!framedSendInstalled) throw new Error("framed send is not installed on this grpc-js: nothing to compare");
  const units = Number(arg("units", "1500"));
  const perUnit = Number(arg("records-per-unit", "40"));
  const reps = Number(arg("reps", "6"));
  const outFile = arg("out", "bench/out/unit-send.json");
  const dir = mkdtempSync(join(tmpdir(), "udm-unit-send-"));
  const spill = new PayloadSpill(join(dir, "payloads.bin"));
  const interner = new OptionInterner();
  const distinct = 50;
  const records: RecordEntry[] = Array.from({ length: perUnit * distinct }, (_, i) => ({
    ...spill.add(JSON.stringify({ turn: i, context: "ngữ cảnh của bản ghi ".repeat(230) }), JSON.stringify({ intent: { type: "single", instruction: "Chọn ý định", criteria: { A: "hỏi", B: "đáp", C: "khác" } } })),
    recordKey: `t:r${i}`,
    id: `r${i}`,
    groupId: `g${i % distinct}`,
    payloadSha256: "ab".repeat(32),
    ...compactQuestions([{ key: "intent", options: ["A", "B", "C"] }], interner),
  }));

  let mode: "framed" | "copied" = "framed";
  let finished: ((figures: { cpu_s: number; sys_s: number; wall_s: number; bytes: number }) => void) | undefined;
  const attach = proto.udm.v1.Coordinator.service.Attach;
  const definition = {
    ...proto.udm.v1.Coordinator.service,
    Attach: { ...attach, requestDeserialize: (b: Buffer) => b, responseSerialize: (m: EncodedUnit | CopiedUnit) => (m instanceof EncodedUnit ? m.bytes : m.unit.bytes) },
  } as unknown as grpc.ServiceDefinition;
  const server = new grpc.Server({ "grpc.max_send_message_length": -1 });
  server.addService(definition, {
    Attach: (call: grpc.ServerDuplexStream<Buffer, EncodedUnit | CopiedUnit>) => {
      let sent = 0;
      let written = 0;
      let bytes = 0;
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      const pump = (): void => {
        while (sent < units) {
          const i = sent++ % distinct;
          const unit = { unitId: `t/${sent}`, track: "t", family: "f", groupIds: [`g${i}`] } as unknown as PlannedUnit;
          const encoded = encodeWorkUnit(unit, records.slice(i * perUnit, (i + 1) * perUnit), false, 60_000, spill);
          bytes += encoded.bytes.length;
          const done = (): void => {
            encoded.written();
            if (++written < units) return;
            const cpu = process.cpuUsage(cpu0);
            finished?.({ cpu_s: (cpu.user + cpu.system) / 1e6, sys_s: cpu.system / 1e6, wall_s: (performance.now() - wall0) / 1000, bytes });
          };
          if (!call.write(mode === "framed" ? encoded : new CopiedUnit(encoded), done)) {
            call.once("drain", pump);
            return;
          }
        }
      };
      call.on("data", () => undefined);
      call.on("error", () => undefined);
      pump();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));

  const runs: Record<"framed" | "copied", Array<{ cpu_s: number; sys_s: number; wall_s: number; bytes: number }>> = { framed: [], copied: [] };
  for (let rep = 0; rep < reps; rep++) {
    // Alternately, each mode first in every other round.
    for (const m of rep % 2 === 0 ? (["framed", "copied"] as const) : (["copied", "framed"] as const)) {
      mode = m;
      const agent = fork(SELF, ["--client", String(port), String(units)], { stdio: "inherit" });
      const figures = await new Promise<{ cpu_s: number; sys_s: number; wall_s: number; bytes: number }>((resolve) => (finished = resolve));
      const code = await new Promise<number | null>((resolve) => agent.on("exit", resolve));
      if (code !== 0) throw new Error(`unit-send-bench client exited ${code}`);
      runs[m].push(figures);
      process.stderr.write(`${m}: ${figures.cpu_s.toFixed(3)} CPU-s (sys ${figures.sys_s.toFixed(3)}) for ${(figures.bytes / 1e6).toFixed(0)} MB\n`);
    }
  }
  server.forceShutdown();
  spill.dispose();
  rmSync(dir, { recursive: true, force: true });

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cpuOf = (m: "framed" | "copied") => mean(runs[m].map((r) => r.cpu_s));
  const mb = runs.framed[0]!.bytes / 1e6;
  const figures = {
    bench: "unit-send",
    units,
    records_per_unit: perUnit,
    unit_bytes_mean: runs.framed[0]!.bytes / units,
    megabytes_per_run: mb,
    reps,
    framed: runs.framed,
    copied: runs.copied,
    framed_cpu_ms_per_mb: (cpuOf("framed") * 1000) / mb,
    copied_cpu_ms_per_mb: (cpuOf("copied") * 1000) / mb,
    // The sender's CPU with its own frames over grpc-js's copy (means of the runs above).
    framed_to_copied_cpu: cpuOf("framed") / cpuOf("copied"),
    machine: { cpus: cpus().length, node: process.version, loadavg_at_end: loadavg() },
    measured_at: new Date().toISOString(),
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(`${JSON.stringify({ framed_cpu_ms_per_mb: figures.framed_cpu_ms_per_mb, copied_cpu_ms_per_mb: figures.copied_cpu_ms_per_mb, framed_to_copied_cpu: figures.framed_to_copied_cpu })}\n`);
}

if (process.argv.includes("--client")) await client();
else await bench();
