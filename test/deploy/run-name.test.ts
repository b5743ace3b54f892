// The chart and Compose give the coordinator and the scorer the same --run-name, so the scorer
// scores that run and never another still on the bus: the chart's is the release name unless
// run.name is set; Compose's is UDM_RUN_NAME (default udm). Rendered with the real helm.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli-process.js";
import { toolMode } from "../support/real-tool.js";
import { parseUdmOrchArgs } from "./cli-parse.js";
import { extractHelm, type Helm } from "./helm-binary.js";
import { parseManifests, type K8sObject } from "./k8s-validate.js";

const CHART = join(REPO_ROOT, "helm", "udm-orch");
const tools = toolMode(["unzip"], "apt-get install unzip");

function argsOf(objs: K8sObject[], suffix: string): string[] {
  const o = objs.find((x) => x.kind === "StatefulSet" && x.metadata.name.endsWith(suffix));
  if (!o) throw new Error(`no StatefulSet *${suffix}`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return ((o as any).spec.template.spec.containers[0].args as unknown[]).map(String);
}

function runNameOf(args: string[]): unknown {
  return parseUdmOrchArgs(args).options.runName;
}

describe.skipIf(tools.mode === "skip")("the chart names the run for the coordinator and the scorer", () => {
  let helm: Helm;
  beforeAll(() => {
    if (tools.mode === "fail") throw new Error(tools.message);
    helm = extractHelm();
  });
  afterAll(() => helm?.remove());

  function render(release: string, extra: string[]): K8sObject[] {
    const r = helm.run(["template", release, CHART, "-f", join(CHART, "ci", "small-values.yaml"), ...extra]);
    expect(r.status, r.stderr).toBe(0);
    return parseManifests(r.stdout);
  }

  it("the release name by default, run.name when set; an invalid name is refused by the schema", () => {
    const byRelease = render("evals-7", []);
    expect(runNameOf(argsOf(byRelease, "-coordinator"))).toBe("evals-7");
    expect(runNameOf(argsOf(byRelease, "-scorer"))).toBe("evals-7");
    const named = render("evals-7", ["--set", "run.name=qwen3-v1"]);
    expect(runNameOf(argsOf(named, "-coordinator"))).toBe("qwen3-v1");
    expect(runNameOf(argsOf(named, "-scorer"))).toBe("qwen3-v1");
    const bad = helm.run(["template", "evals-7", CHART, "-f", join(CHART, "ci", "small-values.yaml"), "--set", "run.name=a b"]);
    expect(bad.status).not.toBe(0);
  });
});

describe("Compose names the run for the coordinator and the scorer", () => {
  it("both get ${UDM_RUN_NAME:-udm}", () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const services = (parse(readFileSync(join(REPO_ROOT, "deploy", "compose", "compose.yaml"), "utf8"), { merge: true }) as any).services;
    const flag = (args: string[]) => args[args.indexOf("--run-name") + 1];
    expect(flag(services.coordinator.command)).toBe("${UDM_RUN_NAME:-udm}");
    expect(flag(services.scorer.command)).toBe("${UDM_RUN_NAME:-udm}");
    expect(runNameOf(services.scorer.command.map((a: string) => a.replace("${UDM_RUN_NAME:-udm}", "udm")))).toBe("udm");
  });
});
