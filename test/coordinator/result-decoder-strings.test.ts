// The result decoder hands back a short ASCII string it decoded lately instead of making it again
// (result-decoder.ts utf8): many distinct keys share its slots, so each must still come back as its
// own text, whatever was decoded before it. (That no string is made again shows in bench/coordinator-bench's
// allocation, not here: equal strings cannot be told apart in JavaScript.)
import { describe, expect, it } from "vitest";
import { decodeResults } from "../../coordinator/transport/result-decoder.js";
import { AnsweredByList, answeredByRecord } from "../../common/results/index.js";

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return Buffer.from(out);
}

/** A length-delimited field. */
function field(n: number, bytes: Buffer): Buffer {
  return Buffer.concat([varint((n << 3) | 2), varint(bytes.length), bytes]);
}

/** AgentMessage { result: RecordResult { record_key, skipped: [key], answered_by: { key: method } } }. */
function resultWith(key: string, method: string): Buffer {
  const entry = Buffer.concat([field(1, Buffer.from(key)), field(2, Buffer.from(method))]);
  return field(3, Buffer.concat([field(2, Buffer.from(`t:${key}`)), field(4, Buffer.from(key)), field(9, entry)]));
}

describe("decodeResults strings", () => {
  it("every key comes back as its own text though thousands share the decoder's slots", () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `${"abcdefgh".slice(0, i % 8)}q${i.toString(36)}`.slice(0, 1 + (i % 48)) + String(i));
    for (let pass = 0; pass < 2; pass++) {
      for (const key of keys) {
        // A key and then its own prefix: where the two share a slot, the longer one must not answer for the shorter.
        for (const k of [key, key.slice(0, -1)]) {
          const [r] = decodeResults(resultWith(k, `m${k.length % 3}`))!;
          expect(r!.skipped).toEqual([k]);
          expect(r!.recordKey).toBe(`t:${k}`);
          expect(answeredByRecord(r!.answeredBy)).toEqual({ [k]: `m${k.length % 3}` });
        }
      }
    }
  });

  it("long and non-ASCII strings are decoded as UTF-8", () => {
    for (const key of ["câu-7", "é", "x".repeat(49), "y".repeat(48), "ключ", "\u0000a"]) {
      const [r] = decodeResults(resultWith(key, "systemone"))!;
      expect(r!.skipped).toEqual([key]);
      expect(Object.keys(answeredByRecord(r!.answeredBy))).toEqual([key]);
    }
  });

  it("answered_by entries that repeat a key on the wire: the later method, in the first one's place, as a protobuf map reads", () => {
    const entry = (k: string, m: string) => field(9, Buffer.concat([field(1, Buffer.from(k)), field(2, Buffer.from(m))]));
    const bytes = field(3, Buffer.concat([field(2, Buffer.from("t:r")), entry("doc:2", "systemone"), entry("doc:1", "systemone"), entry("doc:2", "label-read"), entry("7", "decisions")]));
    const [r] = decodeResults(bytes)!;
    expect(r!.answeredBy).toBeInstanceOf(AnsweredByList);
    const list = r!.answeredBy as AnsweredByList;
    expect(list.keys).toEqual(["7", "doc:2", "doc:1"]);
    expect(list.methods).toEqual(["decisions", "label-read", "systemone"]);
  });
});
