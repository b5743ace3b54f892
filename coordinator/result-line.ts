// The coordinator's side of writing a results line: its accepted result and suite record, handed to
// the results format (common/results/format.ts) as plain inputs.
import { acceptedResultLine, givenUpResultLine, type LineRecord, type StoredResultLine } from "../common/results/format.js";
import type { IncomingResult } from "./incoming-result.js";
import { acceptedProbs } from "./result-validator.js";
import { questionSpecs, type RecordEntry } from "./suite-index.js";

function lineRecord(record: RecordEntry, track: string, family: string, questions = questionSpecs(record)): LineRecord {
  return { runId: record.runId, id: record.id, track, family, payloadSha256: record.payloadSha256, questions };
}

export function resultLine(result: IncomingResult, record: RecordEntry, track: string, family: string, agentId: string): StoredResultLine {
  const questions = questionSpecs(record);
  return acceptedResultLine(lineRecord(record, track, family, questions), {
    probs: acceptedProbs(result, questions),
    skipped: result.skipped,
    errors: result.errors,
    agent: agentId,
    latencyMs: result.latencyMs,
    promptTokens: result.promptTokens,
    cachedTokens: result.cachedTokens,
    completionTokens: result.completionTokens,
    answeredBy: result.answeredBy,
    retries: result.retries,
    approximate: result.approximate,
  });
}

/** The line of a record given up after repeated invalid results: every question in errors. */
export function givenUpLine(record: RecordEntry, track: string, family: string, reason: string): StoredResultLine {
  return givenUpResultLine(lineRecord(record, track, family), reason);
}
