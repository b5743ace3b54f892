// `udm-orch view` on a completed run, in a real headless Chromium: from the track table a wrong
// record is three clicks away (the track, the "wrong" filter, the record) and shows its gold and the
// run's distribution as bars; the page asks nothing of any other origin; its API needs the token.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { launchChromium, type Browser, type Page } from "../support/chromium.js";
import { toolTestMode } from "../support/real-tool.js";

const TOKEN = "look-at-the-answers";
const mode = toolTestMode(["chromium"], "chromium");
const f = cliFixture("view", { seed: 7, tracks: ["vihsd", "trec-dl19", "aiv-sa24-easy", "routerbench"] });

let browser: Browser | undefined;
let url: string;

describe.skipIf(mode === "skip")("udm-orch view in Chromium", () => {
  beforeAll(async () => {
    expect(mode, "chromium must be installed under CI=true (.ci/run installs it)").toBe("run");
    const run = f.cli(["run", "--suite", f.suite, "--out", join(f.root, "run"), "--sim", "1", "--metrics", "off"]);
    expect(await exitWithin(run, 120_000), run.output()).toBe(0);
    const view = f.cli(["view", join(f.root, "run"), "--listen", "127.0.0.1:0", "--token", TOKEN]);
    url = (await view.waitFor(/view: (http:\/\/127\.0\.0\.1:\d+)\//, 60_000))[1]!;
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("the API needs the token; the page itself carries no data", async () => {
    expect((await fetch(`${url}/api/run`)).status).toBe(401);
    expect((await fetch(`${url}/api/tracks/vihsd/records`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await fetch(`${url}/api/run?token=${TOKEN}`)).status).toBe(200);
    const html = await (await fetch(`${url}/`)).text();
    expect(html).not.toMatch(/https?:\/\//);
  });

  it("its right records agree with the scorer: accuracy and accepted_accuracy are right / records", async () => {
    const metrics = JSON.parse(readFileSync(join(f.root, "run", "metrics.json"), "utf8")) as { tracks: Record<string, { records: number; headline: { metric: string; value: number } }> };
    const checked: string[] = [];
    for (const [track, m] of Object.entries(metrics.tracks)) {
      if (m.headline.metric !== "accuracy" && m.headline.metric !== "accepted_accuracy") continue;
      const res = await fetch(`${url}/api/tracks/${track}/records?status=right&limit=500&token=${TOKEN}`);
      const page = (await res.json()) as { matched: number; total: number };
      expect(page.total, track).toBe(m.records);
      expect(page.matched / page.total, track).toBeCloseTo(m.headline.value, 10);
      checked.push(track);
    }
    expect(checked.sort()).toEqual(["aiv-sa24-easy", "routerbench", "vihsd"]);
  });

  it("a wrong record is three clicks from the track table and shows its gold and distribution", async () => {
    const page: Page = await browser!.open(`${url}/?token=${TOKEN}`);
    await page.waitFor(`document.querySelector('#tracks a.track-link[href="#/t/vihsd"]')`);
    expect(await page.evaluate<string>(`document.querySelector('#tracks tr[data-track="vihsd"]').textContent`)).toMatch(/accuracy/);
    // 1: the track
    await page.evaluate(`document.querySelector('#tracks a.track-link[href="#/t/vihsd"]').click()`);
    await page.waitFor(`document.querySelector('#records') && document.querySelector('a.status-filter[data-status="wrong"]')`);
    // 2: the "wrong" filter
    await page.evaluate(`document.querySelector('a.status-filter[data-status="wrong"]').click()`);
    await page.waitFor(`document.querySelector('a.status-filter.on[data-status="wrong"]') && document.querySelectorAll('#records tbody tr').length > 0`);
    const statuses = await page.evaluate<string[]>(`[...document.querySelectorAll('#records tbody tr')].map((tr) => tr.cells[3].textContent)`);
    expect(statuses.every((s) => s.includes("wrong")), statuses.join("|")).toBe(true);
    const id = await page.evaluate<string>(`document.querySelector('#records tbody tr').dataset.id`);
    // 3: the record
    await page.evaluate(`document.querySelector('#records a.record-link').click()`);
    await page.waitFor(`document.querySelector('#record-id') && document.querySelector('.question')`);
    expect(await page.evaluate<string>(`document.querySelector('#record-id').textContent`)).toBe(id);
    const gold = goldOf("content_moderation", "vihsd", id);
    const shown = await page.evaluate<{ gold: string; pred: string; verdict: string; goldRow: string; bars: number[] }>(`(() => {
      const q = document.querySelector('.question[data-key="label"]');
      return {
        gold: q.querySelector('.gold-label').textContent,
        pred: q.querySelector('.pred-label').textContent,
        verdict: q.querySelector('.badge').textContent,
        goldRow: q.querySelector('tr.gold').dataset.option,
        bars: [...q.querySelectorAll('.options .pbar > div')].map((d) => parseFloat(d.style.width)),
      };
    })()`);
    expect(shown.gold).toBe(gold);
    expect(shown.goldRow).toBe(gold);
    expect(shown.verdict).toBe("wrong");
    expect(shown.pred).not.toBe(gold);
    // The bars are the run's distribution: one per option, summing to 100%.
    expect(shown.bars.length).toBeGreaterThan(1);
    expect(shown.bars.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 0);
    expect(await page.evaluate<string>(`document.querySelector('#cost').textContent`)).toMatch(/latency .* ms .* prompt tokens \d+/);
    // Nothing was asked of another origin.
    expect(page.requests().filter((r) => !r.startsWith(url) && r !== "about:blank")).toEqual([]);
  });

  it("a reranking row lists its documents in rank order with their relevance; the confusion matrix counts every gold record", async () => {
    const page = await browser!.open(`${url}/?token=${TOKEN}#/t/trec-dl19`);
    await page.waitFor(`document.querySelector('#records a.record-link')`);
    await page.evaluate(`document.querySelector('#records a.record-link').click()`);
    await page.waitFor(`document.querySelector('#documents')`);
    const ranks = await page.evaluate<string[]>(`[...document.querySelectorAll('#documents tbody tr')].map((tr) => tr.cells[0].textContent)`);
    expect(ranks.filter((r) => r !== "-")).toEqual(ranks.filter((r) => r !== "-").map((_, i) => String(i + 1)));
    const cm = await browser!.open(`${url}/?token=${TOKEN}#/t/vihsd`);
    await cm.waitFor(`document.querySelector('#confusion')`);
    const total = await cm.evaluate<number>(`[...document.querySelectorAll('#confusion tbody td')].reduce((s, td) => s + Number(td.textContent), 0)`);
    expect(total).toBe(recordsOf("content_moderation", "vihsd").length);
  });
});

function recordsOf(family: string, track: string): Array<{ id: string; expected: Record<string, unknown> }> {
  return gunzipSync(readFileSync(join(f.suite, "test", family, `${track}.jsonl.gz`)))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; expected: Record<string, unknown> });
}

function goldOf(family: string, track: string, id: string): string {
  return String(recordsOf(family, track).find((r) => r.id === id)!.expected.label);
}
