// The chart's end of a run, with real processes: the coordinator and the agent run the command
// lines helm renders (addresses and paths mapped onto this machine), beside a simulated engine.
// What the kubelet and `helm test` would see after completion: the agent exits 0 (its Job's pod
// succeeds and the kubelet stops the vLLM sidecar), the coordinator (serve) keeps answering every
// probe of its container, so it is neither restarted nor taken out of its Service, and the helm
// test's own command line succeeds against the finished run; with run.afterComplete exit the
// coordinator exits 0 (its Job completes) and the helm test reads the results volume.
import * as grpc from "@grpc/grpc-js";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/bench-args.js";
import { loadHealthPackageDefinition } from "../../proto/health-loader.js";
import { BIN, REPO_ROOT } from "../support/cli-process.js";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { toolMode } from "../support/real-tool.js";
import { extractHelm, type Helm } from "./helm-binary.js";
import { parseManifests, type K8sObject } from "./k8s-validate.js";

const CHART = join(REPO_ROOT, "helm", "udm-orch");
const FULL = "udm-udm-orch";
const tools = toolMode(["unzip"], "apt-get install unzip");
const fx = cliFixture("helm-run-end", { seed: 23, tracks: ["vihsd", "aiv-nli500"] });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const podSpec = (o: K8sObject): Any => (o.kind === "Pod" ? o.spec : o.spec.template.spec);

describe.skipIf(tools.mode === "skip")("the chart's run end, on real processes", () => {
  let helm: Helm;
  let scratch: string;

  beforeAll(() => {
    if (tools.mode === "fail") throw new Error(tools.message);
    helm = extractHelm();
    scratch = mkdtempSync(join(tmpdir(), "udm-helm-run-end-"));
  });
  afterAll(() => {
    helm?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  function render(values: string): K8sObject[] {
    const file = join(scratch, `values-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, `scorer:\n  enabled: false\nnats:\n  enabled: false\nauth:\n  token: run-end-token\nagents:\n  replicas: 1\n${values}`);
    const r = helm.run(["template", "udm", CHART, "--namespace", "evals", "-f", file]);
    if (r.status !== 0) throw new Error(r.stderr);
    return parseManifests(r.stdout);
  }

  /** The pod's addresses and mount points, mapped onto this machine. */
  function mapArgs(args: string[], map: Record<string, string>): string[] {
    return args.map((a) => map[a] ?? a);
  }

  async function start(values: string) {
    const objs = render(values);
    const [grpcPort, httpPort, enginePort, agentMetrics] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const out = join(fx.root, `out-${Math.random().toString(36).slice(2)}`);
    const map: Record<string, string> = {
      "/suite": fx.suite,
      "/results": out,
      "0.0.0.0:50051": `127.0.0.1:${grpcPort}`,
      "0.0.0.0:9470": `127.0.0.1:${httpPort}`,
      [`${FULL}-coordinator.evals.svc:50051`]: `127.0.0.1:${grpcPort}`,
      "http://127.0.0.1:8000": `http://127.0.0.1:${enginePort}`,
      "0.0.0.0:9472": `127.0.0.1:${agentMetrics}`,
    };
    const coordinatorWorkload = objs.find((o) => ["StatefulSet", "Job"].includes(o.kind) && o.metadata.name === `${FULL}-coordinator`)!;
    const coordinatorContainer = podSpec(coordinatorWorkload).containers[0];
    const agentJob = objs.find((o) => o.kind === "Job" && o.metadata.name.startsWith(`${FULL}-agent-`))!;
    const agentContainer = podSpec(agentJob).containers.find((c: Any) => c.name === "agent");
    const test = objs.find((o) => o.kind === "Pod" && o.metadata.annotations?.["helm.sh/hook"] === "test")!;
    const env = { UDM_TOKEN: "run-end-token" };
    const engine = fx.cli(["sim-engine", "--port", String(enginePort), "--oracle", fx.suite, "--accuracy", "0.8"]);
    await engine.waitFor(/listening/i, 30_000);
    const coordinator = fx.cli(mapArgs(coordinatorContainer.args, map), env);
    const agent = fx.cli(mapArgs(agentContainer.args, map), { ...env, UDM_AGENT_ID: `${agentJob.metadata.name}-0-abcde` });
    return { objs, coordinator, coordinatorWorkload, coordinatorContainer, agent, engine, test, map, grpcPort, httpPort, out };
  }

  /** What the kubelet's probe sees: true when it passes. */
  async function probePasses(probe: Any, ports: { grpc: number; http: number }): Promise<boolean> {
    if (probe.grpc) {
      const pkg = grpc.loadPackageDefinition(loadHealthPackageDefinition()) as unknown as {
        grpc: { health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { Check: Function } } } };
      };
      const client = new pkg.grpc.health.v1.Health(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
      try {
        const res = await new Promise<{ status: string }>((resolve, reject) => client.Check({ service: probe.grpc.service ?? "" }, (err: Error | null, r: { status: string }) => (err ? reject(err) : resolve(r))));
        return res.status === "SERVING";
      } catch {
        return false;
      } finally {
        client.close();
      }
    }
    const res = await fetch(`http://127.0.0.1:${ports.http}${probe.httpGet.path}`).catch(() => undefined);
    // The kubelet counts 200-399 as success.
    return res !== undefined && res.status >= 200 && res.status < 400;
  }

  function helmTest(test: K8sObject, map: Record<string, string>) {
    const args = mapArgs(podSpec(test).containers[0].args, map);
    return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, UDM_TOKEN: "run-end-token", UDM_NO_PROGRESS: "1" }, timeout: 30_000 });
  }

  it("serve: the agent exits 0, the finished coordinator passes every probe, and the helm test passes; SIGTERM ends it with 0", async () => {
    const r = await start("");
    expect(r.coordinatorWorkload.kind).toBe("StatefulSet");
    // The agent drains when the run is complete and exits 0: its Job's pod succeeds.
    expect(await exitWithin(r.agent, 120_000), r.agent.output()).toBe(0);
    await r.coordinator.waitFor(/run complete; serving its page and final metrics/, 30_000);
    // Still up well after completion, and every probe the StatefulSet's container has passes.
    await new Promise((res) => setTimeout(res, 1500));
    expect(r.coordinator.child.exitCode).toBeNull();
    const probes = ["startupProbe", "livenessProbe", "readinessProbe"].map((p) => r.coordinatorContainer[p]);
    expect(probes.every(Boolean)).toBe(true);
    for (const probe of probes) expect(await probePasses(probe, { grpc: r.grpcPort, http: r.httpPort }), JSON.stringify(probe)).toBe(true);
    // The TLS variant probes HTTP: /healthz passes, while /readyz (not used for readiness) says the run is over.
    const tls = render("tls:\n  enabled: true\n  existingSecret: c\n");
    const tlsContainer = podSpec(tls.find((o) => o.metadata.name === `${FULL}-coordinator` && o.kind === "StatefulSet")!).containers[0];
    for (const p of ["startupProbe", "livenessProbe", "readinessProbe"]) expect(await probePasses(tlsContainer[p], { grpc: r.grpcPort, http: r.httpPort }), p).toBe(true);
    expect((await fetch(`http://127.0.0.1:${r.httpPort}/readyz`)).status).toBe(503);
    // `helm test`: its pod's command line, against the finished run.
    const t = helmTest(r.test, r.map);
    expect(t.status, t.stdout + t.stderr).toBe(0);
    expect(t.stdout).toMatch(/complete/);
    r.coordinator.kill("SIGTERM");
    expect(await exitWithin(r.coordinator, 30_000), r.coordinator.output()).toBe(0);
    r.engine.kill("SIGTERM");
  }, 180_000);

  it("exit: the coordinator's Job completes (exit 0) with the run, and the helm test reads the results volume", async () => {
    const r = await start("run:\n  afterComplete: exit\n");
    expect(r.coordinatorWorkload.kind).toBe("Job");
    expect(await exitWithin(r.agent, 120_000), r.agent.output()).toBe(0);
    expect(await exitWithin(r.coordinator, 30_000), r.coordinator.output()).toBe(0);
    expect(podSpec(r.test).containers[0].args).toEqual(["status", "--out", "/results"]);
    const t = helmTest(r.test, r.map);
    expect(t.status, t.stdout + t.stderr).toBe(0);
    expect(t.stdout).toMatch(/state complete/);
    r.engine.kill("SIGTERM");
  }, 180_000);
});
