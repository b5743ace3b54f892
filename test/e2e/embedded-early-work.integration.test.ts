// `udm-orch run` (EmbeddedRun) starts its agents at once (issue 26): they get units of the tracks
// already read while a later track is still being read, before the scorer has the whole suite's
// gold (create() itself returns once the gold is whole). The late track is held back by the coordinator's beforeTrackRead test hook (from sources
// the coordinator runs in this thread), not by a sleep.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../common/log.js";
import { openSuite } from "../../common/suite/index.js";
import { EmbeddedRun } from "../../run/index.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { eventually } from "../coordinator/helpers/test-agent.js";

let root: string;
let suiteDir: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "udm-embedded-early-"));
  suiteDir = join(root, "suite");
  await makeSuite({ out: suiteDir, scale: "small", seed: 7, tracks: ["aiv-sa24-easy", "aiv-sa26-hard", "victsd"] });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("udm-orch run: work before the suite is read", () => {
  it("its agents commit results of early tracks while a late track is still being read", async () => {
    // The largest file is read last (tracks are read smallest file first).
    const files = openSuite(suiteDir).files;
    const late = files.reduce((a, b) => (statSync(b.path).size > statSync(a.path).size ? b : a));
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    let reached = false;
    const outDir = join(root, "out");
    // create() returns once the scorer has the whole suite's gold; the agents work before that.
    const creating = EmbeddedRun.create({
      suiteDir,
      outDir,
      sim: 1,
      printTracks: false,
      logger: createLogger("run", "silent"),
      beforeTrackRead: async (p) => {
        if (p !== late.relPath) return;
        reached = true;
        await opened;
      },
    });
    creating.catch(() => undefined);
    const committedLines = (f: { family: string; track: string }) => {
      const p = join(outDir, f.family, `${f.track}.jsonl`);
      return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean).length : 0;
    };
    const early = files.filter((f) => f !== late);
    try {
      await eventually(() => early.every((f) => committedLines(f) > 0), 30_000, "results of the early tracks committed by the run's own agents");
      expect(reached).toBe(true);
      expect(committedLines(late)).toBe(0);
    } finally {
      open();
    }
    const run = await creating;
    const { outcome, metrics } = await run.run();
    expect(outcome.state).toBe("complete");
    expect(Object.keys(metrics!.tracks).sort()).toEqual(files.map((f) => f.track).sort());
  }, 60_000);
});
