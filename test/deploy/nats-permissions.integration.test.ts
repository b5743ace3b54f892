// The per-role NATS users of the chart's in-chart server and of Compose's, on a real nats-server
// running their own nats.conf (the chart's from `helm template`'s ConfigMap; the passwords from
// the environment, as the pods and containers give them): the coordinator's user may do all a
// coordinator does on the bus; the scorer's may consume results, read status and publish metrics,
// but a results, events or status publish with it is refused. Then a real coordinator, agent,
// engine and scorer, each with its own user, score a run end to end with no permission refused.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ResultLine } from "../../common/results/format.js";
import { NatsBus } from "../../common/bus/nats.js";
import { createLogger } from "../../common/log.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { REPO_ROOT, spawnCli, type CliProcess } from "../support/cli-process.js";
import { acksOnServer, NATS_MISSING_MESSAGE, natsTestMode, startNatsServer, type RunningNatsServer } from "../support/nats-server.js";
import { toolMode } from "../support/real-tool.js";
import { extractHelm } from "./helm-binary.js";

const mode = natsTestMode();
const tools = toolMode(["unzip"], "apt-get install unzip");

if (mode === "fail") {
  describe("nats-server", () => {
    it("is installed (CI=true runs every NATS test)", () => {
      throw new Error(NATS_MISSING_MESSAGE.replace("NATS tests skipped", "CI=true needs it"));
    });
  });
}

const PASS = { coordinator: "coordpass0123456789", scorer: "scorerpass0123456789" };
const RUN_TOKEN = "run-token-for-signing";
const quiet = () => createLogger("test", "error");

/** The chart's nats.conf, as `helm template` renders it into the NATS ConfigMap. */
function chartConf(): string {
  const helm = extractHelm();
  try {
    const r = helm.run(["template", "udm", join(REPO_ROOT, "helm", "udm-orch"), "--namespace", "evals"]);
    if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const objs = parseAllDocuments(r.stdout).map((d) => d.toJS() as any).filter(Boolean);
    return objs.find((o) => o.kind === "ConfigMap" && o.metadata.name === "udm-udm-orch-nats-config").data["nats.conf"] as string;
  } finally {
    helm.remove();
  }
}

const composeConf = () => readFileSync(join(REPO_ROOT, "deploy", "compose", "nats.conf"), "utf8");

/**
 * The config as the server reads it, less what belongs to the pod's or container's filesystem and
 * ports (pid file, monitor port, store dir); address, port and store dir come from startNatsServer's flags.
 */
function localConf(conf: string, dir: string): string {
  const out = conf.replace(/^\s*pid_file:.*$/m, "").replace(/^\s*http_port:.*$/m, "").replace(/^\s*store_dir: \/data$/m, "");
  expect(out).toContain("authorization");
  return out;
}

function line(n: number): ResultLine {
  return { run_id: `vihsd:q${n}`, id: `q${n}`, track: "vihsd", family: "sentiment", probs: { label: { A: 0.25, B: 0.75 } }, skipped: [] };
}

const status = (runId: string) => ({ runId, state: "running" as const, updatedAt: new Date().toISOString(), recordsTotal: 2, recordsCommitted: 1 });

describe.skipIf(mode !== "run" || tools.mode === "skip").each([
  ["the chart's in-chart NATS", chartConf, true],
  ["Compose's NATS", composeConf, false],
] as const)("per-role NATS users: %s", (_name, conf, endToEnd) => {
  let dir: string;
  let server: RunningNatsServer;
  const started: CliProcess[] = [];
  const open: NatsBus[] = [];

  const connect = async (role: "coordinator" | "scorer") => {
    const bus = await NatsBus.connect({ servers: [server.url], user: `udm-${role}`, pass: PASS[role], resultsToken: RUN_TOKEN, publishTimeoutMs: 2000, logger: quiet() });
    open.push(bus);
    return bus;
  };

  beforeAll(async () => {
    if (tools.mode === "fail") throw new Error(tools.message);
    dir = mkdtempSync(join(tmpdir(), "udm-nats-perm-"));
    const file = join(dir, "nats.conf");
    writeFileSync(file, localConf(conf(), dir));
    server = await startNatsServer({ configFile: file, env: { SERVER_NAME: "nats-0", NATS_COORDINATOR_PASS: PASS.coordinator, NATS_SCORER_PASS: PASS.scorer } });
  }, 60_000);

  afterAll(async () => {
    for (const p of started) p.kill("SIGKILL");
    for (const b of open) await b.close().catch(() => undefined);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a wrong password; the scorer may not create the streams, so a scorer that starts first waits for the coordinator's", async () => {
    await expect(NatsBus.connect({ servers: [server.url], user: "udm-scorer", pass: "wrong", logger: quiet() })).rejects.toThrow(/authorization/i);
    await expect(NatsBus.connect({ servers: [server.url], user: "udm-scorer", pass: PASS.scorer, logger: quiet() })).rejects.toThrow(/not created yet/);
    const suiteDir = join(dir, "wait-suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 3 });
    const s = spawnCli(["scorer", "--suite", suiteDir, "--nats", server.url, "--out", join(dir, "wait-scorer"), "--run", "rwait"], { UDM_NATS_USER: "udm-scorer", UDM_NATS_PASS: PASS.scorer });
    started.push(s);
    await s.waitFor(/not created yet; waiting for the coordinator/, 20_000);
    await connect("coordinator");
    await s.waitFor(/NATS reachable: connected/, 20_000);
    s.kill("SIGTERM");
    await s.exited;
  }, 60_000);

  it("lets the coordinator's user publish results, events, status and metrics", async () => {
    const bus = await connect("coordinator");
    const runId = "rcoord";
    expect(await bus.publishResult(runId, "vihsd", line(1))).toMatchObject({ ok: true });
    expect(await bus.publishEvent(runId, { type: "unit_done", at: new Date().toISOString(), unitId: "u1", track: "vihsd", agentId: "a1", results: 1 })).toMatchObject({ ok: true });
    await bus.putStatus(runId, status(runId));
    expect(await bus.publishMetrics(runId, "vihsd", { track: "vihsd", final: false, records: 1, metrics: {} })).toMatchObject({ ok: true });
    expect(await bus.getStatus(runId)).toMatchObject({ runId, state: "running" });
  });

  it("lets the scorer's user consume and ack results, read status and publish metrics, and refuses its results, events and status", async () => {
    const coordinator = await connect("coordinator");
    const runId = "rscorer";
    for (const n of [1, 2]) expect(await coordinator.publishResult(runId, "vihsd", line(n))).toMatchObject({ ok: true });
    await coordinator.putStatus(runId, status(runId));

    const scorer = await connect("scorer");
    expect(await scorer.getStatus(runId)).toMatchObject({ runId, recordsTotal: 2 });
    expect((await scorer.listStatuses()).map((s) => s.runId)).toContain(runId);

    // The durable consumer delivers both lines; acked, they are not delivered again to a new
    // consumer of the same durable (a restarted scorer).
    const consume = async () => {
      const got: string[] = [];
      const c = await scorer.consumeResults(runId, { durable: "scorer", ackWaitMs: 1000, onResult: (l, ack) => (got.push(l.run_id), ack()) });
      return { got, c };
    };
    const first = await consume();
    await expect.poll(() => first.got, { timeout: 10_000 }).toEqual(["vihsd:q1", "vihsd:q2"]);
    await acksOnServer(server.url, `${runId}_scorer`, 2, { user: "udm-coordinator", pass: PASS.coordinator });
    await first.c.stop();
    expect(await coordinator.publishResult(runId, "vihsd", line(3))).toMatchObject({ ok: true });
    const second = await consume();
    await expect.poll(() => second.got, { timeout: 10_000 }).toEqual(["vihsd:q3"]);
    // The server holds every ack of the durable (its third delivery included): nothing acked may come back.
    await acksOnServer(server.url, `${runId}_scorer`, 3, { user: "udm-coordinator", pass: PASS.coordinator });
    expect(second.got, "acked lines are not redelivered").toEqual(["vihsd:q3"]);
    await second.c.stop();

    expect(await scorer.publishMetrics(runId, "vihsd", { track: "vihsd", final: true, records: 3, metrics: {} })).toMatchObject({ ok: true });

    const refused = /permissions violation/i;
    const forged = await scorer.publishResult(runId, "vihsd", line(4));
    expect(forged.ok).toBe(false);
    expect(!forged.ok && forged.error.message).toMatch(refused);
    const event = await scorer.publishEvent(runId, { type: "run_complete", at: new Date().toISOString() } as never);
    expect(!event.ok && event.error.message).toMatch(refused);
    await expect(scorer.putStatus(runId, { ...status(runId), state: "complete" } as never)).rejects.toThrow(refused);
    expect(await coordinator.getStatus(runId)).toMatchObject({ state: "running" });
    // The server logs what it refuses (the end-to-end test below looks for none).
    expect(server.log()).toMatch(/violation.*udm-scorer/i);
  });

  // One end-to-end run (the chart's config) is enough: Compose's users are the same and are checked above.
  if (endToEnd) it(
    "a coordinator, an agent and a scorer, each with its own user, score a run with no permission refused",
    async () => {
      const suiteDir = join(dir, "suite");
      await makeSuite({ out: suiteDir, scale: "small", seed: 5 });
      const cli = (args: string[], role: "coordinator" | "scorer") => {
        const p = spawnCli(args, { UDM_TOKEN: RUN_TOKEN, UDM_NATS_USER: `udm-${role}`, UDM_NATS_PASS: PASS[role] });
        started.push(p);
        return p;
      };
      const logFrom = server.log().length;
      const c = cli(["coordinator", "--suite", suiteDir, "--out", join(dir, "results"), "--listen", "127.0.0.1:0", "--nats", server.url, "--after-complete", "exit"], "coordinator");
      const [, address, runId] = await c.waitFor(/listening on (127\.0\.0\.1:\d+) run ([0-9a-f-]+)/);
      const s = cli(["scorer", "--suite", suiteDir, "--nats", server.url, "--out", join(dir, "scorer"), "--run", runId!, "--progress-ms", "300", "--after-complete", "exit"], "scorer");
      const engine = spawnCli(["sim-engine", "--port", "0"]);
      started.push(engine);
      const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
      const agent = spawnCli(["agent", "--coordinator", address!, "--engine", url], { UDM_TOKEN: RUN_TOKEN });
      started.push(agent);

      expect((await c.exited).code, c.output()).toBe(0);
      expect((await s.exited).code, s.output()).toBe(0);
      expect(s.output()).not.toMatch(/rejected|not published/);
      const score = spawnCli(["score", "--suite", suiteDir, "--results", join(dir, "results"), "--out", join(dir, "score.json")]);
      started.push(score);
      expect((await score.exited).code, score.output()).toBe(0);
      expect(JSON.parse(readFileSync(join(dir, "scorer", "metrics.json"), "utf8"))).toEqual(JSON.parse(readFileSync(join(dir, "score.json"), "utf8")));
      expect(server.log().slice(logFrom)).not.toMatch(/violation/i);
    },
    240_000,
  );
});
