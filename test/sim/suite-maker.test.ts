// The synthetic suite maker against the dataset card: track list, counts, question shapes,
// reranking chunks and qrels, identity fields, determinism per seed.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../../common/errors.js";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import type { SuiteRecord } from "../../common/suite/schema.js";
import { verifySuite } from "../../common/suite/verify.js";
import { SUITE_SHAPE } from "../../sim/suite-maker/track-shapes.js";
import { makeSuite, planSuite, type MadeSuite } from "../../sim/suite-maker/suite-maker.js";
import { tempDirs } from "../support/temp-dirs.js";

/** Rows and groups per track, copied by hand from the dataset card's track table. */
const CARD: Record<string, [rows: number, groups: number]> = {
  vihsd: [6680, 6680], vihos: [1106, 1106], victsd: [1000, 1000],
  "deepedubench-qa": [795, 795], "deepedubench-cdpk": [900, 900], "deepedubench-grading-binary": [165, 165], "deepedubench-grading-score": [63, 63],
  "aimy144-fact-checking-vi": [7521, 7521], "massive-vi-vn": [2974, 2974], routerbench: [1001, 1000],
  "aiv-vlmu-mcqa-extend400": [514, 514], "aiv-hle-mc-vi": [506, 506], "aiv-culture100": [100, 100], "aiv-pragmatic50": [50, 50],
  "aiv-syntax50": [50, 50], "mmlu-prox-vi": [3000, 3000], "vimmrc-vi": [512, 512], "aiv-nli500": [500, 500],
  "zalo-legal": [788, 788], "trec-dl19": [109, 43], "trec-dl20": [142, 54], "wixqa-expertwritten": [800, 200], "wixqa-simulated": [800, 200],
  "viequad-retrieval": [4000, 1000], "vinli-reranking": [363, 363], "table-markdown-vn": [4000, 1000], "tvpl-retrieval-vn": [4000, 1000],
  "askubuntu-reranking-vn": [305, 305], "stackoverflow-reranking-vn": [1497, 1000], "scidocs-reranking-vn": [1100, 1000],
  "fineweb-c-vi": [945, 945], deepedu: [961, 961], visafe: [1000, 1000], budguardrail: [2000, 2000], respan: [2000, 2000],
  "aiv-jbb": [180, 180], seasafeguard: [1231, 1231], multijail: [315, 315], "aiv-sa24-easy": [24, 24], "aiv-sa26-hard": [26, 26],
  "skillgym-sft": [1527, 1500], "nemotron-tools": [2585, 1000], "toucan-kimi-k2": [202, 45], "deepseek-v4-pro": [29, 4],
};
const SINGLE_GOLD = ["viequad-retrieval", "tvpl-retrieval-vn", "zalo-legal", "table-markdown-vn", "wixqa-expertwritten", "wixqa-simulated"];

type Rec = SuiteRecord & { line: number };
interface RetrievalBlock {
  type: "retrieval_ranking";
  qrels: Record<string, number>;
  field_to_document: Record<string, string>;
  scorable_ids: string[];
  relevance_threshold: number;
  fully_judged: boolean;
  combine_chunks_by: string;
}

/** Canonical JSON written independently of sim/suite-maker/canonical-json.ts. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

const tempDir = tempDirs("udm-suite-maker-");

async function readSuite(dir: string): Promise<Map<string, Rec[]>> {
  const byTrack = new Map<string, Rec[]>();
  for (const file of openSuite(dir).files) {
    const recs: Rec[] = [];
    for await (const r of readTrackRecords(file)) recs.push(r);
    byTrack.set(file.track, recs);
  }
  return byTrack;
}

function groupsOf(recs: Rec[]): Map<string, Rec[]> {
  const m = new Map<string, Rec[]>();
  for (const r of recs) {
    const g = m.get(r.metadata.group_id) ?? [];
    g.push(r);
    m.set(r.metadata.group_id, g);
  }
  return m;
}

function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

describe("small suite", () => {
  let dir: string;
  let made: MadeSuite;
  let suite: Map<string, Rec[]>;
  const track = (name: string): Rec[] => suite.get(name) ?? [];

  beforeAll(async () => {
    dir = tempDir();
    made = await makeSuite({ out: dir, scale: "small", seed: 1 });
    suite = await readSuite(dir);
  });

  it("has every one of the 44 tracks in test/<family>/<track>.jsonl.gz, each with a few groups", () => {
    expect(made.files).toBe(44);
    expect([...suite.keys()].sort()).toEqual(Object.keys(CARD).sort());
    for (const shape of SUITE_SHAPE.tracks) {
      const recs = track(shape.track);
      expect(openSuite(dir).files.find((f) => f.track === shape.track)?.family).toBe(shape.family);
      const groups = groupsOf(recs).size;
      expect(groups).toBeGreaterThanOrEqual(Math.min(3, shape.groups));
      expect(groups).toBeLessThanOrEqual(6);
      if (shape.rows > shape.groups) expect(recs.length).toBeGreaterThan(groups);
      else expect(recs.length).toBe(groups);
    }
  });

  it("writes a manifest whose counts match the files and verifies clean", async () => {
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest.seed).toBe(1);
    expect(manifest.tracks).toHaveLength(44);
    for (const [name, recs] of suite) {
      const shape = SUITE_SHAPE.tracks.find((t) => t.track === name)!;
      const entry = manifest.files[`test/${shape.family}/${name}.jsonl.gz`];
      expect(entry.rows).toBe(recs.length);
      expect(entry.groups).toBe(groupsOf(recs).size);
    }
    const stats = JSON.parse(readFileSync(join(dir, "stats.json"), "utf8"));
    expect(stats.tracks.vihsd.label_balance.label).toBeDefined();
    const v = await verifySuite(dir);
    expect(v.problems).toEqual([]);
    expect(v.records).toBe(made.records);
    expect(v.identity).toBe(made.identity);
  });

  it("gives every record its identity fields, the track's state keys and language", () => {
    for (const shape of SUITE_SHAPE.tracks) {
      for (const r of track(shape.track)) {
        expect(r.family).toBe(shape.family);
        expect(r.split).toBe("test");
        expect(Object.keys(r.state)).toEqual([...shape.state_keys]);
        const ev = r._evaluation as Record<string, unknown>;
        expect(ev.run_id).toBe(`${shape.track}:${r.id}`);
        expect(ev.track).toBe(shape.track);
        expect(ev.group_id).toBe(r.metadata.group_id);
        expect(ev.dataset).toBe((r.metadata as Record<string, unknown>).source);
        expect(ev.payload_sha256).toBe(createHash("sha256").update(canonical({ state: r.state, questions: r.questions })).digest("hex"));
        const md = r.metadata as Record<string, unknown>;
        expect(md.lang).toBe(shape.lang);
        expect(shape.origin.split("/")).toContain(md.origin);
        expect(typeof md.stratum).toBe("string");
        for (const [key, gold] of Object.entries(r.expected)) {
          const q = r.questions[key]!;
          if (q.type === "noul") expect(typeof gold).toBe("boolean");
          else expect(Object.keys(q.criteria)).toContain(gold);
        }
      }
    }
  });

  it("writes Vietnamese text with diacritics for vi tracks and English for en tracks", () => {
    const vi = /[àáảãạăắằẳẵặâấầẩẫậđèéẻẽẹêếềểễệìíỉĩịòóỏõọôốồổỗộơớờởỡợùúủũụưứừửữựỳýỷỹỵ]/i;
    for (const shape of SUITE_SHAPE.tracks) {
      const text = track(shape.track).map((r) => Object.values(r.state).join(" ")).join(" ");
      if (shape.lang === "vi") expect(text, shape.track).toMatch(vi);
      if (shape.lang === "en") expect(text, shape.track).not.toMatch(vi);
    }
  });

  it("asks the track's questions with its option codes", () => {
    for (const shape of SUITE_SHAPE.tracks) {
      if (shape.family === "passage_reranking") continue;
      for (const r of track(shape.track)) expect(Object.keys(r.questions)).toEqual(shape.questions.map((q) => q.key));
    }
    const types = new Set([...suite.values()].flat().flatMap((r) => Object.values(r.questions).map((q) => q.type)));
    expect(types).toEqual(new Set(["choice", "noul"]));

    const massive = track("massive-vi-vn")[0]!.questions.intent!;
    const codes = Object.keys(massive.criteria);
    expect(codes).toHaveLength(60);
    expect(codes.slice(0, 3)).toEqual(["A", "B", "C"]);
    expect(codes.slice(25, 28)).toEqual(["Z", "AA", "AB"]);
    expect(codes[59]).toBe("BH");

    expect(Object.keys(track("vihsd")[0]!.questions.label!.criteria)).toEqual(["CLEAN", "OFFENSIVE", "HATE"]);
    for (const r of track("aiv-hle-mc-vi")) {
      const n = Object.keys(r.questions.answer!.criteria).length;
      expect(n).toBeGreaterThanOrEqual(5);
      expect(n).toBeLessThanOrEqual(12);
    }
    for (const r of track("mmlu-prox-vi")) expect(Object.keys(r.questions.answer!.criteria)).toHaveLength(10);

    const score = track("deepedubench-grading-score")[0]!;
    expect(Object.keys(score.questions.grading!.criteria)).toEqual("ABCDEFGHIJK".split(""));
    expect(Object.values(score.questions.grading!.criteria)).toEqual(Array.from({ length: 11 }, (_, i) => String(i)));
    expect(score.scoring).toEqual({ ordinal: true });
    const fineweb = track("fineweb-c-vi")[0]!;
    expect(Object.keys(fineweb.questions.quality!.criteria)).toEqual(["0", "1", "2", "3", "4"]);
    expect(fineweb.scoring).toEqual({ ordinal: true });
    expect(track("deepedubench-grading-binary")[0]!.questions.grading!.type).toBe("noul");

    expect(Object.keys(track("respan")[0]!.questions)).toEqual(["jailbreak", "system_prompt_leak", "unsafe", "hate", "self_harm", "sexual", "violence"]);
    for (const r of track("visafe")) {
      expect(Object.keys(r.questions.category!.criteria)).toHaveLength(9);
      expect(r.expected.category === "safe").toBe(r.expected.harmful === false);
    }
    for (const r of track("deepedu")) expect(Object.keys(r.questions.attack_type!.criteria)).toHaveLength(5);
    expect(Object.keys(track("seasafeguard")[0]!.questions)).toEqual(["harmful", "response_harmful"]);
  });

  it("builds tool and skill choices over named options, steps of one conversation sharing a group", () => {
    for (const name of ["nemotron-tools", "toucan-kimi-k2", "deepseek-v4-pro"]) {
      const recs = track(name);
      for (const r of recs) {
        const tools = JSON.parse(r.state.tools!) as Array<{ function: { name: string } }>;
        const messages = JSON.parse(r.state.messages!) as Array<{ role: string }>;
        expect(Array.isArray(messages) && messages.length).toBeGreaterThan(0);
        expect(Object.keys(r.questions.next_tool!.criteria)).toEqual([...tools.map((t) => t.function.name), "none"]);
      }
      const multi = [...groupsOf(recs).values()].find((g) => g.length > 1)!;
      expect(multi).toBeDefined();
      // A later step sees the earlier steps' messages.
      expect(JSON.parse(multi[1]!.state.messages!).length).toBeGreaterThanOrEqual(JSON.parse(multi[0]!.state.messages!).length);
    }
    for (const r of track("skillgym-sft")) {
      const keys = Object.keys(r.questions.skill!.criteria);
      expect(keys.every((k) => k.startsWith("skill:"))).toBe(true);
      expect(keys.length).toBeGreaterThanOrEqual(10);
      expect(keys.length).toBeLessThanOrEqual(40);
    }
  });

  it("gives routerbench 11 models, outcomes for each and the accepted set containing the gold route", () => {
    for (const r of track("routerbench")) {
      const models = Object.keys(r.questions.route!.criteria);
      expect(models).toHaveLength(11);
      const s = r.scoring as { type: string; outcomes: Record<string, { quality: number; cost_usd: number }>; accepted: string[] };
      expect(s.type).toBe("routing_outcome");
      expect(Object.keys(s.outcomes).sort()).toEqual([...models].sort());
      expect(s.accepted.length).toBeGreaterThan(0);
      expect(s.accepted).toContain(r.expected.route);
      expect(r.metadata.lang).toBe("multi");
    }
  });

  describe("passage reranking", () => {
    const rerankTracks = () => SUITE_SHAPE.tracks.filter((t) => t.family === "passage_reranking");
    const blocks = (recs: Rec[]) => recs.map((r) => r.scoring as unknown as RetrievalBlock);

    it("splits each pool into chunks of at most 25 doc:<id> noul questions with the passage in the instructions", () => {
      for (const shape of rerankTracks()) {
        for (const r of track(shape.track)) {
          const keys = Object.keys(r.questions);
          expect(keys.length).toBeGreaterThan(0);
          expect(keys.length).toBeLessThanOrEqual(25);
          const s = r.scoring as unknown as RetrievalBlock;
          expect(s.type).toBe("retrieval_ranking");
          expect(s.combine_chunks_by).toBe("metadata.group_id");
          expect(Object.keys(r.state)).toEqual(["query"]);
          for (const key of keys) {
            const q = r.questions[key]!;
            expect(key).toMatch(/^doc:/);
            expect(q.type).toBe("noul");
            expect(q.criteria).toEqual({});
            expect(s.field_to_document[key]).toBe(key.slice(4));
            expect(r.expected[key]).toBe((s.qrels[key.slice(4)] ?? 0) >= s.relevance_threshold);
            if (shape.track !== "table-markdown-vn") {
              const words = q.instructions.split("Passage:\n")[1]!.split(/\s+/).length;
              expect(words).toBeGreaterThanOrEqual(50);
              expect(words).toBeLessThanOrEqual(205);
            }
          }
          expect(s.scorable_ids).toEqual(keys.map((k) => k.slice(4)));
          expect(s.relevance_threshold).toBe(shape.track.startsWith("trec-dl") ? 2 : 1);
        }
      }
    });

    it("shares group_id and identical qrels across the chunks of one query, with all but the last chunk full", () => {
      let multiChunk = 0;
      for (const shape of rerankTracks()) {
        for (const chunks of groupsOf(track(shape.track)).values()) {
          const qrels = blocks(chunks).map((b) => canonical(b.qrels));
          expect(new Set(qrels).size).toBe(1);
          chunks.slice(0, -1).forEach((c) => expect(Object.keys(c.questions)).toHaveLength(25));
          const docs = chunks.flatMap((c) => Object.keys(c.questions));
          expect(new Set(docs).size).toBe(docs.length);
          if (chunks.length > 1) multiChunk++;
        }
      }
      expect(multiChunk).toBeGreaterThan(0);
    });

    it("has gold outside the pool, queries with nothing relevant and fully judged pools", () => {
      let outside = 0;
      let nothing = 0;
      let fully = 0;
      for (const shape of rerankTracks()) {
        for (const chunks of groupsOf(track(shape.track)).values()) {
          const s = blocks(chunks)[0]!;
          const pool = new Set(chunks.flatMap((c) => Object.keys(c.questions).map((k) => k.slice(4))));
          const relevant = Object.entries(s.qrels).filter(([, g]) => g >= s.relevance_threshold);
          for (const [, g] of Object.entries(s.qrels)) expect(g >= 0 && g <= 3).toBe(true);
          if (relevant.some(([d]) => !pool.has(d))) outside++;
          if (relevant.length === 0) nothing++;
          if (blocks(chunks).every((b) => b.fully_judged)) {
            fully++;
            for (const d of pool) expect(s.qrels[d], `${shape.track} fully judged pool`).toBeDefined();
          }
          if (SINGLE_GOLD.includes(shape.track)) {
            expect(relevant).toHaveLength(1);
            expect(s.fully_judged).toBe(false);
          }
        }
      }
      expect(outside).toBeGreaterThan(0);
      expect(nothing).toBeGreaterThan(0);
      expect(fully).toBeGreaterThan(0);
    });
  });

  it("is byte-identical for the same seed and different for another seed", async () => {
    const again = tempDir();
    const other = tempDir();
    const second = await makeSuite({ out: again, scale: "small", seed: 1 });
    const third = await makeSuite({ out: other, scale: "small", seed: 2 });
    expect(readFileSync(join(again, "manifest.json"), "utf8")).toBe(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(readFileSync(join(again, "stats.json"), "utf8")).toBe(readFileSync(join(dir, "stats.json"), "utf8"));
    for (const f of openSuite(dir).files) expect(sha256File(join(again, f.relPath)), f.relPath).toBe(sha256File(f.path));
    expect(second.identity).toBe(made.identity);
    expect(third.identity).not.toBe(made.identity);
  });

  it("writes the same bytes for a --tracks subset as for the whole suite", async () => {
    const sub = tempDir();
    const part = await makeSuite({ out: sub, scale: "small", seed: 1, tracks: ["trec-dl19", "nemotron-tools"] });
    expect(part.files).toBe(2);
    expect(part.manifest.tracks).toEqual(["trec-dl19", "nemotron-tools"]);
    for (const f of openSuite(sub).files) expect(sha256File(f.path)).toBe(sha256File(join(dir, f.relPath)));
  });

  it("refuses unknown tracks and an occupied directory unless forced", async () => {
    await expect(makeSuite({ out: tempDir(), scale: "small", seed: 1, tracks: ["no-such-track"] })).rejects.toBeInstanceOf(UsageError);
    await expect(makeSuite({ out: dir, scale: "small", seed: 1 })).rejects.toBeInstanceOf(UsageError);
    const forced = tempDir();
    await makeSuite({ out: forced, scale: "small", seed: 5, tracks: ["vihsd", "vihos"] });
    const replaced = await makeSuite({ out: forced, scale: "small", seed: 5, tracks: ["victsd"], force: true });
    expect(openSuite(forced).files.map((f) => f.track)).toEqual(["victsd"]);
    expect(replaced.files).toBe(1);
  });
});

describe("full scale", () => {
  it("plans exactly the card's 44 files, 58,366 records, and each track's rows and groups", () => {
    const plans = planSuite("full", 0);
    expect(plans).toHaveLength(44);
    expect(plans.reduce((a, p) => a + p.rows, 0)).toBe(58366);
    for (const p of plans) {
      expect([p.rows, p.groups], p.shape.track).toEqual(CARD[p.shape.track]);
      expect(p.groupSizes).toHaveLength(p.groups);
      expect(p.groupSizes.reduce((a, b) => a + b, 0)).toBe(p.rows);
      expect(Math.min(...p.groupSizes)).toBeGreaterThanOrEqual(1);
    }
    expect(SUITE_SHAPE.records).toBe(58366);
  });

  // Writing 5,192 full-scale records is CPU work: beside four CPU burners it took over 60 s.
  it("writes big tracks with the card's counts when restricted by --tracks", async () => {
    const dir = tempDir();
    const tracks = ["nemotron-tools", "stackoverflow-reranking-vn", "routerbench", "trec-dl19"];
    const made = await makeSuite({ out: dir, scale: "full", seed: 0, tracks });
    expect(made.records).toBe(2585 + 1497 + 1001 + 109);
    for (const [path, entry] of Object.entries(made.manifest.files)) {
      const name = path.split("/").pop()!.replace(".jsonl.gz", "");
      expect([entry.rows, entry.groups], name).toEqual(CARD[name]);
    }
    const v = await verifySuite(dir);
    expect(v.problems).toEqual([]);
    expect(v.records).toBe(made.records);
    const recs = (await readSuite(dir)).get("trec-dl19")!;
    expect(groupsOf(recs).size).toBe(43);
    expect(recs.every((r) => Object.keys(r.questions).length <= 25)).toBe(true);
  }, 240_000);
});
