// The chart's ServiceMonitor scrapes the coordinator's /metrics with the run's token when the chart
// sets one (issue 27, item 2: a coordinator with --token answers /metrics only with the bearer
// token): the same Secret and key UDM_TOKEN comes from. The scorer, given the same token, guards its
// /metrics (every track's scores) with it too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { REPO_ROOT } from "../support/cli-process.js";
import { extractHelm, type Helm } from "./helm-binary.js";
import { parseManifests, validateObject } from "./k8s-validate.js";
import { toolMode } from "../support/real-tool.js";

const CHART = join(REPO_ROOT, "helm", "udm-orch");
const tools = toolMode(["unzip"], "apt-get install unzip");

describe.skipIf(tools.mode === "skip")("ServiceMonitor and the token", () => {
  let helm: Helm;
  beforeAll(() => {
    helm = extractHelm();
  });
  afterAll(() => helm?.remove());

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const endpoints = async (extra: string[]): Promise<any[]> => {
    const r = helm.run(["template", "udm", CHART, "--namespace", "evals", "--set", "metrics.serviceMonitor.enabled=true", ...extra]);
    expect(r.status, r.stderr).toBe(0);
    const sm = parseManifests(r.stdout).find((o) => o.kind === "ServiceMonitor")!;
    await validateObject(sm);
    return sm.spec.endpoints;
  };

  it("sends the token Secret's token to the coordinator's and the scorer's ports", async () => {
    const [coordinator, scorer] = await endpoints(["--set", "auth.token=s3cret"]);
    expect(coordinator).toMatchObject({ port: "http", authorization: { type: "Bearer", credentials: { name: "udm-udm-orch-token", key: "token" } } });
    expect(scorer).toMatchObject({ port: "metrics", authorization: { type: "Bearer", credentials: { name: "udm-udm-orch-token", key: "token" } } });
    const [fromExisting] = await endpoints(["--set", "auth.existingSecret=mine", "--set", "auth.existingSecretKey=k"]);
    expect(fromExisting.authorization).toEqual({ type: "Bearer", credentials: { name: "mine", key: "k" } });
  });

  it("with no token given, sends the random token the chart made (there is always one)", async () => {
    const [coordinator, scorer] = await endpoints([]);
    for (const e of [coordinator, scorer]) expect(e.authorization).toEqual({ type: "Bearer", credentials: { name: "udm-udm-orch-token", key: "token" } });
  });
});
