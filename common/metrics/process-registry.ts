// The one prom-client Registry of a process: default Node metrics (process_*, nodejs_*) and
// udm_build_info; every udm_ metric of the process registers in it.
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { VERSION } from "../version.js";

export interface ProcessRegistryOptions {
  /**
   * process_*, nodejs_* and udm_build_info. Off for a registry whose text is joined to the
   * process's own (the coordinator's worker thread): a name may appear once on a page.
   */
  processWide?: boolean;
}

export function createProcessRegistry(component: string, options: ProcessRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.processWide === false) return registry;
  collectDefaultMetrics({ register: registry });
  const info = new Gauge({
    name: "udm_build_info",
    help: "udm-orch build: version, Node.js version and what the process runs (component); always 1.",
    labelNames: ["version", "node_version", "component"] as const,
    registers: [registry],
  });
  info.set({ version: VERSION, node_version: process.versions.node, component }, 1);
  return registry;
}

/**
 * Exposition text of several registries as one page. Each name must be registered in only one of
 * them (prom-client's Registry.merge checks that for registries of one thread; text from another
 * thread is joined as is).
 */
export async function joinedMetricsText(parts: ReadonlyArray<Registry | (() => Promise<string>)>): Promise<string> {
  const texts = await Promise.all(parts.map((p) => (typeof p === "function" ? p() : p.metrics())));
  return texts
    .map((t) => t.trimEnd())
    .filter((t) => t.length > 0)
    .join("\n")
    .concat("\n");
}
