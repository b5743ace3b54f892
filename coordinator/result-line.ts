// An accepted result as the line written to `<out>/<family>/<track>.jsonl` (SUITE_FORMAT.md
// "Results"): the reference runner's fields, then ours.
import { RESULT_FORMAT } from "../common/results/format.js";
import type { IncomingResult } from "./incoming-result.js";
import type { StoredResultLine } from "./results-store.js";
import { questionSpecs, type RecordEntry } from "./suite-index.js";

export function resultLine(result: IncomingResult, record: RecordEntry, track: string, family: string, agentId: string): StoredResultLine {
  // Distributions are written in criteria order whatever order the map arrived in.
  const questions = questionSpecs(record);
  const probs: Record<string, Record<string, number>> = {};
  for (const q of questions) {
    const dist = result.probs[q.key];
    if (!dist) continue;
    const ordered: Record<string, number> = {};
    for (const o of q.options) ordered[o] = dist[o]!;
    probs[q.key] = ordered;
  }
  const line: StoredResultLine = {
    run_id: record.runId,
    id: record.id,
    track,
    family,
    probs,
    skipped: questions.map((q) => q.key).filter((k) => result.skipped.includes(k)),
  };
  if (Object.keys(result.errors).length > 0) line.errors = result.errors;
  line.payload_sha256 = record.payloadSha256;
  line.agent = agentId;
  line.latency_ms = result.latencyMs;
  line.prompt_tokens = result.promptTokens;
  line.cached_tokens = result.cachedTokens;
  line.completion_tokens = result.completionTokens;
  line.answered_by = result.answeredBy;
  if (result.retries > 0) line.retries = result.retries;
  if (result.approximate) line.approximate = true;
  line.format = RESULT_FORMAT;
  return line;
}

/** The line of a record given up after repeated invalid results: every question in errors. */
export function givenUpLine(record: RecordEntry, track: string, family: string, reason: string): StoredResultLine {
  return {
    run_id: record.runId,
    id: record.id,
    track,
    family,
    probs: {},
    skipped: [],
    errors: Object.fromEntries(questionSpecs(record).map((q) => [q.key, `rejected by the coordinator: ${reason}`])),
    payload_sha256: record.payloadSha256,
    agent: "",
    format: RESULT_FORMAT,
  };
}
