// An agent's Prometheus metrics (udm_agent_*): state, units and records by outcome, engine requests
// by method, endpoint and status class with their duration, concurrency limit and in-flight,
// reconnects, engine restarts. Every series has an `agent` label, so `run` serves all its agents
// from one registry. Point-in-time values are read in collect() from the agent's own stats.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { AgentStats } from "./agent-stats.js";
import { AGENT_STATES } from "./agent-state.js";
import { observeEngineRequests, type EngineRequestObservation } from "./engine-http.js";

/** Engine request durations: a /metrics read takes milliseconds, a long generation minutes. */
export const ENGINE_REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Engine paths an agent calls; anything else is counted as "other" so the label stays bounded. */
const ENDPOINTS = ["/v1/systemone", "/v1/decisions", "/v1/completions", "/v1/chat/completions", "/v1/models", "/tokenize", "/detokenize", "/metrics", "/health", "/version"];

export interface AgentMetricsSource {
  /** The `agent` label (the agent id). */
  agent: string;
  /** Engine method (systemone, decisions, label-read): the `method` label of engine requests. */
  method: string;
  /** Engine base URL: requests under it are this agent's. */
  engineUrl: string;
  stats(): AgentStats;
  /** The adaptive limit on requests in flight to the engine, when the method has one. */
  limiter?: { readonly limit: number; readonly active: number };
  /** Engine child processes started by --vllm-cmd (1 + restarts). */
  engineStarts?: () => number;
}

interface AgentSeries {
  sources: Map<string, AgentMetricsSource>;
  requests: Counter<"agent" | "method" | "endpoint" | "status_class">;
  duration: Histogram<"agent" | "method" | "endpoint">;
}

const perRegistry = new WeakMap<Registry, AgentSeries>();

export function statusClass(outcome: EngineRequestObservation["outcome"]): string {
  return typeof outcome === "number" ? `${Math.floor(outcome / 100)}xx` : outcome;
}

export function endpointOf(url: string, base: string): string {
  let path = url.startsWith(base) ? url.slice(base.length) : url;
  const q = path.indexOf("?");
  if (q >= 0) path = path.slice(0, q);
  return ENDPOINTS.includes(path) ? path : "other";
}

function seriesOf(registry: Registry): AgentSeries {
  const existing = perRegistry.get(registry);
  if (existing) return existing;
  const sources = new Map<string, AgentMetricsSource>();
  const registers = [registry];
  const each = (fn: (s: AgentMetricsSource, st: AgentStats) => void) => {
    for (const s of sources.values()) fn(s, s.stats());
  };
  new Gauge({
    name: "udm_agent_state",
    help: "1 for the agent's current state (starting, connecting, running, draining, stopped), 0 for the others.",
    labelNames: ["agent", "state"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => {
        for (const state of AGENT_STATES) this.set({ agent: s.agent, state }, st.state === state ? 1 : 0);
      });
    },
  });
  new Gauge({
    name: "udm_agent_engine_ready",
    help: "1 when the agent's engine answers its probe.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => this.set({ agent: s.agent }, st.ready ? 1 : 0));
    },
  });
  new Counter({
    name: "udm_agent_units_total",
    help: "Work units by outcome: received, done (answered and sent), cancelled by the coordinator, dropped when a stream broke.",
    labelNames: ["agent", "outcome"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => {
        this.inc({ agent: s.agent, outcome: "received" }, st.unitsReceived);
        this.inc({ agent: s.agent, outcome: "done" }, st.unitsDone);
        this.inc({ agent: s.agent, outcome: "cancelled" }, st.unitsCancelled);
        this.inc({ agent: s.agent, outcome: "dropped" }, st.unitsDropped);
      });
    },
  });
  new Counter({
    name: "udm_agent_records_total",
    help: "Records by outcome: answered (result sent), failed (answered with every question in errors).",
    labelNames: ["agent", "outcome"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => {
        this.inc({ agent: s.agent, outcome: "answered" }, st.recordsAnswered);
        this.inc({ agent: s.agent, outcome: "failed" }, st.recordFailures);
      });
    },
  });
  new Counter({
    name: "udm_agent_results_sent_total",
    help: "RecordResult messages written to the coordinator stream.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => this.inc({ agent: s.agent }, st.resultsSent));
    },
  });
  new Counter({
    name: "udm_agent_unknown_labels_total",
    help: "Labels the engine answered that are not options of the question (dropped from the distribution).",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => this.inc({ agent: s.agent }, st.unknownLabels));
    },
  });
  new Counter({
    name: "udm_agent_reconnects_total",
    help: "Attach streams that ended without a Drain (the agent reattached or will).",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => this.inc({ agent: s.agent }, st.disconnects));
    },
  });
  new Counter({
    name: "udm_agent_engine_restarts_total",
    help: "Restarts of the engine child process started with --vllm-cmd.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s) => {
        if (s.engineStarts) this.inc({ agent: s.agent }, Math.max(0, s.engineStarts() - 1));
      });
    },
  });
  new Gauge({
    name: "udm_agent_units_held",
    help: "Work units the agent holds now.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => this.set({ agent: s.agent }, st.inflightUnits));
    },
  });
  new Gauge({
    name: "udm_agent_records_inflight",
    help: "Records being answered now.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s, st) => this.set({ agent: s.agent }, st.inflightRecords));
    },
  });
  new Gauge({
    name: "udm_agent_concurrency_limit",
    help: "Adaptive (AIMD) limit on requests in flight to the engine.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s) => {
        if (s.limiter) this.set({ agent: s.agent }, s.limiter.limit);
      });
    },
  });
  new Gauge({
    name: "udm_agent_engine_requests_inflight",
    help: "Requests in flight to the engine under the adaptive limit.",
    labelNames: ["agent"] as const,
    registers,
    collect() {
      this.reset();
      each((s) => {
        if (s.limiter) this.set({ agent: s.agent }, s.limiter.active);
      });
    },
  });
  const series: AgentSeries = {
    sources,
    requests: new Counter({
      name: "udm_agent_engine_requests_total",
      help: "HTTP requests to the engine by engine method, endpoint and status class (2xx, 4xx, 5xx, timeout, unreachable, aborted).",
      labelNames: ["agent", "method", "endpoint", "status_class"] as const,
      registers,
    }),
    duration: new Histogram({
      name: "udm_agent_engine_request_duration_seconds",
      help: "Duration of HTTP requests to the engine.",
      labelNames: ["agent", "method", "endpoint"] as const,
      buckets: ENGINE_REQUEST_BUCKETS,
      registers,
    }),
  };
  perRegistry.set(registry, series);
  return series;
}

/** Exports one agent in `registry`; returns the function that stops observing its requests. */
export function registerAgentMetrics(registry: Registry, source: AgentMetricsSource): () => void {
  const series = seriesOf(registry);
  series.sources.set(source.agent, source);
  const base = source.engineUrl.replace(/\/+$/, "");
  const stop = observeEngineRequests((o) => {
    if (!o.url.startsWith(base)) return;
    const endpoint = endpointOf(o.url, base);
    series.requests.inc({ agent: source.agent, method: source.method, endpoint, status_class: statusClass(o.outcome) });
    series.duration.observe({ agent: source.agent, method: source.method, endpoint }, o.seconds);
  });
  return () => {
    stop();
  };
}
