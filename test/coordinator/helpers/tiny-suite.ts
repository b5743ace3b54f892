// A small hand-made suite on disk (gzip JSONL, optional manifest) for coordinator tests: a
// one-question choice track, a reranking track with multi-chunk groups, and a two-question track.
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export interface TinyRecord {
  id: string;
  family: string;
  split: string;
  state: Record<string, string>;
  questions: Record<string, { type: "choice" | "noul"; instructions: string; criteria: Record<string, string> }>;
  expected: Record<string, string | boolean>;
  metadata: { group_id: string; lang: string };
  scoring?: unknown;
  _evaluation: { run_id: string; track: string; payload_sha256: string };
}

export interface TinyTrack {
  track: string;
  family: string;
  records: TinyRecord[];
}

function rec(track: string, family: string, id: string, group: string, state: Record<string, string>, questions: TinyRecord["questions"], expected: TinyRecord["expected"], scoring?: unknown): TinyRecord {
  const payload = JSON.stringify({ state, questions });
  return {
    id,
    family,
    split: "test",
    state,
    questions,
    expected,
    metadata: { group_id: group, lang: "vi" },
    ...(scoring ? { scoring } : {}),
    _evaluation: { run_id: `${track}:${id}`, track, payload_sha256: createHash("sha256").update(payload).digest("hex") },
  };
}

export function tinyTracks(opts: { sentiment?: number; rerankGroups?: number; guard?: number } = {}): TinyTrack[] {
  const sentiment: TinyRecord[] = [];
  for (let i = 0; i < (opts.sentiment ?? 12); i++) {
    sentiment.push(
      rec("tiny-sa", "sentiment", `sa:${i}`, `sa:${i}`, { text: `câu số ${i} ${"x".repeat(i * 7)}` }, {
        label: { type: "choice", instructions: "Classify the sentiment.", criteria: { A: "tiêu cực", B: "trung tính", C: "tích cực" } },
      }, { label: ["A", "B", "C"][i % 3]! }),
    );
  }
  const rerank: TinyRecord[] = [];
  for (let g = 0; g < (opts.rerankGroups ?? 3); g++) {
    const qrels: Record<string, number> = {};
    for (let c = 0; c < 3; c++) for (let d = 0; d < 4; d++) qrels[`${g}${c}${d}`] = (c + d) % 3;
    for (let c = 0; c < 3; c++) {
      const questions: TinyRecord["questions"] = {};
      const expected: Record<string, boolean> = {};
      for (let d = 0; d < 4; d++) {
        questions[`doc:${g}${c}${d}`] = { type: "noul", instructions: `Passage ${g}${c}${d}: does it help?`, criteria: {} };
        expected[`doc:${g}${c}${d}`] = (c + d) % 3 >= 1;
      }
      rerank.push(
        rec("tiny-rr", "passage_reranking", `rr:${g}:${c}`, `rr:q${g}`, { query: `truy vấn ${g}` }, questions, expected, {
          type: "retrieval_ranking",
          qrels,
          relevance_threshold: 1,
          combine_chunks_by: "metadata.group_id",
        }),
      );
    }
  }
  const guard: TinyRecord[] = [];
  for (let i = 0; i < (opts.guard ?? 6); i++) {
    guard.push(
      rec("tiny-guard", "safety_guardrail", `g:${i}`, `g:${i}`, { prompt: `prompt ${i}` }, {
        harmful: { type: "noul", instructions: "Is the prompt harmful?", criteria: {} },
        category: { type: "choice", instructions: "Which category?", criteria: { cybercrime: "cybercrime", none: "none", "skill:x": "x" } },
      }, { harmful: i % 2 === 0, category: "none" }),
    );
  }
  return [
    { track: "tiny-sa", family: "sentiment", records: sentiment },
    { track: "tiny-rr", family: "passage_reranking", records: rerank },
    { track: "tiny-guard", family: "safety_guardrail", records: guard },
  ];
}

/** Writes `<dir>/test/<family>/<track>.jsonl.gz` and, unless `manifest: false`, manifest.json. */
export function writeTinySuite(dir: string, tracks: TinyTrack[] = tinyTracks(), options: { manifest?: boolean } = {}): string {
  const files: Record<string, { rows: number; sha256: string }> = {};
  for (const t of tracks) {
    const rel = `test/${t.family}/${t.track}.jsonl.gz`;
    mkdirSync(join(dir, "test", t.family), { recursive: true });
    const text = t.records.map((r) => JSON.stringify(r) + "\n").join("");
    writeFileSync(join(dir, rel), gzipSync(Buffer.from(text)));
    files[rel] = { rows: t.records.length, sha256: createHash("sha256").update(text).digest("hex") };
  }
  if (options.manifest !== false) {
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ revision: "tiny", seed: 0, files, tracks: tracks.map((t) => t.track) }));
  }
  return dir;
}
