// A stand-in for kube-apiserver, enough for helm's `lookup`: there is no cluster on this machine, and
// `helm template --dry-run=server --kube-apiserver URL` renders with lookup against a live API. It
// answers the discovery documents helm's REST mapper reads (/version, /api, /apis, /api/v1,
// /apis/<group>/<version>) and GET of the objects it holds, as kube-apiserver does (404 Status
// otherwise). Helm itself, its lookup and its ownership checks are real.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Resource name and kind of each API group version the chart renders. */
const RESOURCES: Record<string, Array<[string, string]>> = {
  v1: [
    ["secrets", "Secret"],
    ["configmaps", "ConfigMap"],
    ["services", "Service"],
    ["pods", "Pod"],
    ["persistentvolumeclaims", "PersistentVolumeClaim"],
    ["serviceaccounts", "ServiceAccount"],
  ],
  "apps/v1": [["statefulsets", "StatefulSet"]],
  "batch/v1": [["jobs", "Job"]],
  "policy/v1": [["poddisruptionbudgets", "PodDisruptionBudget"]],
  "networking.k8s.io/v1": [["networkpolicies", "NetworkPolicy"]],
  "monitoring.coreos.com/v1": [
    ["servicemonitors", "ServiceMonitor"],
    ["podmonitors", "PodMonitor"],
    ["prometheusrules", "PrometheusRule"],
  ],
};

export interface KubeApiStandIn {
  url: string;
  /** GET paths helm asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves `objects` (keyed by their API path, e.g. /api/v1/namespaces/ns/secrets/name). */
export async function startKubeApiStandIn(objects: Record<string, unknown>): Promise<KubeApiStandIn> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push(`${req.method} ${path}`);
    const json = (code: number, body: unknown) => res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.method !== "GET") return json(405, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "MethodNotAllowed", code: 405 });
    if (path === "/version") return json(200, { major: "1", minor: "31", gitVersion: "v1.31.0" });
    if (path === "/api") return json(200, { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] });
    if (path === "/apis") {
      const groups = Object.keys(RESOURCES)
        .filter((gv) => gv.includes("/"))
        .map((gv) => {
          const [name, version] = gv.split("/") as [string, string];
          return { name, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
        });
      return json(200, { kind: "APIGroupList", apiVersion: "v1", groups });
    }
    const gv = path === "/api/v1" ? "v1" : /^\/apis\/[^/]+\/[^/]+$/.test(path) ? path.slice("/apis/".length) : undefined;
    if (gv && RESOURCES[gv]) {
      const resources = RESOURCES[gv].map(([name, kind]) => ({ name, singularName: "", namespaced: true, kind, verbs: ["get", "list", "create", "update", "delete"] }));
      return json(200, { kind: "APIResourceList", apiVersion: "v1", groupVersion: gv, resources });
    }
    if (path in objects) return json(200, objects[path]);
    return json(404, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "not found", reason: "NotFound", code: 404 });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
