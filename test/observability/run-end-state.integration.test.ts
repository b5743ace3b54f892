// A run's end is a state Prometheus sees: a `coordinator` run to completion keeps serving its final
// /metrics (udm_run_state{state="complete"} 1, the final committed total) until SIGTERM, then exits 0.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { startPrometheus, type RunningPrometheus } from "../support/prometheus.js";
import { toolTestMode } from "../support/real-tool.js";

const mode = toolTestMode(["prometheus"], "prometheus");
const fx = cliFixture("run-end", { seed: 7, tracks: ["aiv-sa24-easy"] });

describe.skipIf(mode === "skip")("a completed run seen through Prometheus", () => {
  it("scrapes udm_run_state{state=\"complete\"} 1 and the final committed total; SIGTERM then exits 0", async () => {
    expect(mode, "prometheus missing under CI=true: .ci/run must install Debian's prometheus").toBe("run");
    const engine = fx.cli(["sim-engine", "--port", "0"]);
    const engineUrl = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const coordinator = fx.cli(["coordinator", "--suite", fx.suite, "--out", join(fx.root, "out"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    const page = (await coordinator.waitFor(/live page: http:\/\/(127\.0\.0\.1:\d+)\//))[1]!;
    const [, address, total] = await coordinator.waitFor(/listening on (127\.0\.0\.1:\d+) run \S+: (\d+) records/);
    let prometheus: RunningPrometheus | undefined;
    try {
      prometheus = await startPrometheus(join(fx.root, "prometheus"), [{ job: "udm-coordinator", targets: [page] }], { scrapeMs: 200 });
      const agent = fx.cli(["agent", "--coordinator", address!, "--engine", engineUrl]);
      expect(await exitWithin(agent, 60_000), agent.output()).toBe(0);
      await coordinator.waitFor(/run complete; serving its page and final metrics until stopped/, 30_000);
      // Scraped after the run's end: the process is still up and says how it ended.
      const value = async (q: string) => (await prometheus!.query(q))[0]?.value[1];
      const deadline = Date.now() + 20_000;
      let seen: [string | undefined, string | undefined, string | undefined] = [undefined, undefined, undefined];
      while (Date.now() < deadline) {
        seen = [await value('udm_run_state{state="complete"}'), await value("udm_records_committed_total"), await value('up{job="udm-coordinator"}')];
        if (seen[0] === "1") break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(seen, coordinator.output().slice(-2000)).toEqual(["1", total, "1"]);
      expect(coordinator.child.exitCode).toBeNull();
      // The gRPC port still answers Status (and health: the chart's probes), with the final state.
      const status = fx.cli(["status", "--coordinator", address!]);
      expect(await exitWithin(status, 15_000), status.output()).toBe(0);
      expect(status.output()).toMatch(/state complete/);
      coordinator.kill("SIGTERM");
      expect(await exitWithin(coordinator, 10_000), coordinator.output()).toBe(0);
    } finally {
      await prometheus?.stop();
    }
  }, 120_000);
});
