// suite verify on a real small synthetic suite, clean and with one kind of damage at a time.
import { cpSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { suiteIdentity } from "../../../common/suite/suite.js";
import { verifySuite } from "../../../common/suite/verify.js";
import { makeSuite } from "../../../sim/suite-maker/suite-maker.js";
import { runCliCaptured } from "../../support/in-process-cli.js";
import { tempDirs } from "../../support/temp-dirs.js";

const SA = "test/sentiment/aiv-sa24-easy.jsonl.gz";
const TREC = "test/passage_reranking/trec-dl19.jsonl.gz";

const tempDir = tempDirs("udm-suite-verify-");

let pristine: string;
beforeAll(async () => {
  pristine = tempDir();
  await makeSuite({ out: pristine, scale: "small", seed: 3 });
});

/** A fresh copy of the clean suite to damage. */
function copy(): string {
  const d = tempDir();
  cpSync(pristine, d, { recursive: true });
  return d;
}

function readLines(dir: string, rel: string): string[] {
  return gunzipSync(readFileSync(join(dir, rel))).toString("utf8").split("\n").filter(Boolean);
}

function writeLines(dir: string, rel: string, lines: string[]): void {
  writeFileSync(join(dir, rel), gzipSync(lines.join("\n") + "\n"));
}

function editManifest(dir: string, edit: (m: { files: Record<string, { rows: number; groups: number; sha256: string }>; tracks: string[] }) => void): void {
  const path = join(dir, "manifest.json");
  const m = JSON.parse(readFileSync(path, "utf8"));
  edit(m);
  writeFileSync(path, JSON.stringify(m));
}

async function cli(args: string[]): Promise<number> {
  return (await runCliCaptured(args)).code;
}

describe("verifySuite", () => {
  it("passes a clean suite, given as <suite> or <suite>/test, and computes its identity", async () => {
    const manifest = JSON.parse(readFileSync(join(pristine, "manifest.json"), "utf8"));
    const rows = Object.values(manifest.files as Record<string, { rows: number }>).reduce((a, f) => a + f.rows, 0);
    for (const dir of [pristine, join(pristine, "test")]) {
      const v = await verifySuite(dir);
      expect(v.problems).toEqual([]);
      expect(v.files).toBe(44);
      expect(v.records).toBe(rows);
      expect(v.manifest).toBe(true);
      expect(v.identity).toBe(suiteIdentity(Object.fromEntries(Object.entries(manifest.files as Record<string, { sha256: string }>).map(([p, f]) => [p, f.sha256]))));
    }
    expect(await cli(["suite", "verify", "--suite", pristine])).toBe(0);
  });

  it("reports a flipped byte in the data as a sha256 mismatch of the decompressed bytes", async () => {
    const dir = copy();
    const lines = readLines(dir, SA);
    const i = lines[0]!.indexOf('"text":"') + 8;
    const ch = lines[0]![i]!;
    lines[0] = lines[0]!.slice(0, i) + (ch === "x" ? "y" : "x") + lines[0]!.slice(i + 1);
    writeLines(dir, SA, lines);
    const v = await verifySuite(dir);
    expect(v.problems).toHaveLength(1);
    expect(v.problems[0]).toMatch(new RegExp(`^${SA}: sha256 mismatch`));
    expect(await cli(["suite", "verify", "--suite", dir])).toBe(1);
  });

  it("reports a flipped byte in the gzip stream as a corrupted file and checks the other files", async () => {
    const dir = copy();
    const gz = readFileSync(join(dir, TREC));
    const at = Math.floor(gz.length / 2);
    gz.writeUInt8(gz.readUInt8(at) ^ 0xff, at);
    writeFileSync(join(dir, TREC), gz);
    const v = await verifySuite(dir);
    expect(v.problems.length).toBeGreaterThanOrEqual(1);
    expect(v.problems.every((p) => p.startsWith(TREC))).toBe(true);
    expect(v.problems.join("\n")).toMatch(/corrupted gzip|bad JSON|sha256 mismatch|field/);
    expect(v.files).toBe(44);
  });

  it("reports a missing file and an extra file", async () => {
    const dir = copy();
    unlinkSync(join(dir, SA));
    cpSync(join(dir, TREC), join(dir, "test/passage_reranking/trec-dl21.jsonl.gz"));
    const v = await verifySuite(dir);
    expect(v.problems).toContain(`${SA}: missing file (listed in manifest.json)`);
    expect(v.problems).toContain("test/passage_reranking/trec-dl21.jsonl.gz: extra file, not listed in manifest.json");
    expect(v.problems).toContain('manifest.json:tracks: track "trec-dl21" has a file but is not listed');
    expect(await cli(["suite", "verify", "--suite", dir])).toBe(1);
  });

  it("reports row and group counts that differ from the manifest", async () => {
    const dir = copy();
    editManifest(dir, (m) => {
      m.files[SA]!.rows += 1;
      m.files[TREC]!.groups += 2;
    });
    const v = await verifySuite(dir);
    const rows = JSON.parse(readFileSync(join(pristine, "manifest.json"), "utf8")).files[SA].rows;
    expect(v.problems).toContain(`${SA}: rows ${rows}, manifest says ${rows + 1}`);
    expect(v.problems.some((p) => p.startsWith(`${TREC}: groups `))).toBe(true);
    expect(v.problems).toHaveLength(2);
  });

  it("lists every bad line with file, line and field, and goes on to the end", async () => {
    const dir = copy();
    const lines = readLines(dir, SA);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    lines[1] = "{not json";
    const third = JSON.parse(lines[2]!);
    third.questions.label.type = "multi";
    delete third.metadata.group_id;
    lines[2] = JSON.stringify(third);
    const first = JSON.parse(lines[0]!);
    first._evaluation.run_id = "other-track:" + first.id;
    first._evaluation.track = "other-track";
    first.expected.label = "Z";
    lines[0] = JSON.stringify(first);
    writeLines(dir, SA, lines);
    const { problems } = await verifySuite(dir);
    const mine = problems.filter((p) => p.startsWith(`${SA}:`));
    expect(mine).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${SA}:1:_evaluation.run_id: `)),
        expect.stringMatching(new RegExp(`^${SA}:2: bad JSON`)),
        expect.stringMatching(new RegExp(`^${SA}:3:questions.label.type: `)),
        expect.stringMatching(new RegExp(`^${SA}:3:metadata.group_id: `)),
        expect.stringMatching(new RegExp(`^${SA}: sha256 mismatch`)),
      ]),
    );
    // The bad lines still count as rows: no row-count complaint on top.
    expect(mine.some((p) => p.includes(": rows "))).toBe(false);

    // The run_id check stops the record; track and gold checks apply to otherwise valid records.
    const fourth = JSON.parse(readLines(pristine, SA)[3]!);
    fourth._evaluation.track = "other-track";
    fourth.expected.label = "Z";
    fourth.family = "nli";
    writeLines(dir, SA, [...readLines(pristine, SA).slice(0, 3), JSON.stringify(fourth), ...readLines(pristine, SA).slice(4)]);
    const second = (await verifySuite(dir)).problems;
    expect(second).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${SA}:4:_evaluation.track: "other-track"`)),
        expect.stringMatching(new RegExp(`^${SA}:4:expected.label: "Z" is not one of the options`)),
        expect.stringMatching(new RegExp(`^${SA}:4:family: `)),
      ]),
    );
  });

  it("reports qrels that differ between chunks of one query and chunks over 25 candidates", async () => {
    const dir = copy();
    const lines = readLines(dir, TREC).map((l) => JSON.parse(l));
    const byGroup = new Map<string, number[]>();
    lines.forEach((r, i) => byGroup.set(r.metadata.group_id, [...(byGroup.get(r.metadata.group_id) ?? []), i]));
    const multi = [...byGroup.values()].find((idx) => idx.length > 1)!;
    const second = lines[multi[1]!];
    second.scoring.qrels = { ...second.scoring.qrels, "999999999": 3 };
    const one = lines[multi[0]!];
    for (let k = 0; k < 30; k++) one.questions[`doc:x${k}`] = { type: "noul", instructions: "p", criteria: {} };
    writeLines(dir, TREC, lines.map((r) => JSON.stringify(r)));
    const { problems } = await verifySuite(dir);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${TREC}:${multi[1]! + 1}:scoring.qrels: differs`)),
        expect.stringMatching(new RegExp(`^${TREC}:${multi[0]! + 1}:questions: reranking chunk holds \\d+ candidates`)),
      ]),
    );
  });

  it("checks schema only when there is no manifest", async () => {
    const dir = copy();
    unlinkSync(join(dir, "manifest.json"));
    const v = await verifySuite(dir);
    expect(v.problems).toEqual([]);
    expect(v.manifest).toBe(false);
  });

  it("is a usage error (exit 2) when the directory is not a suite", async () => {
    expect(await cli(["suite", "verify", "--suite", tempDir()])).toBe(2);
  });
});
