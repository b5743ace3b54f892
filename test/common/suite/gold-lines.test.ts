import { describe, expect, it } from "vitest";
import { GOLD_CHUNK_BYTES, GoldLines, goldRecordsOf } from "../../../common/suite/index.js";

/** Lines of `n` records whose texts are `text` repeated to about `chars` characters. */
function lines(n: number, chars: number, text: string): string[] {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ id: `r${i}`, line: i + 1, note: text.repeat(Math.ceil(chars / text.length)).slice(0, chars) }));
}

function roundTrip(input: string[]): { chunks: Uint8Array[]; out: string[] } {
  const g = new GoldLines();
  for (const l of input) g.push(l);
  const chunks = g.finish();
  return { chunks, out: [...goldRecordsOf(chunks)].map((r) => JSON.stringify(r)) };
}

describe("GoldLines", () => {
  it("gives back every line in order across chunks, each chunk whole lines of at most a chunk's bytes", () => {
    // Vietnamese text: 1-3 UTF-8 bytes per character, so lines end at odd places in a chunk.
    const input = lines(3_000, 900, "Tiếng Việt có dấu ở đây, ");
    const { chunks, out } = roundTrip(input);
    expect(out).toEqual(input);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.byteLength).toBeLessThanOrEqual(GOLD_CHUNK_BYTES);
      expect(c[c.byteLength - 1]).toBe(0x0a);
      expect(Buffer.from(c).toString("utf8")).not.toContain("\uFFFD");
    }
    const total = chunks.reduce((n, c) => n + c.byteLength, 0);
    expect(total).toBe(input.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
  });

  it("fills a chunk to the byte when the three-bytes-per-character bound does not fit", () => {
    // ASCII lines of about 1,000 bytes: the first chunk holds as many whole lines as fit, not a third of that.
    const input = lines(2_000, 950, "a");
    const { chunks, out } = roundTrip(input);
    expect(out).toEqual(input);
    let first = 0;
    for (const l of input) {
      if (first + Buffer.byteLength(l) + 1 > GOLD_CHUNK_BYTES) break;
      first += Buffer.byteLength(l) + 1;
    }
    expect(chunks[0]!.byteLength).toBe(first);
  });

  it("gives a line longer than a chunk a chunk of its own", () => {
    const input = [...lines(2, 10, "x"), ...lines(1, GOLD_CHUNK_BYTES + 5, "ệ"), ...lines(2, 10, "y")];
    const { chunks, out } = roundTrip(input);
    expect(out).toEqual(input);
    expect(chunks.map((c) => c.byteLength)).toEqual([
      Buffer.byteLength(input[0]!) + Buffer.byteLength(input[1]!) + 2,
      Buffer.byteLength(input[2]!) + 1,
      Buffer.byteLength(input[3]!) + Buffer.byteLength(input[4]!) + 2,
    ]);
  });

  it("gives no chunk for no lines, and each chunk a buffer of its own (transferable alone)", () => {
    expect(new GoldLines().finish()).toEqual([]);
    // About 1.1 chunks of lines: the last chunk holds a tenth of one.
    const { chunks } = roundTrip(lines(Math.round((1.1 * GOLD_CHUNK_BYTES) / 901), 900, "b"));
    expect(chunks.length).toBe(2);
    expect(new Set(chunks.map((c) => c.buffer)).size).toBe(chunks.length);
    // The small last chunk is cut to its size.
    expect(chunks.at(-1)!.buffer.byteLength).toBe(chunks.at(-1)!.byteLength);
  });
});
