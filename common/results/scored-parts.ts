// The part a scorer reads of each line of a flush (scoredText), packed as UTF-8 into one buffer that
// is transferred to the scorer thread, not copied: from a WrittenLine its bytes up to scoredBytes
// and the object's closing brace, with no string made in the sending thread. Sent as a string per
// line, each text was copied by the structured clone on top of being made.
import { scoredText, type CommittedLine } from "./committed-line.js";

/** The parts one after another; part i ends at ends[i] (and starts where part i - 1 ended). */
export interface PackedScoredParts {
  bytes: Uint8Array;
  ends: Int32Array;
}

const CLOSE_BRACE = 0x7d;

export function packScoredParts(lines: readonly CommittedLine[]): PackedScoredParts {
  const ends = new Int32Array(lines.length);
  let size = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    size += l.bytes && l.scoredBytes !== undefined ? l.scoredBytes + 1 : Buffer.byteLength(scoredText(l), "utf8");
    ends[i] = size;
  }
  // Its own ArrayBuffer (not a slice of Node's pool), so it can be transferred.
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.bytes && l.scoredBytes !== undefined) {
      out.set(l.bytes.subarray(0, l.scoredBytes), at);
      out[at + l.scoredBytes] = CLOSE_BRACE;
    } else out.write(scoredText(l), at, "utf8");
    at = ends[i]!;
  }
  return { bytes: out, ends };
}

/** Each part's text, in order. */
export function forEachScoredPart(parts: PackedScoredParts, each: (text: string) => void): void {
  const bytes = Buffer.from(parts.bytes.buffer, parts.bytes.byteOffset, parts.bytes.byteLength);
  let start = 0;
  for (let i = 0; i < parts.ends.length; i++) {
    const end = parts.ends[i]!;
    each(bytes.toString("utf8", start, end));
    start = end;
  }
}

/** What postMessage moves instead of copying. */
export function scoredPartsTransferList(parts: PackedScoredParts): ArrayBuffer[] {
  return [parts.bytes.buffer as ArrayBuffer, parts.ends.buffer as ArrayBuffer];
}
