// The coordinator's one HTTP server (`--metrics`, default 127.0.0.1:9470): /metrics, the live run
// page and its API, /healthz and /readyz. It opens before the suite is read (status "starting",
// /readyz 503) and reads the coordinator through whatever is attached once it runs; in `run` the
// same page also carries the agents' and the scorer's metrics.
import type { Registry } from "prom-client";
import type { Logger } from "../../common/log.js";
import type { ListenAddress } from "../../common/metrics/metrics-listen.js";
import { joinedMetricsText } from "../../common/metrics/process-registry.js";
import { startMetricsServer, type MetricsServer } from "../../common/metrics/metrics-server.js";
import type { RunStatus } from "../run-status.js";
import { EventHub } from "./event-hub.js";
import type { LiveEvent } from "./live-event.js";
import { observabilityRoutes, type LiveRunInfo } from "./observability-routes.js";

/** What the server reads of a running coordinator (BoundedCoordinator fits). */
export interface ObservedCoordinator {
  status(): Promise<RunStatus>;
  metricsText(): Promise<string>;
}

export interface ObservabilityServerOptions {
  listen: ListenAddress;
  /** This thread's registry (default Node metrics, and in `run` the agents' and scorer's). */
  registry: Registry;
  run: Omit<LiveRunInfo, "runId">;
  token?: string;
  log?: Logger;
}

export interface ObservabilityServer extends MetricsServer {
  readonly events: EventHub;
  /** The coordinator is running: the page and /metrics read it from now on. */
  attach(coordinator: ObservedCoordinator, runId: string): void;
  /**
   * The coordinator stopped serving (done, or its thread is gone): /readyz answers 503; the page
   * and /metrics keep its last status and metrics, updated with `final`.
   */
  detach(final?: Partial<RunStatus>): void;
  publish(event: LiveEvent): void;
}

export async function startObservabilityServer(options: ObservabilityServerOptions): Promise<ObservabilityServer> {
  const events = new EventHub();
  let coordinator: ObservedCoordinator | undefined;
  let runId = "";
  let serving = false;
  let last: RunStatus | undefined;
  let lastMetrics = "";
  // A coordinator thread that is stopping may never answer: then the last answer stands.
  const within = <T>(p: Promise<T>, fallback: () => T): Promise<T> =>
    Promise.race([p, new Promise<T>((r) => setTimeout(() => r(fallback()), 2_000).unref())]);
  const status = async (): Promise<RunStatus> => {
    if (coordinator && serving) last = await within(coordinator.status(), () => last ?? startingStatus());
    return last ?? startingStatus();
  };
  const coordinatorMetrics = async (): Promise<string> => {
    // Asked after the run too: a coordinator's metricsText() answers its final page once stopped.
    if (coordinator) lastMetrics = (await within(coordinator.metricsText(), () => "")) || lastMetrics;
    return lastMetrics;
  };
  const server = await startMetricsServer({
    listen: options.listen,
    metrics: () => joinedMetricsText([options.registry, coordinatorMetrics]),
    routes: observabilityRoutes({
      status,
      run: () => ({ runId, ...options.run }),
      events,
      ready: () => serving,
      ...(options.token !== undefined ? { token: options.token } : {}),
    }),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    ...server,
    events,
    attach(c, id) {
      coordinator = c;
      runId = id;
      serving = true;
    },
    detach(final) {
      serving = false;
      if (final) last = { ...(last ?? startingStatus()), ...final };
    },
    publish: (e) => events.publish(e),
    async close() {
      events.close();
      await server.close();
    },
  };
}

/** The status before the coordinator has read the suite (as its gRPC Status answers then). */
export function startingStatus(): RunStatus {
  return {
    run_id: "",
    state: "starting",
    suite_identity: "",
    records_total: 0,
    records_committed: 0,
    records_resumed: 0,
    units_queued: 0,
    units_inflight: 0,
    results_rejected: 0,
    leases_expired: 0,
    backup_units: 0,
    records_per_second: 0,
    elapsed_seconds: 0,
    agents: [],
    tracks: [],
    rejected_by_reason: {},
    results_duplicate: 0,
    records_given_up: 0,
  };
}
