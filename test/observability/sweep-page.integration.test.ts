// A sweep's live page says which run of the matrix it shows (issue 23, item 9): the cell's name
// and "i of n", in a real Chromium, for each run in turn. Real sweep coordinator, agent and
// simulated engine; a 1x2 matrix (one model, two methods) over a small suite.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { launchChromium, type Browser } from "../support/chromium.js";
import { toolTestMode } from "../support/real-tool.js";
import { freePort } from "../../bench/bench-args.js";

const mode = toolTestMode(["chromium"], "chromium");
const fx = cliFixture("sweep-page", { seed: 9, tracks: ["vihsd", "aiv-sa24-easy"] });
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(mode === "skip")("a sweep's live page", () => {
  it("names the run of the matrix it shows: its cell and i of n", async () => {
    expect(mode, "chromium must be installed under CI=true").toBe("run");
    browser = await launchChromium();
    const port = await freePort();
    const config = join(fx.root, "sweep.yaml");
    writeFileSync(config, ["suite: suite", "out: runs", `listen: 127.0.0.1:${port}`, "models: [sim/pseudo]", "methods: [systemone, decisions]", "lease_ms: 5000", ""].join("\n"));
    const sweep = fx.cli(["sweep", "--config", config, "--metrics", "127.0.0.1:0"]);
    const page = (await sweep.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
    const engine = (await fx.cli(["sim-engine", "--port", "0", "--tokens-per-s", "150"]).waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    fx.cli(["agent", "--coordinator", `127.0.0.1:${port}`, "--engine", engine, "--method", "any", "--capacity", "1"]);
    const tab = await browser.open(`${page}/`);
    const seen = new Set<string>();
    const until = Date.now() + 240_000;
    // The page reloads itself when the sweep moves on to its next run: read its header until both were shown.
    while (seen.size < 2 && Date.now() < until && sweep.child.exitCode === null) {
      const text = await tab.evaluate<string>(`(document.getElementById("sweep") || {}).textContent || ""`).catch(() => "");
      if (text) seen.add(text);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect([...seen].sort()).toEqual(["sweep run sim_pseudo__decisions__t0__seeds-none (2 of 2)", "sweep run sim_pseudo__systemone__t0__seeds-none (1 of 2)"]);
    expect(await exitWithin(sweep, 240_000), sweep.output()).toBe(0);
  }, 300_000);
});
