// A sweep's run ends and the next run takes the same address after a gap (the sweep seals the card,
// scores, starts the next coordinator; an engine restarts meanwhile). The run's coordinator lets
// its agents go with a reconnecting Drain, and an agent told so redials at a short interval however
// long the gap: before, it backed off as from a lost coordinator (250 ms doubling to 30 s) and, on
// a loaded machine, missed a short next run and the sweep's end altogether (issue 24: "an agent
// whose engine was being restarted for the next model never reattached within 60 s").
// Real coordinators over gRPC on 127.0.0.1, a real simulated engine.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCoordinator } from "../../coordinator/server.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { startAgent } from "../../agent/attach-loop.js";
import { createLogger } from "../../common/log.js";
import { waitFor } from "./attach-fakes.js";

const quiet = createLogger("test", "silent");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `udm-next-run-${name}-`));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Longer than the attaches a lost coordinator's backoff makes in its first 3.75 s, plus its next delay (2 s at least). */
const GAP_MS = 6_000;

describe("a sweep's next run on the same address", () => {
  it("the agents of a complete run redial at the restart interval through the gap, and attach to the next run", async () => {
    const suiteDir = tmp("suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 3, tracks: ["vihsd"] });
    const first = await startCoordinator({ suiteDir, outDir: tmp("out1"), listen: "127.0.0.1:0", releaseAgentsAtEnd: true, logger: quiet });
    cleanups.push(() => first.close());
    const engine = await startSimEngine({ seed: 1 });
    cleanups.push(() => engine.close());
    const agent = startAgent({
      coordinator: first.address,
      method: new SystemOneMethod({ baseUrl: engine.url, capacity: 2 }),
      agentId: "agent-a",
      engineUrl: engine.url,
      restartRetryMaxMs: 300,
      logger: quiet,
    });
    cleanups.push(() => agent.stop());
    expect((await first.done).state).toBe("complete");
    await first.close();

    // Through the gap: the times of the agent's attaches (each failed attach is followed by the next).
    const attachesAt: number[] = [];
    let seen = agent.stats().attaches;
    const gapStart = Date.now();
    while (Date.now() - gapStart < GAP_MS) {
      const n = agent.stats().attaches;
      if (n !== seen) attachesAt.push(Date.now());
      seen = n;
      await new Promise((r) => setTimeout(r, 20));
    }
    // Counted, not timed gap by gap (a loaded machine can stall this loop for a second or two): at
    // the restart interval (300 ms) the gap holds about 20 attaches; backing off as from a lost
    // coordinator (250 ms doubling) makes 4 in it (at 0.25, 0.75, 1.75 and 3.75 s).
    expect(attachesAt.length, `attaches at ${attachesAt.map((t) => t - gapStart).join(", ")} ms into the gap`).toBeGreaterThanOrEqual(8);
    expect(agent.state()).not.toBe("stopped");

    const next = await startCoordinator({ suiteDir, outDir: tmp("out2"), listen: first.address, logger: quiet });
    cleanups.push(() => next.close());
    await waitFor("the agent attached to the next run", () => agent.stats().runId === next.runId, 10_000);
    expect((await next.done).state).toBe("complete");
    expect(await agent.done).toEqual({ kind: "drained", by: "coordinator", reason: "run complete" });
  }, 60_000);
});
