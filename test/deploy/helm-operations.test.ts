// helm/udm-orch operated like a job (issue 23), rendered with the real helm v4 and validated with
// kubernetes-models: agents are an Indexed Job whose vLLM is a native sidecar, so a finished agent
// completes its pod and releases its GPUs; the coordinator and scorer serve the finished run
// (StatefulSets) or complete as Jobs; a sweep runs as a Job; safe defaults: a random token Secret
// kept across upgrades (helm's lookup, against a stand-in API server), NetworkPolicies, a
// PodDisruptionBudget, probes on every container, no root and no capabilities, one shared model cache.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { expandSweep, readSweepConfig } from "../../card/index.js";
import { REPO_ROOT } from "../support/cli-process.js";
import { toolMode } from "../support/real-tool.js";
import { extractHelm, type Helm } from "./helm-binary.js";
import { parseManifests, validateObject, type K8sObject } from "./k8s-validate.js";
import { startKubeApiStandIn } from "./kube-api-stand-in.js";

const CHART = join(REPO_ROOT, "helm", "udm-orch");
const RELEASE = "udm";
const NAMESPACE = "evals";
const FULL = `${RELEASE}-udm-orch`;
const tools = toolMode(["unzip"], "apt-get install unzip");
const CI_VALUES = readdirSync(join(CHART, "ci")).filter((f) => f.endsWith("-values.yaml"));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const podSpec = (o: K8sObject): Any => (o.kind === "Pod" ? o.spec : o.spec?.template?.spec);
const podLabels = (o: K8sObject): Record<string, string> => (o.kind === "Pod" ? o.metadata.labels : o.spec?.template?.metadata?.labels) ?? {};
const workloads = (objs: K8sObject[]) => objs.filter((o) => podSpec(o) !== undefined);
const find = (objs: K8sObject[], kind: string, name: string | RegExp) =>
  objs.find((o) => o.kind === kind && (typeof name === "string" ? o.metadata.name === name : name.test(o.metadata.name)));
const agentJob = (objs: K8sObject[]) => find(objs, "Job", new RegExp(`^${FULL}-agent-[0-9a-f]{8}$`))!;
const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
const flagValue = (args: string[], flag: string) => (args.indexOf(flag) >= 0 ? args[args.indexOf(flag) + 1] : undefined);
/** Containers that run for the pod's life: regular ones and native sidecars (init containers with restartPolicy Always). */
const longRunning = (o: K8sObject): Any[] => [...(podSpec(o).initContainers ?? []).filter((c: Any) => c.restartPolicy === "Always"), ...podSpec(o).containers];
const allContainers = (o: K8sObject): Any[] => [...(podSpec(o).initContainers ?? []), ...podSpec(o).containers];

describe.skipIf(tools.mode === "skip")("helm/udm-orch: completion, sweeps and safe defaults", () => {
  let helm: Helm;
  let scratch: string;

  function templateArgs(values: string | string[], extra: string[]): string[] {
    const files = (Array.isArray(values) ? values : [values]).map((v, i) => {
      if (v.endsWith("-values.yaml")) return join(CHART, "ci", v);
      const p = join(scratch, `values-${i}-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(p, v);
      return p;
    });
    return ["template", RELEASE, CHART, "--namespace", NAMESPACE, ...files.flatMap((f) => ["-f", f]), ...extra];
  }

  function render(values: string | string[] = [], extra: string[] = []): K8sObject[] {
    const r = helm.run(templateArgs(values, extra));
    if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
    return parseManifests(r.stdout);
  }

  /** helm template against a (stand-in) API server, which answers from this process. */
  async function renderAgainst(apiUrl: string, values: string | string[] = []): Promise<K8sObject[]> {
    const r = await helm.runAsync(templateArgs(values, ["--dry-run=server", "--disable-openapi-validation", "--kube-apiserver", apiUrl]));
    if (r.status !== 0) throw new Error(`helm template --dry-run=server failed: ${r.stderr}`);
    return parseManifests(r.stdout);
  }

  beforeAll(() => {
    if (tools.mode === "fail") throw new Error(tools.message);
    helm = extractHelm();
    scratch = mkdtempSync(join(tmpdir(), "udm-chart-ops-"));
  });
  afterAll(() => {
    helm?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("agents are an Indexed Job whose vLLM is a native sidecar: a drained agent completes its pod and frees its GPUs", async () => {
    const objs = render();
    for (const o of objs) await validateObject(o);
    expect(objs.filter((o) => o.kind === "StatefulSet" && /agent/.test(o.metadata.name))).toEqual([]);
    const job = agentJob(objs);
    expect(job.spec).toMatchObject({ completions: 2, parallelism: 2, completionMode: "Indexed", backoffLimit: 6 });
    const spec = podSpec(job);
    // Nothing restarts an agent that exited 0; an eviction is retried, bad flags (exit 2) fail the Job.
    expect(spec.restartPolicy).toBe("Never");
    expect(job.spec.podFailurePolicy.rules).toEqual([
      { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] },
      { action: "FailJob", onExitCodes: { containerName: "agent", operator: "In", values: [2] } },
    ]);
    // vLLM starts first and is stopped by the kubelet once the agent (the only regular container) has exited.
    const vllm = spec.initContainers.find((c: Any) => c.name === "vllm");
    expect(vllm.restartPolicy).toBe("Always");
    expect(vllm.startupProbe.exec.command.join(" ")).toContain("/health");
    expect(spec.containers.map((c: Any) => c.name)).toEqual(["agent"]);
    // The GPUs belong to the sidecar, which ends with the pod.
    expect(vllm.resources.limits["nvidia.com/gpu"]).toBe(1);
    expect(JSON.stringify(spec.containers)).not.toContain("nvidia.com/gpu");
  });

  it("run.afterComplete serve keeps the coordinator and scorer as StatefulSets serving the finished run; exit makes them Jobs", async () => {
    const serve = render();
    for (const name of ["coordinator", "scorer"]) {
      const w = find(serve, "StatefulSet", `${FULL}-${name}`)!;
      expect(flagValue(podSpec(w).containers[0].args, "--after-complete"), name).toBe("serve");
    }
    const exit = render("job-values.yaml");
    for (const o of exit) await validateObject(o);
    for (const name of ["coordinator", "scorer"]) {
      expect(find(exit, "StatefulSet", `${FULL}-${name}`), name).toBeUndefined();
      const job = find(exit, "Job", `${FULL}-${name}`)!;
      expect(podSpec(job).restartPolicy).toBe("Never");
      expect(flagValue(podSpec(job).containers[0].args, "--after-complete"), name).toBe("exit");
      expect(job.spec.podFailurePolicy.rules[1].onExitCodes.containerName).toBe(name);
      expect(job.spec.template.spec.volumes.some((v: Any) => v.persistentVolumeClaim), name).toBe(true);
    }
    // Their volumes are claims of their own (a Job has no volumeClaimTemplates), kept on uninstall.
    for (const claim of [`${FULL}-results`, `${FULL}-scorer-state`]) {
      expect(find(exit, "PersistentVolumeClaim", claim)?.metadata.annotations?.["helm.sh/resource-policy"], claim).toBe("keep");
    }
  });

  it("a sweep runs `udm-orch sweep` as a Job over the values' matrix, agents starting vLLM with each run's {model}", async () => {
    const objs = render("sweep-values.yaml");
    for (const o of objs) await validateObject(o);
    const coordinator = find(objs, "Job", `${FULL}-coordinator`)!;
    const c = podSpec(coordinator).containers[0];
    expect(c.args.slice(0, 3)).toEqual(["sweep", "--config", "/etc/udm-orch/sweep/sweep.yaml"]);
    // The ConfigMap is a sweep.yaml the sweep's own reader accepts, with the matrix of the values.
    const text = find(objs, "ConfigMap", `${FULL}-sweep`)!.data!["sweep.yaml"]!;
    const path = join(scratch, "sweep.yaml");
    writeFileSync(path, text);
    const config = readSweepConfig(path);
    expect(config).toMatchObject({ suiteDir: "/suite", outDir: "/results", listen: "0.0.0.0:50051", tracks: ["vihsd", "vinli-reranking"], gpu_hour_usd: 2.5 });
    expect(expandSweep(config)).toHaveLength(2 * 2 * 1 * 2);
    const mount = c.volumeMounts.find((m: Any) => m.mountPath === "/etc/udm-orch/sweep");
    expect(podSpec(coordinator).volumes.find((v: Any) => v.name === mount.name).configMap.name).toBe(`${FULL}-sweep`);
    // No streaming scorer and no NATS: the sweep scores each run itself.
    expect(objs.filter((o) => /scorer|nats/.test(o.metadata.name)).map((o) => o.metadata.name)).toEqual([]);
    // Each agent runs in the vLLM image with udm-orch copied in, --method any and {model} in --vllm-cmd.
    const pod = podSpec(agentJob(objs));
    const install = pod.initContainers.find((x: Any) => x.name === "udm-orch-install");
    expect(install.image).toMatch(/udm-orch/);
    const agent = pod.containers[0];
    expect(agent.image).toMatch(/^vllm\/vllm-openai:/);
    expect(agent.volumeMounts.find((m: Any) => m.mountPath === "/opt/udm-orch").name).toBe(install.volumeMounts[0].name);
    expect(flagValue(agent.args, "--method")).toBe("any");
    expect(flagValue(agent.args, "--vllm-cmd")).toMatch(/^vllm serve \{model\} '--host' '127\.0\.0\.1' '--port' '8000' .*'--max-model-len' '8192'$/);
    expect(agent.resources.limits["nvidia.com/gpu"]).toBe(1);
    // The helm test lists the sweep's runs from the results volume.
    expect(find(objs, "Pod", `${FULL}-test-status`)!.spec.containers[0].args).toEqual(["leaderboard", "/results"]);
  });

  it("makes a random token Secret when none is given; an upgrade keeps the live one (lookup) and so the agents' Job", async () => {
    const token = (objs: K8sObject[]) => Buffer.from(find(objs, "Secret", `${FULL}-token`)!.data!.token!, "base64").toString();
    const [a, b] = [render(), render()];
    expect(token(a)).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(token(a)).not.toBe(token(b));
    // Every udm-orch process reads the token from that Secret.
    for (const w of workloads(a)) {
      for (const c of allContainers(w).filter((x) => /udm-orch/.test(x.image) && x.name !== "udm-orch-install")) {
        expect(c.env.find((e: Any) => e.name === "UDM_TOKEN")?.valueFrom.secretKeyRef, `${w.metadata.name}/${c.name}`).toEqual({ name: `${FULL}-token`, key: "token" });
      }
    }
    // Against an API server that holds the release's Secret, helm's lookup finds it: the token and the
    // pods' revision are kept, so the agents' Job keeps its name (its pod template did not change).
    const live = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `${FULL}-token`,
        namespace: NAMESPACE,
        labels: { "app.kubernetes.io/managed-by": "Helm" },
        annotations: { "udm-orch/token-revision": "keptrevision1", "meta.helm.sh/release-name": RELEASE, "meta.helm.sh/release-namespace": NAMESPACE },
      },
      data: { token: Buffer.from("the-live-token").toString("base64") },
    };
    const api = await startKubeApiStandIn({ [`/api/v1/namespaces/${NAMESPACE}/secrets/${FULL}-token`]: live });
    try {
      const [u1, u2] = [await renderAgainst(api.url), await renderAgainst(api.url)];
      expect(api.requests).toContain(`GET /api/v1/namespaces/${NAMESPACE}/secrets/${FULL}-token`);
      expect(token(u1)).toBe("the-live-token");
      expect(find(u1, "Secret", `${FULL}-token`)!.metadata.annotations?.["udm-orch/token-revision"]).toBe("keptrevision1");
      expect(agentJob(u1).spec.template.metadata.annotations["udm-orch/token-revision"]).toBe("keptrevision1");
      expect(agentJob(u1).metadata.name).toBe(agentJob(u2).metadata.name);
      // A changed agent setting is a new pod template: a new Job name, so an upgrade replaces the Job.
      expect(agentJob(await renderAgainst(api.url, "agents:\n  extraArgs: ['--max-concurrency', '64']\n")).metadata.name).not.toBe(agentJob(u1).metadata.name);
      // auth.token given: that value, whatever the live Secret holds.
      expect(token(await renderAgainst(api.url, "auth:\n  token: chosen-token\n"))).toBe("chosen-token");
    } finally {
      await api.close();
    }
    // auth.existingSecret: no Secret of the chart's.
    expect(render("auth:\n  existingSecret: mine\n").filter((o) => o.kind === "Secret" && o.metadata.name.endsWith("-token"))).toEqual([]);
  });

  it("NetworkPolicies: gRPC only from the agents and the helm test, NATS only from the coordinator and scorer, metrics only from monitoring", async () => {
    const objs = render();
    const policies = objs.filter((o) => o.kind === "NetworkPolicy");
    for (const p of policies) await validateObject(p);
    const pods = workloads(objs);
    const policyOf = (component: string) => {
      const selected = pods.filter((w) => w.kind !== "Pod" && podLabels(w)["app.kubernetes.io/component"] === component);
      const p = policies.find((x) => selected.some((w) => matches(x.spec.podSelector.matchLabels, podLabels(w))))!;
      expect(p, component).toBeDefined();
      expect(p.spec.policyTypes).toEqual(["Ingress"]);
      return { policy: p, ports: selected.flatMap((w) => longRunning(w).flatMap((c) => (c.ports ?? []).map((x: Any) => x.name))) };
    };
    /** The components of this release whose pods a rule's peers admit, and "monitoring" for the label peers. */
    const peersOf = (rule: Any) =>
      rule.from.map((peer: Any) => {
        if (peer.namespaceSelector) {
          expect(peer.namespaceSelector.matchLabels ?? peer.podSelector?.matchLabels).toEqual({ "udm-orch/monitoring": "true" });
          return "monitoring";
        }
        const hit = pods.filter((w) => matches(peer.podSelector.matchLabels, podLabels(w)));
        expect(hit.length, JSON.stringify(peer)).toBeGreaterThan(0);
        return [...new Set(hit.map((w) => podLabels(w)["app.kubernetes.io/component"]))].join("+");
      });
    const rules = (component: string) => {
      const { policy, ports } = policyOf(component);
      const out: Record<string, string[]> = {};
      for (const rule of policy.spec.ingress) {
        for (const p of rule.ports) {
          expect(ports, `${component} port ${p.port}`).toContain(p.port);
          out[p.port] = peersOf(rule).sort();
        }
      }
      return out;
    };
    expect(rules("coordinator")).toEqual({ grpc: ["agent", "test"], http: ["monitoring", "monitoring"] });
    expect(rules("agent")).toEqual({ metrics: ["monitoring", "monitoring"] });
    expect(rules("scorer")).toEqual({ metrics: ["monitoring", "monitoring"] });
    expect(rules("nats")).toEqual({ nats: ["coordinator", "scorer"], monitor: ["monitoring", "monitoring"] });
    // The label peers: a labelled namespace (all its pods), or a labelled pod in any namespace.
    const http = policyOf("coordinator").policy.spec.ingress.find((r: Any) => r.ports[0].port === "http");
    expect(http.from).toEqual([
      { namespaceSelector: { matchLabels: { "udm-orch/monitoring": "true" } } },
      { namespaceSelector: {}, podSelector: { matchLabels: { "udm-orch/monitoring": "true" } } },
    ]);
    // vLLM opened to the pod's address: its port joins the agents' monitoring rule.
    const open = render("agents:\n  vllm:\n    host: 0.0.0.0\n");
    const agentPolicy = open.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === `${FULL}-agent`)!;
    expect(agentPolicy.spec.ingress[0].ports.map((p: Any) => p.port)).toEqual(["metrics", "vllm-http"]);
    expect(render("networkPolicy:\n  enabled: false\n").filter((o) => o.kind === "NetworkPolicy")).toEqual([]);
  });

  it("a PodDisruptionBudget lets drains evict agents one at a time; the coordinator's only when asked", async () => {
    const objs = render();
    const pdbs = objs.filter((o) => o.kind === "PodDisruptionBudget");
    for (const p of pdbs) await validateObject(p);
    expect(pdbs.map((p) => p.metadata.name)).toEqual([`${FULL}-agent`]);
    expect(pdbs[0]!.spec.maxUnavailable).toBe(1);
    expect(matches(pdbs[0]!.spec.selector.matchLabels, podLabels(agentJob(objs)))).toBe(true);
    const both = render("podDisruptionBudget:\n  coordinator: true\nagents:\n  maxUnavailable: 25%\n").filter((o) => o.kind === "PodDisruptionBudget");
    expect(both.map((p) => [p.metadata.name, p.spec.maxUnavailable])).toEqual([
      [`${FULL}-agent`, "25%"],
      [`${FULL}-coordinator`, 0],
    ]);
  });

  it.each(["default", ...CI_VALUES])("probes on every container, vLLM ready on /health, no root, no capabilities, no privilege escalation (%s)", (values) => {
    const objs = render(values === "default" ? [] : values);
    for (const w of workloads(objs)) {
      const spec = podSpec(w);
      expect(spec.securityContext?.seccompProfile?.type, w.metadata.name).toBe("RuntimeDefault");
      // No service-link variables (UDM_<SERVICE>_PORT...) in a process that reads UDM_* and VLLM_* settings.
      expect(spec.enableServiceLinks, w.metadata.name).toBe(false);
      expect(spec.automountServiceAccountToken, w.metadata.name).toBe(false);
      if (w.kind !== "Pod") {
        for (const c of longRunning(w)) {
          expect(c.livenessProbe, `${w.metadata.name}/${c.name} liveness`).toBeDefined();
          expect(c.readinessProbe, `${w.metadata.name}/${c.name} readiness`).toBeDefined();
        }
      }
      for (const c of allContainers(w)) {
        const where = `${w.metadata.name}/${c.name}`;
        expect(c.securityContext, where).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
        expect(c.securityContext.privileged, where).toBeUndefined();
      }
    }
    // vLLM: readiness on /health (from the kubelet, or inside the container on the pod's loopback).
    const pod = podSpec(agentJob(objs));
    const vllm = [...(pod.initContainers ?? []), ...pod.containers].find((c: Any) => c.name === "vllm" || c.image.startsWith("vllm/"));
    const ready = vllm.readinessProbe.httpGet?.path ?? vllm.readinessProbe.exec.command.join(" ");
    expect(ready).toMatch(/\/health/);
    // vLLM runs as a user the image does not know: a writable HOME and USER for its caches.
    const env = Object.fromEntries(vllm.env.map((e: Any) => [e.name, e.value]));
    expect(env).toMatchObject({ HOME: "/home/vllm", USER: "vllm" });
    expect(vllm.volumeMounts.map((m: Any) => m.mountPath)).toEqual(expect.arrayContaining(["/home/vllm", "/tmp", "/dev/shm"]));
  });

  it("one model cache for every agent pod: a ReadWriteMany claim, an existing claim, a host path or none", () => {
    const cacheVolume = (objs: K8sObject[]) => podSpec(agentJob(objs)).volumes.find((v: Any) => v.name === "model-cache");
    const objs = render();
    expect(agentJob(objs).spec.volumeClaimTemplates).toBeUndefined();
    const claim = find(objs, "PersistentVolumeClaim", `${FULL}-model-cache`)!;
    expect(claim.spec.accessModes).toEqual(["ReadWriteMany"]);
    expect(claim.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    expect(cacheVolume(objs).persistentVolumeClaim.claimName).toBe(claim.metadata.name);
    expect(cacheVolume(render("job-values.yaml")).hostPath).toEqual({ path: "/mnt/models", type: "DirectoryOrCreate" });
    expect(cacheVolume(render("small-values.yaml")).emptyDir).toEqual({});
    const existing = render("large-cluster-values.yaml");
    expect(cacheVolume(existing).persistentVolumeClaim.claimName).toBe("model-weights");
    expect(existing.filter((o) => o.kind === "PersistentVolumeClaim" && o.metadata.name.endsWith("-model-cache"))).toEqual([]);
  });

  it("priorityClassName and runtimeClassName from values: the release's, overridden per component", () => {
    const objs = render("job-values.yaml");
    const classes = Object.fromEntries(workloads(objs).map((w) => [w.metadata.name.replace(/-[0-9a-f]{8}$/, ""), [podSpec(w).priorityClassName, podSpec(w).runtimeClassName]]));
    expect(classes).toMatchObject({
      [`${FULL}-agent`]: ["gpu-batch", "nvidia"],
      [`${FULL}-coordinator`]: ["batch-high", undefined],
      [`${FULL}-scorer`]: ["batch-high", undefined],
      [`${FULL}-nats`]: ["batch-high", undefined],
    });
    const none = render();
    for (const w of workloads(none)) expect([podSpec(w).priorityClassName, podSpec(w).runtimeClassName], w.metadata.name).toEqual([undefined, undefined]);
  });

  it("values that break the new sections fail the schema", () => {
    for (const bad of ["run:\n  afterComplete: restart\n", "agents:\n  vllm:\n    modelCache:\n      type: nfs\n", "sweep:\n  enabled: true\n  models: []\n", "networkPolicy:\n  monitoringLabels:\n    team: 1\n"]) {
      const p = join(scratch, "bad.yaml");
      writeFileSync(p, bad);
      const r = helm.run(["template", RELEASE, CHART, "-f", p]);
      expect(r.status, bad).not.toBe(0);
      expect(r.stderr, bad).toMatch(/schema/i);
    }
    // parseYaml is the values' reader: the chart's defaults say serve.
    expect((parseYaml(helm.run(["show", "values", CHART]).stdout) as Any).run.afterComplete).toBe("serve");
  });
});
