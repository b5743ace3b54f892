// The coordinator in a heap-capped worker thread (what `udm-orch coordinator` runs). The worker
// entry is the compiled one, so this runs after `npm run build` and is skipped before.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { startCoordinatorInWorker } from "../../coordinator/worker-host.js";
import { FormatError, UsageError } from "../../common/errors.js";
import { resultLines, useHarness } from "./helpers/harness.js";
import { tinyTracks, writeTinySuite } from "./helpers/tiny-suite.js";

const entry = pathToFileURL(fileURLToPath(new URL("../../dist/coordinator/worker-main.js", import.meta.url)));
const built = existsSync(fileURLToPath(entry));
const { tmp, agent } = useHarness();

describe.skipIf(!built)("startCoordinatorInWorker", () => {
  it("runs the coordinator in a worker, forwards commits and track completion, and resolves done", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const committed: string[] = [];
    const tracks: string[] = [];
    const w = await startCoordinatorInWorker(
      { suiteDir, outDir, onCommitted: (l) => committed.push(l.recordKey), onTrackComplete: (t) => tracks.push(t) },
      entry,
      128,
    );
    expect((await w.status()).recordsTotal).toBe(27);
    agent(w.address, { credit: 2 });
    const outcome = await w.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: 27 });
    expect(new Set(committed).size).toBe(27);
    expect(tracks.sort()).toEqual(["tiny-guard", "tiny-rr", "tiny-sa"]);
    expect(resultLines(outDir, "sentiment", "tiny-sa")).toHaveLength(12);
    // A complete run's coordinator serves until closed, as one in this thread does.
    expect(w.state()).toBe("running");
    await w.close();
    expect(w.state()).toBe("stopped");
  });

  it("a callback that throws (metrics.json on a full disk) ends the run with its error; the thread stops, committed lines stay", async () => {
    const outDir = tmp("out");
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", syscall: "write", path: join(outDir, "metrics.json") });
    let calls = 0;
    const w = await startCoordinatorInWorker(
      {
        suiteDir: writeTinySuite(tmp("suite")),
        outDir,
        onCommitted: () => {
          if (++calls === 3) throw full;
        },
      },
      entry,
      128,
    );
    agent(w.address, { credit: 2 });
    await expect(w.done).rejects.toBe(full);
    await w.close();
    expect(w.state()).toBe("stopped");
    const onDisk = tinyTracks().reduce((n, t) => n + resultLines(outDir, t.family, t.track).length, 0);
    expect(onDisk).toBeGreaterThanOrEqual(3);
    expect(calls).toBe(3); // nothing more reached the callback after it threw
  });

  it("passes a usage error from the worker through with its exit code", async () => {
    const err = await startCoordinatorInWorker({ suiteDir: tmp("empty"), outDir: tmp("out") }, entry, 128).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/not a suite/);
  });

  it("passes a FormatError from the worker through with its file, line and field", async () => {
    const tracks = tinyTracks();
    tracks[0]!.records.push(tracks[0]!.records[0]!);
    const line = tracks[0]!.records.length;
    // tiny-sa is the only track selected, so it is the first read: its problem refuses the start
    // (a later track's would end the run failed: early-work.integration.test.ts).
    const err = await startCoordinatorInWorker({ suiteDir: writeTinySuite(tmp("suite"), tracks), outDir: tmp("out"), tracks: ["tiny-sa"] }, entry, 128).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FormatError);
    expect(err).toMatchObject({ line, field: "id", exitCode: 2 });
    expect((err as FormatError).file).toMatch(/tiny-sa\.jsonl\.gz$/);
    expect((err as FormatError).problem).toMatch(/duplicate/);
  });

  it("drains on request and reports the run cancelled", async () => {
    const w = await startCoordinatorInWorker({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out") }, entry, 128);
    expect((await w.status()).state).toBe("running");
    void w.drain();
    expect((await w.done).state).toBe("cancelled");
  });
});
