// `udm-orch scorer` once every track is scored: it keeps serving its final /metrics (every track
// scored) until SIGTERM, then exits 0, so Prometheus' last sample of it is a finished run.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { NATS_MISSING_MESSAGE, natsTestMode, startNatsServer, type RunningNatsServer } from "../support/nats-server.js";

const mode = natsTestMode();
const fx = cliFixture("scorer-after", { seed: 7, tracks: ["aiv-sa24-easy", "aiv-culture100"] });
let nats: RunningNatsServer | undefined;
afterAll(async () => nats?.stop());

describe.skipIf(mode === "skip")("scorer --after-complete serve (the default)", () => {
  it("serves udm_scorer_tracks_scored == udm_scorer_tracks after the run is scored; SIGTERM exits 0", async () => {
    expect(mode, NATS_MISSING_MESSAGE).toBe("run");
    nats = await startNatsServer();
    const engine = fx.cli(["sim-engine", "--port", "0"]);
    const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const c = fx.cli(["coordinator", "--suite", fx.suite, "--out", join(fx.root, "out"), "--listen", "127.0.0.1:0", "--metrics", "off", "--nats", nats.url, "--after-complete", "exit"]);
    const [, address, runId] = await c.waitFor(/listening on (127\.0\.0\.1:\d+) run (\S+):/);
    const scorer = fx.cli(["scorer", "--suite", fx.suite, "--nats", nats.url, "--out", join(fx.root, "scorer"), "--run", runId!, "--metrics", "127.0.0.1:0", "--progress-ms", "300"]);
    const metrics = (await scorer.waitFor(/metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/))[1]!;
    fx.cli(["agent", "--coordinator", address!, "--engine", url]);
    expect(await exitWithin(c, 60_000), c.output()).toBe(0);
    await scorer.waitFor(/run scored; serving its final metrics until stopped/, 60_000);
    const text = await (await fetch(metrics)).text();
    expect(/^udm_scorer_tracks_scored 2$/m.test(text) && /^udm_scorer_tracks 2$/m.test(text), text).toBe(true);
    expect(scorer.child.exitCode).toBeNull();
    scorer.kill("SIGTERM");
    expect(await exitWithin(scorer, 10_000), scorer.output()).toBe(0);
  }, 120_000);
});
