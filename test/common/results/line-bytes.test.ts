// The byte buffer a results line is written into (common/results/line-bytes.ts): any
// sequence of pieces comes out as their text joined, from a buffer too small for them (it grows at
// any piece), with ASCII, UTF-8 and strings JSON.stringify escapes in any order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineBytes } from "../../../common/results/line-bytes.js";

type Piece = { kind: "raw" | "text" | "json"; s: string };

const ascii = fc.string({ maxLength: 40 });
const anyText = fc.oneof(fc.string({ unit: "grapheme", maxLength: 20 }), fc.constantFrom("Việt", "\u007f", "\u0080", "ü", "😀"));
const forJson = fc.oneof(fc.string({ unit: "binary", maxLength: 20 }), fc.constantFrom('"', '""', "\\", "\\\\", "\u0001", "\u001f", " ", "~", "\u007f", "\ud800", "a\"b\\c"));
const piece: fc.Arbitrary<Piece> = fc.oneof(
  ascii.map((s) => ({ kind: "raw" as const, s })),
  anyText.map((s) => ({ kind: "text" as const, s })),
  forJson.map((s) => ({ kind: "json" as const, s })),
);

function expected(pieces: readonly Piece[]): string {
  return pieces.map((p) => (p.kind === "json" ? JSON.stringify(p.s) : p.s)).join("");
}

/** The text written; `length` said its length (in UTF-16 units) after every piece. */
function written(w: LineBytes, pieces: readonly Piece[]): string {
  w.start();
  let units = 0;
  for (const p of pieces) {
    w[p.kind](p.s);
    units += (p.kind === "json" ? JSON.stringify(p.s) : p.s).length;
    expect(w.length).toBe(units);
  }
  return w.finish();
}

describe("LineBytes", () => {
  it("gives the pieces' text joined, from any first capacity, line after line in one buffer", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.array(fc.array(piece, { maxLength: 30 }), { minLength: 1, maxLength: 4 }), (capacity, lines) => {
        const w = new LineBytes(capacity);
        for (const pieces of lines) expect(written(w, pieces)).toBe(expected(pieces));
      }),
      { numRuns: 400 },
    );
  });

  it("a piece many times the buffer's size, at its very end", () => {
    const w = new LineBytes(4);
    const pieces: Piece[] = [
      { kind: "raw", s: "abc" },
      { kind: "json", s: "k".repeat(100) },
      { kind: "text", s: "é".repeat(50) },
      { kind: "raw", s: "z".repeat(1000) },
    ];
    expect(written(w, pieces)).toBe(expected(pieces));
  });

  it("strings JSON.stringify escapes are escaped, however short", () => {
    const w = new LineBytes(64);
    for (const s of ['"', '""', "\\", "\n", "\u0000", "\ud83d", "é"]) expect(written(w, [{ kind: "json", s }])).toBe(JSON.stringify(s));
  });
});
