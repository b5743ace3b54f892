// The coordinator over the synthetic suite of every v1 track shape (sim/suite-maker/): option
// keys that are tool names, skill ids, "0".."4", 26+ letters; reranking groups of many chunks.
import { createGunzip } from "node:zlib";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { openSuite } from "../../common/suite/suite.js";
import { resultLines, useHarness } from "./helpers/harness.js";

const { tmp, start, agent } = useHarness();

async function goldOf(path: string): Promise<Map<string, { group: string; expected: unknown; scoring: unknown }>> {
  const out = new Map<string, { group: string; expected: unknown; scoring: unknown }>();
  const rl = createInterface({ input: createReadStream(path).pipe(createGunzip()) });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    out.set(r._evaluation.run_id, { group: r.metadata.group_id, expected: r.expected, scoring: r.scoring });
  }
  return out;
}

describe("coordinator over the synthetic small suite", () => {
  it("commits every record of all 44 tracks once, keeps groups whole, and sends no gold", async () => {
    const suiteDir = tmp("suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 3 });
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir });
    const agents = [agent(h.address, { agentId: "a", credit: 3 }), agent(h.address, { agentId: "b", credit: 2 })];
    const outcome = await h.done;
    expect(outcome.state).toBe("complete");
    expect(outcome.counters.rejected).toBe(0);
    const suite = openSuite(suiteDir);
    expect(suite.files).toHaveLength(44);
    const unitOfRun = new Map<string, string>();
    for (const a of agents) for (const u of a.units) if (!u.backup) for (const r of u.records) unitOfRun.set(r.run_id, u.unit_id);
    let total = 0;
    for (const f of suite.files) {
      const gold = await goldOf(f.path);
      total += gold.size;
      const lines = resultLines(outDir, f.family, f.track);
      expect(lines.map((l) => l.run_id).sort(), f.track).toEqual([...gold.keys()].sort());
      // All rows of a group went out in one unit (the first lease of each record).
      const unitsOfGroup = new Map<string, Set<string>>();
      for (const [runId, g] of gold) {
        if (!unitsOfGroup.has(g.group)) unitsOfGroup.set(g.group, new Set());
        unitsOfGroup.get(g.group)!.add(unitOfRun.get(runId)!);
      }
      for (const [g, us] of unitsOfGroup) expect(us.size, `${f.track} group ${g}`).toBe(1);
    }
    expect(outcome.recordsCommitted).toBe(total);
    for (const a of agents) {
      for (const m of a.received) {
        const text = JSON.stringify(m);
        expect(text).not.toContain('"expected"');
        expect(text).not.toContain('"scoring"');
        expect(text).not.toContain("qrels");
      }
    }
  });
});
