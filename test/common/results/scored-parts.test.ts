// A written line's bytes and lazily made text (committed-line.ts WrittenLine), and the scored parts of
// a flush packed into one transferred buffer for the scorer thread (scored-parts.ts): each part comes
// out as scoredText of its line, whatever the line (written, given up, non-ASCII).
import { describe, expect, it } from "vitest";
import { forEachScoredPart, packScoredParts, plainLine, scoredPartsTransferList, scoredText, writeResultLine, type CommittedLine, type LineQuestions } from "../../../common/results/index.js";

function questions(keys: string[]): LineQuestions {
  return { keys, count: keys.length, options: () => ["A", "B"], indexOf: (k) => keys.indexOf(k) };
}

function written(keys: string[], agent = "a1") {
  const values = keys.flatMap((_, i) => [i / 10, 1 - i / 10]);
  const answer = { skipped: [], errors: {}, latencyMs: 3.25, promptTokens: 7, cachedTokens: null, completionTokens: 1, answeredBy: Object.fromEntries(keys.map((k) => [k, "systemone"])), retries: 0, approximate: false, compactProbs: { questions: keys, values } };
  return writeResultLine({ recordKey: `t:${keys[0]}`, id: keys[0]!, payloadSha256: "ab" }, questions(keys), answer, "t", "f", agent);
}

const unpacked = (lines: CommittedLine[]) => {
  const out: string[] = [];
  forEachScoredPart(packScoredParts(lines), (text) => out.push(text));
  return out;
};

describe("WrittenLine", () => {
  it("its bytes are its text as UTF-8, ASCII or not, and scoredBytes is where the scored part ends in them", () => {
    for (const line of [written(["q1", "q2"]), written(["câu-1", "ключ"], "agent-é")]) {
      expect(Buffer.from(line.bytes).equals(Buffer.from(line.text, "utf8"))).toBe(true);
      expect(JSON.parse(line.text)).toMatchObject({ run_id: line.recordKey, track: "t", family: "f" });
      expect(line.scoredBytes).toBe(Buffer.byteLength(line.text.slice(0, line.scoredLength), "utf8"));
      expect(line.text.slice(0, line.scoredLength)).toMatch(/"skipped":\[\]$/);
      // The same text each time it is asked for.
      expect(line.text).toBe(line.text);
    }
  });

  it("as plain data it keeps its text across a structured clone (a WrittenLine's text is made on its prototype)", () => {
    const line = written(["q1"]);
    const cloned = structuredClone(plainLine(line));
    expect(cloned).toEqual({ recordKey: line.recordKey, track: "t", family: "f", text: line.text, scoredLength: line.scoredLength, errored: false, usage: line.usage });
    expect("bytes" in cloned).toBe(false);
    const given: CommittedLine = { recordKey: "t:9", track: "t", family: "f", text: '{"run_id":"t:9"}', errored: true };
    expect(plainLine(given)).toEqual(given);
  });
});

describe("packScoredParts", () => {
  it("each part is scoredText of its line, in order: written lines, given-up lines, non-ASCII text", () => {
    const lines: CommittedLine[] = [
      written(["q1", "q2", "q3"]),
      { recordKey: "t:9", track: "t", family: "f", text: '{"run_id":"t:9","probs":{},"errors":{"é":"x"}}', errored: true },
      written(["câu-1"], "ý"),
      { recordKey: "t:8", track: "t", family: "f", text: '{"run_id":"t:8","probs":{},"skipped":["é"],"agent":"ü"}', scoredLength: '{"run_id":"t:8","probs":{},"skipped":["é"]'.length, errored: false },
      written(["q4"]),
    ];
    expect(unpacked(lines)).toEqual(lines.map(scoredText));
    for (const text of unpacked(lines)) expect(() => JSON.parse(text)).not.toThrow();
  });

  it("no lines: nothing to unpack", () => {
    const parts = packScoredParts([]);
    expect(parts.ends.length).toBe(0);
    expect(unpacked([])).toEqual([]);
  });

  it("moves its buffers whole: after the transfer the sender's are detached and the receiver reads the same parts", () => {
    const lines = [written(["q1"]), written(["q2", "q3"])];
    const parts = packScoredParts(lines);
    const [bytes, ends] = scoredPartsTransferList(parts);
    expect(bytes!.byteLength).toBe(parts.bytes.byteLength);
    expect(ends!.byteLength).toBe(lines.length * 4);
    const moved = structuredClone(parts, { transfer: scoredPartsTransferList(parts) });
    expect(parts.bytes.byteLength).toBe(0);
    const out: string[] = [];
    forEachScoredPart(moved, (t) => out.push(t));
    expect(out).toEqual(lines.map(scoredText));
  });
});
