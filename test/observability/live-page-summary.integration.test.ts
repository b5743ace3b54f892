// The live page in a real Chromium over a real coordinator, agent and simulated engine (issue 23,
// item 9): the model shown is the one the agents' engines serve (none was asked for), complete
// tracks are folded below the ones still running, and the scores panel's v1 and pillar means,
// kept from the headlines as they arrive, end equal to the in-process scorer's metrics.json.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliFixture } from "../support/cli-fixture.js";
import { waitUntil } from "../support/cli-process.js";
import { launchChromium, type Browser } from "../support/chromium.js";
import { toolTestMode } from "../support/real-tool.js";

const mode = toolTestMode(["chromium"], "chromium");
const fx = cliFixture("page-summary", { seed: 5, tracks: ["aiv-sa24-easy", "aiv-culture100", "vihsd"] });
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(mode === "skip")("the live page", () => {
  it("shows the served model, folds complete tracks below running ones, and keeps v1 and pillar means equal to metrics.json", async () => {
    expect(mode, "chromium must be installed under CI=true").toBe("run");
    browser = await launchChromium();
    const engine = (await fx.cli(["sim-engine", "--port", "0", "--tokens-per-s", "80"]).waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const out = join(fx.root, "out");
    const coordinator = fx.cli(["coordinator", "--suite", fx.suite, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--heartbeat-ms", "500"]);
    const page = (await coordinator.waitFor(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
    const address = (await coordinator.waitFor(/listening on (127\.0\.0\.1:\d+) run/))[1]!;
    const tab = await browser.open(`${page}/`);
    fx.cli(["agent", "--coordinator", address, "--engine", engine, "--capacity", "1"]);

    // The model: none asked for, so the one the attached agent's engine reports.
    await tab.waitFor(`document.querySelectorAll('#agents tr[data-agent]').length === 1`, 60_000);
    const served = ((await (await fetch(`${page}/api/status`)).json()) as { agents: Array<{ model: string }> }).agents[0]!.model;
    expect(served).not.toBe("");
    await tab.waitFor(`document.getElementById("model").textContent === ${JSON.stringify(`${served} (as served)`)}`, 10_000);

    // Part-way: a complete track is folded below the running ones, shown on a click.
    await tab.waitFor(`document.querySelectorAll('#tracks tbody.done tr').length >= 1 && document.querySelectorAll('#tracks tbody.running tr').length >= 1`, 120_000);
    const midway = await tab.evaluate<{ running: string[]; done: string[]; fold: string; doneShown: boolean }>(`(() => ({
      running: [...document.querySelectorAll('#tracks tbody.running tr')].map((r) => r.dataset.complete),
      done: [...document.querySelectorAll('#tracks tbody.done tr')].map((r) => r.dataset.complete),
      fold: document.getElementById("tracks-fold").textContent,
      doneShown: getComputedStyle(document.querySelector('#tracks tbody.done')).display !== "none",
    }))()`);
    expect(midway.running.every((c) => c === "0"), JSON.stringify(midway)).toBe(true);
    expect(midway.done.every((c) => c === "1"), JSON.stringify(midway)).toBe(true);
    expect(midway.fold).toMatch(/\d+ complete tracks? \(show\)/);
    expect(midway.doneShown).toBe(false);
    await tab.evaluate(`document.getElementById("tracks-fold").click(), true`);
    await tab.waitFor(`getComputedStyle(document.querySelector('#tracks tbody.done')).display !== "none"`, 5_000);

    // The end: every track scored; the page's means are metrics.json's.
    await coordinator.waitFor(/run complete/, 180_000);
    await waitUntil(() => {
      try {
        return Object.keys((JSON.parse(readFileSync(join(out, "metrics.json"), "utf8")) as { tracks: object }).tracks).length === 3;
      } catch {
        return false;
      }
    }, 60_000, "metrics.json with every track");
    const metrics = JSON.parse(readFileSync(join(out, "metrics.json"), "utf8")) as {
      pillars: Record<string, { mean: number | null }>;
      summary: { v1_mean: number | null; v1_mean_partial?: number | null };
    };
    await tab.waitFor(`document.getElementById("scored-tracks") && document.getElementById("scored-tracks").textContent === "3"`, 60_000);
    expect(await tab.evaluate<string>(`document.getElementById("summary").textContent`)).toMatch(/final: 3 of 3 tracks scored/);
    const v1 = metrics.summary.v1_mean ?? metrics.summary.v1_mean_partial!;
    expect(await tab.evaluate<string>(`document.getElementById("v1-mean").textContent`)).toBe(v1.toFixed(4));
    const pillars = await tab.evaluate<Record<string, string>>(
      `Object.fromEntries([...document.querySelectorAll('#pillars tr[data-pillar]')].map((r) => [r.dataset.pillar, r.querySelector('td.n').textContent]))`,
    );
    const expected = Object.fromEntries(Object.entries(metrics.pillars).map(([p, m]) => [p, m.mean === null ? "-" : m.mean.toFixed(4)]));
    expect(pillars).toEqual(expected);
    expect(Object.keys(pillars).length).toBe(2);
    coordinator.kill("SIGKILL");
  }, 300_000);
});
