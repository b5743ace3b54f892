// Issue 14 cases 1 (coordinator side) and 3 against a real coordinator and test agents: a huge group
// is cut into units by bytes; a record too large to send is committed once with an error naming
// its size and never offered; records that ended with errors are counted and redone by the next
// start, their new line superseding the old.
import { describe, expect, it } from "vitest";
import { planUnits } from "../../coordinator/planner.js";
import type { RecordEntry } from "../../coordinator/suite-index.js";
import { resultLines, useHarness } from "./helpers/harness.js";
import { uniformAnswer } from "./helpers/test-agent.js";
import { tinyTracks, writeTinySuite } from "./helpers/tiny-suite.js";

const { tmp, start, agent } = useHarness();

const payloadBytes = (r: { state: unknown; questions: unknown }) => Buffer.byteLength(JSON.stringify(r.state)) + Buffer.byteLength(JSON.stringify(r.questions));

describe("planner", () => {
  const entry = (id: string, group: string, bytes: number): RecordEntry =>
    ({ recordKey: `t:${id}`, id, groupId: group, payloadSha256: "", questionKeys: "q", questionCount: 1, optionLists: [["A", "B"]], offset: 0, stateBytes: bytes, questionsBytes: 0 }) as RecordEntry;

  it("keeps a group whole under maxGroupBytes and cuts a bigger one by bytes, in file order", () => {
    const records = [entry("a1", "a", 10), entry("a2", "a", 10), entry("b1", "b", 40), entry("b2", "b", 40), entry("b3", "b", 40)];
    const units = planUnits([{ track: "t", family: "f", records }], { maxRecords: 64, maxQuestions: 512, maxPayloadBytes: 60, maxGroupBytes: 100 });
    const byRecords = units.map((u) => u.records.map((r) => r.id)).sort();
    expect(byRecords).toEqual([["a1", "a2"], ["b1", "b2"], ["b3"]]);
    expect(units.flatMap((u) => u.records)).toHaveLength(5);
  });
});

describe("a record too large to send (case 1)", () => {
  it("is committed once with an error per question naming its size, never offered, and counted as errored", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const records = tinyTracks()[0]!.records;
    const sizes = records.map(payloadBytes);
    const limit = Math.max(...sizes) - 1;
    const big = records[sizes.indexOf(Math.max(...sizes))]!._evaluation.run_id;
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"], planLimits: { maxRecordBytes: limit } });
    const a = agent(h.address, { credit: 2 });
    const outcome = await h.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: 12, recordsErrored: 1 });
    expect(a.units.flatMap((u) => u.records.map((r) => r.run_id))).not.toContain(big);
    const lines = resultLines(outDir, "sentiment", "tiny-sa");
    expect(lines).toHaveLength(12);
    const line = lines.find((l) => l.run_id === big)!;
    expect(Object.values(line.errors as Record<string, string>)[0]).toMatch(new RegExp(`record payload is ${Math.max(...sizes)} bytes, over the limit of ${limit} bytes`));
    await h.close();

    // The next start tries it again (still too large): one new line, still never sent.
    const h2 = await start({ suiteDir, outDir, tracks: ["tiny-sa"], planLimits: { maxRecordBytes: limit } });
    const b = agent(h2.address, { credit: 2 });
    expect(await h2.done).toMatchObject({ state: "complete", recordsResumed: 11, recordsErrored: 1 });
    expect(b.units).toHaveLength(0);
    expect(resultLines(outDir, "sentiment", "tiny-sa").filter((l) => l.run_id === big)).toHaveLength(2);
  });
});

describe("records that ended with errors (case 3)", () => {
  it("are counted, and the next start redoes them with a line that supersedes the old", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const failing = new Set(["tiny-sa:sa:1", "tiny-sa:sa:5"]);
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"] });
    agent(h.address, {
      credit: 2,
      answer: (p) => {
        const a = uniformAnswer(p);
        if (!failing.has(p.run_id)) return a;
        const keys = Object.keys(a.probs ?? {});
        return { ...a, probs: {}, errors: Object.fromEntries(keys.map((k) => [k, "engine: 500 after 5 attempts"])) };
      },
    });
    expect(await h.done).toMatchObject({ state: "complete", recordsCommitted: 12, recordsErrored: 2 });
    await h.close();

    const h2 = await start({ suiteDir, outDir, tracks: ["tiny-sa"] });
    const b = agent(h2.address, { credit: 2 });
    expect(await h2.status()).toMatchObject({ recordsResumed: 10 });
    expect(await h2.done).toMatchObject({ state: "complete", recordsCommitted: 12, recordsResumed: 10, recordsErrored: 0 });
    expect(b.units.flatMap((u) => u.records.map((r) => r.run_id)).sort()).toEqual([...failing].sort());
    const lines = resultLines(outDir, "sentiment", "tiny-sa");
    expect(lines).toHaveLength(14);
    for (const id of failing) {
      const mine = lines.filter((l) => l.run_id === id);
      expect(mine).toHaveLength(2);
      expect(mine[0]!.errors).toBeDefined();
      expect(mine[1]!.errors).toBeUndefined();
    }
    await h2.close();

    // Nothing left to redo: a third start is complete at once.
    const h3 = await start({ suiteDir, outDir, tracks: ["tiny-sa"] });
    expect(await h3.done).toMatchObject({ state: "complete", recordsResumed: 12, recordsErrored: 0 });
  });
});
