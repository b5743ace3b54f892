// Benchmark of the results bus: how many result lines a second the coordinator can publish and the
// scorer can consume (with acks), for InProcessBus and for NatsBus on a local nats-server.
//
//   node dist/bench/bus-bench.js [--out bench/out/bus.json] [--records N] [--nats URL]
//
// Without --nats it starts `nats-server -js` (from PATH) on a free port with a temp store dir; the
// NATS scenarios are left out when there is none. Sequential publishing waits for each JetStream
// ack (what a coordinator that awaits publishResult gets); "concurrent" keeps several in flight.
// Figures are measured on whatever machine runs this, client and server sharing its cores.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Bus, InProcessBus, NatsBus } from "../common/bus/index.js";
import { createLogger } from "../common/log.js";
import type { ResultLine } from "../common/results/index.js";
import { arg, freePort } from "./bench-args.js";

function resultLine(i: number): ResultLine {
  return {
    run_id: `vihsd:vihsd:${i.toString(16).padStart(12, "0")}`,
    id: `vihsd:${i}`,
    track: "vihsd",
    family: "content_moderation",
    probs: { label: { CLEAN: 0.82, OFFENSIVE: 0.11, HATE: 0.07 } },
    skipped: [],
    latency_ms: 41,
    prompt_tokens: 212,
  };
}

interface Scenario {
  bus: string;
  scenario: string;
  records: number;
  wall_s: number;
  records_per_s: number;
}

async function publishSequential(bus: Bus, run: string, n: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const out = await bus.publishResult(run, "vihsd", resultLine(i));
    if (!out.ok) throw out.error;
  }
  return (performance.now() - t) / 1000;
}

async function publishConcurrent(bus: Bus, run: string, n: number, inFlight: number): Promise<number> {
  const t = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        const out = await bus.publishResult(run, "vihsd", resultLine(next++));
        if (!out.ok) throw out.error;
      }
    }),
  );
  return (performance.now() - t) / 1000;
}

async function consumeAll(bus: Bus, run: string, n: number): Promise<number> {
  const t = performance.now();
  let got = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const c = await bus.consumeResults(run, {
    durable: "bench",
    onResult: (_l, ack) => {
      ack();
      if (++got === n) done();
    },
  });
  await finished;
  const wall = (performance.now() - t) / 1000;
  await c.stop();
  return wall;
}

async function scenarios(name: string, open: () => Promise<Bus>, n: number): Promise<Scenario[]> {
  const out: Scenario[] = [];
  const row = (scenario: string, wall: number): Scenario => ({ bus: name, scenario, records: n, wall_s: +wall.toFixed(3), records_per_s: Math.round(n / wall) });
  const bus = await open();
  const seqRun = `bench${Date.now().toString(36)}s`;
  out.push(row("publish, one at a time (await each ack)", await publishSequential(bus, seqRun, n)));
  const conRun = `bench${Date.now().toString(36)}c`;
  out.push(row("publish, 64 in flight", await publishConcurrent(bus, conRun, n, 64)));
  out.push(row("re-publish the same lines (all dropped as duplicates), 64 in flight", await publishConcurrent(bus, conRun, n, 64)));
  out.push(row("consume with ack, new durable, from the start", await consumeAll(bus, conRun, n)));
  await bus.close();
  return out;
}

async function startNats(): Promise<{ url: string; version: string; stop(): Promise<void> } | undefined> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), "udm-bus-bench-"));
  let proc: ChildProcess;
  try {
    proc = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", store], { stdio: ["ignore", "ignore", "pipe"] });
  } catch {
    return undefined;
  }
  let log = "";
  const ready = await new Promise<boolean>((resolve) => {
    proc.once("error", () => resolve(false));
    proc.once("exit", () => resolve(false));
    proc.stderr!.setEncoding("utf8");
    proc.stderr!.on("data", (s: string) => {
      log += s;
      if (log.includes("Server is ready")) resolve(true);
    });
  });
  if (!ready) {
    rmSync(store, { recursive: true, force: true });
    return undefined;
  }
  const version = /Version:\s+(\S+)/.exec(log)?.[1] ?? "unknown";
  return {
    url: `nats://127.0.0.1:${port}`,
    version,
    stop: async () => {
      await new Promise<void>((r) => {
        proc.once("exit", () => r());
        proc.kill("SIGTERM");
      });
      rmSync(store, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const outFile = arg("out", "bench/out/bus.json");
  const n = Number(arg("records", "20000"));
  const quiet = createLogger("bus", "error");
  const results: Scenario[] = [];
  results.push(...(await scenarios("in-process", async () => new InProcessBus({ logger: quiet }), n)));

  let natsVersion: string | undefined;
  const given = process.argv.includes("--nats") ? arg("nats", "") : undefined;
  const server = given ? undefined : await startNats();
  const url = given ?? server?.url;
  if (url) {
    natsVersion = server?.version ?? "external";
    results.push(...(await scenarios(`nats (${natsVersion})`, () => NatsBus.connect({ servers: [url], logger: quiet }), n)));
  } else {
    process.stderr.write("nats-server not found: NATS scenarios skipped\n");
  }
  await server?.stop();

  const report = {
    bench: "bus",
    measured_at: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? "unknown", node: process.version },
    nats_server: natsVersion ?? null,
    note: "client and nats-server on the same machine; file storage; one line ~230 bytes of JSON",
    results,
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(report, null, 2) + "\n");
  for (const r of results) process.stdout.write(`${r.bus.padEnd(20)} ${r.scenario.padEnd(72)} ${String(r.records_per_s).padStart(8)} records/s\n`);
  process.stdout.write(`wrote ${outFile}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
