// A RecordResult as the coordinator's domain sees it, after conversion from the wire (wire.ts), and
// where its map form becomes the one probability shape (compactAnswerOf, once its record is known).
import type { AnsweredBy, CompactProbs, ResultAnswer } from "../common/results/index.js";
import type { RecordQuestions } from "./record-questions.js";

export interface IncomingResult extends ResultAnswer {
  unitId: string;
  recordKey: string;
  /** question key -> option key -> probability, as sent (the map form; checked, then converted). */
  probs: Record<string, Record<string, number>>;
  /**
   * The compact form (RecordResult.prob_questions / prob_values): questions answered with
   * probabilities and their values one after another, each over the question's option keys in the
   * record's criteria order. Absent when the agent sent only the map form.
   */
  compactProbs?: { questions: string[]; values: number[] };
  skipped: string[];
  errors: Record<string, string>;
  requests: number;
  payloadSha256: string;
  /** Question key -> engine method (a decoded result's: its pairs, in the order of the line's object). */
  answeredBy: AnsweredBy;
}

/**
 * The answer with its map form (if any) laid out as the compact form, after the compact questions
 * (a question in both keeps the compact values, as it always did). The result itself when it has no
 * map form, as agents send: nothing is allocated on that path.
 */
export function compactAnswerOf(result: IncomingResult, qs: RecordQuestions): ResultAnswer {
  if (!hasOwnKeys(result.probs)) return result;
  const questions = [...(result.compactProbs?.questions ?? [])];
  const values = [...(result.compactProbs?.values ?? [])];
  let hint = 0;
  for (const key of Object.keys(result.probs)) {
    const i = qs.indexOf(key, hint);
    if (i < 0) continue; // not in the record: never written
    const dist = result.probs[key]!;
    questions.push(key);
    for (const o of qs.options(i)) values.push(dist[o]!);
    hint = i + 1;
  }
  const compactProbs: CompactProbs = { questions, values };
  return { ...result, compactProbs };
}

function hasOwnKeys(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}
