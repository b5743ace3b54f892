// The scorer follows a named run (`--run-name` on the coordinator and the scorer), with real
// processes and a real nats-server: a scorer started before its coordinator waits for the run to
// appear on the bus; a scorer started while an older run is on the bus never scores that one.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { NATS_MISSING_MESSAGE, natsTestMode, startNatsServer, type RunningNatsServer } from "../support/nats-server.js";

const mode = natsTestMode();

if (mode === "fail") {
  describe("nats-server", () => {
    it("is installed (CI=true runs every NATS test)", () => {
      throw new Error(NATS_MISSING_MESSAGE.replace("NATS tests skipped", "CI=true needs it"));
    });
  });
}

let root: string;
let suiteDir: string;
let server: RunningNatsServer;
const started: CliProcess[] = [];

function cli(args: string[]): CliProcess {
  const p = spawnCli(args);
  started.push(p);
  return p;
}

/** A coordinator with --nats (and --run-name when given) and one agent beside a simulated engine, run to completion. */
async function runToCompletion(out: string, runName: string | undefined): Promise<string> {
  const c = cli(["coordinator", "--suite", suiteDir, "--out", out, "--listen", "127.0.0.1:0", "--nats", server.url, "--after-complete", "exit", ...(runName ? ["--run-name", runName] : [])]);
  const m = await c.waitFor(/listening on (127\.0\.0\.1:\d+) run ([0-9a-f-]+)/);
  const engine = cli(["sim-engine", "--port", "0"]);
  const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
  const agent = cli(["agent", "--coordinator", m[1]!, "--engine", url]);
  expect((await c.exited).code, c.output()).toBe(0);
  expect((await agent.exited).code, agent.output()).toBe(0);
  engine.kill("SIGTERM");
  return m[2]!;
}

function scorer(out: string, extra: string[]): CliProcess {
  return cli(["scorer", "--suite", suiteDir, "--nats", server.url, "--out", out, "--metrics", "off", "--after-complete", "exit", ...extra]);
}

const runIdOf = (dir: string): string => (JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as { run_id: string }).run_id;

describe.skipIf(mode !== "run")("a scorer following a named run (processes, nats-server)", () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "udm-named-run-"));
    suiteDir = join(root, "suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 3, tracks: ["vihsd"] });
    server = await startNatsServer();
  }, 60_000);

  afterAll(async () => {
    for (const p of started) p.kill("SIGKILL");
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("started before the coordinator, waits for the run named like it, then scores it", async () => {
    const s = scorer(join(root, "first-scorer"), ["--run-name", "first"]);
    await s.waitFor(/waiting for run "first" to appear on the bus/);
    const runId = await runToCompletion(join(root, "first"), "first");
    expect((await s.exited).code, s.output()).toBe(0);
    expect(s.output()).toContain(`scorer: run ${runId} (named first)`);
    expect(runIdOf(join(root, "first"))).toBe(runId);
    expect(JSON.parse(readFileSync(join(root, "first", "run.json"), "utf8")).run_name).toBe("first");
  }, 120_000);

  it("started beside an older run on the bus, never scores it: it waits for its own, and gives up after --wait-run-ms", async () => {
    // An older, finished run on the bus (another name) and one without a name.
    const older = await runToCompletion(join(root, "older"), "older");
    await runToCompletion(join(root, "unnamed"), undefined);
    const s = scorer(join(root, "newer-scorer"), ["--run-name", "newer", "--wait-run-ms", "1500"]);
    const { code } = await s.exited;
    expect(code, s.output()).toBe(2);
    expect(s.output()).toMatch(/no run named "newer" appeared on the bus within 1500 ms/);
    expect(s.output()).not.toContain(older);

    const waiting = scorer(join(root, "newer-scorer2"), ["--run-name", "newer"]);
    await waiting.waitFor(/waiting for run "newer" to appear on the bus/);
    const newer = await runToCompletion(join(root, "newer"), "newer");
    expect((await waiting.exited).code, waiting.output()).toBe(0);
    expect(waiting.output()).toContain(`scorer: run ${newer} (named newer)`);
    expect(waiting.output()).not.toContain(older);
  }, 180_000);
});
