// The coordinator's one HTTP server (`--metrics`, default 127.0.0.1:9470): /metrics, the live run
// page and its API, /healthz and /readyz. It opens before the suite is read (status "starting",
// /readyz 503) and reads the coordinator through whatever is attached once it runs; in `run` the
// same page also carries the agents' and the scorer's metrics.
import type { Registry } from "prom-client";
import type { Logger } from "../../common/log.js";
import { type ListenAddress, joinedMetricsText, startMetricsServer, type MetricsServer } from "../../common/metrics/index.js";
import { startingStatus, type RunStatus } from "../../common/run-status/index.js";
import { EventHub } from "./event-hub.js";
import type { LiveEvent } from "./live-event.js";
import { observabilityRoutes, type LiveRunInfo } from "./observability-routes.js";

/** What the server reads of a running coordinator (CoordinatorHandle fits). */
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
  /** Bearer token /metrics needs (Prometheus' `authorization` block); none: /metrics is open. @default none */
  metricsToken?: string;
  log?: Logger;
}

export interface ObservabilityServer extends MetricsServer {
  readonly events: EventHub;
  /**
   * The coordinator is running: the page and /metrics read it from now on. A sweep attaches each of
   * its runs in turn, with that run's `run` info: the events and scores of the one before are dropped.
   */
  attach(coordinator: ObservedCoordinator, runId: string, run?: Omit<LiveRunInfo, "runId">): void;
  /**
   * The coordinator stopped serving (done, or its thread is gone): /readyz answers 503; the page
   * and /metrics keep its last status and metrics, updated with `final`.
   */
  detach(final?: Partial<RunStatus>): void;
  publish(event: LiveEvent): void;
  /**
   * The next run of a sweep is about to start: the events, status and metrics of the one before are
   * dropped now, so what the next run publishes while it starts (its replayed history) is kept.
   */
  nextRun(): void;
}

/** The line every command prints when its page is up; tests, benches and users read the URL from it. */
export function livePageLine(server: Pick<ObservabilityServer, "url">): string {
  return `live page: ${server.url}/ (metrics ${server.url}/metrics)`;
}

export async function startObservabilityServer(options: ObservabilityServerOptions): Promise<ObservabilityServer> {
  const events = new EventHub();
  let coordinator: ObservedCoordinator | undefined;
  let runId = "";
  let runInfo = options.run;
  let serving = false;
  let last: RunStatus | undefined;
  let lastMetrics = "";
  // A coordinator thread that is stopping may never answer: then the last answer stands.
  const within = <T>(p: Promise<T>, fallback: () => T): Promise<T> =>
    Promise.race([p, new Promise<T>((r) => setTimeout(() => r(fallback()), 2_000).unref())]);
  // While the run is served, a request is answered from the coordinator's last answer when it is
  // younger than STALE_MS, and a fresh one is asked for in the background: a scrape or a page poll
  // never waits behind a coordinator thread busy with results (at one poll a second, what is shown
  // is at most about a second old). Without an answer that recent, the request waits for one.
  const statusCache = new Revalidating<RunStatus>(() => {
    const stopped = () => last ?? startingStatus();
    // A thread that has stopped answers status() with an error: then the last answer stands too.
    return within(coordinator!.status().catch(stopped), stopped);
  });
  const fetchMetrics = async () => (await within(coordinator!.metricsText().catch(() => ""), () => "")) || lastMetrics;
  const metricsCache = new Revalidating<string>(fetchMetrics);
  const status = async (): Promise<RunStatus> => {
    if (coordinator && serving) {
      const s = await statusCache.get();
      if (serving) last = s;
    }
    return last ?? startingStatus();
  };
  const coordinatorMetrics = async (): Promise<string> => {
    // Asked after the run too: a coordinator's metricsText() answers its final page once stopped.
    if (coordinator) lastMetrics = await (serving ? metricsCache.get() : fetchMetrics());
    return lastMetrics;
  };
  const server = await startMetricsServer({
    listen: options.listen,
    metrics: () => joinedMetricsText([options.registry, coordinatorMetrics]),
    routes: observabilityRoutes({
      status,
      run: () => ({ runId, ...runInfo }),
      events,
      ready: () => serving,
      ...(options.token !== undefined ? { token: options.token } : {}),
    }),
    ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    ...server,
    events,
    attach(c, id, run) {
      if (runId !== "" && id !== runId) {
        events.reset();
        last = undefined;
        lastMetrics = "";
      }
      coordinator = c;
      runId = id;
      if (run) runInfo = run;
      serving = true;
    },
    detach(final) {
      serving = false;
      statusCache.clear();
      metricsCache.clear();
      if (final) last = { ...(last ?? startingStatus()), ...final };
    },
    publish: (e) => events.publish(e),
    nextRun() {
      events.reset();
      last = undefined;
      lastMetrics = "";
      runId = "";
    },
    async close() {
      events.close();
      await server.close();
    },
  };
}

/** How old an answer may be and still be served at once (a fresh one is then asked for behind it). */
const STALE_MS = 5_000;
/** An answer younger than this is served without asking again. */
const FRESH_MS = 250;

/** The last value of an asynchronous source, served while a fresh one is fetched behind it. */
class Revalidating<T> {
  private value: { v: T; at: number } | undefined;
  private inflight: Promise<T> | undefined;

  constructor(private readonly fetch: () => Promise<T>) {}

  get(): Promise<T> {
    const age = this.value ? Date.now() - this.value.at : Infinity;
    if (age < FRESH_MS) return Promise.resolve(this.value!.v);
    const fresh = this.refresh();
    return age < STALE_MS ? Promise.resolve(this.value!.v) : fresh;
  }

  clear(): void {
    this.value = undefined;
  }

  private refresh(): Promise<T> {
    this.inflight ??= this.fetch()
      .then((v) => {
        this.value = { v, at: Date.now() };
        return v;
      })
      .finally(() => (this.inflight = undefined));
    return this.inflight;
  }
}
