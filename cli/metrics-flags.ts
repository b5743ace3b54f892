// The observability flags (TEAM contract, observability owns them): --metrics HOST:PORT|off on every
// long-running process; --gpu-hour-usd and --per-agent-metrics where a coordinator runs. One flag
// group per process (its --metrics default differs); METRICS_FLAG_DEFAULTS holds the others.
import type { Option } from "commander";
import { UsageError } from "../common/errors.js";
import { parseMetricsListen, type ListenAddress } from "../common/metrics/index.js";
import { flagGroup, flagOptions, optionsFromFlags, type FlagGroup } from "./flag-group.js";
import { numberArg } from "./options.js";

/** What the observability flags of a process with a coordinator set. */
export interface MetricsFlagOptions {
  /** Where /metrics (and the live page) listen; undefined: none. @default the process's own address */
  metrics: ListenAddress | undefined;
  /** Price of one GPU-hour in USD, for the run's cost (0 = unknown). @default 0 */
  gpuHourUsd: number;
  /** Export per-agent gauges from heartbeats. @default true */
  perAgentMetrics: boolean;
}

export const METRICS_FLAG_DEFAULTS = { gpuHourUsd: 0, perAgentMetrics: true } as const;

/** --metrics (with the process's default), --gpu-hour-usd, --per-agent-metrics. */
export function metricsFlagGroup(defaultListen: string, what: string): FlagGroup<MetricsFlagOptions> & { defaultListen: string } {
  const group = flagGroup<MetricsFlagOptions>(METRICS_FLAG_DEFAULTS, [
    { key: "metrics", flags: "--metrics <host:port>", description: `${what} on this address (off: none)`, defaultText: defaultListen, parse: (raw, flag) => parseMetricsListen(raw, `--${flag}`) },
    { key: "gpuHourUsd", flags: "--gpu-hour-usd <usd>", description: "price of one GPU-hour in USD, for the run's cost (0 = unknown)", parse: (raw, flag) => numberArg(flag, raw, 0)! },
    { key: "perAgentMetrics", flags: "--per-agent-metrics <bool>", description: "export per-agent gauges from heartbeats (false for very large clusters)", parse: (raw, flag) => boolArg(flag, raw) },
  ]);
  return { ...group, defaultListen };
}

/** The commander options of metricsFlagGroup(). */
export function metricsFlags(defaultListen: string, what: string): Option[] {
  return flagOptions(metricsFlagGroup(defaultListen, what));
}

/** The observability options the flags set, the process's defaults filling the others. */
export function metricsOptionsFrom(group: ReturnType<typeof metricsFlagGroup>, values: Record<string, unknown>): MetricsFlagOptions {
  return { metrics: parseMetricsListen(group.defaultListen), ...METRICS_FLAG_DEFAULTS, ...optionsFromFlags(group, values) };
}

export function boolArg(name: string, value: string | undefined, fallback = true): boolean {
  if (value === undefined) return fallback;
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  throw new UsageError(`--${name} must be true or false, got ${JSON.stringify(value)}`);
}
