// Writes small hand-made suites and result files to temp dirs for the scorer tests.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";

export interface FixtureTrack {
  family: string;
  track: string;
  records: Record<string, unknown>[];
}

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `udm-scorer-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes test/<family>/<track>.jsonl.gz for each track and, unless told not to, a manifest.json. */
export function writeSuite(root: string, tracks: readonly FixtureTrack[], options: { manifest?: boolean } = {}): void {
  const files: Record<string, { rows: number; sha256: string }> = {};
  for (const t of tracks) {
    const rel = `test/${t.family}/${t.track}.jsonl.gz`;
    const text = t.records.map((r) => JSON.stringify(r) + "\n").join("");
    mkdirSync(join(root, "test", t.family), { recursive: true });
    writeFileSync(join(root, rel), gzipSync(text));
    files[rel] = { rows: t.records.length, sha256: createHash("sha256").update(text).digest("hex") };
  }
  if (options.manifest !== false) writeFileSync(join(root, "manifest.json"), JSON.stringify({ files, tracks: tracks.map((t) => t.track) }));
}

export function writeResults(file: string, lines: readonly unknown[], tail = ""): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, lines.map((l) => JSON.stringify(l) + "\n").join("") + tail);
}

let serial = 0;

/** A record with sensible defaults; `track` is used for the run_id. */
export function record(track: string, fields: {
  id?: string;
  family?: string;
  questions: Record<string, { type: "choice" | "noul"; criteria?: Record<string, string> }>;
  expected?: Record<string, string | boolean>;
  group?: string;
  lang?: string;
  scoring?: Record<string, unknown>;
}): Record<string, unknown> {
  const id = fields.id ?? `r${++serial}`;
  const questions = Object.fromEntries(
    Object.entries(fields.questions).map(([k, q]) => [k, { type: q.type, instructions: `question ${k}`, criteria: q.criteria ?? {} }]),
  );
  return {
    id,
    family: fields.family ?? "sentiment",
    split: "test",
    state: { text: `state of ${id}` },
    questions,
    expected: fields.expected ?? {},
    metadata: { group_id: fields.group ?? id, lang: fields.lang ?? "vi" },
    ...(fields.scoring ? { scoring: fields.scoring } : {}),
    _evaluation: { run_id: `${track}:${id}`, payload_sha256: "0".repeat(64) },
  };
}

export const ABC = { A: "negative", B: "neutral", C: "positive" };

/** A choice distribution putting `p` on `key` and the rest evenly on the others. */
export function peaked(keys: readonly string[], key: string, p = 0.7): Record<string, number> {
  const rest = (1 - p) / (keys.length - 1);
  return Object.fromEntries(keys.map((k) => [k, k === key ? p : rest]));
}

export function noul(pTrue: number): { true: number; false: number } {
  return { true: pTrue, false: 1 - pTrue };
}
