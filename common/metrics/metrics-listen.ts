// The `--metrics HOST:PORT|off` flag every long-running process takes (TEAM contract: coordinator
// 127.0.0.1:9470, scorer 127.0.0.1:9471, agent off unless given, e.g. 0.0.0.0:9472).
import { UsageError } from "../errors.js";

export const DEFAULT_COORDINATOR_METRICS = "127.0.0.1:9470";
export const DEFAULT_SCORER_METRICS = "127.0.0.1:9471";
export const AGENT_METRICS_EXAMPLE = "0.0.0.0:9472";

export interface ListenAddress {
  host: string;
  port: number;
}

/** undefined for `off`; a UsageError naming the flag for anything that is not HOST:PORT. */
export function parseMetricsListen(value: string, flag = "--metrics"): ListenAddress | undefined {
  const v = value.trim();
  if (v === "off" || v === "false" || v === "") return undefined;
  const m = /^(\[[0-9a-fA-F:]+\]|[^:\s/[\]]+):(\d{1,5})$/.exec(v);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new UsageError(`${flag} must be HOST:PORT or off, got ${JSON.stringify(value)}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

export function formatListen(a: ListenAddress): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}
