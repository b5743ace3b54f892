// A complete run's coordinator stops without waiting for its agents to go (issue 26: the run's
// exit follows its last commit): each was told "run complete" with the last commit and holds
// nothing the run needs, so one that does not leave (stuck behind a dead engine) cannot hold the
// exit for the drain's grace. A run that is not complete still waits for what its agents hold.
import { describe, expect, it } from "vitest";
import { writeTinySuite } from "./helpers/tiny-suite.js";
import { useHarness } from "./helpers/harness.js";

const { tmp, start, agent } = useHarness();

describe("coordinator stop after the run is complete", () => {
  it("does not wait for an agent that stays attached after the run completed", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), drainTimeoutMs: 3_600_000 });
    const stuck = agent(h.address, { agentId: "stuck", credit: 0, ignoreDrain: true });
    agent(h.address, { agentId: "a", credit: 2 });
    const outcome = await h.done;
    expect(outcome.state).toBe("complete");
    await stuck.waitFor(() => stuck.received.some((m) => m.kind === "drain"), 10_000, "drain");
    // With the hour's grace this would hang until the test's timeout before the change.
    await h.drain();
    expect(h.state()).toBe("stopped");
    await stuck.closed;
    expect(stuck.ended).toBe(true);
  });
});
