// The coordinator's Prometheus metrics (udm_*): run info and state, per-track progress, records
// committed, pace and ETA, units and leases, rejects by reason, duplicates, records given up, the
// record latency histogram, tokens, GPU-seconds and price, agents, per-agent heartbeat gauges
// (switchable off for very large clusters), the bus. Point-in-time values are read in collect()
// from the coordinator's own state (its RunStatus with the run totals of run-progress.ts, its
// scheduler and agent sessions); nothing is recomputed here.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { REJECT_REASONS, type RunStatus } from "../../common/run-status/index.js";

/** LLM record latencies: tens of milliseconds (a cached short prompt) to ten minutes (a stuck engine). */
export const RECORD_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600];

export const RUN_STATES = ["starting", "running", "draining", "complete", "failed", "cancelled"] as const;

/** Per-agent heartbeat figures (Heartbeat message). */
export interface AgentHeartbeatView {
  agentId: string;
  ready: boolean;
  inflightUnits: number;
  inflightRequests: number;
  credit: number;
  engineWaiting: number;
  engineRunning: number;
}

export interface CoordinatorMetricsSource {
  status(): RunStatus;
  run(): { runId: string; suiteIdentity: string; method: string; model: string };
  startedAtSeconds(): number | undefined;
  lastCommitAtSeconds(): number | undefined;
  leases(): number;
  agents(): readonly AgentHeartbeatView[];
  /** undefined: no bus configured. */
  bus?(): { connected: boolean; publishFailures: number; behind: number };
}

export interface CoordinatorMetricsOptions {
  /** Per-agent gauges from heartbeats (one series per agent and gauge). Default true. */
  perAgent?: boolean;
  /** Price of one GPU-hour in USD; 0 = unknown (no cost exported). */
  gpuHourUsd?: number;
}

export interface CoordinatorMetrics {
  /** One committed result's engine latency. */
  recordLatency(seconds: number): void;
  /** A unit completed `seconds` after it was first leased. */
  unitDuration(seconds: number): void;
}

/** Units take from a second (a few cached records) to tens of minutes (a large unit on a busy engine). */
export const UNIT_DURATION_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];

export function registerCoordinatorMetrics(registry: Registry, source: CoordinatorMetricsSource, options: CoordinatorMetricsOptions = {}): CoordinatorMetrics {
  const registers = [registry];
  // One status per scrape: every collect() of the same scrape reads the same snapshot.
  let cached: { at: number; status: RunStatus } | undefined;
  const status = (): RunStatus => {
    const now = performance.now();
    if (!cached || now - cached.at > 50) cached = { at: now, status: source.status() };
    return cached.status;
  };
  const gauge = (name: string, help: string, read: () => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        // An unlabelled series always exists; NaN says "not known yet" (0 would be a value).
        const v = read();
        this.set(v !== undefined && Number.isFinite(v) ? v : NaN);
      },
    });
  const counter = (name: string, help: string, read: () => number | undefined) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        const v = read();
        this.reset();
        if (v !== undefined && Number.isFinite(v)) this.inc(v);
      },
    });

  new Gauge({
    name: "udm_run_info",
    help: "The run this coordinator serves (run id, suite identity, engine method, model); always 1.",
    labelNames: ["run_id", "suite_identity", "method", "model"] as const,
    registers,
    collect() {
      this.reset();
      const r = source.run();
      this.set({ run_id: r.runId, suite_identity: r.suiteIdentity.slice(0, 12), method: r.method, model: r.model }, 1);
    },
  });
  new Gauge({
    name: "udm_run_state",
    help: "1 for the run's current state (starting, running, draining, complete, failed, cancelled), 0 for the others.",
    labelNames: ["state"] as const,
    registers,
    collect() {
      const s = status().state;
      for (const state of RUN_STATES) this.set({ state }, s === state ? 1 : 0);
    },
  });
  gauge("udm_run_start_timestamp_seconds", "Unix time the run (this coordinator start) began serving agents.", () => source.startedAtSeconds());
  gauge("udm_run_last_commit_timestamp_seconds", "Unix time of the last committed result.", () => source.lastCommitAtSeconds());
  gauge("udm_run_records", "Records in the run's scope.", () => status().recordsTotal);
  gauge("udm_run_records_resumed", "Records already committed when this coordinator started (resumed run).", () => status().recordsResumed);
  counter("udm_records_committed_total", "Records committed (fsynced result lines on disk), resumed ones included.", () => status().recordsCommitted);
  gauge("udm_records_per_second", "Records committed per second over the last 30 s.", () => status().recordsPerSecond);
  gauge("udm_run_eta_seconds", "Seconds to the run's last record at the current pace.", () => status().totals.etaSeconds);
  gauge("udm_run_elapsed_seconds", "Seconds the run has been served, over every coordinator session of its --out (run-clock.json).", () => status().elapsedSeconds);

  const trackGauge = (name: string, help: string, pick: (t: RunStatus["tracks"][number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["track", "family"] as const,
      registers,
      collect() {
        this.reset();
        for (const t of status().tracks) this.set({ track: t.track, family: t.family }, pick(t));
      },
    });
  trackGauge("udm_track_records", "Records of a track in scope.", (t) => t.records);
  trackGauge("udm_track_records_committed", "Records of a track committed.", (t) => t.committed);
  trackGauge("udm_track_complete", "1 once every record of the track is committed.", (t) => (t.complete ? 1 : 0));

  gauge("udm_units_queued", "Work units waiting for an agent.", () => status().unitsQueued);
  gauge("udm_units_inflight", "Work units leased to an agent and not complete.", () => status().unitsInflight);
  gauge("udm_leases", "Leases held now (primary and backup copies).", () => source.leases());
  counter("udm_lease_expiries_total", "Leases that ran out (agent silent for a lease); their records were requeued.", () => status().leasesExpired);
  counter("udm_backup_units_total", "Backup copies of slow units handed to a second agent.", () => status().backupUnits);
  counter("udm_results_duplicate_total", "Results dropped because their record was already committed (first wins).", () => status().resultsDuplicate);
  counter("udm_records_given_up_total", "Records committed with every question in errors after repeated invalid results.", () => status().recordsGivenUp);
  new Counter({
    name: "udm_results_rejected_total",
    help: "Results rejected by validation, by reason.",
    labelNames: ["reason"] as const,
    registers,
    collect() {
      const by = status().rejectedByReason;
      this.reset();
      for (const reason of REJECT_REASONS) this.inc({ reason }, Number(by[reason] ?? 0));
    },
  });

  const totals = () => status().totals;
  counter("udm_prompt_tokens_total", "Prompt tokens of committed results, as the engines reported them.", () => totals().promptTokens);
  counter("udm_completion_tokens_total", "Completion tokens of committed results.", () => totals().completionTokens);
  counter("udm_cached_tokens_total", "Prompt tokens served from the engines' prefix cache; 0 while the engines do not report it (see udm_cached_tokens_known).", () => totals().cachedTokens ?? 0);
  gauge("udm_cached_tokens_known", "1 when the engines report cached prompt tokens (vLLM's systemone usage has no cached count).", () => (totals().cachedTokens === undefined ? 0 : 1));
  counter("udm_gpu_seconds_total", "GPU-seconds: seconds each agent was attached while the run was active, summed over agents.", () => totals().gpuSeconds);
  const price = options.gpuHourUsd ?? 0;
  gauge("udm_gpu_hour_price_usd", "Price of one GPU-hour (--gpu-hour-usd); NaN when unknown (0).", () => (price > 0 ? price : undefined));

  gauge("udm_agents_attached", "Agents with an open Attach stream.", () => status().agents.length);
  gauge("udm_agents_ready", "Attached agents whose engine is ready.", () => status().agents.filter((a) => a.ready).length);
  if (options.perAgent !== false) {
    const agentGauge = (name: string, help: string, pick: (a: AgentHeartbeatView) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["agent"] as const,
        registers,
        collect() {
          this.reset();
          for (const a of source.agents()) this.set({ agent: a.agentId }, pick(a));
        },
      });
    agentGauge("udm_coordinator_agent_ready", "1 when the agent's engine is ready (heartbeat).", (a) => (a.ready ? 1 : 0));
    agentGauge("udm_coordinator_agent_inflight_units", "Units the agent holds (coordinator's lease table).", (a) => a.inflightUnits);
    agentGauge("udm_coordinator_agent_inflight_requests", "Requests in flight to the agent's engine (heartbeat).", (a) => a.inflightRequests);
    agentGauge("udm_coordinator_agent_credit", "Units the agent granted and has not been sent yet.", (a) => a.credit);
    agentGauge("udm_coordinator_agent_engine_waiting", "The engine's vllm:num_requests_waiting (heartbeat).", (a) => a.engineWaiting);
    agentGauge("udm_coordinator_agent_engine_running", "The engine's vllm:num_requests_running (heartbeat).", (a) => a.engineRunning);
  }

  if (source.bus) {
    const bus = source.bus.bind(source);
    gauge("udm_bus_connected", "1 while the results bus (NATS) is connected.", () => (bus().connected ? 1 : 0));
    counter("udm_bus_publish_failures_total", "Result publishes that failed (the results are caught up from disk later).", () => bus().publishFailures);
    gauge("udm_bus_results_behind", "Committed result lines not yet known to be on the bus.", () => bus().behind);
  }

  const latency = new Histogram({
    name: "udm_record_latency_seconds",
    help: "Engine latency of each committed record, as the agent measured it (RecordResult.latency_ms).",
    buckets: RECORD_LATENCY_BUCKETS,
    registers,
  });
  const unitDuration = new Histogram({
    name: "udm_unit_duration_seconds",
    help: "Time from a work unit's first lease to its last record committed.",
    buckets: UNIT_DURATION_BUCKETS,
    registers,
  });
  return { recordLatency: (seconds) => latency.observe(seconds), unitDuration: (seconds) => unitDuration.observe(seconds) };
}
