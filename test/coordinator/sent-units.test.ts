// The result decoder takes a result's run_id and payload digest from the unit it names when the unit
// was sent (coordinator/transport/sent-units.ts): the same text as decoding them, whatever the
// result says. (That the index's own strings come back cannot be seen in JavaScript, where equal
// strings cannot be told apart; the unit's cursor shows which record was matched.)
import { describe, expect, it } from "vitest";
import { decodeResults } from "../../coordinator/transport/result-decoder.js";
import { asciiEquals, rememberSentUnit, sentUnit } from "../../coordinator/transport/sent-units.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";
import { AnsweredByList } from "../../common/results/index.js";

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return Buffer.from(out);
}
const field = (n: number, bytes: Buffer) => Buffer.concat([varint((n << 3) | 2), varint(bytes.length), bytes]);
const str = (n: number, s: string) => field(n, Buffer.from(s, "utf8"));

/** AgentMessage { results: ResultBatch { results: [RecordResult { fields... }] } }, fields as given (in that order). */
const batch = (...results: Buffer[][]) => field(6, Buffer.concat(results.map((fields) => field(1, Buffer.concat(fields)))));

const SHA = "a".repeat(64);
const records = [
  { recordKey: "track-x:query:0000000001:c0", payloadSha256: SHA },
  { recordKey: "track-x:query:0000000001:c1", payloadSha256: "b".repeat(64) },
  { recordKey: "track-x:câu-hỏi:c2", payloadSha256: SHA },
].map((r) => ({ ...r, questionKeys: "", questionCount: 0, optionLists: [] }) as unknown as RecordEntry);

/** A record of the run with these question keys (options true/false), as the suite index holds it. */
const recordWith = (recordKey: string, keys: readonly string[]) =>
  ({ recordKey, payloadSha256: SHA, ...compactQuestions(keys.map((key) => ({ key, options: ["true", "false"] })), new OptionInterner()) }) as unknown as RecordEntry;

describe("results of a sent unit", () => {
  rememberSentUnit("track-x/7", records);

  it("run_id and payload digest read as the unit's records, in any order of its records", () => {
    const out = decodeResults(
      batch(
        [str(1, "track-x/7"), str(2, records[1]!.recordKey), str(8, records[1]!.payloadSha256)],
        [str(1, "track-x/7"), str(2, records[0]!.recordKey), str(8, SHA)],
      ),
    )!;
    expect(out.map((r) => [r.unitId, r.recordKey, r.payloadSha256])).toEqual([
      ["track-x/7", records[1]!.recordKey, records[1]!.payloadSha256],
      ["track-x/7", records[0]!.recordKey, SHA],
    ]);
    expect(sentUnit("track-x/7")!.next).toBe(1);
  });

  it("a run_id or digest that is not the unit's record's is decoded as sent", () => {
    const out = decodeResults(
      batch(
        [str(1, "track-x/7"), str(2, "track-x:query:0000000001:c9"), str(8, SHA)],
        [str(1, "track-x/7"), str(2, records[0]!.recordKey), str(8, "c".repeat(64))],
        [str(1, "track-x/7"), str(2, records[0]!.recordKey.slice(0, -1)), str(8, SHA.slice(1))],
        // run_id before unit_id: nothing to match it against yet.
        [str(2, records[0]!.recordKey), str(1, "track-x/7"), str(8, SHA)],
        [str(1, "track-y/1"), str(2, records[0]!.recordKey), str(8, SHA)],
      ),
    )!;
    expect(out.map((r) => [r.unitId, r.recordKey, r.payloadSha256])).toEqual([
      ["track-x/7", "track-x:query:0000000001:c9", SHA],
      ["track-x/7", records[0]!.recordKey, "c".repeat(64)],
      ["track-x/7", records[0]!.recordKey.slice(0, -1), SHA.slice(1)],
      ["track-x/7", records[0]!.recordKey, SHA],
      ["track-y/1", records[0]!.recordKey, SHA],
    ]);
  });

  it("a non-ASCII run_id is decoded from its UTF-8 bytes, and a Latin-1 look-alike never matches it", () => {
    const [r] = decodeResults(batch([str(1, "track-x/7"), str(2, records[2]!.recordKey), str(8, SHA)]))!;
    expect(r!.recordKey).toBe("track-x:câu-hỏi:c2");
    const bytes = Buffer.from("é", "utf8");
    expect(asciiEquals(bytes.toString("latin1"), bytes, 0, bytes.length)).toBe(false);
    expect(asciiEquals("ab", Buffer.from("ab"), 0, 2)).toBe(true);
    expect(asciiEquals("ab", Buffer.from("abc"), 0, 3)).toBe(false);
  });

  it("forgets the oldest unit past 4096 sent, and a unit sent again starts its cursor over", () => {
    rememberSentUnit("first", records);
    for (let i = 0; i < 4096; i++) rememberSentUnit(`u${i}`, records);
    expect(sentUnit("first")).toBeUndefined();
    expect(sentUnit("u0")).toBeDefined();
    sentUnit("u0")!.next = 2;
    rememberSentUnit("u0", records);
    expect(sentUnit("u0")!.next).toBe(0);
  });

  it("question keys (prob_questions, answered_by) read as the record's own, in or out of criteria order, or decoded as sent", () => {
    const keys = ["doc:11", "doc:12", "doc:13", "ý", "doc:15"];
    const record = recordWith("track-z:q:c0", keys);
    rememberSentUnit("track-z/1", [record]);
    const entry = (k: string, m: string) => field(9, Buffer.concat([str(1, k), str(2, m)]));
    const asked = ["doc:11", "doc:12", "doc:15", "doc:13", "ý", "doc:99", "doc:1"];
    const out = decodeResults(
      batch(
        [str(1, "track-z/1"), str(2, record.recordKey), str(8, SHA), ...asked.slice(0, 3).map((k) => entry(k, "systemone")), ...asked.map((k) => str(12, k))],
        [str(1, "track-z/1"), str(2, record.recordKey), ...asked.slice().reverse().map((k) => str(12, k))],
      ),
    )!;
    expect(out[0]!.compactProbs!.questions).toEqual(asked);
    expect((out[0]!.answeredBy as AnsweredByList).keys).toEqual(asked.slice(0, 3));
    expect(out[1]!.compactProbs!.questions).toEqual(asked.slice().reverse());
  });

  it("answered_by keys matched to the record's questions: a repeat keeps the first place and the later method, an index key goes first", () => {
    const keys = ["doc:1", "doc:2", "7", "doc:3"];
    const record = recordWith("track-w:q:c0", keys);
    rememberSentUnit("track-w/1", [record]);
    const entry = (k: string, m: string) => field(9, Buffer.concat([str(1, k), str(2, m)]));
    const head = [str(1, "track-w/1"), str(2, record.recordKey)];
    const out = decodeResults(
      batch(
        // Each of the record's questions once, in criteria order: the pairs as sent.
        [...head, entry("doc:1", "a"), entry("doc:2", "b"), entry("doc:3", "c")],
        // A question named twice (both matched to the record's): one pair, the later method.
        [...head, entry("doc:2", "a"), entry("doc:1", "b"), entry("doc:2", "c")],
        // Distinct, but an array-index key: it goes first, as in the object.
        [...head, entry("doc:1", "a"), entry("7", "b"), entry("doc:3", "c")],
        // The same question twice in a row, then the rest.
        [...head, entry("doc:3", "a"), entry("doc:3", "b"), entry("doc:1", "c")],
      ),
    )!;
    const pairs = (i: number) => {
      const list = out[i]!.answeredBy as AnsweredByList;
      return list.keys.map((k, j) => [k, list.methods[j]]);
    };
    expect(pairs(0)).toEqual([["doc:1", "a"], ["doc:2", "b"], ["doc:3", "c"]]);
    expect(pairs(1)).toEqual([["doc:2", "c"], ["doc:1", "b"]]);
    expect(pairs(2)).toEqual([["7", "b"], ["doc:1", "a"], ["doc:3", "c"]]);
    expect(pairs(3)).toEqual([["doc:3", "b"], ["doc:1", "c"]]);
  });

  it("answered_by of a record with more questions than the decoder's first tables: repeats still found", () => {
    const keys = Array.from({ length: 100 }, (_, i) => `doc:${i}`);
    const record = recordWith("track-v:q:c0", keys);
    rememberSentUnit("track-v/1", [record]);
    const entry = (k: string, m: string) => field(9, Buffer.concat([str(1, k), str(2, m)]));
    const named = [...keys, "doc:99", "doc:0"];
    const [r] = decodeResults(batch([str(1, "track-v/1"), str(2, record.recordKey), ...named.map((k, i) => entry(k, `m${i}`))]))!;
    const list = r!.answeredBy as AnsweredByList;
    expect(list.keys).toEqual(keys);
    expect(list.methods[0]).toBe("m101");
    expect(list.methods[99]).toBe("m100");
    expect(list.methods[50]).toBe("m50");
  });
});
