// Benchmark of the coordinator alone: memory and CPU of `udm-orch coordinator` serving a suite to
// fast in-process agents that answer every record at once with a uniform distribution (no engine),
// so the figures are the coordinator's own costs: indexing, planning, payload reads, validation,
// fsynced results.
//
//   node dist/bench/coordinator-bench.js --suite DIR [--agents N] [--credit N] [--tracks LIST]
//     [--cpu-prof DIR] [--coordinator-flags "FLAGS"] [--out FILE]
//
// --coordinator-flags: more flags for `udm-orch coordinator`, space-separated (e.g.
// "--scorer-max-heap-mb 128").
// --cpu-prof runs the coordinator under `node --cpu-prof` (a .cpuprofile per thread; the
// coordinator's own work is in its worker thread's).
//
// The coordinator runs as a child process; its peak RSS (VmHWM) and CPU time come from /proc.
// The agents share this machine's cores with it, so records/s is a floor, not a ceiling.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { loadPackageDefinition, type ProtoGrpcType } from "../proto/loader.js";
import type { AgentMessage } from "../proto/generated/udm/v1/AgentMessage.js";
import type { RecordResult } from "../proto/generated/udm/v1/RecordResult.js";
import type { CoordinatorMessage__Output } from "../proto/generated/udm/v1/CoordinatorMessage.js";
import { sampleProcess, type ProcSample } from "./proc-sample.js";
import { arg, optionalArg } from "./bench-args.js";

const suite = resolve(arg("suite"));
const agents = Number(arg("agents", "4"));
const credit = Number(arg("credit", "4"));
const outFile = arg("out", "bench/out/coordinator.json");
const tracks = optionalArg("tracks");
const cpuProf = optionalArg("cpu-prof");
const main = join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "main.js");
const outDir = mkdtempSync(join(tmpdir(), "udm-coord-bench-"));

function runAgent(address: string, id: string, stats: { units: number; records: number; maxUnitBytes: number }): Promise<void> {
  const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
  const client = new proto.udm.v1.Coordinator(address, grpc.credentials.createInsecure(), { "grpc.max_receive_message_length": -1 });
  const call = client.Attach();
  const send = (m: AgentMessage) => call.write(m);
  return new Promise((done) => {
    call.on("data", (msg: CoordinatorMessage__Output) => {
      if (msg.kind === "unit" && msg.unit) {
        const u = msg.unit;
        stats.units++;
        let bytes = 0;
        // One ResultBatch per unit, each distribution in the compact form (as agents send them).
        const results: RecordResult[] = [];
        for (const p of u.records) {
          bytes += p.state_json.length + p.questions_json.length;
          const qs = JSON.parse(p.questions_json) as Record<string, { type: string; criteria: Record<string, string> }>;
          const questions: string[] = [];
          const values: number[] = [];
          for (const [k, q] of Object.entries(qs)) {
            const n = q.type === "noul" ? 2 : Object.keys(q.criteria).length;
            questions.push(k);
            for (let i = 0; i < n; i++) values.push(1 / n);
          }
          results.push({ unit_id: u.unit_id, run_id: p.run_id, prob_questions: questions, prob_values: values, payload_sha256: p.payload_sha256, latency_ms: 0 });
          stats.records++;
        }
        send({ results: { results } });
        stats.maxUnitBytes = Math.max(stats.maxUnitBytes, bytes);
        send({ unit_done: { unit_id: u.unit_id } });
        send({ credit: { units: 1 } });
      } else if (msg.kind === "drain") call.end();
    });
    call.on("error", () => undefined);
    call.on("status", () => {
      client.close();
      done();
    });
    send({ hello: { agent_id: id, model: "bench/uniform", methods: ["systemone"], capacity: credit, ready: true } });
    send({ credit: { units: credit } });
  });
}

const t0 = Date.now();
const child = spawn(process.execPath, [...(cpuProf ? ["--cpu-prof", "--cpu-prof-dir", resolve(cpuProf)] : []), main, "coordinator", "--suite", suite, "--out", outDir, "--listen", "127.0.0.1:0", "--metrics", "off", ...(optionalArg("coordinator-flags")?.split(" ").filter(Boolean) ?? []), ...(tracks ? ["--tracks", tracks] : [])], {
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, UDM_LOG_LEVEL: process.env.UDM_LOG_LEVEL ?? "warn" },
});
const samples: Array<ProcSample & { t: number }> = [];
const sampler = setInterval(() => {
  const s = sampleProcess(child.pid!);
  if (s) samples.push({ ...s, t: (Date.now() - t0) / 1000 });
}, 200);

let stdout = "";
const address = await new Promise<string>((res, rej) => {
  child.stdout!.on("data", (b: Buffer) => {
    stdout += b.toString();
    const m = /listening on (\S+)/.exec(stdout);
    if (m) res(m[1]!);
  });
  child.on("exit", (code) => rej(new Error(`coordinator exited with ${code} before listening`)));
});
const tListen = Date.now();
const atListen = sampleProcess(child.pid!);
const stats = { units: 0, records: 0, maxUnitBytes: 0 };
const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
await Promise.all(Array.from({ length: agents }, (_, i) => runAgent(address, `bench-${i}`, stats)));
const last = samples.at(-1);
const code = await exited;
clearInterval(sampler);
const tEnd = Date.now();

const peakKb = Math.max(...samples.map((s) => s.hwmKb));
const figures = {
  bench: "coordinator",
  suite,
  records_answered: stats.records,
  units: stats.units,
  max_unit_payload_chars: stats.maxUnitBytes,
  agents,
  credit_per_agent: credit,
  coordinator_exit_code: code,
  startup_seconds: (tListen - t0) / 1000,
  run_seconds: (tEnd - tListen) / 1000,
  records_per_second: stats.records / ((tEnd - tListen) / 1000),
  peak_rss_mb: peakKb / 1024,
  rss_at_listen_mb: (atListen?.rssKb ?? 0) / 1024,
  cpu_seconds_startup: atListen?.cpuS ?? null,
  cpu_seconds_total_last_sample: last?.cpuS ?? null,
  coordinator_stdout: stdout.trim().split("\n"),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "", node: process.version },
  measured_at: new Date().toISOString(),
  note: "agents run in the bench process on the same cores and answer with no engine; results are fsynced",
};
rmSync(outDir, { recursive: true, force: true });
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
