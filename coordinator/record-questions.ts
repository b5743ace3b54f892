// A record's questions as a result is checked and written: their keys (one split of the record's
// compact key string) and option lists, found by key in constant time. Results list questions in
// criteria order, so the expected position is tried before an index is built: a 64-question
// reranking record is checked in one pass, not in a pass per question.
//
// A result's questions are looked at three times (its keys matched as it is decoded, then checked,
// then written), and a batch of results is decoded whole before the first is checked: the records
// of the latest RECENT lookups keep their questions, so a record's key string is split once, not
// twice (the split was 37 of the 407 MB the coordinator's thread allocated while it served results,
// V8's sampling heap profiler over a full-suite coordinator-bench run, garbage included).
import { QUESTION_KEY_SEPARATOR } from "./track-reader.js";
import type { RecordEntry } from "./suite-index.js";

/** What a record's questions are made from (a RecordEntry's fields; the results writer's thread sends them alone). */
export type QuestionFields = Pick<RecordEntry, "questionKeys" | "questionCount" | "optionLists">;

/** Records whose questions are kept: more than a batch of results holds (an agent sends 64 at most). */
const RECENT = 1024;

export class RecordQuestions {
  private static last: RecordQuestions | undefined;
  private static readonly recent = new Map<RecordEntry, RecordQuestions>();

  /** The questions of `record`; the same object for a record looked up among the latest RECENT. */
  static of(record: RecordEntry): RecordQuestions {
    const last = RecordQuestions.last;
    if (last && last.record === record) return last;
    const { recent } = RecordQuestions;
    let qs = recent.get(record);
    if (!qs) {
      recent.set(record, (qs = new RecordQuestions(record)));
      if (recent.size > RECENT) recent.delete(recent.keys().next().value!);
    }
    return (RecordQuestions.last = qs);
  }

  readonly keys: readonly string[];
  private readonly shared: readonly string[] | undefined;
  private byKey: Map<string, number> | undefined;

  /** Questions made now, not kept (RecordQuestions.of keeps those of the latest records). */
  constructor(private readonly record: QuestionFields) {
    this.keys = record.questionCount === 0 ? [] : record.questionKeys.split(QUESTION_KEY_SEPARATOR);
    this.shared = record.optionLists.length === 1 ? record.optionLists[0] : undefined;
  }

  get count(): number {
    return this.keys.length;
  }

  /** Option keys of question i, in criteria order. */
  options(i: number): readonly string[] {
    return this.shared ?? this.record.optionLists[i] ?? [];
  }

  /** Index of the question with this key, or -1; `hint` is where it is expected. */
  indexOf(key: string, hint: number): number {
    if (this.keys[hint] === key) return hint;
    if (!this.byKey) {
      this.byKey = new Map();
      for (let i = 0; i < this.keys.length; i++) if (!this.byKey.has(this.keys[i]!)) this.byKey.set(this.keys[i]!, i);
    }
    return this.byKey.get(key) ?? -1;
  }
}
