// `udm-orch status --out DIR` reads a run from its results directory alone: a finished run (its
// headlines), one a live coordinator still serves, and one whose coordinator was killed.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";

const fx = cliFixture("status-out", { seed: 7, tracks: ["aiv-sa24-easy", "aiv-culture100"] });

interface OutStatus {
  run_id: string;
  state: string;
  records_total: number;
  records_committed: number;
  tracks: Array<{ track: string; family: string; records: number; committed: number; complete: boolean; headline: { metric: string; value: number } | null }>;
}

async function statusOf(out: string): Promise<{ json: OutStatus; text: string }> {
  const j = fx.cli(["status", "--out", out, "--json"]);
  expect(await exitWithin(j, 30_000), j.output()).toBe(0);
  const t = fx.cli(["status", "--out", out]);
  expect(await exitWithin(t, 30_000), t.output()).toBe(0);
  return { json: JSON.parse(j.output()) as OutStatus, text: t.output() };
}

describe("status --out", () => {
  it("a finished run: complete, every record committed, each track's headline", async () => {
    const out = join(fx.root, "finished");
    const engine = fx.cli(["sim-engine", "--port", "0"]);
    const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const c = fx.cli(["coordinator", "--suite", fx.suite, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "off", "--after-complete", "exit"]);
    const [, address, runId, total] = await c.waitFor(/listening on (127\.0\.0\.1:\d+) run (\S+): (\d+) records/);
    fx.cli(["agent", "--coordinator", address!, "--engine", url]);
    expect(await exitWithin(c, 60_000), c.output()).toBe(0);
    const { json, text } = await statusOf(out);
    expect(json).toMatchObject({ run_id: runId, state: "complete", records_total: Number(total), records_committed: Number(total) });
    expect(json.tracks.map((t) => t.track).sort()).toEqual(["aiv-culture100", "aiv-sa24-easy"]);
    for (const t of json.tracks) {
      expect(t.complete, t.track).toBe(true);
      expect(t.committed).toBe(t.records);
      expect(t.headline?.metric, t.track).toMatch(/\w/);
    }
    expect(text).toMatch(new RegExp(`run ${runId}  state complete`));
    expect(text).toMatch(new RegExp(`records ${total}/${total} \\(100\\.0%\\)`));
  }, 120_000);

  it("a running run (a live coordinator holds the directory), then the same run killed: incomplete", async () => {
    const out = join(fx.root, "killed");
    const c = fx.cli(["coordinator", "--suite", fx.suite, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "off"]);
    const [, , runId, total] = await c.waitFor(/listening on (127\.0\.0\.1:\d+) run (\S+): (\d+) records/);
    const running = await statusOf(out);
    expect(running.json).toMatchObject({ run_id: runId, state: "running", records_total: Number(total), records_committed: 0 });
    expect(running.text).toMatch(new RegExp(`state running \\(coordinator pid ${c.child.pid} `));
    c.kill("SIGKILL");
    await c.exited;
    const killed = await statusOf(out);
    // Its run card still says "running": the lock's owner is gone, so the counts decide.
    expect(killed.json).toMatchObject({ run_id: runId, state: "incomplete", records_total: Number(total), records_committed: 0 });
    expect(killed.json.tracks.every((t) => !t.complete && t.headline === null)).toBe(true);
  }, 120_000);

  it("without --out or --coordinator, or a directory with no run: one line, exit 2", async () => {
    for (const args of [["status"], ["status", "--out", fx.suite]]) {
      const p = fx.cli(args);
      expect(await exitWithin(p, 30_000), p.output()).toBe(2);
      expect(p.output().trim().split("\n")).toHaveLength(1);
    }
  });
});
