// A results line the coordinator made durable, as it travels to the line's consumers (progress,
// metrics, the bus, the run card's scorer): the line's text exactly as written to the track file,
// and the few fields they read without parsing it. The coordinator writes the text straight from a
// result (line-writer.ts) and no consumer needs the line as an object on the hot path.

export interface CommittedLine {
  recordKey: string;
  track: string;
  family: string;
  /** The line as written to the track's results file (JSON, without the newline). */
  text: string;
  /**
   * Where the part of `text` a scorer reads ends: run_id, id, track, family, probs, skipped and
   * errors come first in a line, usage and provenance after (format.ts acceptedResultLine). Absent:
   * the whole line (scoredText).
   */
  scoredLength?: number;
  /** The line has errors: the record is redone by the next start, and this line superseded. */
  errored: boolean;
  /** Engine time and tokens; absent on a given-up line, which took no engine time of its own. */
  usage?: LineUsage;
}

export interface LineUsage {
  latencyMs: number;
  promptTokens: number;
  /** null: the engine did not report it (the line then has no cached_tokens). */
  cachedTokens: number | null;
  completionTokens: number;
}

/** A CommittedLine, as against a results line parsed into an object (the bus takes either). */
export function isCommittedLine(line: object): line is CommittedLine {
  const l = line as Partial<CommittedLine>;
  return typeof l.text === "string" && typeof l.recordKey === "string" && typeof l.errored === "boolean";
}

/**
 * The line as a scorer reads it (run_id, probs, skipped, errors; a JSON object): the part of its
 * text before usage and provenance. A reranking record's answered_by alone is a key per document
 * question, and the scorer thread parses every committed line.
 */
export function scoredText(line: CommittedLine): string {
  return scoredPart(line.text, line.scoredLength ?? -1);
}

/** scoredText of a line's text and its scoredLength (-1: none, the whole text). */
export function scoredPart(text: string, scoredLength: number): string {
  return scoredLength < 0 ? text : `${text.slice(0, scoredLength)}}`;
}
