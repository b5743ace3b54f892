// The engine's queue, read from its Prometheus /metrics for heartbeats: vllm:num_requests_waiting
// and vllm:num_requests_running, gauges labelled model_name and engine (vllm/v1/metrics/loggers.py,
// PrometheusStatLogger). Series of several engines (data parallel) are summed.
import { EngineProtocolError, requestText } from "./engine-http.js";

/** The engine's queue as heartbeats report it. */
export interface EngineLoad {
  waiting: number;
  running: number;
}

const WAITING = "vllm:num_requests_waiting";
const RUNNING = "vllm:num_requests_running";

/** Sums of the two gauges in a Prometheus text exposition; undefined for a gauge that is absent. */
export function parseEngineLoad(text: string): { waiting: number | undefined; running: number | undefined } {
  let waiting: number | undefined;
  let running: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    // name{labels} value [timestamp]; label values may contain spaces, so split after the labels.
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line.trim());
    if (!m) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    if (m[1] === WAITING) waiting = (waiting ?? 0) + value;
    else if (m[1] === RUNNING) running = (running ?? 0) + value;
  }
  return { waiting, running };
}

/** Reads the engine's load from `${baseUrl}/metrics`. Throws when the engine does not export both gauges. */
export async function readEngineLoad(baseUrl: string, signal: AbortSignal, timeoutMs = 2_000): Promise<EngineLoad> {
  const url = `${baseUrl.replace(/\/+$/, "")}/metrics`;
  const { waiting, running } = parseEngineLoad(await requestText(url, { method: "GET", timeoutMs, signal }));
  if (waiting === undefined || running === undefined) {
    throw new EngineProtocolError(url, `no ${waiting === undefined ? WAITING : RUNNING} gauge`);
  }
  return { waiting, running };
}
