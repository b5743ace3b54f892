// Shared by the sim and systemone tests: a tiny suite on disk and a JSON POST helper.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export interface FixtureRecord {
  id: string;
  state: Record<string, string>;
  questions: Record<string, { type: "choice" | "noul"; instructions: string; criteria: Record<string, string> }>;
  expected: Record<string, string | boolean>;
}

/** `n` records of one track: a 4-way choice "label" and a noul "flag" per record, gold varying. */
export function makeRecords(n: number, track = "t-demo"): Array<FixtureRecord & { run_id: string }> {
  const letters = ["A", "B", "C", "D"];
  return Array.from({ length: n }, (_, i) => ({
    id: `r${i}`,
    run_id: `${track}:r${i}`,
    state: { text: `Record number ${i}: the customer writes about order ${i * 7} and a refund that never came.` },
    questions: {
      label: { type: "choice", instructions: "Which sentiment?", criteria: { A: "negative", B: "neutral", C: "positive", D: "mixed" } },
      flag: { type: "noul", instructions: "Is it a complaint?", criteria: {} },
    },
    expected: { label: letters[i % 4]!, flag: i % 3 === 0 },
  }));
}

/** Writes a suite `<dir>/test/<family>/<track>.jsonl.gz`; returns the suite root. */
export function writeSuite(records: Array<FixtureRecord & { run_id: string }>, track = "t-demo", family = "sentiment"): string {
  const root = mkdtempSync(join(tmpdir(), "udm-sim-suite-"));
  mkdirSync(join(root, "test", family), { recursive: true });
  const lines = records.map((r) =>
    JSON.stringify({
      id: r.id,
      family,
      split: "test",
      state: r.state,
      questions: r.questions,
      expected: r.expected,
      metadata: { group_id: r.id, lang: "en" },
      _evaluation: { run_id: r.run_id, payload_sha256: "x" },
    }),
  );
  writeFileSync(join(root, "test", family, `${track}.jsonl.gz`), gzipSync(lines.join("\n") + "\n"));
  return root;
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = { "content-type": "application/json" }): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export function choiceQuestion(n: number, instructions = "Pick one."): { type: "choice"; instructions: string; criteria: Record<string, string> } {
  return { type: "choice", instructions, criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, `option ${i}`])) };
}
