// No secret at rest (issue 27): an engine URL with credentials (`http://user:pass@host`, a
// `?api_key=`) given to an agent never reaches run.json, the run card, the coordinator's /api or
// any process's output. Real processes: a coordinator and an agent whose engine refuses such a URL
// (fetch does), so the agent attaches without becoming ready and the run is then stopped.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitUntil } from "../support/cli-process.js";
import { cliFixture } from "../support/cli-fixture.js";

const fx = cliFixture("secrets", { seed: 5, tracks: ["aiv-sa24-easy"] });
const cli = fx.cli;

// An --engine URL takes no query (refused, exit 2), so the secret rides in its userinfo; query
// parameters named like secrets are stripped too (test/common/redact-url.test.ts).
const SECRETS = ["s3cret-pass"];

describe("engine URL credentials", () => {
  it("are stripped from run.json, run-card.json, /api/status, /api/run and every log line", async () => {
    const out = join(fx.root, "out");
    const c = cli(["coordinator", "--suite", fx.suite, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--after-complete", "exit"]);
    const address = (await c.waitFor(/listening on (127\.0\.0\.1:\d+)/))[1]!;
    const page = (await c.waitFor(/(http:\/\/127\.0\.0\.1:\d+)/))[1]!;
    const agent = cli(["agent", "--coordinator", address, "--engine", "http://operator:s3cret-pass@127.0.0.1:9"]);

    const runJson = join(out, "run.json");
    const agents = () => (existsSync(runJson) ? ((JSON.parse(readFileSync(runJson, "utf8")) as { agents?: { list?: unknown[] } }).agents?.list ?? []) : []);
    await waitUntil(() => agents().length > 0, 60_000, "the agent in run.json");
    expect(readFileSync(runJson, "utf8")).toContain('"engine_url": "http://***@127.0.0.1:9"');
    const api = [await (await fetch(`${page}/api/status`)).text(), await (await fetch(`${page}/api/run`)).text()];
    expect(api[0]).toContain("http://***@127.0.0.1:9");

    c.kill("SIGTERM");
    await c.exited;
    agent.kill("SIGTERM");
    await agent.exited;
    // The card lists the agents still attached when it is sealed (this one may have left by then).
    const card = readFileSync(join(out, "run-card.json"), "utf8");
    const texts = { "run.json": readFileSync(runJson, "utf8"), "run-card.json": card, "/api/status": api[0]!, "/api/run": api[1]!, coordinator: c.output(), agent: agent.output() };
    // The coordinator logs the agent's engine: without its credentials.
    expect(c.output()).toContain("http://***@127.0.0.1:9");
    for (const [where, text] of Object.entries(texts)) for (const secret of SECRETS) expect(text, `${where} holds ${secret}`).not.toContain(secret);
  }, 120_000);
});
