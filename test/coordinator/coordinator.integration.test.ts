// The Coordinator object (coordinator.ts) over the bounded coordinator: from sources it runs in this
// thread; run() resolves with the run's outcome and shutdown() drains and stops it.
import { describe, expect, it } from "vitest";
import { COORDINATOR_DEFAULTS, Coordinator, withCoordinatorDefaults } from "../../coordinator/index.js";
import { quiet, resultLines, useHarness } from "./helpers/harness.js";
import { writeTinySuite } from "./helpers/tiny-suite.js";

const { tmp, agent } = useHarness();

describe("Coordinator", () => {
  it("create() serves the run, run() resolves when it is complete, shutdown() stops it", async () => {
    const outDir = tmp("out");
    const c = await Coordinator.create({ suiteDir: writeTinySuite(tmp("suite")), outDir, logger: quiet });
    try {
      expect(c.address).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(c.outDir).toBe(outDir);
      expect((await c.status()).recordsTotal).toBe(27);
      agent(c.address, { credit: 2 });
      const outcome = await c.run();
      expect(outcome).toMatchObject({ state: "complete", runId: c.runId, recordsCommitted: 27 });
      expect(resultLines(outDir, "sentiment", "tiny-sa")).toHaveLength(12);
      expect(c.state()).toBe("running");
    } finally {
      await c.shutdown();
    }
    expect(c.state()).toBe("stopped");
  });

  it("withCoordinatorDefaults fills what is not given from COORDINATOR_DEFAULTS and keeps what is", () => {
    const o = withCoordinatorDefaults({ suiteDir: "s", outDir: "o", leaseMs: 60_000, method: { model: "m" } });
    expect(o).toMatchObject({ leaseMs: 60_000, heartbeatMs: COORDINATOR_DEFAULTS.heartbeatMs, listen: "127.0.0.1:0", storeBatchLines: 256, storeFlushMs: 50, maxHeapMb: 256 });
    expect(o.method).toEqual({ method: "systemone", seeds: [], temperature: 0, model: "m" });
    expect(o.planLimits).toEqual(COORDINATOR_DEFAULTS.planLimits);
  });

  it("fits the default heartbeat to a short lease, and refuses a lease shorter than two given heartbeats", () => {
    expect(withCoordinatorDefaults({ suiteDir: "s", outDir: "o", leaseMs: 3_000 }).heartbeatMs).toBe(1_000);
    expect(withCoordinatorDefaults({ suiteDir: "s", outDir: "o", leaseMs: 3_000, heartbeatMs: 1_500 }).heartbeatMs).toBe(1_500);
    expect(() => withCoordinatorDefaults({ suiteDir: "s", outDir: "o", leaseMs: 3_000, heartbeatMs: 2_000 })).toThrow(/--lease-ms 3000 is shorter than 2 heartbeats/);
  });
});
