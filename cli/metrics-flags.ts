// The observability flags (TEAM contract, observability owns them): --metrics HOST:PORT|off on every
// long-running process; --gpu-hour-usd and --per-agent-metrics where a coordinator runs.
import type { Option } from "commander";
import { UsageError } from "../common/errors.js";
import { opt } from "./options.js";

export interface MetricsFlagValues {
  metrics: string;
  gpuHourUsd?: string;
  perAgentMetrics?: string;
}

/** --metrics (with the process's default), --gpu-hour-usd, --per-agent-metrics. */
export function metricsFlags(defaultListen: string, what: string): Option[] {
  return [
    opt("--metrics <host:port>", `${what} on this address (off: none)`, defaultListen),
    opt("--gpu-hour-usd <usd>", "price of one GPU-hour in USD, for the run's cost (0 = unknown)", "0"),
    opt("--per-agent-metrics <bool>", "export per-agent gauges from heartbeats (false for very large clusters)", "true"),
  ];
}

export function boolArg(name: string, value: string | undefined, fallback = true): boolean {
  if (value === undefined) return fallback;
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  throw new UsageError(`--${name} must be true or false, got ${JSON.stringify(value)}`);
}
