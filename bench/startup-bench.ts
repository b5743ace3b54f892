// Benchmark of coordinator startup against the read-and-parse floor, all in one run: the time to
// read and parse the suite (a child process, bench/read-and-parse.ts), then `udm-orch coordinator`
// started on an empty out dir, then again on the same out dir with every second record of each
// track committed (a resume). Each start is timed from spawn to the "coordinator listening on" line
// (suite read, checked, indexed and spilled, run.json and committed results read, scorer loaded),
// then the coordinator is stopped with SIGTERM. Issue 26: a probe agent attaches as soon as the port
// is open and times its first WorkUnit (first_unit_s, handed out while the rest is still read);
// suite_read_s is the whole read ("suite indexed").
//
//   node dist/bench/startup-bench.js --suite DIR [--tracks LIST] [--cli PATH/TO/cli/main.js]
//     [--cpu-prof DIR] [--no-resume] [--out bench/out/startup.json]
//
// --cli runs another build's coordinator (a before/after comparison on the same floor); --cpu-prof
// runs each coordinator under `node --cpu-prof` (a .cpuprofile per thread). Figures: wall seconds,
// CPU seconds and peak RSS of each start (from /proc), seconds until the gRPC port was open (the
// coordinator's log line), CPU seconds by thread, the ratio to read-and-parse (target at most 1.5),
// and the load average. UDM_SUITE_READERS=N in the environment sets the coordinator's reader threads.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AppendLog, acceptedResultLine, NOUL_KEYS, trackResultsPath } from "../common/results/index.js";
import { openSuite, readTrackRecords, selectFiles } from "../common/suite/index.js";
import { measureReadAndParse, runReadAndParseChild } from "./read-and-parse.js";
import { sampleProcess, type ProcSample } from "./proc-sample.js";
import { firstUnitProbe } from "./first-unit-probe.js";
import { arg, optionalArg } from "./bench-args.js";

const SELF = fileURLToPath(import.meta.url);

interface StartFigures {
  /** Spawn to the CLI's ready line (after the scorer's gold, so after the whole read). */
  wall_s: number;
  /** Spawn to the first WorkUnit a probe agent (attached as soon as the port is open) received. */
  first_unit_s: number | null;
  /** Spawn to the whole suite read and verified ("suite indexed"). */
  suite_read_s: number | null;
  port_open_s: number | null;
  cpu_s: number | null;
  peak_rss_mib: number | null;
  rss_at_ready_mib: number | null;
  records_total: number;
  records_already_committed: number;
  /** wall_s (the ready line, after the scorer has the whole gold) over read-and-parse. */
  ratio_to_read_and_parse: number;
  /** suite_read_s (the whole suite read and verified) over read-and-parse: issue 26's "total startup". */
  suite_read_ratio: number | null;
  loadavg_before: number[];
  /** CPU seconds at ready by thread name (the comm of each /proc task): JavaScript threads ("node", worker threads), V8's GC and compiler helpers, libuv's pool. */
  cpu_s_by_thread: Record<string, number>;
}

/** CPU seconds of each thread of `pid`, summed by thread name. */
function cpuByThread(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out[comm] = Math.round(((out[comm] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100) * 100) / 100;
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // the process ended
  }
  return out;
}

/** Starts the coordinator, waits for its ready line, samples it, stops it with SIGTERM. */
async function timeStart(cli: string, suite: string, outDir: string, tracks: string | undefined, cpuProf: string | undefined): Promise<Omit<StartFigures, "ratio_to_read_and_parse" | "suite_read_ratio">> {
  const loadBefore = loadavg();
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [...(cpuProf ? ["--cpu-prof", "--cpu-prof-dir", resolve(cpuProf)] : []), cli, "coordinator", "--suite", suite, "--out", outDir, "--listen", "127.0.0.1:0", "--metrics", "off", ...(tracks ? ["--tracks", tracks] : [])],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, UDM_LOG_LEVEL: "info", UDM_NO_PROGRESS: "1" } },
  );
  let last: ProcSample | undefined;
  const sampler = setInterval(() => {
    const s = sampleProcess(child.pid!);
    if (s) last = s;
  }, 100);
  let stdout = "";
  let stderr = "";
  let portOpen: number | undefined;
  let probe: ReturnType<typeof firstUnitProbe> | undefined;
  /** When the "suite indexed" line came: the whole suite read and verified. */
  let tIndexed: number | undefined;
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const ready = await new Promise<RegExpMatchArray>((res, rej) => {
    child.stdout!.on("data", (b: Buffer) => {
      stdout += b.toString();
      const m = /coordinator listening on \S+ run \S+: (\d+) records, (\d+) already committed/.exec(stdout);
      if (m) res(m);
    });
    child.stderr!.on("data", (b: Buffer) => {
      stderr += b.toString();
      if (tIndexed === undefined && stderr.includes("suite indexed")) tIndexed = performance.now();
      if (portOpen === undefined && stderr.includes("coordinator listening; reading the suite")) {
        portOpen = performance.now();
        const address = /coordinator listening; reading the suite \{"address":"([^"]+)"/.exec(stderr)?.[1];
        if (address) probe = firstUnitProbe(address);
      }
    });
    void exited.then((code) => rej(new Error(`coordinator exited (${code}) before it was ready:\n${stderr.slice(-3000)}`)));
  });
  const tReady = performance.now();
  const atReady = sampleProcess(child.pid!) ?? last;
  const byThread = cpuByThread(child.pid!);
  // Issue 26: the coordinator serves (and hands out the first track's units) before the whole suite
  // is read; the read's end is its "suite indexed" line.
  await new Promise<void>((res) => {
    const check = () => {
      if (tIndexed !== undefined) res();
    };
    check();
    child.stderr!.on("data", check);
    void exited.then(() => res());
  });
  const firstUnit = probe ? await Promise.race([probe.firstUnitAt, exited.then(() => undefined)]) : undefined;
  probe?.stop();
  clearInterval(sampler);
  child.kill("SIGTERM");
  await exited;
  return {
    wall_s: (tReady - t0) / 1000,
    first_unit_s: firstUnit !== undefined ? (firstUnit - t0) / 1000 : null,
    suite_read_s: tIndexed !== undefined ? (tIndexed - t0) / 1000 : null,
    port_open_s: portOpen !== undefined ? (portOpen - t0) / 1000 : null,
    cpu_s: atReady?.cpuS ?? null,
    peak_rss_mib: atReady ? atReady.hwmKb / 1024 : null,
    rss_at_ready_mib: atReady ? atReady.rssKb / 1024 : null,
    records_total: Number(ready[1]),
    records_already_committed: Number(ready[2]),
    loadavg_before: loadBefore,
    cpu_s_by_thread: byThread,
  };
}

/** Commits every second record of each selected track to `outDir` as the results store writes them (uniform distributions). */
async function commitHalf(suiteDir: string, outDir: string, tracks: string | undefined): Promise<number> {
  let written = 0;
  const suite = openSuite(suiteDir);
  for (const file of selectFiles(suite, tracks ? { tracks: tracks.split(",") } : {})) {
    const log = new AppendLog(trackResultsPath(outDir, file.family, file.track));
    let n = 0;
    for await (const rec of readTrackRecords(file)) {
      if (n++ % 2 === 1) continue;
      const questions = Object.entries(rec.questions).map(([key, q]) => ({ key, options: q.type === "noul" ? NOUL_KEYS : Object.keys(q.criteria) }));
      const probs = Object.fromEntries(questions.map((q) => [q.key, Object.fromEntries(q.options.map((o) => [o, 1 / q.options.length]))]));
      const line = acceptedResultLine(
        { recordKey: rec._evaluation.run_id, id: rec.id, track: file.track, family: file.family, payloadSha256: rec._evaluation.payload_sha256 ?? "", questions },
        { probs, skipped: [], errors: {}, agent: "bench", latencyMs: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, answeredBy: {}, retries: 0, approximate: false },
      );
      log.append(JSON.stringify(line));
      written++;
    }
    await log.close();
  }
  return written;
}

async function main(): Promise<void> {
  if (await runReadAndParseChild()) return;
  const suite = resolve(arg("suite"));
  const tracks = optionalArg("tracks");
  const cli = resolve(arg("cli", join(dirname(SELF), "..", "cli", "main.js")));
  const cpuProf = optionalArg("cpu-prof");
  const resume = !process.argv.includes("--no-resume");
  const outFile = arg("out", "bench/out/startup.json");
  const outDir = mkdtempSync(join(tmpdir(), "udm-startup-bench-"));
  try {
    const loadAtStart = loadavg();
    const floor = measureReadAndParse(SELF, suite, tracks);
    process.stderr.write(`read and parse: ${floor.records} records in ${floor.wall_s.toFixed(2)} s (${floor.cpu_s.toFixed(2)} CPU-s)\n`);
    const fresh = await timeStart(cli, suite, outDir, tracks, cpuProf);
    process.stderr.write(`fresh start: first unit ${fresh.first_unit_s?.toFixed(2)} s, ready line ${fresh.wall_s.toFixed(2)} s, suite read ${fresh.suite_read_s?.toFixed(2)} s (${fresh.cpu_s} CPU-s at the ready line)\n`);
    let resumed: StartFigures | undefined;
    let committed = 0;
    if (resume) {
      committed = await commitHalf(suite, outDir, tracks);
      const r = await timeStart(cli, suite, outDir, tracks, cpuProf);
      if (r.records_already_committed !== committed) throw new Error(`resume found ${r.records_already_committed} committed records, ${committed} were written`);
      resumed = { ...r, ratio_to_read_and_parse: r.wall_s / floor.wall_s, suite_read_ratio: r.suite_read_s !== null ? r.suite_read_s / floor.wall_s : null };
      process.stderr.write(`resumed start: first unit ${r.first_unit_s?.toFixed(2)} s, ready line ${r.wall_s.toFixed(2)} s, suite read ${r.suite_read_s?.toFixed(2)} s (${r.cpu_s} CPU-s at the ready line)\n`);
    }
    const figures = {
      bench: "startup",
      suite,
      tracks: tracks ?? "all",
      cli,
      read_and_parse: floor,
      suite_reader_threads: process.env.UDM_SUITE_READERS ?? "default",
      fresh_start: { ...fresh, ratio_to_read_and_parse: fresh.wall_s / floor.wall_s, suite_read_ratio: fresh.suite_read_s !== null ? fresh.suite_read_s / floor.wall_s : null },
      ...(resumed ? { resumed_start: resumed, committed_before_resume: committed } : {}),
      targets: { ratio_max: 1.5, first_unit_max_s: 2 },
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "", node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg() },
      measured_at: new Date().toISOString(),
    };
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
    process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

await main();
