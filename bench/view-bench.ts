// Benchmark of `udm-orch view` and `udm-orch diff` on FULL-scale runs, next to `score` on the same
// results.
//
//   node dist/bench/view-bench.js [SUITE_DIR] [--out bench/out/view.json] [--keep]
//
// Two run directories are written for the suite (run.json and a result line for every record, as a
// run leaves them; a simulated run of the full suite takes hours on a small machine): run A leans
// towards gold harder than run B. Each measurement runs in a fresh child process, so its peak RSS
// is its own. view: time until the track table answers, until the first page of records of the
// largest track answers (its index is built then), and until one of its records' page answers;
// diff: the whole comparison of A and B (1,000 resamples, 1,000 permutations); score: run A.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSuite, readTrackRecords, type SuiteRecord } from "../common/suite/index.js";
import { Xoshiro128, scoreResults } from "../scorer/index.js";
import { datasetSha256 } from "../card/index.js";
import { makeSuite } from "../sim/index.js";
import { diffRuns, openRunDir, startViewServer } from "../view/index.js";

const SELF = fileURLToPath(import.meta.url);

interface ChildFigures {
  wall_s: number;
  cpu_s: number;
  max_rss_mib: number;
  [k: string]: unknown;
}

function child(mode: string, ...args: string[]): ChildFigures {
  const r = spawnSync(process.execPath, [SELF, `--child=${mode}`, ...args], { encoding: "utf8", maxBuffer: 1 << 26, env: { ...process.env, UDM_LOG_LEVEL: "error" } });
  if (r.status !== 0) throw new Error(`child ${mode} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as ChildFigures;
}

const cpuSeconds = (): number => {
  const u = process.resourceUsage();
  return (u.userCPUTime + u.systemCPUTime) / 1e6;
};
const rssMiB = (): number => process.resourceUsage().maxRSS / 1024;

async function childMain(mode: string, args: string[]): Promise<void> {
  const t0 = performance.now();
  const since = () => (performance.now() - t0) / 1000;
  if (mode === "view") {
    const [runDir, track, family] = args as [string, string, string];
    const server = await startViewServer({ run: openRunDir(runDir), listen: { host: "127.0.0.1", port: 0 } });
    const get = async (path: string) => {
      const res = await fetch(server.url + path);
      if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
      return (await res.json()) as Record<string, unknown>;
    };
    await (await fetch(server.url + "/")).text();
    await get("/api/run");
    await get("/api/tracks");
    const tableS = since();
    const page = await get(`/api/tracks/${encodeURIComponent(track)}/records?status=wrong`);
    const firstPageS = since();
    const id = (page.records as Array<{ id: string }>)[0]!.id;
    const t1 = performance.now();
    await get(`/api/tracks/${encodeURIComponent(track)}/records/${encodeURIComponent(id)}`);
    const recordS = (performance.now() - t1) / 1000;
    const t2 = performance.now();
    await get(`/api/tracks/${encodeURIComponent(track)}/records?status=right&offset=1000`);
    const nextPageS = (performance.now() - t2) / 1000;
    const stats = { ...server.stats };
    await server.close();
    process.stdout.write(
      JSON.stringify({ wall_s: since(), cpu_s: cpuSeconds(), max_rss_mib: rssMiB(), track, family, records: page.total, track_table_s: tableS, first_records_page_s: firstPageS, record_page_s: recordS, another_page_s: nextPageS, read: stats }) + "\n",
    );
  } else if (mode === "diff") {
    const [a, b] = args as [string, string];
    const d = await diffRuns(openRunDir(a), openRunDir(b));
    const significant = d.tracks.filter((t) => t.ci_low !== null && t.ci_high !== null && (t.ci_low > 0 || t.ci_high < 0)).length;
    process.stdout.write(JSON.stringify({ wall_s: since(), cpu_s: cpuSeconds(), max_rss_mib: rssMiB(), tracks: d.tracks.length, significant_tracks: significant, v1: d.v1 }) + "\n");
  } else if (mode === "score") {
    const [suiteDir, resultsDir] = args as [string, string];
    const m = await scoreResults({ suiteDir, resultsDir });
    process.stdout.write(JSON.stringify({ wall_s: since(), cpu_s: cpuSeconds(), max_rss_mib: rssMiB(), v1_mean: m.summary.v1_mean }) + "\n");
  }
}

/** A result line for one record; `boost` is how much the gold option leans up (run A more than run B). */
function resultFor(r: SuiteRecord, track: string, family: string, rng: Xoshiro128, boost: number): string {
  const probs: Record<string, unknown> = {};
  const answeredBy: Record<string, string> = {};
  const u = (): number => rng.nextUint32() / 4294967296;
  for (const [key, q] of Object.entries(r.questions)) {
    const gold = r.expected[key];
    answeredBy[key] = "systemone";
    if (q.type === "noul") {
      const lean = Math.min(0.45, boost / 4);
      const p = gold === undefined ? u() : gold ? lean + (1 - lean) * u() : (1 - lean) * u();
      probs[key] = { true: p, false: 1 - p };
    } else {
      const keys = Object.keys(q.criteria);
      const w = keys.map((k) => u() + (k === gold ? boost * u() : 0));
      const sum = w.reduce((a, b) => a + b, 0);
      probs[key] = Object.fromEntries(keys.map((k, i) => [k, w[i]! / sum]));
    }
  }
  return JSON.stringify({ run_id: r._evaluation.run_id, id: r.id, track, family, probs, skipped: [], payload_sha256: "0".repeat(64), agent: "bench", latency_ms: 40 * u(), prompt_tokens: 100, completion_tokens: 1, answered_by: answeredBy, format: 1 }) + "\n";
}

async function writeRun(suiteDir: string, identity: string, dir: string, seed: number, boost: number): Promise<{ records: number; bytes: number }> {
  const suite = openSuite(suiteDir);
  const rng = new Xoshiro128(seed);
  let records = 0;
  let bytes = 0;
  for (const file of suite.files) {
    const path = join(dir, file.family, `${file.track}.jsonl`);
    mkdirSync(dirname(path), { recursive: true });
    const out = createWriteStream(path);
    for await (const r of readTrackRecords(file)) {
      const line = resultFor(r, file.track, file.family, rng, boost);
      bytes += line.length;
      records++;
      if (!out.write(line)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");
  }
  const now = new Date().toISOString();
  writeFileSync(
    join(dir, "run.json"),
    JSON.stringify({ format: 1, run_id: `bench-${seed}`, suite_identity: identity, suite_root: suite.root, tracks: suite.files.map((f) => f.track).sort(), limit: null, method: { method: "systemone", seeds: [], temperature: 0, model: `bench/${boost}` }, created_at: now, updated_at: now, sessions: 1, resumes: 0, forced: [] }) + "\n",
  );
  return { records, bytes };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const childFlag = argv.find((a) => a.startsWith("--child="));
  if (childFlag) return childMain(childFlag.slice("--child=".length), argv.filter((a) => a !== childFlag));
  const outIdx = argv.indexOf("--out");
  const outFile = outIdx >= 0 ? argv[outIdx + 1]! : join("bench", "out", "view.json");
  const keep = argv.includes("--keep");
  const positional = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--out");
  const work = mkdtempSync(join(tmpdir(), "udm-view-bench-"));
  try {
    let suiteDir = positional[0];
    if (!suiteDir) {
      suiteDir = join(work, "suite");
      await makeSuite({ out: suiteDir, scale: "full", seed: 1 });
    }
    const identity = await datasetSha256(suiteDir);
    const a = join(work, "run-a");
    const b = join(work, "run-b");
    const written = await writeRun(suiteDir, identity, a, 1, 1.5);
    await writeRun(suiteDir, identity, b, 2, 1.2);
    process.stderr.write(`wrote two runs of ${written.records} result lines (${(written.bytes / 2 ** 20).toFixed(1)} MiB each)\n`);
    // The largest track: the view's worst case.
    const suite = openSuite(suiteDir);
    const sizes = suite.files.map((f) => ({ f, rows: suite.manifest?.files[f.relPath]?.rows ?? 0 })).sort((x, y) => y.rows - x.rows);
    const largest = sizes[0]!.f;
    const loadBefore = loadavg()[0];
    const view = child("view", a, largest.track, largest.family);
    const diff = child("diff", a, b);
    const score = child("score", suiteDir, a);
    const figures = {
      bench: "view",
      command: `node dist/bench/view-bench.js${positional[0] ? ` ${positional[0]}` : ""}`,
      machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? "unknown", total_mem_gib: totalmem() / 2 ** 30, node: process.version, load_average_1m_before: loadBefore },
      runs: { records: written.records, mib_each: written.bytes / 2 ** 20, tracks: suite.files.length },
      view,
      diff,
      score,
    };
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
    process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
    else process.stderr.write(`kept ${work}\n`);
  }
}

await main();
