// The coordinator's read parses a line from its bytes and leaves the record's texts as byte strings
// (common/suite/record-texts.ts): what it accepts, refuses and reports, every exact field, the texts
// once decoded, and the gold must be those of the exact read, whatever the strings hold.
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { FormatError } from "../../../common/errors.js";
import { readJsonLinesFrom, type ReadOptions } from "../../../common/jsonl-reader.js";
import { goldLine, readTrackRecords, withExactTexts, type TrackFile } from "../../../common/suite/index.js";
import { decodeByteStrings } from "../../../common/suite/record-texts.js";

const dir = mkdtempSync(join(tmpdir(), "udm-record-texts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/** Lines, bad lines and the error of a read, each value decoded when it came as byte strings. */
async function lines(bytes: Buffer, options: ReadOptions): Promise<{ values: unknown[]; bad: string[]; error?: string; asBytes: number }> {
  const out: { values: unknown[]; bad: string[]; error?: string; asBytes: number } = { values: [], bad: [], asBytes: 0 };
  try {
    for await (const l of readJsonLinesFrom(once(bytes), "f.jsonl", { ...options, onBadLine: (e) => out.bad.push(e.message) })) {
      if (l.byteStrings) out.asBytes++;
      out.values.push([l.line, l.bytes, l.byteStrings ? decodeByteStrings(l.value) : l.value]);
    }
  } catch (err) {
    if (!(err instanceof FormatError)) throw err;
    out.error = err.message;
  }
  return out;
}

// Strings that tell byte strings from exact ones: Latin-1's upper half (decoding is not idempotent
// there), Vietnamese, escapes JSON writes as \n or \", controls and lone surrogates it writes as \u.
const piece = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom("a", "é", "\u00ff", "\u0080", "Việt", "ở", "🙂", "\n", '"', "\\", "\t", "__proto__", "doc:1", "") },
  { weight: 1, arbitrary: fc.constantFrom("\u0001", "\ud800") },
);
const str = fc.array(piece, { maxLength: 4 }).map((p) => p.join(""));
const json = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: "small" }, str, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(str, tie("v"), { maxKeys: 3 })),
})).v;

describe("ReadOptions.byteStrings", () => {
  it("yields the exact read's lines and errors, strings decoded", async () => {
    const line = fc.oneof(json.map((v) => JSON.stringify(v)), fc.constantFrom("", " ", "{", '"\u00e9', "\u00a0", "\u3000"), fc.string({ unit: "binary", maxLength: 12 }));
    let asBytes = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 8 }), fc.constantFrom("\n", "\r\n"), async (ls, eol) => {
        const bytes = Buffer.from(ls.join(eol) + eol, "utf8");
        const fast = await lines(bytes, { byteStrings: true });
        expect(fast.values).toEqual((await lines(bytes, {})).values);
        expect(fast.bad).toEqual((await lines(bytes, {})).bad);
        asBytes += fast.asBytes;
      }),
      { numRuns: 400, seed: 26 },
    );
    expect(asBytes).toBeGreaterThan(100);
  });

  it("parses exactly a line with a \\u escape, or bytes that are not UTF-8", async () => {
    for (const text of ['{"a":"\\u00e9","b":"é"}', '{"a":"\\\\u","b":"é"}']) {
      const out = await lines(Buffer.from(text + "\n"), { byteStrings: true });
      expect(out.asBytes).toBe(0);
      expect(out.values).toEqual([[1, Buffer.byteLength(text), JSON.parse(text)]]);
    }
    const invalid = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}\n')]);
    const out = await lines(invalid, { byteStrings: true });
    expect(out.asBytes).toBe(0);
    expect(out.values).toEqual([[1, invalid.length - 1, { a: "\ufffd(\ufffd" }]]);
  });

  it("leaves an ASCII line's strings exact (Latin-1 and UTF-8 agree there)", async () => {
    const out = await lines(Buffer.from('{"a":"x\\u00e9"}\n'), { byteStrings: true });
    expect(out).toEqual({ values: [[1, 15, { a: "xé" }]], bad: [], asBytes: 0 });
  });
});

const question = fc.record({
  type: fc.constantFrom("choice", "noul"),
  instructions: str,
  criteria: fc.dictionary(str, str, { maxKeys: 3 }),
  note: fc.option(str, { nil: undefined }),
});
const record = fc.record({
  id: str,
  family: fc.constant("fam"),
  state: fc.dictionary(str, str, { maxKeys: 3 }),
  questions: fc.dictionary(str, question, { maxKeys: 3 }),
  expected: fc.dictionary(str, fc.oneof(str, fc.boolean()), { maxKeys: 2 }),
  metadata: fc.record({ group_id: str, lang: fc.constantFrom("vi", "en"), source: str }),
  scoring: fc.option(
    fc.oneof(
      fc.record({ type: fc.constant("retrieval_ranking"), qrels: fc.dictionary(str, fc.integer({ min: 0, max: 3 }), { maxKeys: 3 }), combine_chunks_by: fc.constantFrom("metadata.group_id", "state.query", "questions") }),
      fc.record({ ordinal: fc.boolean(), extra: str }),
    ),
    { nil: undefined },
  ),
  // "no expected" and "qrels as a list" pass through zod (which fills in or normalises them) on the exact value.
  bad: fc.constantFrom("none", "none", "none", "state value a number", "duplicate id", "wrong run_id", "no expected", "qrels as a list"),
});

/** Records read with and without textsAsBytes: the same records, errors and gold. */
async function readBoth(file: TrackFile): Promise<{ exact: unknown[]; fast: unknown[]; asBytes: number }> {
  const read = async (textsAsBytes: boolean) => {
    const out: unknown[] = [];
    let asBytes = 0;
    try {
      for await (const rec of readTrackRecords(file, { onHash: () => undefined, textsAsBytes })) {
        if (rec.textsAsBytes) asBytes++;
        // The gold first: goldLine decodes the texts it keeps whole.
        const gold = goldLine(rec);
        out.push({ gold, rec: withExactTexts(rec) });
      }
    } catch (err) {
      if (!(err instanceof FormatError)) throw err;
      out.push(err.message);
    }
    return { out, asBytes };
  };
  const fast = await read(true);
  return { exact: (await read(false)).out, fast: fast.out, asBytes: fast.asBytes };
}

describe("readTrackRecords with textsAsBytes", () => {
  it("gives the exact read's records, gold and first error, the texts decoded", async () => {
    let n = 0;
    let asBytes = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 5 }), async (recs) => {
        const lines = recs.map(({ bad, ...r }, i) => {
          const rec: Record<string, any> = { ...r, id: `${r.id}-${i}`, _evaluation: { run_id: `trk:${r.id}-${i}` } };
          if (rec.scoring === undefined) delete rec.scoring;
          if (bad === "state value a number") rec.state = { ...rec.state, n: 1 };
          if (bad === "duplicate id" && i > 0) Object.assign(rec, { id: `${r.id}-0`, _evaluation: { run_id: `trk:${r.id}-0` } });
          if (bad === "wrong run_id") rec._evaluation.run_id = `other:${rec.id}`;
          if (bad === "no expected") delete rec.expected;
          if (bad === "qrels as a list") rec.scoring = { type: "retrieval_ranking", qrels: [{ doc: "é", grade: 1 }] };
          return JSON.stringify(rec);
        });
        const path = join(dir, `trk-${n++}.jsonl.gz`);
        writeFileSync(path, gzipSync(lines.join("\n") + "\n"));
        const both = await readBoth({ track: "trk", family: "fam", path, relPath: "test/fam/trk.jsonl.gz" });
        expect(both.fast).toEqual(both.exact);
        asBytes += both.asBytes;
      }),
      { numRuns: 150, seed: 26 },
    );
    expect(asBytes).toBeGreaterThan(50);
  });

  it("leaves __proto__ keys own data properties where it decodes keys", async () => {
    const text = '{"id":"r","family":"fam","state":{"__proto__":"é","é":"x"},"questions":{"__proto__":{"type":"noul","instructions":"ở","criteria":{}},"qé":{"type":"choice","instructions":"é","criteria":{"__proto__":"ü","Ä":"b"}}},"expected":{},"metadata":{"group_id":"g","lang":"vi"},"_evaluation":{"run_id":"trk:r"}}';
    const path = join(dir, "proto.jsonl.gz");
    writeFileSync(path, gzipSync(text + "\n"));
    const both = await readBoth({ track: "trk", family: "fam", path, relPath: "test/fam/trk.jsonl.gz" });
    expect(both.asBytes).toBe(1);
    expect(both.fast).toEqual(both.exact);
    const rec = (both.fast[0] as { rec: Record<string, any> }).rec;
    expect(Object.getPrototypeOf(rec.state)).toBe(Object.prototype);
    expect(Object.keys(rec.questions)).toEqual(["__proto__", "qé"]);
    expect(rec.questions["qé"].criteria).toEqual(JSON.parse('{"__proto__":"ü","Ä":"b"}'));
  });
});
