// /metrics with vLLM's metric names and labels (model_name, engine), as vllm/v1/metrics/loggers.py
// PrometheusStatLogger declares them. prometheus_client appends `_total` to counter samples on the
// wire and prom-client does not, so the counters here are named with it.
// Only the metrics an orchestrator reads are kept; their meaning is the same as vLLM's.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { CapacityModel, ReadOutcome } from "./model/capacity-model.js";

export class SimMetrics {
  readonly registry = new Registry();
  private readonly labels: { model_name: string; engine: string };
  private readonly promptTokens: Counter;
  private readonly generationTokens: Counter;
  private readonly prefixQueries: Counter;
  private readonly prefixHits: Counter;
  private readonly requestSuccess: Counter;
  private readonly ttft: Histogram;
  private readonly e2e: Histogram;

  constructor(modelName: string, capacity: CapacityModel) {
    this.labels = { model_name: modelName, engine: "0" };
    const labelNames = ["model_name", "engine"] as const;
    const registers = [this.registry];
    const labels = this.labels;
    new Gauge({
      name: "vllm:num_requests_running",
      help: "Number of requests in model execution batches.",
      labelNames,
      registers,
      collect() {
        this.set(labels, capacity.numRunning);
      },
    });
    new Gauge({
      name: "vllm:num_requests_waiting",
      help: "Number of requests waiting to be processed.",
      labelNames,
      registers,
      collect() {
        this.set(labels, capacity.numWaiting);
      },
    });
    new Gauge({
      name: "vllm:kv_cache_usage_perc",
      help: "KV-cache usage. 1 means 100 percent usage.",
      labelNames,
      registers,
      collect() {
        this.set(labels, capacity.prefixCache.usage());
      },
    });
    this.prefixQueries = new Counter({ name: "vllm:prefix_cache_queries_total", help: "Prefix cache queries, in terms of number of queried tokens.", labelNames, registers });
    this.prefixHits = new Counter({ name: "vllm:prefix_cache_hits_total", help: "Prefix cache hits, in terms of number of cached tokens.", labelNames, registers });
    this.promptTokens = new Counter({ name: "vllm:prompt_tokens_total", help: "Number of prefill tokens processed.", labelNames, registers });
    this.generationTokens = new Counter({ name: "vllm:generation_tokens_total", help: "Number of generation tokens processed.", labelNames, registers });
    this.requestSuccess = new Counter({
      name: "vllm:request_success_total",
      help: "Count of successfully processed requests.",
      labelNames: [...labelNames, "finished_reason"],
      registers,
    });
    this.ttft = new Histogram({
      name: "vllm:time_to_first_token_seconds",
      help: "Histogram of time to first token in seconds.",
      labelNames,
      registers,
      buckets: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80],
    });
    this.e2e = new Histogram({
      name: "vllm:e2e_request_latency_seconds",
      help: "Histogram of e2e request latency in seconds.",
      labelNames,
      registers,
      buckets: [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120],
    });
  }

  /** One engine request of vLLM = one read here (max_tokens=1, so it finishes for "length"). */
  observeRead(r: ReadOutcome): void {
    this.prefixQueries.inc(this.labels, r.promptTokens);
    this.prefixHits.inc(this.labels, r.cachedTokens);
    this.promptTokens.inc(this.labels, r.promptTokens);
    this.generationTokens.inc(this.labels, r.completionTokens);
    this.requestSuccess.inc({ ...this.labels, finished_reason: "length" });
    this.ttft.observe(this.labels, r.latencyS);
    this.e2e.observe(this.labels, r.latencyS);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
