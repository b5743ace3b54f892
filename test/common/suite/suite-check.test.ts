// The shared startup check (issue 14 cases 4, 9, 10, 11): every broken suite that `suite verify`
// refuses is refused the same way by `score`, by `run` before any inference, and by the
// coordinator before it serves; a clean suite passes all of them.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { verifySuite } from "../../../common/suite/verify.js";
import { openCheckedSuite } from "../../../common/suite/suite-check.js";
import { indexSuite } from "../../../coordinator/suite-index.js";
import { makeSuite } from "../../../sim/suite-maker/suite-maker.js";
import { runCliCaptured } from "../../support/in-process-cli.js";
import { tempDirs } from "../../support/temp-dirs.js";

const SA = "test/sentiment/aiv-sa24-easy.jsonl.gz";

const tempDir = tempDirs("udm-suite-check-");

let pristine: string;
beforeAll(async () => {
  pristine = tempDir();
  await makeSuite({ out: pristine, scale: "small", seed: 5, tracks: ["aiv-sa24-easy", "trec-dl19", "vihsd"] });
});

function copy(): string {
  const d = tempDir();
  cpSync(pristine, d, { recursive: true });
  return d;
}

type Manifest = { files: Record<string, { rows: number; groups: number; sha256: string }>; tracks: string[] };
function editManifest(dir: string, edit: (m: Manifest) => void): void {
  const path = join(dir, "manifest.json");
  const m = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  edit(m);
  writeFileSync(path, JSON.stringify(m));
}

/** Rewrites a track file with `edit` applied to its records and keeps the manifest's hash in step. */
function editRecords(dir: string, rel: string, edit: (records: Array<Record<string, any>>) => void): void {
  const records = gunzipSync(readFileSync(join(dir, rel))).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  edit(records);
  const text = records.map((r) => JSON.stringify(r) + "\n").join("");
  writeFileSync(join(dir, rel), gzipSync(text));
  editManifest(dir, (m) => (m.files[rel]!.sha256 = createHash("sha256").update(text).digest("hex")));
}

const cli = runCliCaptured;

/** What each of verify, score, run and the coordinator says of a suite. */
async function verdicts(suite: string): Promise<{ verify: string[]; score: { code: number; stderr: string }; run: { code: number; stderr: string; resultFiles: number }; coordinator: string | undefined }> {
  const verify = (await verifySuite(suite)).problems;
  const score = await cli(["score", "--suite", suite, "--results", tempDir()]);
  const out = tempDir();
  const run = await cli(["run", "--suite", suite, "--out", out, "--sim", "1"]);
  const resultFiles = existsSync(out) ? readdirSync(out, { recursive: true }).filter((f) => String(f).endsWith(".jsonl")).length : 0;
  let coordinator: string | undefined;
  const spillDir = tempDir();
  try {
    const index = await indexSuite({ suiteDir: suite, spillPath: join(spillDir, "spill.bin") });
    index.spill.dispose();
  } catch (err) {
    coordinator = (err as Error).message;
  }
  return { verify, score, run: { ...run, resultFiles }, coordinator };
}

function expectRefusedEverywhere(v: Awaited<ReturnType<typeof verdicts>>, pattern: RegExp): void {
  expect(v.verify.join("\n")).toMatch(pattern);
  expect(v.score.code).toBe(2);
  expect(v.score.stderr).toMatch(pattern);
  expect(v.run.code).toBe(2);
  expect(v.run.stderr).toMatch(pattern);
  expect(v.run.resultFiles).toBe(0);
  expect(v.coordinator).toMatch(pattern);
}

describe("the shared suite check", () => {
  it("passes a clean suite everywhere", async () => {
    expect((await verifySuite(pristine)).problems).toEqual([]);
    expect(openCheckedSuite(pristine).files).toHaveLength(3);
    const spill = tempDir();
    const index = await indexSuite({ suiteDir: pristine, spillPath: join(spill, "s.bin") });
    expect(index.tracks).toHaveLength(3);
    index.spill.dispose();
    expect((await cli(["score", "--suite", pristine, "--results", tempDir()])).code).toBe(0);
  });

  it("case 4: a file listed in manifest.json but absent", async () => {
    const d = copy();
    unlinkSync(join(d, SA));
    expectRefusedEverywhere(await verdicts(d), /aiv-sa24-easy\.jsonl\.gz: missing file \(listed in manifest\.json\)/);
  });

  it("case 9: the same track file in two family folders, both listed", async () => {
    const d = copy();
    mkdirSync(join(d, "test/other"));
    cpSync(join(d, SA), join(d, "test/other/aiv-sa24-easy.jsonl.gz"));
    editManifest(d, (m) => (m.files["test/other/aiv-sa24-easy.jsonl.gz"] = m.files[SA]!));
    expectRefusedEverywhere(await verdicts(d), /track "aiv-sa24-easy" has a file in 2 family folders/);
  });

  it("case 10: gold naming no option is refused before any inference", async () => {
    const d = copy();
    editRecords(d, SA, (rs) => {
      const key = Object.keys(rs[1]!.expected)[0]!;
      rs[1]!.expected[key] = "no-such-option";
    });
    expectRefusedEverywhere(await verdicts(d), /"no-such-option" is not one of the options/);
  });

  it("case 11: manifest rows that differ from the file", async () => {
    const d = copy();
    editManifest(d, (m) => (m.files[SA]!.rows += 1));
    expectRefusedEverywhere(await verdicts(d), /aiv-sa24-easy\.jsonl\.gz: rows \d+, manifest says \d+/);
  });

  it("case 11: a symlinked family folder that leads outside the suite", async () => {
    const d = copy();
    const outside = tempDir();
    renameSync(join(d, "test/sentiment"), join(outside, "sentiment"));
    symlinkSync(join(outside, "sentiment"), join(d, "test/sentiment"));
    const v = await verdicts(d);
    expectRefusedEverywhere(v, /test\/sentiment: symlink to .*, outside the suite/);
  });

  it("case 11: a symlink that stays inside the suite is followed", async () => {
    const d = copy();
    mkdirSync(join(d, "store"));
    renameSync(join(d, "test/sentiment"), join(d, "store/sentiment"));
    symlinkSync(join(d, "store/sentiment"), join(d, "test/sentiment"));
    expect((await verifySuite(d)).problems).toEqual([]);
    expect(openCheckedSuite(d).files).toHaveLength(3);
  });
});
