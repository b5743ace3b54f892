// The status of a run read from its --out directory alone, running, finished or killed: no
// coordinator needs to answer. run.json names the run and its tracks, each results file's complete
// lines are its committed records, the suite's manifest (or metrics.json) its records, the lock
// whether a coordinator still serves it, the run card how it ended, metrics.json the headlines.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../common/errors.js";
import { outDirHolder } from "../coordinator/index.js";

/** A track's progress: the fields of `status --json`'s tracks, and the headline once scored. */
export interface OutDirTrack {
  track: string;
  family: string;
  /** Records in the track; null when neither the suite's manifest nor metrics.json is readable. */
  records: number | null;
  committed: number;
  complete: boolean;
  headline: { metric: string; value: number | null } | null;
}

/** The fields of `status --json` (RunStatus) a results directory holds, plus where they came from. */
export interface OutDirStatus {
  run_id: string;
  /** The run card's status once it ended, else running (a live coordinator holds the lock), else complete/incomplete from the counts. */
  state: string;
  suite_identity: string;
  records_total: number | null;
  records_committed: number;
  tracks: OutDirTrack[];
  out_dir: string;
  /** The coordinator holding the lock (state running). */
  coordinator?: { pid: number; host: string; since: string };
  run_card_status?: string;
  /** Seconds the run was served over all its sessions (run-clock.json); absent before the first save. */
  elapsed_seconds?: number;
  /** Agents the last session saw (run.json's agents block): attached, ready, or left and why. */
  agents: OutDirAgent[];
}

export interface OutDirAgent {
  agent_id: string;
  model: string;
  attached: boolean;
  ready: boolean;
  left_reason?: string;
  left_at?: string;
}

interface RunJson {
  run_id?: string;
  suite_identity?: string;
  suite_root?: string;
  tracks?: string[];
  agents?: { list?: Array<Partial<OutDirAgent>> };
  /** Records per track at most (`--limit`): the manifest's rows are then not the track's records. */
  limit?: number | null;
}

interface MetricsJson {
  tracks?: Record<string, { family?: string; records?: number; headline?: { metric?: string; value?: number | null } }>;
}

export function readOutDirStatus(outDir: string): OutDirStatus {
  const runJsonPath = join(outDir, "run.json");
  if (!existsSync(runJsonPath)) throw new UsageError(`${outDir} holds no run (no run.json): not a coordinator's --out directory, or its run never started`);
  const run = readJson<RunJson>(runJsonPath);
  if (!run) throw new UsageError(`${runJsonPath} is not valid JSON`);
  const metrics = readJson<MetricsJson>(join(outDir, "metrics.json"));
  const card = readJson<{ run_id?: string; status?: string }>(join(outDir, "run-card.json"));
  const manifestRows = suiteRows(run.suite_root);
  const files = resultFiles(outDir);
  const tracks: OutDirTrack[] = (run.tracks ?? []).map((track) => {
    const scored = metrics?.tracks?.[track];
    const family = files.get(track)?.family ?? scored?.family ?? manifestRows.get(track)?.family ?? "";
    // A limited run's tracks hold the records its limit kept: what its scorer counted, else at most the limit (whole groups may pass it).
    const rows = manifestRows.get(track)?.rows;
    const records = run.limit ? (scored?.records ?? null) : (rows ?? scored?.records ?? null);
    const file = files.get(track);
    const committed = file ? completeLines(file.path) : 0;
    const headline = scored?.headline?.metric ? { metric: scored.headline.metric, value: scored.headline.value ?? null } : null;
    return { track, family, records, committed, complete: records !== null && committed >= records, headline };
  });
  const recordsTotal = tracks.every((t) => t.records !== null) ? tracks.reduce((n, t) => n + t.records!, 0) : null;
  const recordsCommitted = tracks.reduce((n, t) => n + t.committed, 0);
  const holder = outDirHolder(outDir);
  // A card of this run that says how it ended; a "running" card left by a killed coordinator does not.
  const ended = card && card.run_id === run.run_id && card.status && card.status !== "running" ? card.status : undefined;
  const clock = readJson<{ run_id?: string; elapsed_seconds?: number }>(join(outDir, "run-clock.json"));
  const agents: OutDirAgent[] = (run.agents?.list ?? [])
    .filter((a) => typeof a.agent_id === "string")
    .map((a) => ({
      agent_id: a.agent_id!,
      model: String(a.model ?? ""),
      attached: a.attached === true,
      ready: a.ready === true,
      ...(typeof a.left_reason === "string" ? { left_reason: a.left_reason, left_at: String(a.left_at ?? "") } : {}),
    }));
  const counted = recordsTotal !== null && recordsCommitted >= recordsTotal ? "complete" : "incomplete";
  return {
    run_id: run.run_id ?? "",
    // A coordinator serving a complete run's final page still holds the lock: its card says it ended.
    state: ended ?? (holder ? "running" : counted),
    suite_identity: run.suite_identity ?? "",
    records_total: recordsTotal,
    records_committed: recordsCommitted,
    tracks,
    out_dir: outDir,
    ...(holder ? { coordinator: holder } : {}),
    ...(card?.status && card.run_id === run.run_id ? { run_card_status: card.status } : {}),
    ...(clock && clock.run_id === run.run_id && typeof clock.elapsed_seconds === "number" ? { elapsed_seconds: clock.elapsed_seconds } : {}),
    agents,
  };
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** Rows per track from the suite's manifest.json (test/<family>/<track>.jsonl.gz), when the suite is still there. */
function suiteRows(root: string | undefined): Map<string, { family: string; rows: number }> {
  const out = new Map<string, { family: string; rows: number }>();
  const manifest = root ? readJson<{ files?: Record<string, { rows?: number }> }>(join(root, "manifest.json")) : undefined;
  for (const [rel, f] of Object.entries(manifest?.files ?? {})) {
    const m = /^test\/([^/]+)\/([^/]+)\.jsonl(?:\.gz)?$/.exec(rel);
    if (m && typeof f.rows === "number") out.set(m[2]!, { family: m[1]!, rows: f.rows });
  }
  return out;
}

/** <out>/<family>/<track>.jsonl by track. */
function resultFiles(outDir: string): Map<string, { family: string; path: string }> {
  const out = new Map<string, { family: string; path: string }>();
  for (const family of readdirSync(outDir)) {
    if (family.startsWith(".")) continue;
    const dir = join(outDir, family);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of readdirSync(dir)) if (name.endsWith(".jsonl")) out.set(name.slice(0, -".jsonl".length), { family, path: join(dir, name) });
  }
  return out;
}

/** Newline-terminated lines: a line a killed coordinator left half-written is not committed. */
function completeLines(path: string): number {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let n = 0;
    for (let read; (read = readSync(fd, buf, 0, buf.length, null)) > 0; ) {
      for (let i = buf.indexOf(10); i !== -1 && i < read; i = buf.indexOf(10, i + 1)) n++;
    }
    return n;
  } finally {
    closeSync(fd);
  }
}
