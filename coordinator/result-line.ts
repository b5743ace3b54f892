// The coordinator's side of writing a results line: a result meets its record here, its map form
// (if any) becomes the compact form, and common/results writes the line (line-writer.ts).
import { type CommittedLine, givenUpResultLine, lineHasErrors, writeResultLine } from "../common/results/index.js";
import { compactAnswerOf, type IncomingResult } from "./incoming-result.js";
import { RecordQuestions } from "./record-questions.js";
import { questionSpecs, type RecordEntry } from "./suite-index.js";

/** The line of an accepted (validated) result. */
export function resultLine(result: IncomingResult, record: RecordEntry, track: string, family: string, agentId: string): CommittedLine {
  const qs = RecordQuestions.of(record);
  return writeResultLine(record, qs, compactAnswerOf(result, qs), track, family, agentId);
}

/** The line of a record given up after repeated invalid results: every question in errors. */
export function givenUpLine(record: RecordEntry, track: string, family: string, reason: string): CommittedLine {
  const line = givenUpResultLine({ recordKey: record.recordKey, id: record.id, track, family, payloadSha256: record.payloadSha256, questions: questionSpecs(record) }, reason);
  return { recordKey: record.recordKey, track, family, text: JSON.stringify(line), errored: lineHasErrors(line) };
}
