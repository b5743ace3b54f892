// No engine request times out merely from queueing (issue 23, item 9: with 800 tokens/s engines an
// agent kept 112 requests on one engine, ran past the 120 s request timeout and retried work in
// progress). Real coordinator, agent and simulated engine, scaled down: a 400 tokens/s engine that
// runs every request at once (processor sharing, as vLLM below --max-num-seqs), a 5 s request
// timeout and room for 64 records in flight. Before the latency budget the agent's limit crept up
// until requests timed out (about 100 requests in); with it, none does.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { cliFixture } from "../support/cli-fixture.js";

const fx = cliFixture("latency-budget", { seed: 4, tracks: ["aiv-sa24-easy"] });

async function metric(url: string, name: RegExp): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split("\n").find((l) => name.test(l));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

describe("an agent on a slow engine", () => {
  it("keeps its requests within the request timeout", async () => {
    // Enough records that the agent's own limits, not the suite's size, bound what is in flight.
    const suite = join(fx.root, "full");
    await makeSuite({ out: suite, scale: "full", seed: 4, tracks: ["vihsd"] });
    const engine = (await fx.cli(["sim-engine", "--port", "0", "--tokens-per-s", "400"]).waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const coordinator = fx.cli(["coordinator", "--suite", suite, "--out", join(fx.root, "out"), "--listen", "127.0.0.1:0", "--metrics", "off"]);
    const address = (await coordinator.waitFor(/listening on (127\.0\.0\.1:\d+) run/, 60_000))[1]!;
    const agent = fx.cli([
      "agent", "--coordinator", address, "--engine", engine, "--request-timeout-ms", "5000",
      "--capacity", "16", "--concurrency", "64", "--metrics", "127.0.0.1:0",
    ]);
    const metrics = `${(await agent.waitFor(/metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/))[1]!}/metrics`;
    const answered = () => metric(metrics, /^udm_agent_engine_request_duration_seconds_count\{.*endpoint="\/v1\/systemone"/);
    let peak = 0;
    const until = Date.now() + 240_000;
    while ((await answered()) < 200) {
      if (Date.now() > until) throw new Error(`only ${await answered()} requests answered:\n${agent.output().slice(-2000)}`);
      peak = Math.max(peak, await metric(metrics, /^udm_agent_engine_requests_inflight\{/));
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(agent.output()).not.toMatch(/got no answer within|requests timed out/);
    // It did keep several requests going: bounded, not serialised.
    expect(peak).toBeGreaterThanOrEqual(2);
  }, 300_000);
});
