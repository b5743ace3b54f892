// The coordinator's one pass over the suite: what it spills is each record's state and questions
// as the file has them, and the gold it hands the scorer of its process (onGold) scores exactly as
// the gold the scorer reads itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../common/log.js";
import type { GoldMessage } from "../../common/suite/gold-feed.js";
import { indexSuite, questionSpecs } from "../../coordinator/suite-index.js";
import { CommitScorer } from "../../scorer/commit-scorer.js";
import { tinyTracks, writeTinySuite } from "./helpers/tiny-suite.js";

const quiet = createLogger("test", "error");
const root = mkdtempSync(join(tmpdir(), "udm-suite-index-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("indexSuite", () => {
  it("spills each record's state and questions, indexes its questions, and hands on gold that scores as read", async () => {
    const tracks = tinyTracks();
    const suiteDir = writeTinySuite(join(root, "suite"), tracks);
    const gold: GoldMessage[] = [];
    const index = await indexSuite({ suiteDir, spillPath: join(root, "spill", "s.bin"), onGold: (m) => gold.push(m) });
    try {
      for (const t of tracks) {
        const indexed = index.tracks.find((x) => x.track === t.track)!;
        expect(indexed.records.map((r) => r.id)).toEqual(t.records.map((r) => r.id));
        for (const [i, r] of t.records.entries()) {
          const entry = indexed.records[i]!;
          const payload = index.spill.read(entry);
          expect(payload.stateJson).toBe(JSON.stringify(r.state));
          expect(payload.questionsJson).toBe(JSON.stringify(r.questions));
          expect(questionSpecs(entry).map((q) => q.key)).toEqual(Object.keys(r.questions));
        }
      }
    } finally {
      index.spill.dispose();
    }
    expect(gold.map((m) => (m.kind === "track" ? m.track : m.kind))).toEqual([...index.tracks.map((t) => t.track), "end"]);
    const goldRecords = gold.flatMap((m) => (m.kind === "track" ? (JSON.parse(m.recordsJson) as Array<{ state: object; line: number }>) : []));
    expect(goldRecords.every((r) => Object.keys(r.state).length === 0 && r.line > 0)).toBe(true);

    const read = new CommitScorer({ suiteDir, outDir: join(root, "read"), log: quiet });
    await read.load();
    const fed = new CommitScorer({ suiteDir, outDir: join(root, "fed"), log: quiet });
    const feed = fed.goldFeed();
    for (const m of gold) feed.onGold(m);
    await feed.loaded;
    expect(fed.core!.suiteIdentity).toBe(read.core!.suiteIdentity);
    expect(fed.core!.suiteIdentity).toBe(index.identity);
    expect(JSON.stringify(fed.finish())).toBe(JSON.stringify(read.finish()));
  });

  it("fails the gold feed naming file and line when gold cannot be scored", async () => {
    const tracks = tinyTracks();
    // A reranking document question must be noul: the scorer, not the suite check, refuses this one.
    const bad = tracks[1]!.records[2]!;
    bad.questions[Object.keys(bad.questions)[0]!]!.type = "choice";
    bad.questions[Object.keys(bad.questions)[0]!]!.criteria = { yes: "yes", no: "no" };
    delete bad.expected[Object.keys(bad.questions)[0]!];
    const suiteDir = writeTinySuite(join(root, "bad-gold"), tracks);
    const fed = new CommitScorer({ suiteDir, outDir: join(root, "bad-fed"), log: quiet });
    const feed = fed.goldFeed();
    const failure = feed.loaded.then(
      () => undefined,
      (err: unknown) => err,
    );
    const index = await indexSuite({ suiteDir, spillPath: join(root, "spill2", "s.bin"), onGold: feed.onGold });
    index.spill.dispose();
    expect(String(await failure)).toMatch(/tiny-rr\.jsonl\.gz:3 field questions\.doc:020\.type: reranking document questions must be noul/);
  });
});
